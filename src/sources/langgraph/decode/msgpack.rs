//! LangGraph's msgpack values (`JsonPlusSerializer`, type `msgpack`): plain msgpack read by rmpv,
//! and its extension types 0–7 turned into [`Object`]s, numpy arrays and delta snapshots. An
//! extension's payload is itself msgpack: `[module, class, data]` (`[…, method]` for 3 and 5),
//! `[dtype, shape, order, buffer]` for numpy, the bare value for a delta snapshot.
//!
//! Nothing is rebuilt or run. A payload that does not have its expected shape, or an unknown
//! code, is kept raw with a warning. Nesting is bounded across extension payloads too, so no
//! input can exhaust the stack.
//!
//! [`encode`] writes a value back as `ormsgpack` lays it out (integers and lengths in their
//! smallest form, floats as 64 bits, objects as their extensions), for databases memscope
//! writes in LangGraph's format.

use super::outcome::{DecodeError, Warning};
use super::value::{NumpyArray, Object, Rebuild, Value};

/// How deep values may nest, counting extension payloads (LangGraph's own encoder refuses
/// much less: ormsgpack stops at 255).
const MAX_DEPTH: usize = 512;

pub(super) const EXT_NUMPY: i8 = 6;
pub(super) const EXT_DELTA_SNAPSHOT: i8 = 7;

