//! LangGraph's legacy `json` values (checkpoints written before late 2024): JSON in which
//! LangChain's serializable objects are constructor dicts,
//! `{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
//! "kwargs": {...}}` (`lc: 2` dicts may carry `args` too). They become [`Object`]s named by the
//! id path, like their msgpack counterparts; nothing is imported or run.

use serde_json::Value as Json;

use super::outcome::{DecodeError, Warning};
use super::value::{Object, Rebuild, Value};

pub(super) fn decode(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<Value, DecodeError> {
    let json: Json = serde_json::from_slice(bytes).map_err(|e| DecodeError::Json(e.to_string()))?;
    Ok(revive(&json, warnings))
}

fn revive(json: &Json, warnings: &mut Vec<Warning>) -> Value {
    match json {
        Json::Array(items) => Value::List(items.iter().map(|i| revive(i, warnings)).collect()),
        Json::Object(map) => {
            if let Some(object) = constructor(map, warnings) {
                return object;
            }
            if matches!(map.get("lc"), Some(Json::Number(_)))
                && let Some(Json::String(kind)) = map.get("type")
                && kind != "constructor"
            {
                // `secret` (read from the environment by LangChain) and `not_implemented`.
                warnings.push(Warning::UnknownClass {
                    name: format!("LangChain {kind} entry"),
                });
            }
            Value::Map(
                map.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), revive(v, warnings)))
                    .collect(),
            )
        }
        scalar => Value::from_json(scalar),
    }
}

fn constructor(map: &serde_json::Map<String, Json>, warnings: &mut Vec<Warning>) -> Option<Value> {
    let lc = map.get("lc")?.as_i64()?;
    if !(lc == 1 || lc == 2) || map.get("type")?.as_str()? != "constructor" {
        return None;
    }
    let path: Vec<&str> = map
        .get("id")?
        .as_array()?
        .iter()
        .map(Json::as_str)
        .collect::<Option<_>>()?;
    let (class, module) = path.split_last()?;
    let kwargs = map.get("kwargs").map(|k| revive(k, warnings));
    let args = map.get("args").map(|a| revive(a, warnings));
    let data = match (args, kwargs) {
        (Some(args), Some(kwargs)) => Value::List(vec![args, kwargs]),
        (Some(data), None) | (None, Some(data)) => data,
        (None, None) => Value::Map(Vec::new()),
    };
    let module = module.join(".");
    if !is_langchain_message(&module) {
        warnings.push(Warning::UnknownClass {
            name: format!("{module}.{class}"),
        });
    }
    Some(Value::Object(Box::new(Object {
        rebuild: Rebuild::LangChainConstructor,
        module,
        class: (*class).to_owned(),
        data,
        method: None,
    })))
}

/// The id paths LangChain's messages were serialized under: `langchain.schema.messages` (its
/// serialization namespace) and `langchain_core.messages[.kind]`.
pub(super) fn is_langchain_message(module: &str) -> bool {
    module == "langchain.schema.messages"
        || module == "langchain_core.messages"
        || module.starts_with("langchain_core.messages.")
}
