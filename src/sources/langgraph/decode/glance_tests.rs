//! The glance against the whole read it stands in for: on checkpoints of every shape the
//! `messages` channel takes, and on generated and damaged bodies, both give the same `ts`,
//! count and error.

use proptest::prelude::*;

use super::super::tests::{encode, object, value_strategy};
use super::*;
use crate::sources::langgraph::decode::decode_typed;

/// What the list showed before the glance: the checkpoint decoded whole, its messages read.
fn whole(type_name: &str, bytes: &[u8], key: Option<&AesKey>) -> Result<Glance, GlanceError> {
    let decoded = decode_typed(type_name, bytes, key)?;
    let checkpoint = Checkpoint::from_owned(decoded.value).map_err(GlanceError::Body)?;
    Ok(Glance::of(&checkpoint))
}

fn s(text: &str) -> Value {
    Value::Str(text.to_owned())
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (s(k), v)).collect())
}

fn message(class: &str, fields: Vec<(&str, Value)>) -> Value {
    object(
        Rebuild::PydanticV2,
        "langchain_core.messages.ai",
        class,
        map(fields),
        Some("model_validate_json"),
    )
}

fn body(channel_values: Value) -> Value {
    map(vec![
        ("v", Value::Int(4)),
        ("ts", s("2026-03-01T10:00:00+00:00")),
        ("id", s("1f0-abc")),
        ("channel_values", channel_values),
        ("channel_versions", map(vec![("messages", s("00003.0.1"))])),
    ])
}

fn assert_same(value: &Value) -> Result<Glance, GlanceError> {
    let bytes = encode(value);
    let glance = glance_typed("msgpack", &bytes, None);
    assert_eq!(glance, whole("msgpack", &bytes, None));
    glance
}

#[test]
fn messages_are_counted_as_the_whole_read_counts_them() {
    let human = message(
        "HumanMessage",
        vec![("content", s("hi")), ("type", s("human"))],
    );
    let call = |name: Value| map(vec![("name", name), ("args", map(vec![]))]);
    let ai_with = |calls: Vec<Value>| {
        message(
            "AIMessage",
            vec![("content", s("")), ("tool_calls", Value::List(calls))],
        )
    };
    let list = Value::List(vec![
        human.clone(),
        ai_with(vec![call(s("lookup"))]),
        // A tool call without a name is a message that cannot be read: not counted.
        ai_with(vec![call(Value::Int(1))]),
        // Not a LangChain message, nor a message class.
        object(Rebuild::SingleArg, "uuid", "UUID", s("00ff"), None),
        message("Thing", vec![]),
        // A message whose data is no map.
        object(
            Rebuild::PydanticV2,
            "langchain_core.messages",
            "AIMessage",
            s("x"),
            None,
        ),
        s("plain text"),
        message("RemoveMessage", vec![("id", s("m1"))]),
    ]);
    let counted = assert_same(&body(map(vec![("messages", list.clone())]))).unwrap();
    assert_eq!(counted.messages, 3);
    assert_eq!(counted.ts, "2026-03-01T10:00:00+00:00");
    // The last `messages` entry is the channel's value, as in a map of channels.
    let twice = map(vec![
        ("messages", list),
        ("messages", Value::List(vec![human])),
    ]);
    assert_eq!(assert_same(&body(twice)).unwrap().messages, 1);
}

#[test]
fn a_channel_without_a_list_has_no_messages_and_bad_bodies_say_why() {
    for values in [
        map(vec![]),
        map(vec![("messages", Value::Null)]),
        map(vec![(
            "messages",
            Value::DeltaSnapshot(Box::new(Value::List(vec![]))),
        )]),
        Value::List(vec![]),
    ] {
        assert_eq!(assert_same(&body(values)).unwrap().messages, 0);
    }
    let no_ts = map(vec![("id", s("1")), ("channel_values", map(vec![]))]);
    assert!(matches!(assert_same(&no_ts), Err(GlanceError::Body(_))));
    assert!(matches!(
        assert_same(&Value::List(vec![])),
        Err(GlanceError::Body(_))
    ));
    let truncated = &encode(&body(map(vec![])))[..10];
    assert!(matches!(
        glance_typed("msgpack", truncated, None),
        Err(GlanceError::Decode(DecodeError::Msgpack(_)))
    ));
}

#[test]
fn encrypted_and_legacy_json_checkpoints_are_read_whole() {
    let key = AesKey::new(&[7; 16]).unwrap();
    let plain = encode(&body(map(vec![(
        "messages",
        Value::List(vec![message("HumanMessage", vec![("content", s("hi"))])]),
    )])));
    let sealed = key.encrypt(&[3; 16], &plain);
    assert_eq!(
        glance_typed("msgpack+aes", &sealed, Some(&key))
            .unwrap()
            .messages,
        1
    );
    assert_eq!(
        glance_typed("msgpack+aes", &sealed, None),
        Err(GlanceError::Decode(DecodeError::MissingKey {
            type_name: "msgpack+aes".to_owned()
        }))
    );
    let json = br#"{"v": 1, "ts": "t", "id": "1", "channel_values": {"messages": [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "hi"}}]}}"#;
    assert_eq!(glance_typed("json", json, None), whole("json", json, None));
    assert_eq!(glance_typed("json", json, None).unwrap().messages, 1);
}

/// A checkpoint body whose messages are messages, near-messages and anything at all.
fn body_strategy() -> impl Strategy<Value = Value> {
    let name = prop_oneof![Just(s("lookup")), Just(Value::Int(3)), Just(Value::Null)];
    let call = prop_oneof![
        name.prop_map(|name| map(vec![("name", name)])),
        value_strategy(),
    ];
    let fields = (
        proptest::option::of(proptest::collection::vec(call, 0..3)),
        value_strategy(),
    )
        .prop_map(|(calls, content)| {
            let mut fields = vec![("content", content), ("type", s("ai"))];
            if let Some(calls) = calls {
                fields.push(("tool_calls", Value::List(calls)));
            }
            map(fields)
        });
    let item = prop_oneof![
        3 => (
            0..6i8,
            prop::sample::select(vec!["langchain_core.messages.ai", "langchain.schema.messages", "builtins"]),
            prop::sample::select(vec!["AIMessage", "ToolMessageChunk", "set"]),
            prop_oneof![fields, value_strategy()],
        )
            .prop_map(|(code, module, class, data)| {
                let rebuild = Rebuild::from_ext_code(code).unwrap();
                let method = (rebuild == Rebuild::Method).then_some("fromisoformat");
                object(rebuild, module, class, data, method)
            }),
        1 => value_strategy(),
    ];
    let messages = prop_oneof![
        4 => proptest::collection::vec(item, 0..6).prop_map(Value::List),
        1 => value_strategy(),
    ];
    (messages, value_strategy(), any::<bool>()).prop_map(|(messages, other, ts_is_text)| {
        map(vec![
            ("ts", if ts_is_text { s("2026") } else { other.clone() }),
            ("id", s("1")),
            (
                "channel_values",
                map(vec![("other", other), ("messages", messages)]),
            ),
        ])
    })
}

proptest! {
    #[test]
    fn the_glance_is_the_whole_read(value in body_strategy()) {
        let bytes = encode(&value);
        prop_assert_eq!(glance_typed("msgpack", &bytes, None), whole("msgpack", &bytes, None));
    }

    #[test]
    fn damaged_bodies_glance_as_they_read(value in body_strategy(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut bytes = encode(&value);
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        prop_assert_eq!(glance_typed("msgpack", &bytes, None), whole("msgpack", &bytes, None));
    }
}
