//! Property tests over every parser: any bytes parse, and every list item either parses or is
//! reported.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::memory::node_context::turns::turn;

/// Arbitrary JSON up to a few levels deep, biased towards the keys the parsers look at.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "role",
        "content",
        "text",
        "data",
        "type",
        "files",
        "tool_calls",
        "function",
        "arguments",
        "context",
        "prompts",
        "turns",
        "messages",
        "message_id",
        "parent_message_id",
        "user_content",
        "user_files",
        "assistant_content",
        "version",
        "file_ref",
        "filename",
        "id",
        "name",
    ])
    .prop_map(str::to_owned);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![
            "user",
            "assistant",
            "system",
            "tool",
            "text",
            "image",
            "m1",
            ""
        ])
        .prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let thread = [turn("m1", "run-1")];
        parse_memory_file(&input, "f").history(&thread, "f");
        parse_outputs(&input, "o");
        parse_prompts(&input, "p");
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_json(value in arbitrary_json()) {
        let input = value.to_string().into_bytes();
        let thread = [turn("m1", "run-1"), turn("", "")];
        let file = parse_memory_file(&input, "f");
        file.history(&thread, "f");
        file.turn_text(&thread[0]);
        let outputs = parse_outputs(&input, "o");
        outputs_turn_text(&outputs);
        parse_prompts(&input, "p");
        for key in ["context", "prompts", "messages", "turns"] {
            let wrapped = json!({ key: value.clone() }).to_string().into_bytes();
            let outputs = parse_outputs(&wrapped, "o");
            let prompts = parse_prompts(&wrapped, "p");
            let file = parse_memory_file(&wrapped, "f");
            file.history(&thread, "f");
            // Every list item either parses or is reported.
            if let (Value::Array(items), "context") = (&value, key) {
                prop_assert_eq!(outputs.context.messages.len() + outputs.context.problems.len(), items.len());
            }
            if let (Value::Array(items), "prompts") = (&value, key) {
                prop_assert_eq!(prompts.messages.len() + prompts.problems.len(), items.len());
            }
        }
    }
}
