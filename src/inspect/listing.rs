//! `conversations`: one page of any source's conversations, most recently active first, in one
//! shape whatever the source.

use std::ops::ControlFlow;

use serde::Serialize;

use super::InspectError;
use super::document::{DocumentHead, conversations_of};
use crate::sources::conversation::{Command, ListQuery, ListedConversation};
use crate::store::Store;

/// A page of the list as `conversations --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationList {
    #[serde(flatten)]
    pub head: DocumentHead,
    /// What one conversation is called here: "conversation", "session", "thread".
    pub noun: &'static str,
    pub conversations: Vec<ListedConversation>,
    /// Pass as `--after` for the next page; `null` on the last page.
    pub next: Option<String>,
}

/// Whether listing `query` reads every message (a search without an index): the CLI then
/// prints rows as they are found.
pub fn list_scans(store: &Store, query: &ListQuery) -> Result<bool, InspectError> {
    Ok(conversations_of(store)?.list_scans(store, query))
}

/// One page of the conversations, each also handed to `found` as it is read.
pub async fn list_conversations(
    store: &Store,
    query: &ListQuery,
    found: &mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
) -> Result<ConversationList, InspectError> {
    let source = conversations_of(store)?;
    query.options.check(
        store.profile().source.name(),
        source,
        Command::Conversations,
    )?;
    let page = source.list(store, query, found).await?;
    Ok(ConversationList {
        head: DocumentHead::of(store),
        noun: source.noun(),
        conversations: page.conversations,
        next: page.next,
    })
}
