//! Langflow's conversations as the conversation capability lists them: one per (flow, session)
//! of its `message` table, continued at an offset (the cursor).

use std::ops::ControlFlow;

use serde_json::json;

use super::conversations::{LangflowConversation, conversations};
use crate::sources::conversation::{Extra, ListQuery, ListedConversation, ListedPage, SourceError};
use crate::store::Store;

fn listed(c: LangflowConversation) -> ListedConversation {
    let extra = Extra::from_iter([
        ("flow".to_owned(), json!(c.flow)),
        ("flow_id".to_owned(), json!(c.flow_id)),
        ("owner".to_owned(), json!(c.owner)),
        ("owner_name".to_owned(), json!(c.owner_name)),
    ]);
    ListedConversation {
        title: c.flow.clone(),
        scope: c.flow_id.clone(),
        id: c.id,
        messages: Some(c.messages.max(0) as u64),
        last_activity: Some(c.last_activity),
        deleted: false,
        problem: None,
        extra,
    }
}

pub async fn list(
    store: &Store,
    query: &ListQuery,
    found: &mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
) -> Result<ListedPage, SourceError> {
    let offset = match query.after.as_deref() {
        None => 0,
        Some(text) => text.parse::<u64>().map_err(|_| {
            SourceError::usage(format!(
                "`{text}` is not a cursor printed by `conversations`"
            ))
        })?,
    };
    let search = query.search.as_deref().filter(|s| !s.is_empty());
    let page = conversations(store, search, offset, query.limit.max(1)).await?;
    let rows: Vec<ListedConversation> = page.conversations.into_iter().map(listed).collect();
    for row in &rows {
        if found(row).is_break() {
            break;
        }
    }
    Ok(ListedPage {
        next: page
            .has_more
            .then(|| (offset + rows.len() as u64).to_string()),
        conversations: rows,
    })
}
