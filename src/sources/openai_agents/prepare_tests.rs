use serde_json::{Value as Json, json};

use super::{Reason, prepare};
use crate::sources::openai_agents::item::StoredItem;

fn items(values: &[Json]) -> Vec<StoredItem> {
    values
        .iter()
        .enumerate()
        .map(|(row, value)| StoredItem::decode(row as i64 + 1, None, value.to_string()).unwrap())
        .collect()
}

fn rows(prepared: &super::Prepared) -> Vec<i64> {
    prepared.items.iter().map(|item| item.row).collect()
}

fn user(text: &str) -> Json {
    json!({"role": "user", "content": text})
}

fn call(id: &str) -> Json {
    json!({"type": "function_call", "call_id": id, "name": "lookup", "arguments": "{}", "id": id})
}

fn output(id: &str, text: &str) -> Json {
    json!({"type": "function_call_output", "call_id": id, "output": text})
}

fn reasoning(id: &str) -> Json {
    json!({"type": "reasoning", "id": id, "summary": []})
}

#[test]
fn a_call_stored_without_its_output_is_dropped_with_the_reasoning_before_it() {
    let history = items(&[
        user("hi"),
        reasoning("rs_1"),
        reasoning("rs_2"),
        call("c1"),
        user("next"),
    ]);
    let prepared = prepare(history, false);
    assert_eq!(rows(&prepared), [1, 5]);
    assert_eq!(prepared.left_out[&Reason::CallWithoutOutput], 1);
    assert_eq!(prepared.left_out[&Reason::ReasoningOfDroppedCall], 2);
}

#[test]
fn an_output_whose_call_is_outside_the_window_is_dropped_only_under_a_limit() {
    let history = [
        output("c1", "42"),
        json!({"role": "assistant", "content": "42"}),
    ];
    assert_eq!(rows(&prepare(items(&history), false)), [1, 2]);
    let limited = prepare(items(&history), true);
    assert_eq!(rows(&limited), [2]);
    assert_eq!(limited.left_out[&Reason::OutputWithoutCall], 1);
}

#[test]
fn duplicates_are_sent_once_as_their_latest_copy_calls_at_their_first_place() {
    let history = items(&[
        call("c1"),
        output("c1", "first"),
        user("between"),
        output("c1", "second"),
        json!({"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{\"v\":2}", "id": "c1"}),
    ]);
    let prepared = prepare(history, false);
    // The call keeps its first place with its latest value; the output moves to its latest.
    assert_eq!(rows(&prepared), [5, 3, 4]);
    assert_eq!(prepared.left_out[&Reason::Duplicate], 2);
}

#[test]
fn messages_with_a_role_are_never_deduplicated_even_with_one_id() {
    let answer = json!({"type": "message", "role": "assistant", "id": "scripted", "content": "a"});
    let prepared = prepare(items(&[answer.clone(), answer]), false);
    assert_eq!(rows(&prepared), [1, 2]);
    assert!(prepared.left_out.is_empty());
}

#[test]
fn metadata_keys_are_stripped_and_the_rest_is_sent_in_its_stored_order() {
    let text = r#"{"type": "function_call", "_agents_tool_title": "T", "call_id": "c1", "created_by": "x", "name": "n", "arguments": "{}"}"#;
    let mut item = StoredItem::decode(1, None, text.to_owned()).unwrap();
    item.strip_metadata();
    assert!(item.value.get("created_by").is_none());
    assert_eq!(
        item.sent().get(),
        r#"{"type":"function_call","call_id":"c1","name":"n","arguments":"{}"}"#
    );
    let plain =
        StoredItem::decode(2, None, r#"{"role": "user", "content": "hi"}"#.to_owned()).unwrap();
    assert_eq!(plain.sent().get(), r#"{"role": "user", "content": "hi"}"#);
}

#[test]
fn a_program_without_output_takes_what_it_issued_with_it() {
    let program = json!({"type": "program", "call_id": "p1"});
    let issued = json!({"type": "function_call", "call_id": "c1", "caller": {"type": "program", "caller_id": "p1"}});
    let answered = output("c1", "done");
    let prepared = prepare(items(&[user("go"), program, issued, answered]), false);
    assert_eq!(rows(&prepared), [1, 4]);
    assert_eq!(prepared.left_out[&Reason::CallWithoutOutput], 2);
}

#[test]
fn rows_that_are_not_json_do_not_decode() {
    assert!(StoredItem::decode(1, None, "{not json".to_owned()).is_none());
    assert!(StoredItem::decode(1, None, "\"a string is an item\"".to_owned()).is_some());
}
