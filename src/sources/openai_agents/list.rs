//! The sessions list: one row per `agent_sessions` row, most recently updated first (each
//! `add_items` sets `updated_at`), with the items `get_items()` returns as its messages (on an
//! advanced session, those of `main`, the branch a new `AdvancedSQLiteSession` reads), its rows
//! that are not JSON counted apart, and its branches.

use std::ops::ControlFlow;

use serde_json::json;

use super::read::{branches, instant};
use crate::sources::conversation::{
    Extra, ListColumn, ListQuery, ListedConversation, ListedPage, SourceError,
};
use crate::store::Store;
use crate::store::pool::{DbPool, on_pool};

pub const COLUMNS: &[ListColumn] = &[
    ListColumn {
        header: "unreadable",
        key: "unreadable",
        width: 10,
        brief: true,
        searched: false,
    },
    ListColumn {
        header: "branches",
        key: "branches",
        width: 8,
        brief: true,
        searched: false,
    },
];

const PAGE: &str = "SELECT session_id, updated_at::text FROM agent_sessions \
     WHERE lower(session_id) LIKE $1 ESCAPE '\\' \
     ORDER BY updated_at DESC, session_id LIMIT $2 OFFSET $3";

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

/// How many of the rows of `session` (of its `main` branch when `main` is given) are JSON: the
/// items `get_items` returns; and how many rows there are.
async fn counts(
    store: &Store,
    session: &str,
    main: Option<&str>,
) -> Result<(u64, u64), SourceError> {
    const SQLITE_PLAIN: &str = "SELECT COUNT(*), COALESCE(SUM(json_valid(message_data)), 0) \
         FROM agent_messages WHERE session_id = ?1";
    const SQLITE_BRANCH: &str = "SELECT COUNT(*), COALESCE(SUM(json_valid(m.message_data)), 0) \
         FROM agent_messages m JOIN message_structure s ON m.id = s.message_id \
         WHERE m.session_id = ?1 AND s.branch_id = ?2";
    const TEXTS: &str = "SELECT message_data FROM agent_messages WHERE session_id = $1";
    let (rows, items): (i64, i64) = match (&store.pool, main) {
        (DbPool::Sqlite(pool, _), None) => sqlx::query_as(SQLITE_PLAIN)
            .bind(session)
            .fetch_one(pool)
            .await
            .map_err(|e| store.query_failed(e))?,
        (DbPool::Sqlite(pool, _), Some(branch)) => sqlx::query_as(SQLITE_BRANCH)
            .bind(session)
            .bind(branch)
            .fetch_one(pool)
            .await
            .map_err(|e| store.query_failed(e))?,
        // Only SQLite keeps branches; elsewhere each row is decoded here (PostgreSQL 15 has no
        // test of JSON text that does not fail the query).
        _ => {
            let texts: Vec<String> =
                on_pool!(store.pool, TEXTS, |pool, sql| sqlx::query_scalar(sql)
                    .bind(session)
                    .fetch_all(pool)
                    .await)
                .map_err(|e| store.query_failed(e))?;
            let items = texts
                .iter()
                .filter(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok())
                .count();
            (texts.len() as i64, items as i64)
        }
    };
    Ok((rows as u64, items as u64))
}

async fn listed(
    store: &Store,
    session: String,
    updated: Option<String>,
) -> Result<ListedConversation, SourceError> {
    let branches = branches(store, &session).await?;
    let main = (!branches.is_empty()).then_some("main");
    let (rows, items) = counts(store, &session, main).await?;
    let mut extra = Extra::new();
    extra.insert("unreadable".to_owned(), json!(rows - items));
    extra.insert(
        "branches".to_owned(),
        match branches.len() {
            0 => json!(null),
            n => json!(n),
        },
    );
    Ok(ListedConversation {
        problem: (rows > items).then(|| {
            format!(
                "{} not JSON: the SDK skips {}",
                crate::format::count(rows - items, "row"),
                if rows - items == 1 { "it" } else { "them" }
            )
        }),
        id: session,
        title: None,
        messages: Some(items),
        last_activity: instant(updated.as_deref()),
        deleted: false,
        scope: None,
        extra,
    })
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
    let mut page: Vec<(String, Option<String>)> =
        on_pool!(store.pool, PAGE, |pool, sql| sqlx::query_as(sql)
            .bind(pattern(query.search.as_deref()))
            .bind(limit + 1)
            .bind(offset)
            .fetch_all(pool)
            .await)
        .map_err(|e| store.query_failed(e))?;
    let more = page.len() as i64 > limit;
    page.truncate(limit as usize);
    let mut rows = Vec::with_capacity(page.len());
    for (session, updated) in page {
        let row = listed(store, session, updated).await?;
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
