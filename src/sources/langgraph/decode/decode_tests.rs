//! The decoder on bytes LangGraph's own serializer wrote (hex copied from
//! `JsonPlusSerializer().dumps_typed(...)` and pycryptodome in langgraph 1.2.22's venv), on
//! damaged input, and on generated values (round trips; arbitrary bytes never panic).

use proptest::prelude::*;

use super::value::{Object, Rebuild};
use super::*;

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn msgpack(hex: &str) -> Decoded {
    decode_typed("msgpack", &unhex(hex), None).unwrap()
}

fn s(text: &str) -> Value {
    Value::Str(text.to_owned())
}

pub(super) fn encode(value: &Value) -> Vec<u8> {
    super::encode::encode(value).expect("the generated values have msgpack forms")
}

pub(super) fn object(
    rebuild: Rebuild,
    module: &str,
    class: &str,
    data: Value,
    method: Option<&str>,
) -> Value {
    Value::Object(Box::new(Object {
        rebuild,
        module: module.to_owned(),
        class: class.to_owned(),
        data,
        method: method.map(str::to_owned),
    }))
}

#[test]
fn null_bytes_and_bytearray_are_what_loads_typed_returns() {
    assert_eq!(decode_typed("null", b"", None).unwrap().value, Value::Null);
    assert_eq!(
        decode_typed("bytes", b"\x00\xff", None).unwrap().value,
        Value::Bytes(vec![0, 255])
    );
    assert_eq!(
        decode_typed("bytearray", b"ab", None).unwrap().value,
        Value::Bytes(b"ab".to_vec())
    );
}

#[test]
fn a_plain_map_from_langgraph() {
    // dumps_typed({'hi': [1, 2.5, None, True]})
    let decoded = msgpack("81a268699401cb4004000000000000c0c3");
    assert!(decoded.warnings.is_empty());
    assert_eq!(
        decoded.value,
        Value::Map(vec![(
            s("hi"),
            Value::List(vec![
                Value::Int(1),
                Value::Float(2.5),
                Value::Null,
                Value::Bool(true)
            ])
        )])
    );
}

#[test]
fn a_datetime_is_a_method_extension() {
    // dumps_typed(datetime(2026, 11, 24, 21, 0, tzinfo=timezone.utc))
    let decoded = msgpack(
        "c73b0394a86461746574696d65a86461746574696d65b9323032362d31312d32345432313a30303a30302b30303a3030ad66726f6d69736f666f726d6174",
    );
    assert!(decoded.warnings.is_empty());
    assert_eq!(
        decoded.value,
        object(
            Rebuild::Method,
            "datetime",
            "datetime",
            s("2026-11-24T21:00:00+00:00"),
            Some("fromisoformat")
        )
    );
}

#[test]
fn a_uuid_reads_as_langgraph_prints_it() {
    let decoded = msgpack(
        "c72d0093a475756964a455554944d9203132333435363738313233343536373831323334353637383132333435363738",
    );
    assert_eq!(
        decoded.value.to_json(),
        serde_json::json!("12345678-1234-5678-1234-567812345678")
    );
}

#[test]
fn map_keys_need_not_be_strings() {
    // dumps_typed({1: 'one', (2, 3): 'tuple'})
    let decoded = msgpack("8201a36f6e65920203a57475706c65");
    assert_eq!(
        decoded.value,
        Value::Map(vec![
            (Value::Int(1), s("one")),
            (Value::List(vec![Value::Int(2), Value::Int(3)]), s("tuple")),
        ])
    );
    assert_eq!(
        decoded.value.to_json(),
        serde_json::json!({"1": "one", "[2,3]": "tuple"})
    );
}

#[test]
fn a_set_is_a_single_argument_constructor() {
    let decoded = msgpack("c7110093a86275696c74696e73a3736574920102");
    assert_eq!(
        decoded.value,
        object(
            Rebuild::SingleArg,
            "builtins",
            "set",
            Value::List(vec![Value::Int(1), Value::Int(2)]),
            None
        )
    );
}

#[test]
fn aes_eax_opens_what_pycryptodome_sealed() {
    // AES.new(key, AES.MODE_EAX, nonce=bytes(range(16))) over dumps_typed({'hi': [...]})
    let key = AesKey::new(b"0123456789abcdef0123456789abcdef").unwrap();
    let stored = unhex(
        "000102030405060708090a0b0c0d0e0f149dad42b4ebc6f238185b2208ca0956a5db6af6ab1bd38a06d1e61cbf77da5ebc",
    );
    let decoded = decode_typed("msgpack+aes", &stored, Some(&key)).unwrap();
    assert_eq!(
        decoded.value,
        msgpack("81a268699401cb4004000000000000c0c3").value
    );
    let nonce: [u8; 16] = std::array::from_fn(|i| i as u8);
    assert_eq!(
        key.encrypt(&nonce, &unhex("81a268699401cb4004000000000000c0c3")),
        stored
    );
}

