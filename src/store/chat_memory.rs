//! Chat memories (seed 004): listing, reading a page of messages, adding, and every change that
//! removes or rewrites messages (trims, deletes) as one transaction that archives what it
//! changed, so [`Store::undo_chat_memory_change`] restores the memory byte for byte.
//!
//! Archiving copies rows inside the database (`INSERT … SELECT`), never through Rust values, so
//! undo writes back exactly the stored text, whatever its formatting.

use std::sync::LazyLock;

use chrono::{NaiveDateTime, Utc};
use sqlx::{AssertSqlSafe, FromRow};

use super::catalog::Backend;
use super::error::StoreError;
use super::handle::Store;
use super::ids::IdMatch;
use super::insert::{CHAT_MEMORY_MESSAGES, insert_postgres, insert_sqlite};
use super::pool::DbPool;
use super::rows::{ChatMemoryMessageRow, ChatMemoryRow};

/// One chat memory with its message count.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ChatMemorySummary {
    pub id: String,
    pub memory_node_id: String,
    pub chat_id: String,
    pub label: String,
    pub policy: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub message_count: i64,
}

/// One change applied to a chat memory.
#[derive(Debug, Clone, PartialEq, Eq, FromRow, serde::Serialize)]
pub struct ChangeRecord {
    pub id: String,
    pub chat_memory_id: String,
    pub action: String,
    pub policy: String,
    pub created_at: NaiveDateTime,
    pub undone_at: Option<NaiveDateTime>,
}

/// What a change does to a memory's rows: applied by [`Store::apply_chat_memory_change`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryChange {
    /// `trim`, `policy` (a trim run by adding a message) or `delete`.
    pub action: String,
    /// The policy in force, recorded with the change.
    pub policy: String,
    /// Ids of messages to remove.
    pub removed: Vec<String>,
    /// New versions of messages (same id and seq).
    pub modified: Vec<ChatMemoryMessageRow>,
    /// New messages, such as a summary.
    pub added: Vec<ChatMemoryMessageRow>,
}

impl MemoryChange {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }
}

/// Which messages a delete takes (seed 004's Delete Memory node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteScope {
    /// Messages of the most recent workflow request.
    LatestRequest,
    All,
}

#[derive(FromRow)]
struct MessageRecord {
    id: String,
    chat_memory_id: String,
    seq: i64,
    role: String,
    content: String,
    tool_calls: Option<String>,
    tool_call_id: Option<String>,
    files: Option<String>,
    workflow_request_id: Option<String>,
    is_summary: bool,
    created_at: NaiveDateTime,
}

impl From<MessageRecord> for ChatMemoryMessageRow {
    fn from(r: MessageRecord) -> Self {
        ChatMemoryMessageRow {
            id: r.id,
            chat_memory_id: r.chat_memory_id,
            seq: r.seq,
            role: r.role,
            content: r.content,
            tool_calls: r.tool_calls,
            tool_call_id: r.tool_call_id,
            files: r.files,
            workflow_request_id: r.workflow_request_id,
            is_summary: r.is_summary,
            created_at: r.created_at,
        }
    }
}

#[derive(FromRow)]
struct MemoryRecord {
    id: String,
    memory_node_id: String,
    chat_id: String,
    label: String,
    policy: String,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
}

impl From<MemoryRecord> for ChatMemoryRow {
    fn from(r: MemoryRecord) -> Self {
        ChatMemoryRow {
            id: r.id,
            memory_node_id: r.memory_node_id,
            chat_id: r.chat_id,
            label: r.label,
            policy: r.policy,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const MEMORY_COLUMNS: &str = "cm.id::text AS id, cm.memory_node_id, cm.chat_id, cm.label, \
                              cm.policy, cm.created_at, cm.updated_at";

macro_rules! message_columns {
    () => {
        "id::text AS id, chat_memory_id::text AS chat_memory_id, seq::bigint AS seq, role, \
         content, tool_calls, tool_call_id, files, workflow_request_id, is_summary, created_at"
    };
}

/// The stored columns of a message, in the order both tables list them.
const STORED_COLUMNS: &str = "seq, role, content, tool_calls, tool_call_id, files, \
                              workflow_request_id, is_summary, created_at";

static LIST_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {MEMORY_COLUMNS}, (SELECT count(*) FROM chat_memory_messages m \
         WHERE m.chat_memory_id = cm.id)::bigint AS message_count \
         FROM chat_memories cm ORDER BY cm.label, cm.chat_id, cm.id"
    )
});
static GET_SQL: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {MEMORY_COLUMNS} FROM chat_memories cm WHERE cm.id = $1::uuid")
});
static FIND_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM chat_memories cm \
         WHERE cm.memory_node_id = $1 AND cm.chat_id = $2"
    )
});
const MESSAGES_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM chat_memory_messages WHERE chat_memory_id = $1::uuid ORDER BY seq LIMIT $2 OFFSET $3"
);
const CREATE_SQL: &str = "INSERT INTO chat_memories \
    (id, memory_node_id, chat_id, label, policy, created_at, updated_at) \
    VALUES ($1::uuid, $2, $3, $4, $5, $6, $7)";
