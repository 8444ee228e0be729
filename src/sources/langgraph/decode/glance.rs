//! What a list of threads shows of a checkpoint, its `ts` and the number of messages its
//! `messages` channel holds, read without building the messages. A long thread's latest
//! checkpoint holds every message of the conversation again, and the list only counts them, so
//! a msgpack body's messages are checked where they lie in the stored bytes: that each is a
//! LangChain message [`LangChainMessage::from_value`] reads, and nothing more. Every other type
//! (legacy JSON) is decoded whole. The count is always the one [`Checkpoint::messages`] gives
//! for the same bytes: the tests and the fuzz target compare the two.
//!
//! [`LangChainMessage::from_value`]: super::message::LangChainMessage::from_value

use rmpv::ValueRef;

use super::checkpoint::{Checkpoint, MESSAGES_CHANNEL};
use super::message::is_message_class;
use super::msgpack::{convert, has_object_arity, read_ref};
use super::value::{Rebuild, Value};
use super::{AesKey, DecodeError, decode_plain, open_typed};

/// A checkpoint as a list of threads shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glance {
    pub ts: String,
    /// The messages [`Checkpoint::messages`] reads from the `messages` channel.
    pub messages: usize,
}

/// Why a checkpoint could not be glanced at: the same reasons it could not be read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlanceError {
    /// The stored value could not be decoded.
    Decode(DecodeError),
    /// The value is no checkpoint body ([`Checkpoint::from_value`] says why).
    Body(String),
}

impl From<DecodeError> for GlanceError {
    fn from(error: DecodeError) -> Self {
        GlanceError::Decode(error)
    }
}

impl Glance {
    /// The glance of a checkpoint already read whole.
    pub fn of(checkpoint: &Checkpoint) -> Glance {
        Glance {
            ts: checkpoint.ts.clone(),
            messages: checkpoint.messages().0.len(),
        }
    }
}

/// A stored `(type, bytes)` checkpoint body, as [`super::decode_typed`] and
/// [`Checkpoint::from_owned`] would read it, with its messages counted in place.
pub fn glance_typed(
    type_name: &str,
    bytes: &[u8],
    key: Option<&AesKey>,
) -> Result<Glance, GlanceError> {
    let (inner, plain) = open_typed(type_name, bytes, key)?;
    if inner == "msgpack" {
        return glance_msgpack(&plain);
    }
    let body = decode_plain(inner, &plain)?.value;
    let checkpoint = Checkpoint::from_owned(body).map_err(GlanceError::Body)?;
    Ok(Glance::of(&checkpoint))
}

/// The body's map is built without its `channel_values`, the first entry of that name (the one
/// [`Checkpoint::from_owned`] takes); the messages are counted in it instead.
fn glance_msgpack(bytes: &[u8]) -> Result<Glance, GlanceError> {
    // The list shows no warnings.
    let mut warnings = Vec::new();
    let mut messages = 0;
    let body = match read_ref(bytes, 0)? {
        ValueRef::Map(entries) => {
            let mut values_seen = false;
            let entries = entries.into_iter().map(|(key, value)| {
                let key = convert(key, 1, &mut warnings);
                if !values_seen && key.as_str() == Some("channel_values") {
                    values_seen = true;
                    messages = count_messages(&value);
                    return (key, Value::Null);
                }
                (key, convert(value, 1, &mut warnings))
            });
            Value::Map(entries.collect())
        }
        other => convert(other, 0, &mut warnings),
    };
    let checkpoint = Checkpoint::from_value(&body).map_err(GlanceError::Body)?;
    Ok(Glance {
        ts: checkpoint.ts,
        messages,
    })
}

/// How deep a message lies in the body: the body's map is at 0, its channel values at 1, the
/// channel's list at 2.
const MESSAGE_DEPTH: usize = 3;

/// The messages of the channel's list, the last entry named `messages` (the one a map of
/// channels keeps); a channel that holds no list has none.
fn count_messages(channel_values: &ValueRef<'_>) -> usize {
    let ValueRef::Map(channels) = channel_values else {
        return 0;
    };
    match channels
        .iter()
        .rev()
        .find(|(key, _)| is_key(key, MESSAGES_CHANNEL))
    {
        Some((_, ValueRef::Array(items))) => items.iter().filter(|item| is_message(item)).count(),
        _ => 0,
    }
}

/// Whether a list entry is a message [`LangChainMessage::from_value`] reads: an object
/// extension of LangChain's message classes whose data is a map, with a name in each of its
/// `tool_calls`.
///
/// [`LangChainMessage::from_value`]: super::message::LangChainMessage::from_value
fn is_message(item: &ValueRef<'_>) -> bool {
    let ValueRef::Ext(code, payload) = item else {
        return false;
    };
    let Some(rebuild) = Rebuild::from_ext_code(*code) else {
        return false;
    };
    // The payload is read one level below the extension, as the decoder reads it.
    let Ok(ValueRef::Array(parts)) = read_ref(payload, MESSAGE_DEPTH + 1) else {
        return false;
    };
    if !has_object_arity(rebuild, parts.len()) {
        return false;
    }
    let (ValueRef::String(module), ValueRef::String(class)) = (&parts[0], &parts[1]) else {
        return false;
    };
    if parts
        .get(3)
        .is_some_and(|method| !matches!(method, ValueRef::String(_)))
    {
        return false;
    }
    let lossy =
        |text: &rmpv::Utf8StringRef<'_>| String::from_utf8_lossy(text.as_bytes()).into_owned();
    if !is_message_class(&lossy(module), &lossy(class)) {
        return false;
    }
    let ValueRef::Map(fields) = &parts[2] else {
        return false;
    };
    match first(fields, "tool_calls") {
        Some(ValueRef::Array(calls)) => calls.iter().all(|call| match call {
            ValueRef::Map(call) => matches!(first(call, "name"), Some(ValueRef::String(_))),
            _ => false,
        }),
        _ => true,
    }
}

/// The value under the first string key `key` of a map's entries, as [`Value::get`] finds it.
fn first<'a>(entries: &'a [(ValueRef<'a>, ValueRef<'a>)], key: &str) -> Option<&'a ValueRef<'a>> {
    entries.iter().find(|(k, _)| is_key(k, key)).map(|(_, v)| v)
}

/// Whether a map key is the string `name` (a key that is no UTF-8 never is, as its decoded
/// text holds a replacement character).
fn is_key(key: &ValueRef<'_>, name: &str) -> bool {
    matches!(key, ValueRef::String(text) if text.as_str() == Some(name))
}

#[cfg(test)]
#[path = "glance_tests.rs"]
mod tests;
