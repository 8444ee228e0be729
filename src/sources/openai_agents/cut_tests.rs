use serde_json::{Value as Json, json};

use super::*;

fn items(values: &[Json]) -> Vec<StoredItem> {
    values
        .iter()
        .enumerate()
        .map(|(row, value)| StoredItem::decode(row as i64 + 1, None, value.to_string()).unwrap())
        .collect()
}

fn no_tokens(_: usize) -> u64 {
    unreachable!("a count of items reads no tokens")
}

/// What a list of items counting `tokens` counts from each item on.
fn suffix(tokens: &[u64]) -> impl Fn(usize) -> u64 + '_ {
    |start| tokens.iter().skip(start).sum()
}

fn user(text: &str) -> Json {
    json!({"role": "user", "content": text})
}

fn call(id: &str) -> Json {
    json!({"type": "function_call", "call_id": id, "name": "lookup", "arguments": "{}"})
}

fn output(id: &str) -> Json {
    json!({"type": "function_call_output", "call_id": id, "output": "ok"})
}

fn reasoning() -> Json {
    json!({"type": "reasoning", "id": "rs_1", "summary": []})
}

#[test]
fn a_plain_log_is_cut_where_the_count_says() {
    let log = items(&[user("a"), user("b"), user("c"), user("d")]);
    assert_eq!(
        cut(&log, no_tokens, Keep::Last(2)),
        Cut {
            first_kept: 2,
            moved: 0
        }
    );
    assert_eq!(cut(&log, no_tokens, Keep::Last(0)).first_kept, 4);
    assert_eq!(cut(&log, no_tokens, Keep::Last(10)).first_kept, 0);
}

#[test]
fn a_cut_between_a_call_and_its_output_moves_past_the_output() {
    // user, call, output, user: keeping the newest 2 would keep the output without its call.
    let log = items(&[user("a"), call("c1"), output("c1"), user("b")]);
    assert_eq!(
        cut(&log, no_tokens, Keep::Last(2)),
        Cut {
            first_kept: 3,
            moved: 1
        }
    );
    assert_eq!(cut(&log, no_tokens, Keep::Last(3)).first_kept, 1);
}

#[test]
fn parallel_calls_keep_every_call_with_every_output() {
    let log = items(&[
        user("a"),
        call("c1"),
        call("c2"),
        output("c1"),
        output("c2"),
        user("b"),
    ]);
    let safe = safe_cuts(&log);
    assert_eq!(safe, vec![true, true, false, false, false, true, true]);
    assert_eq!(cut(&log, no_tokens, Keep::Last(3)).first_kept, 5);
}

#[test]
fn reasoning_stays_with_the_call_it_led_to() {
    let log = items(&[user("a"), reasoning(), call("c1"), output("c1"), user("b")]);
    assert_eq!(safe_cuts(&log), vec![true, true, false, false, true, true]);
}

#[test]
fn items_a_program_issued_stay_with_the_program() {
    let program = json!({"type": "program", "call_id": "p1", "code": "x"});
    let issued = json!({"type": "function_call", "call_id": "c9", "name": "f", "arguments": "{}",
        "caller": {"type": "program", "caller_id": "p1"}});
    let done = json!({"type": "program_output", "call_id": "p1", "output": "1"});
    let log = items(&[user("a"), program, issued, done]);
    assert_eq!(safe_cuts(&log), vec![true, true, false, false, true]);
}

#[test]
fn a_token_limit_keeps_the_newest_items_that_fit() {
    let log = items(&[user("a"), user("b"), user("c")]);
    let tokens = [5, 7, 3];
    assert_eq!(
        cut(&log, suffix(&tokens), Keep::MaxTokens(10)).first_kept,
        1
    );
    assert_eq!(cut(&log, suffix(&tokens), Keep::MaxTokens(9)).first_kept, 2);
    assert_eq!(cut(&log, suffix(&tokens), Keep::MaxTokens(2)).first_kept, 3);
    assert_eq!(
        cut(&log, suffix(&tokens), Keep::MaxTokens(100)).first_kept,
        0
    );
}

#[test]
fn a_token_cut_inside_a_pair_drops_the_whole_pair() {
    let log = items(&[user("a"), call("c1"), output("c1"), user("b")]);
    // The output and the last message fit 10; the call would not.
    let cut = cut(&log, suffix(&[4, 6, 4, 4]), Keep::MaxTokens(10));
    assert_eq!(
        cut,
        Cut {
            first_kept: 3,
            moved: 1
        }
    );
}