const NEXT_SEQ_SQL: &str = "SELECT coalesce(max(seq), -1)::bigint + 1 FROM chat_memory_messages \
    WHERE chat_memory_id = $1::uuid";
const TOUCH_SQL: &str = "UPDATE chat_memories SET updated_at = $2 WHERE id = $1::uuid";
const INSERT_CHANGE_SQL: &str = "INSERT INTO chat_memory_trims \
    (id, chat_memory_id, action, policy, created_at) VALUES ($1::uuid, $2::uuid, $3, $4, $5)";
const LAST_CHANGE_SQL: &str = "SELECT id::text AS id, chat_memory_id::text AS chat_memory_id, \
    action, policy, created_at, undone_at FROM chat_memory_trims \
    WHERE chat_memory_id = $1::uuid AND undone_at IS NULL \
    ORDER BY created_at DESC, id DESC LIMIT 1";
const CHANGES_SQL: &str = "SELECT id::text AS id, chat_memory_id::text AS chat_memory_id, \
    action, policy, created_at, undone_at FROM chat_memory_trims \
    WHERE chat_memory_id = $1::uuid ORDER BY created_at, id";
/// Deletes the current rows a change replaced (`removed`, `modified`) or, on undo, the rows it
/// wrote (`modified`, `added`).
const DELETE_ARCHIVED_SQL: &str = "DELETE FROM chat_memory_messages \
    WHERE chat_memory_id = $1::uuid AND id IN (SELECT message_id FROM chat_memory_trim_archive \
    WHERE trim_id = $2::uuid AND change <> $3)";
static RESTORE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO chat_memory_messages (id, chat_memory_id, {STORED_COLUMNS}) \
         SELECT message_id, $1::uuid, {STORED_COLUMNS} FROM chat_memory_trim_archive \
         WHERE trim_id = $2::uuid AND change <> 'added'"
    )
});
const MARK_UNDONE_SQL: &str = "UPDATE chat_memory_trims SET undone_at = $2 WHERE id = $1::uuid";
const LATEST_REQUEST_SQL: &str = "SELECT workflow_request_id FROM chat_memory_messages \
    WHERE chat_memory_id = $1::uuid AND workflow_request_id IS NOT NULL \
    ORDER BY seq DESC LIMIT 1";
const DELETE_CANDIDATES_SQL: &str = "SELECT id::text FROM chat_memory_messages \
    WHERE chat_memory_id = $1::uuid AND ($2 OR workflow_request_id = $3) ORDER BY seq";

const COUNT_MESSAGES_SQL: &str = "SELECT count(*)::bigint FROM chat_memory_messages \
    WHERE chat_memory_id = $1::uuid";
const DELETE_MEMORY_SQL: &str = "DELETE FROM chat_memories WHERE id = $1::uuid";

/// Takes the memory's row for the transaction, so no message is added to it before it goes
/// (on SQLite the transaction's snapshot does that: a write after another's fails as busy).
fn lock_memory_sql(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "SELECT id FROM chat_memories WHERE id = $1",
        Backend::Postgres | Backend::Mysql => {
            "SELECT id::text FROM chat_memories WHERE id = $1::uuid FOR UPDATE"
        }
    }
}

/// Copies current rows named in a JSON array of ids into the archive of change `$1`. The id set
/// is the one thing the dialects spell differently.
fn archive_sql(backend: Backend) -> &'static str {
    static SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
        let template = |ids: &str| {
            format!(
                "INSERT INTO chat_memory_trim_archive (trim_id, message_id, change, {STORED_COLUMNS}) \
                 SELECT $1::uuid, id, $2, {STORED_COLUMNS} FROM chat_memory_messages \
                 WHERE chat_memory_id = $3::uuid AND id IN ({ids})"
            )
        };
        [
            template("SELECT value FROM json_each($4)"),
            template("SELECT jsonb_array_elements_text($4::jsonb)::uuid"),
        ]
    });
    match backend {
        Backend::Sqlite => &SQL[0],
        Backend::Postgres | Backend::Mysql => &SQL[1],
    }
}

