//! Values written back in LangGraph's own formats: msgpack as `JsonPlusSerializer` writes it
//! (ormsgpack's smallest encodings, extension types 0–7 with their msgpack payloads), and
//! metadata as SqliteSaver writes it (`json.dumps(..., ensure_ascii=False)`). A value read by
//! [`msgpack`](super::msgpack) and encoded here gives back the stored bytes.

use serde_json::Value as Json;

use super::value::{Object, Rebuild, Value};

use super::msgpack::{EXT_DELTA_SNAPSHOT, EXT_NUMPY};

/// Why a value cannot be written as msgpack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("{0} was read from LangChain's legacy JSON, which LangGraph no longer writes")]
    LegacyJson(String),
}

/// The msgpack bytes LangGraph's serializer writes for `value` (type `msgpack`).
pub fn encode(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, &to_rmpv(value)?)
        .expect("writing msgpack into memory cannot fail");
    Ok(out)
}

fn to_rmpv(value: &Value) -> Result<rmpv::Value, EncodeError> {
    Ok(match value {
        Value::Null => rmpv::Value::Nil,
        Value::Bool(b) => rmpv::Value::Boolean(*b),
        Value::Int(n) => rmpv::Value::from(*n),
        Value::UInt(n) => rmpv::Value::from(*n),
        Value::Float(f) => rmpv::Value::F64(*f),
        Value::Str(s) => rmpv::Value::from(s.as_str()),
        Value::Bytes(bytes) => rmpv::Value::Binary(bytes.clone()),
        Value::List(items) => {
            rmpv::Value::Array(items.iter().map(to_rmpv).collect::<Result<_, _>>()?)
        }
        Value::Map(entries) => rmpv::Value::Map(
            entries
                .iter()
                .map(|(k, v)| Ok((to_rmpv(k)?, to_rmpv(v)?)))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(object) => object_ext(object)?,
        Value::Array(array) => ext(
            EXT_NUMPY,
            &rmpv::Value::Array(vec![
                rmpv::Value::from(array.dtype.as_str()),
                rmpv::Value::Array(array.shape.iter().map(|d| rmpv::Value::from(*d)).collect()),
                rmpv::Value::from(array.order.as_str()),
                rmpv::Value::Binary(array.buffer.clone()),
            ]),
        ),
        Value::DeltaSnapshot(inner) => ext(EXT_DELTA_SNAPSHOT, &to_rmpv(inner)?),
        Value::Raw { ext, bytes } => rmpv::Value::Ext(*ext, bytes.clone()),
    })
}

fn object_ext(object: &Object) -> Result<rmpv::Value, EncodeError> {
    let code = object
        .rebuild
        .ext_code()
        .ok_or_else(|| EncodeError::LegacyJson(object.qualified_name()))?;
    let mut payload = vec![
        rmpv::Value::from(object.module.as_str()),
        rmpv::Value::from(object.class.as_str()),
        to_rmpv(&object.data)?,
    ];
    if let Some(method) = &object.method {
        payload.push(rmpv::Value::from(method.as_str()));
    }
    Ok(ext(code, &rmpv::Value::Array(payload)))
}

fn ext(code: i8, payload: &rmpv::Value) -> rmpv::Value {
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, payload)
        .expect("writing msgpack into memory cannot fail");
    rmpv::Value::Ext(code, bytes)
}

/// `RemoveMessage(id=id)` as `add_messages` reads it from a write.
pub fn remove_message(id: &str) -> Value {
    let field = |k: &str, v: Value| (Value::Str(k.to_owned()), v);
    Value::Object(Box::new(Object {
        rebuild: Rebuild::PydanticV2,
        module: "langchain_core.messages.modifier".to_owned(),
        class: "RemoveMessage".to_owned(),
        data: Value::Map(vec![
            field("content", Value::Str(String::new())),
            field("additional_kwargs", Value::Map(Vec::new())),
            field("response_metadata", Value::Map(Vec::new())),
            field("type", Value::Str("remove".to_owned())),
            field("name", Value::Null),
            field("id", Value::Str(id.to_owned())),
        ]),
        method: Some("model_validate_json".to_owned()),
    }))
}

/// Python's `json.dumps(entries, ensure_ascii=False)` of a dict with these entries in this
/// order: `", "` between items and `": "` after keys, non-ASCII text as it is.
pub fn python_json_object(entries: &[(&str, &Json)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}: {}", Json::from(*k), python_json(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn python_json(value: &Json) -> String {
    match value {
        Json::Object(map) => {
            let entries: Vec<(&str, &Json)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            python_json_object(&entries)
        }
        Json::Array(items) => format!(
            "[{}]",
            items.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_message_is_what_langgraph_writes() {
        // `JsonPlusSerializer().dumps_typed(RemoveMessage(id="abcd"))` of langgraph 1.2.22.
        let expected = "c78f0594d9206c616e67636861696e5f636f72652e6d657373616765732e6d6f64696669\
                        6572ad52656d6f76654d65737361676586a7636f6e74656e74a0b16164646974696f6e61\
                        6c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a67265\
                        6d6f7665a46e616d65c0a26964a461626364b36d6f64656c5f76616c69646174655f6a73\
                        6f6e";
        let bytes = encode(&remove_message("abcd")).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected);
    }

    #[test]
    fn smallest_encodings_as_ormsgpack() {
        // ormsgpack.packb of each value.
        for (value, hex) in [
            (Value::Int(127), "7f"),
            (Value::Int(128), "cc80"),
            (Value::Int(65536), "ce00010000"),
            (Value::Int(-33), "d0df"),
            (Value::Int(-129), "d1ff7f"),
            (Value::Float(0.5), "cb3fe0000000000000"),
            (
                Value::Str("a".repeat(32)),
                &format!("d920{}", "61".repeat(32)),
            ),
            (Value::Bytes(b"xxxx".to_vec()), "c40478787878"),
        ] {
            let bytes = encode(&value).unwrap();
            let got: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, hex, "{value:?}");
        }
    }

    #[test]
    fn metadata_text_as_python_dumps() {
        let parents = serde_json::json!({});
        let text = python_json_object(&[
            ("source", &Json::from("update")),
            ("step", &Json::from(9)),
            ("parents", &parents),
            ("note", &Json::from("é \"q\"")),
        ]);
        assert_eq!(
            text,
            r#"{"source": "update", "step": 9, "parents": {}, "note": "é \"q\""}"#
        );
    }
}
