//! What decoding a stored value gives: the value with what was not understood in it, or why it
//! could not be read. A leaf, so the decoders and the dispatch in `mod.rs` share it.

use super::value::Value;

/// The variable LangGraph reads its AES key from.
pub const KEY_VARIABLE: &str = "LANGGRAPH_AES_KEY";

/// Why a value could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("a pickle value; memscope never runs pickle")]
    Pickle,
    #[error("an encrypted value ({type_name}); set {KEY_VARIABLE} to the key LangGraph uses")]
    MissingKey { type_name: String },
    #[error(
        "an encrypted value that this key does not open (wrong {KEY_VARIABLE}, or the value was altered)"
    )]
    WrongKey,
    #[error("an encrypted value too short to hold its nonce and tag ({len} bytes)")]
    TruncatedCiphertext { len: usize },
    #[error("a value encrypted with an unknown cipher `{cipher}` (LangGraph writes `aes`)")]
    UnknownCipher { cipher: String },
    #[error("a value of unknown type `{type_name}`")]
    UnknownType { type_name: String },
    #[error("msgpack that cannot be read: {0}")]
    Msgpack(String),
    #[error("JSON that cannot be read: {0}")]
    Json(String),
}

/// Something read but not understood; the value keeps it as stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Warning {
    #[error("a class memscope does not know: {name} (shown with its stored data)")]
    UnknownClass { name: String },
    #[error("msgpack extension {code} cannot be read ({reason}); shown raw")]
    UnreadableExtension { code: i8, reason: String },
    #[error("a string that is not UTF-8 (shown with replacement characters)")]
    InvalidUtf8,
}

/// A value with what was not understood in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub value: Value,
    pub warnings: Vec<Warning>,
}