fn now() -> NaiveDateTime {
    Utc::now().naive_utc()
}

fn ids_json<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    serde_json::Value::from(ids.into_iter().collect::<Vec<_>>()).to_string()
}

/// Runs `$body` in a transaction on whichever pool, with `$tx`, `$text` (the backend's text of a
/// PostgreSQL statement), `$insert` (its bulk insert) and `$archive` (its archive statement)
/// bound; commits when the body succeeds, rolls back otherwise.
macro_rules! in_transaction {
    ($store:expr, |$tx:ident, $text:ident, $insert:ident, $archive:ident| $body:expr) => {{
        let store = $store;
        let failed = |e| store.query_failed(e);
        match &store.pool {
            DbPool::Sqlite(pool, _) => {
                let mut transaction = pool.begin().await.map_err(failed)?;
                let $tx = &mut transaction;
                let $text = crate::store::sql::sqlite_text;
                let $archive = $text(archive_sql(Backend::Sqlite));
                let $insert = insert_sqlite::<ChatMemoryMessageRow>;
                let result = async { $body }.await.map_err(failed)?;
                transaction.commit().await.map_err(failed)?;
                result
            }
            DbPool::Postgres(pool, _) => {
                let mut transaction = pool.begin().await.map_err(failed)?;
                let $tx = &mut transaction;
                let $text = |postgres_sql: &'static str| postgres_sql;
                let $archive = archive_sql(Backend::Postgres);
                let $insert = insert_postgres::<ChatMemoryMessageRow>;
                let result = async { $body }.await.map_err(failed)?;
                transaction.commit().await.map_err(failed)?;
                result
            }
            // memscope only reads a MySQL database: it has no chat memories to change.
            DbPool::Mysql(..) => {
                return Err(StoreError::ReadOnly {
                    url: store.url.clone(),
                });
            }
        }
    }};
}

