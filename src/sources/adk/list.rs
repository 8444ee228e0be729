//! The sessions list: one row per `sessions` row, most recently updated first, with its app and
//! user beside its id, its stored events as its messages, and the agents that spoke.

use std::ops::ControlFlow;

use serde_json::json;

use super::read::{self, instant};
use super::router;
use crate::sources::conversation::{
    Extra, ListColumn, ListQuery, ListedConversation, ListedPage, SourceError,
};
use crate::store::Store;

pub const COLUMNS: &[ListColumn] = &[
    ListColumn {
        header: "app",
        key: "app",
        width: 16,
        brief: true,
        searched: false,
    },
    ListColumn {
        header: "user",
        key: "user",
        width: 14,
        brief: true,
        searched: false,
    },
    ListColumn {
        header: "agents",
        key: "agents",
        width: 24,
        brief: true,
        searched: false,
    },
];

/// The `LIKE` pattern of a search for `text` anywhere in the id, any case.
fn pattern(search: Option<&str>) -> String {
    let text = search.unwrap_or("").to_lowercase();
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("%{escaped}%")
}

pub async fn list(
    store: &Store,
    query: &ListQuery,
    found: &mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
) -> Result<ListedPage, SourceError> {
    let offset: i64 = match query.after.as_deref() {
        None => 0,
        Some(text) => text.parse().map_err(|_| {
            SourceError::usage(format!(
                "`{text}` is not a cursor printed by `conversations`"
            ))
        })?,
    };
    let limit = i64::from(query.limit.max(1));
    let mut page = read::page(
        store,
        &pattern(query.search.as_deref()),
        query.options.get("app"),
        query.options.get("user"),
        limit + 1,
        offset,
    )
    .await?;
    let more = page.len() as i64 > limit;
    page.truncate(limit as usize);
    let mut rows = Vec::with_capacity(page.len());
    for (key, updated) in page {
        let glanced = read::glances(store, &key).await?;
        let agents = router::agents_named(
            glanced
                .glances
                .iter()
                .map(|g| (g.author.as_str(), g.transfer_to.as_deref())),
        );
        let stored = glanced.glances.len() + glanced.unreadable;
        let mut extra = Extra::new();
        extra.insert("app".to_owned(), json!(key.app_name));
        extra.insert("user".to_owned(), json!(key.user_id));
        extra.insert("agents".to_owned(), json!(agents.join(", ")));
        extra.insert("unreadable".to_owned(), json!(glanced.unreadable));
        let row = ListedConversation {
            problem: (glanced.unreadable > 0).then(|| {
                format!(
                    "{} not JSON ADK can load: ADK fails to load the session",
                    crate::format::count(glanced.unreadable as u64, "event")
                )
            }),
            scope: Some(format!("{}/{}", key.app_name, key.user_id)),
            id: key.id,
            title: None,
            messages: Some(stored as u64),
            last_activity: instant(updated.as_deref()),
            deleted: false,
            extra,
        };
        let flow = found(&row);
        rows.push(row);
        if flow.is_break() {
            break;
        }
    }
    Ok(ListedPage {
        next: more.then(|| (offset + rows.len() as i64).to_string()),
        conversations: rows,
    })
}

#[cfg(test)]
mod tests {
    use super::pattern;

    #[test]
    fn a_search_matches_its_text_literally_anywhere_in_the_id() {
        assert_eq!(pattern(None), "%%");
        assert_eq!(pattern(Some("User_1%")), "%user\\_1\\%%");
    }
}
