//! LangGraph checkpoints, read without LangGraph: the `(type, bytes)` values its serializer
//! writes (`JsonPlusSerializer`, optionally wrapped in `EncryptedSerializer`), the checkpoint body,
//! LangChain's messages in memscope's neutral form, and the checkpoint tree of a thread from its
//! rows. Pure code: the rows and bytes come from `sources::langgraph`.
//!
//! A value that cannot be read is an error naming why (`pickle` is refused, never run; an
//! encrypted value needs its key); a part of a value memscope does not know (an unknown class or
//! extension) is kept as stored, with a [`Warning`]. No input panics.

pub mod budget;
pub mod checkpoint;
mod cipher;
pub mod encode;
pub mod footprint;
pub mod glance;
mod lc_json;
pub mod message;
mod msgpack;
mod outcome;
pub mod prune;
pub mod removal;
pub mod tree;
#[cfg(test)]
pub(crate) mod tree_fixtures;
pub mod value;

use std::borrow::Cow;

pub use cipher::AesKey;
pub use outcome::{DecodeError, Decoded, KEY_VARIABLE, Warning};
pub use value::Value;

/// Decodes one stored `(type, bytes)` pair as LangGraph's `loads_typed` would, without running
/// anything: `null`, `bytes`, `bytearray`, `msgpack`, `json`, each optionally `+aes`.
pub fn decode_typed(
    type_name: &str,
    bytes: &[u8],
    key: Option<&AesKey>,
) -> Result<Decoded, DecodeError> {
    let (inner, plain) = open_typed(type_name, bytes, key)?;
    decode_plain(inner, &plain)
}

/// The serializer's own type and bytes: an `+aes` value decrypted with `key`, any other as it is.
fn open_typed<'a>(
    type_name: &'a str,
    bytes: &'a [u8],
    key: Option<&AesKey>,
) -> Result<(&'a str, Cow<'a, [u8]>), DecodeError> {
    let Some((inner, cipher)) = type_name.split_once('+') else {
        return Ok((type_name, Cow::Borrowed(bytes)));
    };
    if cipher != "aes" {
        return Err(DecodeError::UnknownCipher {
            cipher: cipher.to_owned(),
        });
    }
    let key = key.ok_or_else(|| DecodeError::MissingKey {
        type_name: type_name.to_owned(),
    })?;
    let plain = key.decrypt(bytes)?;
    // EncryptedSerializer encrypts once: a `+` left over is a type it never writes.
    if inner.contains('+') {
        return Err(DecodeError::UnknownType {
            type_name: type_name.to_owned(),
        });
    }
    Ok((inner, Cow::Owned(plain)))
}

fn decode_plain(type_name: &str, bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut warnings = Vec::new();
    let value = match type_name {
        "null" => Value::Null,
        "bytes" | "bytearray" => Value::Bytes(bytes.to_vec()),
        "msgpack" => msgpack::decode(bytes, &mut warnings)?,
        "json" => lc_json::decode(bytes, &mut warnings)?,
        "pickle" => return Err(DecodeError::Pickle),
        other => {
            return Err(DecodeError::UnknownType {
                type_name: other.to_owned(),
            });
        }
    };
    Ok(Decoded { value, warnings })
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
