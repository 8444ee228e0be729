//! The reads, on the session tables as the SDK's session classes write them, each as the SDK's
//! own `get_items` makes it:
//! - `SQLiteSession.get_items(limit)`: without a limit every row `ORDER BY id`; with one, the
//!   newest `limit` rows `ORDER BY id DESC`, and while fewer than `limit` of them are JSON (a
//!   row that is not is skipped) and the window was full, the window doubles; the newest
//!   `limit` items, oldest first. A limit of 0 reads nothing.
//! - `SQLAlchemySession.get_items`: the same, ordered by `created_at` then `id` (on PostgreSQL,
//!   and on a SQLite file whose tables it made: its index is `idx_agent_messages_session_time`).
//! - `AdvancedSQLiteSession.get_items(limit, branch_id)`: the branch's `message_structure` rows
//!   joined to their `agent_messages` rows, by `sequence_number`, windowed the same way.

use chrono::{DateTime, NaiveDateTime, Utc};

use super::item::StoredItem;
use crate::sources::conversation::SourceError;
use crate::store::Store;
use crate::store::pool::{DbPool, on_pool};

/// How a database's items are ordered, which says which session class wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// `SQLiteSession` (and `AdvancedSQLiteSession`, on the rows of a session without structure).
    Sqlite,
    /// `SQLAlchemySession`.
    SqlAlchemy,
}

impl Writer {
    /// The session class, as the SDK names it.
    pub fn class(self) -> &'static str {
        match self {
            Writer::Sqlite => "SQLiteSession",
            Writer::SqlAlchemy => "SQLAlchemySession",
        }
    }

    pub async fn of(store: &Store) -> Result<Writer, SourceError> {
        match &store.pool {
            DbPool::Sqlite(pool, _) => {
                let index: Option<i64> = sqlx::query_scalar(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' \
                     AND name = 'idx_agent_messages_session_time'",
                )
                .fetch_optional(pool)
                .await
                .map_err(|e| store.query_failed(e))?;
                Ok(if index.is_some() {
                    Writer::SqlAlchemy
                } else {
                    Writer::Sqlite
                })
            }
            DbPool::Postgres(..) => Ok(Writer::SqlAlchemy),
            DbPool::Mysql(..) => Err(SourceError::failure(
                "memscope reads the OpenAI Agents SDK's sessions on SQLite and PostgreSQL only \
                 (SQLAlchemySession's tables do not build on MySQL)",
            )),
        }
    }
}

/// Which rows a read takes: a session's (in its writer's order) or one branch of an advanced one.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Session(Writer),
    Branch(&'a str),
}

/// One row as read: id, text, creation time as the database writes it.
pub type Row = (i64, String, Option<String>);

const ALL_BY_ID: &str = "SELECT id::bigint, message_data::text, created_at::text FROM agent_messages \
     WHERE session_id = $1 ORDER BY id ASC";
const ALL_BY_TIME: &str = "SELECT id::bigint, message_data::text, created_at::text FROM agent_messages \
     WHERE session_id = $1 ORDER BY created_at ASC, id ASC";
const ALL_OF_BRANCH: &str = "SELECT m.id::bigint, m.message_data::text, m.created_at::text \
     FROM agent_messages m JOIN message_structure s ON m.id = s.message_id \
     WHERE m.session_id = $1 AND s.branch_id = $2 ORDER BY s.sequence_number ASC";
const NEWEST_BY_ID: &str = "SELECT id::bigint, message_data::text, created_at::text FROM agent_messages \
     WHERE session_id = $1 ORDER BY id DESC LIMIT $2";
const NEWEST_BY_TIME: &str = "SELECT id::bigint, message_data::text, created_at::text \
     FROM agent_messages WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2";
const NEWEST_OF_BRANCH: &str = "SELECT m.id::bigint, m.message_data::text, m.created_at::text \
     FROM agent_messages m JOIN message_structure s ON m.id = s.message_id \
     WHERE m.session_id = $1 AND s.branch_id = $2 ORDER BY s.sequence_number DESC LIMIT $3";
const COUNT_ROWS: &str = "SELECT COUNT(*) FROM agent_messages WHERE session_id = $1";
const COUNT_BRANCH_ROWS: &str = "SELECT COUNT(*) FROM agent_messages m \
     JOIN message_structure s ON m.id = s.message_id WHERE m.session_id = $1 AND s.branch_id = $2";