#[test]
fn encrypted_values_without_the_right_key_are_errors_that_say_so() {
    let key = AesKey::new(b"0123456789abcdef").unwrap();
    let stored = key.encrypt(&[7; 16], b"\xc0");
    let missing = decode_typed("msgpack+aes", &stored, None).unwrap_err();
    assert!(missing.to_string().contains(KEY_VARIABLE), "{missing}");
    let other = AesKey::new(b"fedcba9876543210").unwrap();
    assert_eq!(
        decode_typed("msgpack+aes", &stored, Some(&other)),
        Err(DecodeError::WrongKey)
    );
    let mut altered = stored.clone();
    *altered.last_mut().unwrap() ^= 1;
    assert_eq!(
        decode_typed("msgpack+aes", &altered, Some(&key)),
        Err(DecodeError::WrongKey)
    );
    assert_eq!(
        decode_typed("msgpack+aes", &stored[..20], Some(&key)),
        Err(DecodeError::TruncatedCiphertext { len: 20 })
    );
    assert_eq!(
        decode_typed("null+aes", &key.encrypt(&[1; 16], b""), Some(&key))
            .unwrap()
            .value,
        Value::Null
    );
    assert!(matches!(
        decode_typed("msgpack+rot13", &stored, Some(&key)),
        Err(DecodeError::UnknownCipher { .. })
    ));
    assert!(AesKey::new(b"short").unwrap_err().contains("16, 24 or 32"));
}

#[test]
fn pickle_is_refused_and_unknown_types_are_errors() {
    assert_eq!(
        decode_typed("pickle", b"\x80\x04K\x01.", None),
        Err(DecodeError::Pickle)
    );
    assert!(matches!(
        decode_typed("yaml", b"", None),
        Err(DecodeError::UnknownType { .. })
    ));
}

#[test]
fn unknown_extensions_and_classes_are_kept_with_a_warning() {
    let unknown = rmpv::Value::Ext(42, vec![1, 2, 3]);
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, &unknown).unwrap();
    let decoded = decode_typed("msgpack", &bytes, None).unwrap();
    assert_eq!(
        decoded.value,
        Value::Raw {
            ext: 42,
            bytes: vec![1, 2, 3]
        }
    );
    assert!(matches!(
        decoded.warnings[..],
        [Warning::UnreadableExtension { code: 42, .. }]
    ));

    // An extension 5 whose payload is not [module, class, data, method].
    let bad = encode(&Value::Raw {
        ext: 5,
        bytes: encode(&Value::Int(3)),
    });
    let decoded = decode_typed("msgpack", &bad, None).unwrap();
    assert!(matches!(decoded.value, Value::Raw { ext: 5, .. }));
    assert_eq!(decoded.warnings.len(), 1);

    let custom = object(
        Rebuild::PydanticV2,
        "myapp.state",
        "Order",
        Value::Map(vec![(s("n"), Value::Int(1))]),
        Some("model_validate_json"),
    );
    let decoded = decode_typed("msgpack", &encode(&custom), None).unwrap();
    assert_eq!(decoded.value, custom);
    assert_eq!(
        decoded.warnings,
        vec![Warning::UnknownClass {
            name: "myapp.state.Order".to_owned()
        }]
    );
}

#[test]
fn trailing_bytes_and_truncation_are_errors() {
    assert!(matches!(
        decode_typed("msgpack", b"\xc0\xc0", None),
        Err(DecodeError::Msgpack(_))
    ));
    assert!(matches!(
        decode_typed("msgpack", b"\x92\x01", None),
        Err(DecodeError::Msgpack(_))
    ));
    assert!(matches!(
        decode_typed("msgpack", b"", None),
        Err(DecodeError::Msgpack(_))
    ));
}

