//! Langflow's conversations: one per (flow, session) of its `message` table, newest activity
//! first, paged, optionally searched over session ids and message text.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;

use crate::memory::instant::parse_instant;
use crate::store::pool::DbPool;
use crate::store::sql::dialect_text;
use crate::store::{Part, Store, StoreError, like_escape};

/// One (flow, session) of a Langflow database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangflowConversation {
    /// The session id.
    pub id: String,
    /// The flow's name; `None` when the flow is gone or the messages have none.
    pub flow: Option<String>,
    pub flow_id: Option<String>,
    pub messages: i64,
    pub last_activity: DateTime<Utc>,
    /// The flow's owner (`user_id`) and their user name.
    pub owner: Option<String>,
    pub owner_name: Option<String>,
}

/// A page of conversations, and whether more follow it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LangflowConversationPage {
    pub conversations: Vec<LangflowConversation>,
    pub has_more: bool,
}

#[derive(FromRow)]
struct ConversationRow {
    session_id: String,
    flow_id: Option<String>,
    flow: Option<String>,
    owner: Option<String>,
    owner_name: Option<String>,
    messages: i64,
    last_activity: String,
}

/// `$1`: a lowercase `LIKE` pattern, or `''` for every conversation. A conversation matches when
/// its session id or the text of one of its messages does.
const CONVERSATIONS: &str = "SELECT m.session_id, m.flow_id::text AS flow_id, f.name AS flow, \
     f.user_id::text AS owner, u.username AS owner_name, count(*) AS messages, \
     CAST(max(m.timestamp) AS TEXT) AS last_activity \
     FROM message m LEFT JOIN flow f ON f.id = m.flow_id LEFT JOIN \"user\" u ON u.id = f.user_id \
     GROUP BY m.session_id, m.flow_id, f.name, f.user_id, u.username \
     HAVING $1 = '' OR lower(m.session_id) LIKE $1 ESCAPE '\\' \
         OR max(CASE WHEN lower(m.text) LIKE $1 ESCAPE '\\' THEN 1 ELSE 0 END) = 1 \
     ORDER BY max(m.timestamp) DESC, m.session_id, m.flow_id \
     LIMIT $2 OFFSET $3";

/// The conversations from `offset`, at most `limit`, newest activity first; `search` keeps those
/// whose session id or message text contains it (case-insensitive).
pub async fn conversations(
    store: &Store,
    search: Option<&str>,
    offset: u64,
    limit: u32,
) -> Result<LangflowConversationPage, StoreError> {
    let pattern = search
        .filter(|s| !s.is_empty())
        .map(|s| format!("%{}%", like_escape(&s.to_lowercase())))
        .unwrap_or_default();
    // One more than asked, to know whether a next page exists.
    let fetch = i64::from(limit) + 1;
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let rows: Vec<ConversationRow> = match &store.pool {
        DbPool::Sqlite(pool, dialect) => {
            let query = sqlx::query_as(dialect_text(*dialect, CONVERSATIONS));
            query
                .bind(&pattern)
                .bind(fetch)
                .bind(offset)
                .fetch_all(pool)
                .await
        }
        DbPool::Postgres(pool, dialect) => {
            let query = sqlx::query_as(dialect_text(*dialect, CONVERSATIONS));
            query
                .bind(&pattern)
                .bind(fetch)
                .bind(offset)
                .fetch_all(pool)
                .await
        }
        // Langflow keeps its tables in SQLite or PostgreSQL only.
        DbPool::Mysql(..) => return Err(store.lacks(Part::Conversations)),
    }
    .map_err(|e| store.query_failed(e))?;
    let has_more = rows.len() > limit as usize;
    let conversations = rows
        .into_iter()
        .take(limit as usize)
        .map(|row| {
            let last_activity =
                parse_instant(&row.last_activity).map_err(|source| StoreError::BadTimestamp {
                    url: store.url().to_owned(),
                    row: format!("session {}", row.session_id),
                    source,
                })?;
            Ok(LangflowConversation {
                id: row.session_id,
                flow: row.flow,
                flow_id: row.flow_id,
                messages: row.messages,
                last_activity,
                owner: row.owner,
                owner_name: row.owner_name,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(LangflowConversationPage {
        conversations,
        has_more,
    })
}