/// What `get_items` returned, and what the rows it did not return were.
#[derive(Debug, Default)]
pub struct ReadItems {
    pub items: Vec<StoredItem>,
    /// Rows read that are not JSON.
    pub unreadable: usize,
    /// Rows of the session (or branch) older than the window: not read, or read and trimmed.
    pub past_limit: usize,
    /// Every row of the session (or branch).
    pub stored: usize,
}

/// The rows `sql` reads of `session`: `$2` is the branch when there is one, the window (as the
/// last parameter) when there is one.
async fn rows(
    store: &Store,
    sql: &'static str,
    session: &str,
    branch: Option<&str>,
    window: Option<i64>,
) -> Result<Vec<Row>, SourceError> {
    Ok(on_pool!(store.pool, sql, |pool, sql| {
        let query = sqlx::query_as(sql).bind(session);
        let query = match branch {
            Some(branch) => query.bind(branch),
            None => query,
        };
        let query = match window {
            Some(window) => query.bind(window),
            None => query,
        };
        query.fetch_all(pool).await
    })
    .map_err(|e| store.query_failed(e))?)
}

/// Every row of `session`, readable or not, in its writer's order: what a trim cuts.
pub async fn stored_rows(
    store: &Store,
    session: &str,
    writer: Writer,
) -> Result<Vec<Row>, SourceError> {
    let sql = match writer {
        Writer::Sqlite => ALL_BY_ID,
        Writer::SqlAlchemy => ALL_BY_TIME,
    };
    rows(store, sql, session, None, None).await
}

/// A stored `CURRENT_TIMESTAMP`: UTC, as `2026-11-27 23:57:04` or with fractions of a second.
pub fn instant(text: Option<&str>) -> Option<DateTime<Utc>> {
    let text = text?;
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .map(|at| at.and_utc())
}

/// Decodes rows (oldest first) as `get_items` does: a row that is not JSON is skipped.
fn decode(rows: Vec<Row>) -> (Vec<StoredItem>, usize) {
    let read = rows.len();
    let items: Vec<StoredItem> = rows
        .into_iter()
        .filter_map(|(id, text, at)| StoredItem::decode(id, instant(at.as_deref()), text))
        .collect();
    let unreadable = read - items.len();
    (items, unreadable)
}

/// `get_items(limit)` of `session` in `scope`. A negative limit is refused before this.
pub async fn get_items(
    store: &Store,
    session: &str,
    scope: Scope<'_>,
    limit: Option<i64>,
) -> Result<ReadItems, SourceError> {
    let (all, newest, branch) = match scope {
        Scope::Session(Writer::Sqlite) => (ALL_BY_ID, NEWEST_BY_ID, None),
        Scope::Session(Writer::SqlAlchemy) => (ALL_BY_TIME, NEWEST_BY_TIME, None),
        Scope::Branch(branch) => (ALL_OF_BRANCH, NEWEST_OF_BRANCH, Some(branch)),
    };
    let Some(limit) = limit else {
        let rows = rows(store, all, session, branch, None).await?;
        let stored = rows.len();
        let (items, unreadable) = decode(rows);
        return Ok(ReadItems {
            items,
            unreadable,
            past_limit: 0,
            stored,
        });
    };
    let stored = count_rows(store, session, scope).await?;
    if limit == 0 {
        return Ok(ReadItems {
            past_limit: stored,
            stored,
            ..ReadItems::default()
        });
    }
    let mut window = limit;
    loop {
        let mut read = rows(store, newest, session, branch, Some(window)).await?;
        let full = read.len() as i64 == window;
        let read_rows = read.len();
        read.reverse();
        let (mut items, unreadable) = decode(read);
        if items.len() as i64 >= limit || !full {
            let trimmed = items.len().saturating_sub(limit as usize);
            items.drain(..trimmed);
            return Ok(ReadItems {
                items,
                unreadable,
                past_limit: stored.saturating_sub(read_rows) + trimmed,
                stored,
            });
        }
        window = window.saturating_mul(2);
    }
}

