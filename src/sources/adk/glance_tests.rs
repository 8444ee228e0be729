use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::Glance;
use crate::sources::adk::event::Event;

/// What the full decode says of `text`, in the glance's terms.
fn decoded(text: &str) -> Option<Glance> {
    Event::decode(0, text, 0.0).map(|event| Glance {
        author: event.author.clone(),
        transfer_to: event.transfer_to().map(str::to_owned),
    })
}

fn agrees(text: &str) {
    assert_eq!(Glance::of(text), decoded(text), "on {text}");
}

#[test]
fn a_stored_event_is_glanced_as_it_is_decoded() {
    let event = json!({
        "id": "e1", "invocation_id": "i1", "author": "coordinator", "timestamp": 1.5,
        "content": {"role": "model", "parts": [{"function_call": {"name": "lookup", "args": {"q": 1}}}]},
        "actions": {"state_delta": {"k": [1, 2]}, "transfer_to_agent": "specialist"},
    });
    let text = event.to_string();
    agrees(&text);
    assert_eq!(
        Glance::of(&text),
        Some(Glance {
            author: "coordinator".into(),
            transfer_to: Some("specialist".into())
        })
    );
}

#[test]
fn what_adk_cannot_load_is_unreadable_to_both() {
    for text in [
        "",
        "null",
        "[]",
        "\"text\"",
        "{}",
        r#"{"author": 7}"#,
        r#"{"author": null}"#,
        r#"{"author": "a", "content": "hi"}"#,
        r#"{"author": "a", "content": []}"#,
        r#"{"author": "a", "actions": "none"}"#,
        r#"{"author": "a", "actions": [1]}"#,
        r#"{"author": "a", "content": {"parts": [1e400]}}"#,
        r#"{"author": "a", "usage_metadata": {"n": -1e999}}"#,
        r#"{"author": "a"} trailing"#,
        r#"{"author": "a", "content": {"parts": ["\uZZZZ"]}}"#,
        r#"{"author": "a", "content": {"#,
    ] {
        agrees(text);
        assert_eq!(Glance::of(text), None, "on {text}");
    }
}

#[test]
fn a_repeated_field_counts_with_its_last_value_as_in_a_decoded_event() {
    for text in [
        r#"{"author": "a", "content": "not yet", "content": {"parts": []}}"#,
        r#"{"author": "a", "content": {"parts": []}, "content": "now text"}"#,
        r#"{"author": 1, "author": "b"}"#,
        r#"{"author": "a", "author": 2}"#,
        r#"{"author": "a", "actions": {"transfer_to_agent": "x"}, "actions": null}"#,
        r#"{"author": "a", "actions": {"transfer_to_agent": "x", "transfer_to_agent": ""}}"#,
        r#"{"auth\u006fr": "escaped", "content": null, "actions": null}"#,
        r#"{"author": "a", "actions": {"transfer_to_agent": 3}}"#,
        r#"{"author": "", "content": {"parts": [{"text": 18446744073709551616}]}}"#,
    ] {
        agrees(text);
    }
}

/// JSON whose keys are mostly the ones the glance reads, at every depth.
fn value() -> impl Strategy<Value = Json> {
    let key = prop::sample::select(vec![
        "author",
        "content",
        "actions",
        "transfer_to_agent",
        "parts",
        "id",
    ]);
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        "[a-z]{0,6}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::from),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|fields| {
                Json::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #[test]
    fn the_glance_agrees_with_the_decode_on_any_text(
        author in prop::option::weighted(0.8, "[a-z]{0,6}"),
        fields in prop::collection::vec((prop::sample::select(vec!["author", "content", "actions", "x"]), value()), 0..6),
        cut in any::<prop::sample::Index>(),
        cut_it in any::<bool>(),
        splice in prop::option::of(prop::sample::select(vec!["1e400", "\"a\"", "{", "null,"])),
    ) {
        // Written by hand so that a field may repeat, as a stored text may; most events start
        // with an author the later fields may repeat.
        let mut text = String::from("{");
        let mut fields = fields;
        if let Some(author) = author {
            fields.insert(0, ("author", Json::from(author)));
        }
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("\"{key}\":{value}"));
        }
        text.push('}');
        if let Some(splice) = splice {
            let at = cut.index(text.len() + 1);
            if text.is_char_boundary(at) {
                text.insert_str(at, splice);
            }
        }
        if cut_it {
            let at = cut.index(text.len() + 1);
            if text.is_char_boundary(at) {
                text.truncate(at);
            }
        }
        prop_assert_eq!(Glance::of(&text), decoded(&text), "on {}", text);
    }
}