#[test]
fn keys_inside_keys_are_cut_not_doubled_at_every_level() {
    // Each level's key is a map whose key is the level below, so its JSON text escapes the
    // one below again; uncut, 40 levels ask for gigabytes (an input the fuzz target found).
    let mut key = s("\"");
    for _ in 0..40 {
        key = Value::Map(vec![(key, Value::Null)]);
    }
    let json = Value::Map(vec![(key, Value::Null)]).to_json();
    let (text, _) = json.as_object().unwrap().iter().next().unwrap();
    assert_eq!(text.chars().count(), 256);
    assert!(
        text.ends_with('…') && text.starts_with("{\"{\\\""),
        "{text}"
    );
    // A key no longer than the limit stays whole.
    let short = Value::Map(vec![(Value::List(vec![Value::Int(2)]), Value::Null)]);
    assert_eq!(short.to_json(), serde_json::json!({"[2]": null}));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let arrays = vec![0x91u8; 200_000];
    assert!(decode_typed("msgpack", &arrays, None).is_err());
    // Extensions nested in extensions: each payload another extension, wrapped one by one.
    let mut bytes = encode(&Value::Null);
    for _ in 0..2_000 {
        let mut wrapped = Vec::new();
        rmpv::encode::write_value(&mut wrapped, &rmpv::Value::Ext(7, bytes)).unwrap();
        bytes = wrapped;
    }
    let decoded = decode_typed("msgpack", &bytes, None).unwrap();
    assert!(matches!(
        decoded.warnings[..],
        [Warning::UnreadableExtension { code: 7, .. }]
    ));
    let deep_json = "[".repeat(100_000);
    assert!(decode_typed("json", deep_json.as_bytes(), None).is_err());
}

#[test]
fn legacy_json_constructors_are_langchain_messages() {
    let human = br#"{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": {"content": "hello", "type": "human", "id": "h1"}}"#;
    let decoded = decode_typed("json", human, None).unwrap();
    assert!(decoded.warnings.is_empty());
    let message = message::LangChainMessage::from_value(&decoded.value)
        .unwrap()
        .unwrap();
    assert_eq!(
        (message.kind.as_str(), message.id.as_deref()),
        ("human", Some("h1"))
    );
    assert_eq!(message.content, serde_json::json!("hello"));

    // Before `tool_calls` had a field, OpenAI's calls sat in additional_kwargs.
    let ai = br#"{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {"content": "", "additional_kwargs": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": 1}"}}]}}}"#;
    let decoded = decode_typed("json", ai, None).unwrap();
    let message = message::LangChainMessage::from_value(&decoded.value)
        .unwrap()
        .unwrap();
    assert_eq!(message.kind, "ai");
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(message.tool_calls[0].args, serde_json::json!({"q": 1}));
    let prompt = message.to_prompt_message().unwrap();
    assert_eq!(prompt.tool_calls[0].arguments, r#"{"q":1}"#);
}

pub(super) fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        (i64::MAX as u64 + 1..=u64::MAX).prop_map(Value::UInt),
        any::<f64>()
            .prop_filter("NaN is never equal", |f| !f.is_nan())
            .prop_map(Value::Float),
        ".{0,12}".prop_map(Value::Str),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(Value::Bytes),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::List),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Value::Map),
            (0..6i8, inner.clone(), proptest::option::of("[a-z_]{1,10}")).prop_map(
                |(code, data, method)| {
                    let rebuild = Rebuild::from_ext_code(code).unwrap();
                    let method = match rebuild {
                        Rebuild::Method => {
                            Some(method.unwrap_or_else(|| "fromisoformat".to_owned()))
                        }
                        Rebuild::PydanticV2 => method,
                        _ => None,
                    };
                    object(
                        rebuild,
                        "langchain_core.messages.ai",
                        "AIMessage",
                        data,
                        method.as_deref(),
                    )
                }
            ),
            inner.prop_map(|v| Value::DeltaSnapshot(Box::new(v))),
        ]
    })
}

proptest! {
    #[test]
    fn values_round_trip_through_msgpack(value in value_strategy()) {
        let decoded = decode_typed("msgpack", &encode(&value), None).unwrap();
        prop_assert_eq!(decoded.value, value);
        prop_assert!(decoded.warnings.is_empty());
    }

    #[test]
    fn values_round_trip_through_aes(value in value_strategy(), key in proptest::sample::select(vec![16usize, 24, 32]), nonce in any::<[u8; 16]>()) {
        let key = AesKey::new(&vec![9; key]).unwrap();
        let stored = key.encrypt(&nonce, &encode(&value));
        prop_assert_eq!(decode_typed("msgpack+aes", &stored, Some(&key)).unwrap().value, value);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let key = AesKey::new(&[1; 16]).unwrap();
        for type_name in ["msgpack", "json", "msgpack+aes", "json+aes", "bytes", "pickle"] {
            if let Ok(decoded) = decode_typed(type_name, &bytes, Some(&key)) {
                let _ = decoded.value.to_json();
                let _ = message::LangChainMessage::from_value(&decoded.value);
                let _ = checkpoint::Checkpoint::from_value(&decoded.value);
            }
        }
    }

    #[test]
    fn mutated_extensions_never_panic(value in value_strategy(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut bytes = encode(&value);
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if let Ok(decoded) = decode_typed("msgpack", &bytes, None) {
            let _ = decoded.value.to_json();
        }
    }
}
