//! The error of an encoding or counter name that does not parse.

/// Names that do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokensError {
    #[error(
        "unknown encoding {0:?} (expected cl100k_base, o200k_base, p50k_base, r50k_base or gpt2)"
    )]
    UnknownEncoding(String),
    #[error("unknown token counter {0:?} (expected openai, plugin, raw or zero)")]
    UnknownCounter(String),
}
