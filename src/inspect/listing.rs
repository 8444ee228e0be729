//! `conversations`: one page of any source's conversations, most recently active first, in one
//! shape whatever the source.

use std::ops::ControlFlow;

use serde::Serialize;

use super::InspectError;
use super::document::{DocumentHead, conversations_of};
use crate::format::thousands;
use crate::sources::conversation::{Command, ListColumn, ListQuery, ListedConversation};
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
        source.settings(),
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

/// The list's headings, as both front ends print them: id, title, the source's own columns,
/// messages and last activity.
pub fn headers(columns: &[ListColumn]) -> Vec<&'static str> {
    let mut headers = vec!["id", "title"];
    headers.extend(columns.iter().map(|c| c.header));
    headers.extend(["messages", "last activity"]);
    headers
}

/// A row's cells under [`headers`], whole: each front end cuts them to its widths.
pub fn cells(c: &ListedConversation, columns: &[ListColumn]) -> Vec<String> {
    let title = c.title.as_deref().unwrap_or("");
    let title = if c.deleted {
        format!("[deleted] {title}")
    } else {
        title.to_owned()
    };
    let mut cells = vec![c.id.clone(), title];
    cells.extend(columns.iter().map(|column| match c.extra.get(column.key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.as_u64().map_or_else(|| n.to_string(), thousands),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }));
    cells.push(
        c.messages
            .map_or_else(|| "unreadable".to_owned(), thousands),
    );
    cells.push(
        c.last_activity
            .map(|at| at.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default(),
    );
    cells
}
