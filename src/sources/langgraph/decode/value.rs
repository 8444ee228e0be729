//! The values LangGraph's serializer writes, as a tree memscope can show and walk: msgpack's own
//! types, plus the Python objects its extension types rebuild (a class, the way it is rebuilt and
//! the data it is rebuilt from). Nothing is run: an object is its class name and its data.

use serde_json::{Map as JsonMap, Value as Json};

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    /// Entries in stored order; keys need not be strings (ormsgpack's `OPT_NON_STR_KEYS`).
    Map(Vec<(Value, Value)>),
    Object(Box<Object>),
    /// A numpy array (extension 6): its dtype, shape, memory order and raw buffer.
    Array(Box<NumpyArray>),
    /// A `DeltaChannel` snapshot (extension 7): the channel's whole value at that checkpoint.
    DeltaSnapshot(Box<Value>),
    /// An extension memscope cannot read, kept as it was stored (a warning says why).
    Raw {
        ext: i8,
        bytes: Vec<u8>,
    },
}

/// How LangGraph rebuilds an object from its stored data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rebuild {
    /// Extension 0: `Class(data)` (UUIDs, decimals, sets, enums, ...).
    SingleArg,
    /// Extension 1: `Class(*data)` (paths, dates, timedeltas, `Send`).
    PositionalArgs,
    /// Extension 2: `Class(**data)` (dataclasses, named tuples, times).
    KeywordArgs,
    /// Extension 3: `Class.method(data)` (datetimes through `fromisoformat`).
    Method,
    /// Extension 4: a pydantic v1 model from its fields.
    PydanticV1,
    /// Extension 5: a pydantic v2 model from its fields (LangChain's messages).
    PydanticV2,
    /// A legacy LangChain `json` constructor dict (`{"lc": 1, "type": "constructor", ...}`).
    LangChainConstructor,
}

impl Rebuild {
    /// The msgpack extension code LangGraph writes for it.
    pub fn ext_code(self) -> Option<i8> {
        Some(match self {
            Rebuild::SingleArg => 0,
            Rebuild::PositionalArgs => 1,
            Rebuild::KeywordArgs => 2,
            Rebuild::Method => 3,
            Rebuild::PydanticV1 => 4,
            Rebuild::PydanticV2 => 5,
            Rebuild::LangChainConstructor => return None,
        })
    }

    pub fn from_ext_code(code: i8) -> Option<Rebuild> {
        Some(match code {
            0 => Rebuild::SingleArg,
            1 => Rebuild::PositionalArgs,
            2 => Rebuild::KeywordArgs,
            3 => Rebuild::Method,
            4 => Rebuild::PydanticV1,
            5 => Rebuild::PydanticV2,
            _ => return None,
        })
    }
}

/// A Python object as stored: never instantiated, only named.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub rebuild: Rebuild,
    pub module: String,
    pub class: String,
    pub data: Value,
    /// The classmethod that rebuilds it (`fromisoformat`, `model_validate_json`), when stored.
    pub method: Option<String>,
}

impl Object {
    /// `module.Class`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.module, self.class)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NumpyArray {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub order: String,
    pub buffer: Vec<u8>,
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::UInt(n) => i64::try_from(*n).ok(),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value under a string key of a map (the first, if stored twice).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The entries of a map whose keys are strings, in stored order.
    pub fn str_entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        let entries = match self {
            Value::Map(entries) => entries.as_slice(),
            _ => &[],
        };
        entries.iter().filter_map(|(k, v)| Some((k.as_str()?, v)))
    }

    /// A plain JSON document (what PostgresSaver stores as JSONB) as a value.
    pub fn from_json(json: &Json) -> Value {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_u64().map(Value::UInt))
                .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
            Json::String(s) => Value::Str(s.clone()),
            Json::Array(items) => Value::List(items.iter().map(Value::from_json).collect()),
            Json::Object(map) => Value::Map(
                map.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// LangGraph's own lossy JSON view: an object becomes the data it is rebuilt from (a UUID its
    /// dashed text), bytes become lowercase hex, and a non-string key its JSON text.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::from(*n),
            Value::UInt(n) => Json::from(*n),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.clone()),
            Value::Bytes(bytes) | Value::Raw { bytes, .. } => Json::String(hex(bytes)),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Map(entries) => {
                let mut map = JsonMap::with_capacity(entries.len());
                for (k, v) in entries {
                    let key = match k {
                        Value::Str(s) => s.clone(),
                        other => key_text(other),
                    };
                    map.entry(key).or_insert_with(|| v.to_json());
                }
                Json::Object(map)
            }
            Value::Object(object) => match (&*object.module, &*object.class, &object.data) {
                ("uuid", "UUID", Value::Str(hex)) => Json::String(
                    uuid::Uuid::try_parse(hex)
                        .map_or_else(|_| hex.clone(), |id| id.hyphenated().to_string()),
                ),
                _ => object.data.to_json(),
            },
            Value::Array(array) => Json::String(hex(&array.buffer)),
            Value::DeltaSnapshot(value) => value.to_json(),
        }
    }
}

/// The longest text a non-string map key becomes, in characters.
const MAX_KEY_CHARS: usize = 256;

/// A non-string map key's JSON text, cut with `…` past [`MAX_KEY_CHARS`]: a key that holds keys
/// is escaped again at every level, so uncut its text doubles with each level and a few hundred
/// bytes of msgpack ask for gigabytes (found by the fuzz target).
fn key_text(key: &Value) -> String {
    let text = key.to_json().to_string();
    if text.chars().nth(MAX_KEY_CHARS).is_none() {
        return text;
    }
    let cut = text
        .char_indices()
        .nth(MAX_KEY_CHARS - 1)
        .map_or(text.len(), |(at, _)| at);
    format!("{}…", &text[..cut])
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}
