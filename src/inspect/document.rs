//! What every JSON document of a conversation command shares: its version, the source it was
//! read from, and the conversation capability of the open database.

use serde::Serialize;

use super::InspectError;
use crate::sources;
use crate::sources::conversation::{Command, ConversationSource, SourceOptions};
use crate::sources::opened::ConversationKey;
use crate::store::{Part, Store};

/// The version of the JSON documents `conversations`, `history`, `thread` and `doctor` print:
/// raised when a key changes meaning or goes away (new keys do not raise it).
pub const DOCUMENT_VERSION: u32 = 1;

/// The keys every document opens with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DocumentHead {
    pub version: u32,
    /// The source that made the database: "memscope", "dify", "langflow", "langgraph".
    pub source: &'static str,
}

impl DocumentHead {
    pub fn of(store: &Store) -> DocumentHead {
        DocumentHead {
            version: DOCUMENT_VERSION,
            source: store.profile().source.key(),
        }
    }
}

/// The open database's conversations, or why it keeps none: "a Langflow database (schema …),
/// which has no conversations; it holds memory bases".
pub fn conversations_of(store: &Store) -> Result<&'static dyn ConversationSource, InspectError> {
    let profile = store.profile();
    sources::conversations_of(profile.source)
        .filter(|c| c.requires().iter().all(|part| profile.has(*part)))
        .ok_or_else(|| InspectError::NoConversations(profile.lacks(Part::Conversations)))
}

/// Refuses the settings in `options` that the open database's source does not take for
/// `command`, with the one message every refused setting gets.
pub fn check_settings(
    store: &Store,
    options: &SourceOptions,
    command: Command,
) -> Result<(), InspectError> {
    if *options == SourceOptions::default() {
        return Ok(());
    }
    let source = conversations_of(store)?;
    options.check(store.profile().source.name(), source.settings(), command)?;
    Ok(())
}

/// The settings that name `key` (its scope, its view) that `command` takes: what the front ends
/// hand a command for a conversation they opened from a list.
pub fn key_options(
    source: &dyn ConversationSource,
    key: &ConversationKey,
    command: Command,
) -> SourceOptions {
    source.key_options(key).taken_by(source.settings(), command)
}