async fn count_rows(store: &Store, session: &str, scope: Scope<'_>) -> Result<usize, SourceError> {
    let (sql, branch) = match scope {
        Scope::Session(_) => (COUNT_ROWS, None),
        Scope::Branch(branch) => (COUNT_BRANCH_ROWS, Some(branch)),
    };
    let count: i64 = on_pool!(store.pool, sql, |pool, sql| {
        let query = sqlx::query_scalar(sql).bind(session);
        match branch {
            Some(branch) => query.bind(branch),
            None => query,
        }
        .fetch_one(pool)
        .await
    })
    .map_err(|e| store.query_failed(e))?;
    Ok(usize::try_from(count).unwrap_or_default())
}

/// Whether the session has a row of its own or an item.
pub async fn session_exists(store: &Store, session: &str) -> Result<bool, SourceError> {
    const EXISTS: &str = "SELECT COUNT(*) FROM (SELECT session_id FROM agent_sessions \
         WHERE session_id = $1 UNION ALL SELECT session_id FROM (SELECT session_id \
         FROM agent_messages WHERE session_id = $1 LIMIT 1) AS item) AS found";
    let count: i64 = on_pool!(store.pool, EXISTS, |pool, sql| sqlx::query_scalar(sql)
        .bind(session)
        .fetch_one(pool)
        .await)
    .map_err(|e| store.query_failed(e))?;
    Ok(count > 0)
}

/// One branch of an advanced session, as `list_branches` gives it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct Branch {
    pub branch_id: String,
    pub message_count: i64,
    pub user_turns: i64,
    pub created_at: Option<String>,
}

/// The session's branches, oldest first (`list_branches`); none for a session without
/// structure rows (a plain session, or a database without `message_structure`).
pub async fn branches(store: &Store, session: &str) -> Result<Vec<Branch>, SourceError> {
    if !store.has_table("message_structure") {
        return Ok(Vec::new());
    }
    const BRANCHES: &str = "SELECT branch_id, COUNT(*) AS message_count, \
         COUNT(CASE WHEN message_type = 'user' THEN 1 END) AS user_turns, \
         MIN(created_at)::text AS created_at FROM message_structure WHERE session_id = $1 \
         GROUP BY branch_id ORDER BY MIN(created_at), branch_id";
    Ok(
        on_pool!(store.pool, BRANCHES, |pool, sql| sqlx::query_as(sql)
            .bind(session)
            .fetch_all(pool)
            .await)
        .map_err(|e| store.query_failed(e))?,
    )
}

/// One `message_structure` row of a branch, in sequence order.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StructureRow {
    pub message_id: i64,
    pub branch_id: String,
    pub message_type: String,
    pub sequence_number: i64,
    pub branch_turn_number: Option<i64>,
    pub user_turn_number: Option<i64>,
    pub tool_name: Option<String>,
    /// Whether the `agent_messages` row it points at exists.
    pub present: bool,
}

/// Every structure row of the session, by branch then sequence.
pub async fn structure(store: &Store, session: &str) -> Result<Vec<StructureRow>, SourceError> {
    const STRUCTURE: &str = "SELECT s.message_id, s.branch_id, s.message_type, s.sequence_number, \
         s.branch_turn_number, s.user_turn_number, s.tool_name, (m.id IS NOT NULL) AS present \
         FROM message_structure s LEFT JOIN agent_messages m ON m.id = s.message_id \
         WHERE s.session_id = $1 ORDER BY s.branch_id, s.sequence_number";
    Ok(
        on_pool!(store.pool, STRUCTURE, |pool, sql| sqlx::query_as(sql)
            .bind(session)
            .fetch_all(pool)
            .await)
        .map_err(|e| store.query_failed(e))?,
    )
}

/// One `turn_usage` row.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct TurnUsage {
    pub branch_id: String,
    pub user_turn_number: i64,
    pub requests: Option<i64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
}

/// The session's stored usage, by branch and turn; none without a `turn_usage` table.
pub async fn usage(store: &Store, session: &str) -> Result<Vec<TurnUsage>, SourceError> {
    if !store.has_table("turn_usage") {
        return Ok(Vec::new());
    }
    const USAGE: &str = "SELECT branch_id, user_turn_number, requests, input_tokens, \
         output_tokens, total_tokens FROM turn_usage WHERE session_id = $1 \
         ORDER BY branch_id, user_turn_number";
    Ok(on_pool!(store.pool, USAGE, |pool, sql| sqlx::query_as(sql)
        .bind(session)
        .fetch_all(pool)
        .await)
    .map_err(|e| store.query_failed(e))?)
}
