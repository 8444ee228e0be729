//! Why a source could not answer, classified so both front ends say it alike (an exit code and
//! a kind on the command line, a message in the TUI).

use crate::store::{ID_CANDIDATES, StoreError};

/// Why a source could not answer, classified for the front ends.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The store failed: the front ends classify it as every store error.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{message}")]
    Refused {
        kind: Refusal,
        message: String,
        /// Where to look next: "`memscope conversations` lists them".
        hint: Option<String>,
    },
}

/// What kind of refusal a [`SourceError::Refused`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A setting the command does not take here, or a value it cannot read.
    Usage,
    /// No conversation (or part of one) by that name.
    NotFound,
    /// A prefix several names start with.
    Ambiguous(Vec<String>),
    /// A setting of memscope's own is missing or wrong (a key to decrypt with).
    Config,
    /// The database failed a read.
    Database,
    /// Anything else: the data cannot be read as the source wrote it.
    Failure,
}

impl SourceError {
    pub fn new(kind: Refusal, message: impl Into<String>) -> Self {
        SourceError::Refused {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        SourceError::new(Refusal::Usage, message)
    }

    pub fn failure(message: impl Into<String>) -> Self {
        SourceError::new(Refusal::Failure, message)
    }

    /// No such conversation: the hint names the command that lists them.
    pub fn not_found(message: impl Into<String>) -> Self {
        SourceError::new(Refusal::NotFound, message).with_hint(LIST_HINT)
    }

    /// `prefix` starts several ids of `what`s: the message lists them, as the ambiguity of a
    /// typed id always reads.
    pub fn ambiguous(what: &str, prefix: &str, candidates: Vec<String>) -> Self {
        let message = ambiguous_message(what, prefix, &candidates);
        SourceError::new(Refusal::Ambiguous(candidates), message)
    }

    pub fn with_hint(self, with: impl Into<String>) -> Self {
        match self {
            SourceError::Refused { kind, message, .. } => SourceError::Refused {
                kind,
                message,
                hint: Some(with.into()),
            },
            store => store,
        }
    }
}

/// "conversation id 0b7e is ambiguous: 2 ids start with it (…); type more of the id".
pub fn ambiguous_message(what: &str, prefix: &str, candidates: &[String]) -> String {
    let count = if candidates.len() >= ID_CANDIDATES {
        format!("{} or more ids", candidates.len())
    } else {
        format!("{} ids", candidates.len())
    };
    format!(
        "{what} id {} is ambiguous: {count} start with it ({}); type more of the id",
        prefix.trim(),
        candidates.join(", ")
    )
}

/// The command that lists the conversations a name should come from.
pub const LIST_HINT: &str =
    "`memscope conversations` lists this database's conversations (`--search TEXT` finds one)";
