//! What a database keeps of conversations, for the summary and `info`: how many, in the
//! source's words, and the command that lists them.

use serde::Serialize;

use super::document::conversations_of;
use crate::sources::conversation::Census;
use crate::sources::stored_figures::StoredFigures;
use crate::store::{Store, StoreError};

/// The command that lists a database's conversations.
pub const LIST_COMMAND: &str = "memscope conversations";

/// The conversations a database keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KeptConversations {
    /// What one is called here: "conversation", "session", "thread".
    pub noun: &'static str,
    #[serde(flatten)]
    pub census: Census,
}

impl KeptConversations {
    /// "It keeps 3 sessions with 41 messages: `memscope conversations` lists them."
    pub fn describe(&self) -> String {
        format!(
            "It keeps {}: `{LIST_COMMAND}` lists them.",
            self.census.describe(self.noun)
        )
    }
}

/// The conversations the open database keeps; `None` where it keeps none.
pub async fn kept_conversations(store: &Store) -> Result<Option<KeptConversations>, StoreError> {
    let Ok(source) = conversations_of(store) else {
        return Ok(None);
    };
    let census = source.census(store).await?;
    Ok(Some(KeptConversations {
        noun: source.noun(),
        census,
    }))
}

/// What the open database's source says of how it stores its conversations; `None` where it
/// keeps none or says nothing more than how many.
pub async fn stored_figures(store: &Store) -> Result<Option<StoredFigures>, StoreError> {
    let Ok(source) = conversations_of(store) else {
        return Ok(None);
    };
    match source.stored_figures(store) {
        Some(read) => Ok(Some(read.await?)),
        None => Ok(None),
    }
}