/// Classes LangGraph's serializer rebuilds without a warning (`SAFE_MSGPACK_TYPES` of
/// langgraph-checkpoint 4.3): anything else it rebuilds only while its strict mode is off, and
/// warns, so memscope warns too.
const SAFE_TYPES: &[(&str, &str)] = &[
    ("datetime", "datetime"),
    ("datetime", "date"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("uuid", "UUID"),
    ("decimal", "Decimal"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("collections", "deque"),
    ("ipaddress", "IPv4Address"),
    ("ipaddress", "IPv4Interface"),
    ("ipaddress", "IPv4Network"),
    ("ipaddress", "IPv6Address"),
    ("ipaddress", "IPv6Interface"),
    ("ipaddress", "IPv6Network"),
    ("pathlib", "Path"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib._local", "Path"),
    ("pathlib._local", "PosixPath"),
    ("pathlib._local", "WindowsPath"),
    ("zoneinfo", "ZoneInfo"),
    ("re", "compile"),
    ("langchain_core.documents.base", "Document"),
    ("langgraph.types", "Send"),
    ("langgraph.types", "TimeoutPolicy"),
    ("langgraph.types", "Interrupt"),
    ("langgraph.types", "Command"),
    ("langgraph.types", "StateSnapshot"),
    ("langgraph.types", "PregelTask"),
    ("langgraph.types", "Overwrite"),
    ("langgraph.store.base", "Item"),
    ("langgraph.store.base", "GetOp"),
];

/// LangChain's message classes, all of them on LangGraph's safe list.
const MESSAGE_MODULE: &str = "langchain_core.messages.";

fn is_known_class(module: &str, class: &str) -> bool {
    module.starts_with(MESSAGE_MODULE) || SAFE_TYPES.contains(&(module, class))
}

/// Reads one msgpack value; bytes after it are an error, as they are for ormsgpack.
pub(super) fn decode(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<Value, DecodeError> {
    decode_at(bytes, 0, warnings)
}

fn decode_at(
    bytes: &[u8],
    depth: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Value, DecodeError> {
    Ok(convert(read_ref(bytes, depth)?, depth, warnings))
}

/// Reads one msgpack value `depth` levels down, borrowed from `bytes`: strings, binaries and
/// extension payloads are copied once, into the value [`convert`] makes, not first into rmpv's
/// own. Bytes after the value are an error.
pub(super) fn read_ref(bytes: &[u8], depth: usize) -> Result<rmpv::ValueRef<'_>, DecodeError> {
    let mut rest = bytes;
    let raw =
        rmpv::decode::read_value_ref_with_max_depth(&mut rest, MAX_DEPTH.saturating_sub(depth))
            .map_err(|e| DecodeError::Msgpack(e.to_string()))?;
    if !rest.is_empty() {
        return Err(DecodeError::Msgpack(format!(
            "{} bytes after the value",
            rest.len()
        )));
    }
    Ok(raw)
}

/// The value a borrowed msgpack value `depth` levels down stands for.
pub(super) fn convert(raw: rmpv::ValueRef<'_>, depth: usize, warnings: &mut Vec<Warning>) -> Value {
    match raw {
        rmpv::ValueRef::Nil => Value::Null,
        rmpv::ValueRef::Boolean(b) => Value::Bool(b),
        rmpv::ValueRef::Integer(n) => match n.as_i64() {
            Some(n) => Value::Int(n),
            None => Value::UInt(n.as_u64().unwrap_or(u64::MAX)),
        },
        rmpv::ValueRef::F32(f) => Value::Float(f64::from(f)),
        rmpv::ValueRef::F64(f) => Value::Float(f),
        rmpv::ValueRef::String(s) => match s.as_str() {
            Some(text) => Value::Str(text.to_owned()),
            None => {
                warnings.push(Warning::InvalidUtf8);
                Value::Str(String::from_utf8_lossy(s.as_bytes()).into_owned())
            }
        },
        rmpv::ValueRef::Binary(bytes) => Value::Bytes(bytes.to_vec()),
        rmpv::ValueRef::Array(items) => Value::List(
            items
                .into_iter()
                .map(|item| convert(item, depth + 1, warnings))
                .collect(),
        ),
        rmpv::ValueRef::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    (
                        convert(k, depth + 1, warnings),
                        convert(v, depth + 1, warnings),
                    )
                })
                .collect(),
        ),
        rmpv::ValueRef::Ext(code, bytes) => extension(code, bytes, depth + 1, warnings),
    }
}

fn extension(code: i8, bytes: &[u8], depth: usize, warnings: &mut Vec<Warning>) -> Value {
    let mut inner = Vec::new();
    let payload = match decode_at(bytes, depth, &mut inner) {
        Ok(payload) => payload,
        Err(error) => {
            warnings.push(Warning::UnreadableExtension {
                code,
                reason: error.to_string(),
            });
            return Value::Raw {
                ext: code,
                bytes: bytes.to_vec(),
            };
        }
    };
    warnings.append(&mut inner);
    let read = match code {
        EXT_DELTA_SNAPSHOT => Ok(Value::DeltaSnapshot(Box::new(payload))),
        EXT_NUMPY => numpy(payload),
        _ => match Rebuild::from_ext_code(code) {
            Some(rebuild) => object(rebuild, payload, warnings),
            None => Err("LangGraph defines extensions 0 to 7 only".to_owned()),
        },
    };
    read.unwrap_or_else(|reason| {
        warnings.push(Warning::UnreadableExtension { code, reason });
        Value::Raw {
            ext: code,
            bytes: bytes.to_vec(),
        }
    })
}

fn object(rebuild: Rebuild, payload: Value, warnings: &mut Vec<Warning>) -> Result<Value, String> {
    let Value::List(items) = payload else {
        return Err("its payload is not an array".to_owned());
    };
    if !has_object_arity(rebuild, items.len()) {
        return Err(format!("its payload has {} items", items.len()));
    }
    let mut items = items.into_iter();
    let (Some(Value::Str(module)), Some(Value::Str(class)), Some(data)) =
        (items.next(), items.next(), items.next())
    else {
        return Err("its payload does not start with a module and a class name".to_owned());
    };
    let method = match items.next() {
        Some(Value::Str(method)) => Some(method),
        Some(_) => return Err("its method name is not a string".to_owned()),
        None => None,
    };
    if !is_known_class(&module, &class) {
        warnings.push(Warning::UnknownClass {
            name: format!("{module}.{class}"),
        });
    }
    Ok(Value::Object(Box::new(Object {
        rebuild,
        module,
        class,
        data,
        method,
    })))
}

/// Whether an object extension's payload has as many items as its kind stores:
/// `[module, class, data]`, with the method's name after them for extension 3 (always) and 5
/// (optionally).
pub(super) fn has_object_arity(rebuild: Rebuild, items: usize) -> bool {
    match items {
        3 => rebuild != Rebuild::Method,
        4 => matches!(rebuild, Rebuild::Method | Rebuild::PydanticV2),
        _ => false,
    }
}

fn numpy(payload: Value) -> Result<Value, String> {
    let shape_of = |value: &Value| -> Option<Vec<u64>> {
        value
            .as_list()?
            .iter()
            .map(|d| d.as_i64().and_then(|d| u64::try_from(d).ok()))
            .collect()
    };
    match payload {
        Value::List(items) => match <[Value; 4]>::try_from(items) {
            Ok(
                [
                    Value::Str(dtype),
                    shape,
                    Value::Str(order),
                    Value::Bytes(buffer),
                ],
            ) => {
                let shape = shape_of(&shape).ok_or("its shape is not a list of sizes")?;
                Ok(Value::Array(Box::new(NumpyArray {
                    dtype,
                    shape,
                    order,
                    buffer,
                })))
            }
            _ => Err("its payload is not [dtype, shape, order, buffer]".to_owned()),
        },
        _ => Err("its payload is not an array".to_owned()),
    }
}