impl Store {
    /// Every chat memory with its message count, by label and chat id.
    pub async fn list_chat_memories(&self) -> Result<Vec<ChatMemorySummary>, StoreError> {
        on_pool!(self.pool, leak(&LIST_SQL), |pool, sql| {
            sqlx::query_as::<_, ChatMemorySummary>(sql)
                .fetch_all(pool)
                .await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// The chat memory `text` names: its whole id or a unique prefix (what the list shows).
    pub async fn resolve_chat_memory_id(&self, text: &str) -> Result<IdMatch, StoreError> {
        self.resolve_id(
            text,
            "SELECT id::text FROM chat_memories WHERE id::text LIKE $1 ORDER BY id::text LIMIT 6",
        )
        .await
    }

    pub async fn chat_memory(&self, id: &str) -> Result<Option<ChatMemoryRow>, StoreError> {
        let Some(id) = canonical(id) else {
            return Ok(None);
        };
        on_pool!(self.pool, leak(&GET_SQL), |pool, sql| {
            sqlx::query_as::<_, MemoryRecord>(sql)
                .bind(&id)
                .fetch_optional(pool)
                .await
        })
        .map(|r| r.map(ChatMemoryRow::from))
        .map_err(|e| self.query_failed(e))
    }

    /// The memory of a (memory node, chat id) pair.
    pub async fn find_chat_memory(
        &self,
        memory_node_id: &str,
        chat_id: &str,
    ) -> Result<Option<ChatMemoryRow>, StoreError> {
        on_pool!(self.pool, leak(&FIND_SQL), |pool, sql| {
            sqlx::query_as::<_, MemoryRecord>(sql)
                .bind(memory_node_id)
                .bind(chat_id)
                .fetch_optional(pool)
                .await
        })
        .map(|r| r.map(ChatMemoryRow::from))
        .map_err(|e| self.query_failed(e))
    }

    /// Messages in order, skipping `offset` and returning at most `limit` (all when `None`).
    pub async fn chat_memory_messages(
        &self,
        chat_memory_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<ChatMemoryMessageRow>, StoreError> {
        let Some(id) = canonical(chat_memory_id) else {
            return Ok(Vec::new());
        };
        on_pool!(self.pool, MESSAGES_SQL, |pool, sql| {
            sqlx::query_as::<_, MessageRecord>(sql)
                .bind(&id)
                .bind(limit.unwrap_or(i64::MAX).max(0))
                .bind(offset.max(0))
                .fetch_all(pool)
                .await
        })
        .map(|rows| rows.into_iter().map(ChatMemoryMessageRow::from).collect())
        .map_err(|e| self.query_failed(e))
    }

    pub async fn create_chat_memory(&self, memory: &ChatMemoryRow) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(self.pool, CREATE_SQL, |pool, sql| {
            sqlx::query(sql)
                .bind(&memory.id)
                .bind(&memory.memory_node_id)
                .bind(&memory.chat_id)
                .bind(&memory.label)
                .bind(&memory.policy)
                .bind(memory.created_at)
                .bind(memory.updated_at)
                .execute(pool)
                .await
                .map(|_| ())
        })
        .map_err(|e| self.query_failed(e))
    }

    /// Appends a message after the last one; its `seq` is chosen here and returned.
    pub async fn append_chat_memory_message(
        &self,
        message: &ChatMemoryMessageRow,
    ) -> Result<i64, StoreError> {
        self.ensure_writable()?;
        let mut row = message.clone();
        Ok(in_transaction!(self, |tx, text, insert, _archive| {
            row.seq = sqlx::query_scalar(text(NEXT_SEQ_SQL))
                .bind(&row.chat_memory_id)
                .fetch_one(&mut **tx)
                .await?;
            insert(tx, &CHAT_MEMORY_MESSAGES, std::slice::from_ref(&row)).await?;
            sqlx::query(text(TOUCH_SQL))
                .bind(&row.chat_memory_id)
                .bind(row.created_at)
                .execute(&mut **tx)
                .await?;
            Ok::<i64, sqlx::Error>(row.seq)
        }))
    }

    /// Applies a change in one transaction: archives the rows it removes or rewrites, writes the
    /// new versions and additions, archives the additions, and records the change. Returns the
    /// change's id.
    pub async fn apply_chat_memory_change(
        &self,
        chat_memory_id: &str,
        change: &MemoryChange,
    ) -> Result<String, StoreError> {
        self.ensure_writable()?;
        let change_id = uuid::Uuid::new_v4().to_string();
        let at = now();
        let removed = ids_json(change.removed.iter().map(String::as_str));
        let modified = ids_json(change.modified.iter().map(|r| r.id.as_str()));
        let added = ids_json(change.added.iter().map(|r| r.id.as_str()));
        let mut new_rows = change.modified.clone();
        new_rows.extend(change.added.iter().cloned());
        in_transaction!(self, |tx, text, insert, archive| {
            sqlx::query(text(INSERT_CHANGE_SQL))
                .bind(&change_id)
                .bind(chat_memory_id)
                .bind(&change.action)
                .bind(&change.policy)
                .bind(at)
                .execute(&mut **tx)
                .await?;
            for (kind, ids) in [("removed", &removed), ("modified", &modified)] {
                sqlx::query(AssertSqlSafe(archive))
                    .bind(&change_id)
                    .bind(kind)
                    .bind(chat_memory_id)
                    .bind(ids)
                    .execute(&mut **tx)
                    .await?;
            }
            sqlx::query(text(DELETE_ARCHIVED_SQL))
                .bind(chat_memory_id)
                .bind(&change_id)
                .bind("added")
                .execute(&mut **tx)
                .await?;
            insert(tx, &CHAT_MEMORY_MESSAGES, &new_rows).await?;
            sqlx::query(AssertSqlSafe(archive))
                .bind(&change_id)
                .bind("added")
                .bind(chat_memory_id)
                .bind(&added)
                .execute(&mut **tx)
                .await?;
            sqlx::query(text(TOUCH_SQL))
                .bind(chat_memory_id)
                .bind(at)
                .execute(&mut **tx)
                .await?;
            Ok::<(), sqlx::Error>(())
        });
        Ok(change_id)
    }

    /// Undoes the memory's last change not yet undone: deletes what it wrote, restores what it
    /// removed or rewrote exactly as it was. `None` when there is nothing to undo.
    pub async fn undo_chat_memory_change(
        &self,
        chat_memory_id: &str,
    ) -> Result<Option<ChangeRecord>, StoreError> {
        self.ensure_writable()?;
        let Some(memory_id) = canonical(chat_memory_id) else {
            return Ok(None);
        };
        let at = now();
        Ok(in_transaction!(self, |tx, text, _insert, _archive| {
            let last: Option<ChangeRecord> =
                sqlx::query_as::<_, ChangeRecord>(text(LAST_CHANGE_SQL))
                    .bind(&memory_id)
                    .fetch_optional(&mut **tx)
                    .await?;
            let Some(mut last) = last else {
                return Ok(None);
            };
            sqlx::query(text(DELETE_ARCHIVED_SQL))
                .bind(&memory_id)
                .bind(&last.id)
                .bind("removed")
                .execute(&mut **tx)
                .await?;
            sqlx::query(text(leak(&RESTORE_SQL)))
                .bind(&memory_id)
                .bind(&last.id)
                .execute(&mut **tx)
                .await?;
            sqlx::query(text(MARK_UNDONE_SQL))
                .bind(&last.id)
                .bind(at)
                .execute(&mut **tx)
                .await?;
            last.undone_at = Some(at);
            Ok::<Option<ChangeRecord>, sqlx::Error>(Some(last))
        }))
    }

    /// Every change of a memory, oldest first.
    pub async fn chat_memory_changes(
        &self,
        chat_memory_id: &str,
    ) -> Result<Vec<ChangeRecord>, StoreError> {
        let Some(id) = canonical(chat_memory_id) else {
            return Ok(Vec::new());
        };
        on_pool!(self.pool, CHANGES_SQL, |pool, sql| {
            sqlx::query_as::<_, ChangeRecord>(sql)
                .bind(&id)
                .fetch_all(pool)
                .await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// Deletes an empty memory with its change history, in one transaction. Returns the
    /// messages it holds instead when it holds any (then nothing is deleted): 0 when it went.
    pub async fn delete_empty_chat_memory(&self, chat_memory_id: &str) -> Result<i64, StoreError> {
        self.ensure_writable()?;
        let Some(id) = canonical(chat_memory_id) else {
            return Ok(0);
        };
        let lock = lock_memory_sql(self.backend());
        Ok(in_transaction!(self, |tx, text, _insert, _archive| {
            sqlx::query(AssertSqlSafe(lock))
                .bind(&id)
                .fetch_optional(&mut **tx)
                .await?;
            let held: i64 = sqlx::query_scalar(text(COUNT_MESSAGES_SQL))
                .bind(&id)
                .fetch_one(&mut **tx)
                .await?;
            if held == 0 {
                sqlx::query(text(DELETE_MEMORY_SQL))
                    .bind(&id)
                    .execute(&mut **tx)
                    .await?;
            }
            Ok::<i64, sqlx::Error>(held)
        }))
    }

    /// The ids of the messages a delete takes, before filtering by role.
    pub async fn chat_memory_delete_candidates(
        &self,
        chat_memory_id: &str,
        scope: DeleteScope,
    ) -> Result<Vec<String>, StoreError> {
        let Some(id) = canonical(chat_memory_id) else {
            return Ok(Vec::new());
        };
        let failed = |e| self.query_failed(e);
        let latest: Option<String> = match scope {
            DeleteScope::All => None,
            DeleteScope::LatestRequest => {
                let latest: Option<Option<String>> =
                    on_pool!(self.pool, LATEST_REQUEST_SQL, |pool, sql| {
                        sqlx::query_scalar(sql).bind(&id).fetch_optional(pool).await
                    })
                    .map_err(failed)?;
                match latest.flatten() {
                    Some(request) => Some(request),
                    None => return Ok(Vec::new()),
                }
            }
        };
        on_pool!(self.pool, DELETE_CANDIDATES_SQL, |pool, sql| {
            sqlx::query_scalar(sql)
                .bind(&id)
                .bind(scope == DeleteScope::All)
                .bind(latest.as_deref())
                .fetch_all(pool)
                .await
        })
        .map_err(failed)
    }
}

/// A lazily built query text as the `&'static str` sqlx wants.
fn leak(text: &'static LazyLock<String>) -> &'static str {
    text.as_str()
}

/// The id as the database stores it, or `None` when it is not a UUID (no row has such an id).
fn canonical(id: &str) -> Option<String> {
    uuid::Uuid::parse_str(id)
        .ok()
        .map(|u| u.hyphenated().to_string())
}
