//! The reads the CLI, the TUI and `doctor` make. Every query has an index behind it (see the
//! migrations and `assets/schema.md`).

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::NaiveDateTime;
use futures_util::TryStreamExt;
use sqlx::FromRow;

use super::sql::dialect_text;
use super::{CancelFlag, DbPool, Store, StoreError, sqlite_scan};
use crate::memory::model::{MessageFile, StoredMessage};

/// The columns of a [`StoredMessage`], uuid columns read as text (a literal so `concat!` can
/// build whole query texts from it).
macro_rules! message_columns {
    () => {
        "m.id::text AS id, m.conversation_id::text AS conversation_id, \
         m.parent_message_id::text AS parent_message_id, m.query, m.answer, \
         m.message_tokens::bigint AS message_tokens, m.answer_tokens::bigint AS answer_tokens, \
         m.status, m.error, m.invoke_from, m.workflow_run_id::text AS workflow_run_id, \
         m.created_at"
    };
}

/// Ids bound per `IN (…)` query. Shorter lists are padded with their first id, so every query
/// has one text and one prepared statement.
pub(super) const IN_LIST_LEN: usize = 256;

/// `prefix` followed by `($1::uuid, …, $N::uuid)` and `suffix`, for [`IN_LIST_LEN`] ids.
pub(super) fn in_list_query(prefix: &str, suffix: &str) -> String {
    let placeholders: Vec<String> = (1..=IN_LIST_LEN).map(|n| format!("${n}::uuid")).collect();
    format!("{prefix}({}){suffix}", placeholders.join(", "))
}

static MESSAGE_FILES_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        "SELECT mf.id::text AS id, mf.message_id::text AS message_id, mf.type AS file_type, \
         mf.transfer_method, mf.url, mf.belongs_to, mf.upload_file_id::text AS upload_file_id, \
         uf.name AS name \
         FROM message_files mf LEFT JOIN upload_files uf ON uf.id = mf.upload_file_id \
         WHERE mf.message_id IN ",
        " ORDER BY mf.message_id, mf.created_at, mf.id",
    )
});

static AGENT_THOUGHTS_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        "SELECT message_id::text AS message_id, COUNT(*)::bigint AS thoughts \
         FROM message_agent_thoughts WHERE message_id IN ",
        " GROUP BY message_id",
    )
});

static EXISTING_RUNS_SQL: LazyLock<String> =
    LazyLock::new(|| in_list_query("SELECT id::text FROM workflow_runs WHERE id IN ", ""));

/// Ids as the database stores them (lowercase, hyphenated), dropping what is not a UUID: no row
/// can have such an id, and PostgreSQL would reject it in a `::uuid` cast.
pub(super) fn canonical_uuids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen = HashSet::new();
    ids.into_iter()
        .filter_map(canonical_uuid)
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

pub(super) fn canonical_uuid(id: &str) -> Option<String> {
    uuid::Uuid::parse_str(id)
        .ok()
        .map(|u| u.hyphenated().to_string())
}

/// What a typed id names: a whole id or any unique prefix of one, as git takes commit ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdMatch {
    One(String),
    Unknown,
    /// Several ids start with the prefix: the first [`ID_CANDIDATES`] of them, sorted.
    Ambiguous(Vec<String>),
}

/// How many candidates an ambiguous prefix names.
pub const ID_CANDIDATES: usize = 5;

impl IdMatch {
    /// The match for ids found by a prefix query asking for one more than [`ID_CANDIDATES`].
    pub(super) fn from_found(mut ids: Vec<String>) -> IdMatch {
        match ids.len() {
            0 => IdMatch::Unknown,
            1 => IdMatch::One(ids.remove(0)),
            _ => {
                ids.truncate(ID_CANDIDATES);
                IdMatch::Ambiguous(ids)
            }
        }
    }
}

/// The `LIKE` pattern for the ids starting with `text`, `None` when no UUID can start so.
pub(super) fn id_prefix_pattern(text: &str) -> Option<String> {
    let prefix = text.trim().to_ascii_lowercase();
    let uuid_like = !prefix.is_empty()
        && prefix.len() <= 36
        && prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    uuid_like.then(|| format!("{prefix}%"))
}

/// A `LIKE` pattern matching `text` literally (with `\` as the escape character).
pub(super) fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A position in the conversation list: the last row of the previous page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationCursor {
    pub updated_at: NaiveDateTime,
    pub id: String,
}

/// Which conversations [`Store::list_conversations`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationFilter {
    pub app_id: Option<String>,
    /// Matched case-insensitively against the conversation's name, its id (as a prefix), its
    /// app's name, and its messages' query and answer text.
    pub search: Option<String>,
    pub limit: i64,
    /// Rows strictly after this cursor in the list's order.
    pub after: Option<ConversationCursor>,
    /// List conversations deleted in Dify (`is_deleted`) too; Dify hides them.
    pub include_deleted: bool,
}

impl Default for ConversationFilter {
    fn default() -> Self {
        ConversationFilter {
            app_id: None,
            search: None,
            limit: 50,
            after: None,
            include_deleted: false,
        }
    }
}

/// One row of the conversation list.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ConversationSummary {
    pub id: String,
    pub name: String,
    pub app_id: String,
    /// `None` when the app row is missing.
    pub app_name: Option<String>,
    pub app_mode: Option<String>,
    /// The conversation's own mode.
    pub mode: String,
    pub message_count: i64,
    /// The newest message's time, or the conversation's `updated_at` when it has none.
    pub last_activity: NaiveDateTime,
    /// The list's sort key, with `id`.
    pub updated_at: NaiveDateTime,
    /// Deleted in Dify: hidden there, listed here only on request.
    pub is_deleted: bool,
}

impl ConversationSummary {
    /// The cursor for the page after this row.
    pub fn cursor(&self) -> ConversationCursor {
        ConversationCursor {
            updated_at: self.updated_at,
            id: self.id.clone(),
        }
    }
}

/// One conversation with its app.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ConversationInfo {
    pub id: String,
    pub name: String,
    pub mode: String,
    pub status: String,
    pub from_source: String,
    pub dialogue_count: i64,
    pub app_id: String,
    pub app_name: Option<String>,
    pub app_mode: Option<String>,
    /// The app's memory window (`MemoryConfig.window.size`), when set.
    pub memory_window: Option<i64>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// Deleted in Dify (`is_deleted`): its API and console no longer show it.
    pub is_deleted: bool,
    /// Memory reads only the answered rows, newest first, as Dify did before regeneration
    /// threads (set from the schema when the conversation is loaded).
    #[sqlx(skip)]
    pub answered_rows_only: bool,
}

/// A message whose `workflow_run_id` names a run that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct DanglingRunRef {
    pub message_id: String,
    pub conversation_id: String,
    pub workflow_run_id: String,
}

/// A node execution column that is not valid JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadNodeJson {
    pub node_execution_id: String,
    pub workflow_run_id: Option<String>,
    pub node_id: String,
    /// `inputs`, `process_data` or `outputs`.
    pub column: &'static str,
    /// serde_json's description of the first error.
    pub error: String,
}

/// A row a whole-table scan could not read (text that is not UTF-8, a value of the wrong
/// type): the scan reports it and goes on with the next row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    pub table: &'static str,
    /// The row's id, as far as it reads (undecodable bytes replaced).
    pub id: String,
    /// The driver's description, naming the column.
    pub error: String,
}

/// Rows in one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableCount {
    pub table: &'static str,
    pub rows: i64,
}

#[derive(FromRow)]
struct MessageRecord {
    id: String,
    conversation_id: String,
    parent_message_id: Option<String>,
    query: String,
    answer: String,
    message_tokens: i64,
    answer_tokens: i64,
    status: String,
    error: Option<String>,
    invoke_from: Option<String>,
    workflow_run_id: Option<String>,
    created_at: NaiveDateTime,
}

impl From<MessageRecord> for StoredMessage {
    fn from(r: MessageRecord) -> Self {
        StoredMessage {
            id: r.id,
            conversation_id: r.conversation_id,
            parent_message_id: r.parent_message_id,
            query: r.query,
            answer: r.answer,
            message_tokens: r.message_tokens,
            answer_tokens: r.answer_tokens,
            status: r.status,
            error: r.error,
            invoke_from: r.invoke_from,
            workflow_run_id: r.workflow_run_id,
            created_at: r.created_at,
        }
    }
}

#[derive(FromRow)]
struct MessageFileRecord {
    id: String,
    message_id: String,
    file_type: String,
    transfer_method: String,
    url: Option<String>,
    belongs_to: Option<String>,
    upload_file_id: Option<String>,
    name: Option<String>,
}

impl From<MessageFileRecord> for MessageFile {
    fn from(r: MessageFileRecord) -> Self {
        MessageFile {
            id: r.id,
            message_id: r.message_id,
            file_type: r.file_type,
            transfer_method: r.transfer_method,
            url: r.url,
            belongs_to: r.belongs_to,
            upload_file_id: r.upload_file_id,
            name: r.name,
        }
    }
}

#[derive(FromRow)]
struct NodeJsonRecord {
    id: String,
    workflow_run_id: Option<String>,
    node_id: String,
    inputs: Option<String>,
    process_data: Option<String>,
    outputs: Option<String>,
}

impl NodeJsonRecord {
    fn bad_columns(self) -> impl Iterator<Item = BadNodeJson> {
        [
            ("inputs", self.inputs),
            ("process_data", self.process_data),
            ("outputs", self.outputs),
        ]
        .into_iter()
        .filter_map(move |(column, text)| {
            let error = serde_json::from_str::<serde::de::IgnoredAny>(text.as_deref()?).err()?;
            Some(BadNodeJson {
                node_execution_id: self.id.clone(),
                workflow_run_id: self.workflow_run_id.clone(),
                node_id: self.node_id.clone(),
                column,
                error: error.to_string(),
            })
        })
    }
}

/// The tables [`Store::table_counts`] reports, with their count queries.
const COUNTED_TABLES: &[(&str, &str)] = &[
    ("apps", "SELECT COUNT(*) FROM apps"),
    ("conversations", "SELECT COUNT(*) FROM conversations"),
    ("messages", "SELECT COUNT(*) FROM messages"),
    ("message_files", "SELECT COUNT(*) FROM message_files"),
    ("upload_files", "SELECT COUNT(*) FROM upload_files"),
    ("workflow_runs", "SELECT COUNT(*) FROM workflow_runs"),
    (
        "workflow_node_executions",
        "SELECT COUNT(*) FROM workflow_node_executions",
    ),
    (
        "workflow_node_execution_offload",
        "SELECT COUNT(*) FROM workflow_node_execution_offload",
    ),
    ("chat_memories", "SELECT COUNT(*) FROM chat_memories"),
    (
        "chat_memory_messages",
        "SELECT COUNT(*) FROM chat_memory_messages",
    ),
    (
        "chat_memory_trims",
        "SELECT COUNT(*) FROM chat_memory_trims",
    ),
    (
        "chat_memory_trim_archive",
        "SELECT COUNT(*) FROM chat_memory_trim_archive",
    ),
    ("user", "SELECT COUNT(*) FROM \"user\""),
    ("flow", "SELECT COUNT(*) FROM flow"),
    ("job", "SELECT COUNT(*) FROM job"),
    ("message", "SELECT COUNT(*) FROM message"),
    ("memory_base", "SELECT COUNT(*) FROM memory_base"),
    (
        "memory_base_session",
        "SELECT COUNT(*) FROM memory_base_session",
    ),
    (
        "memory_base_workflow_run",
        "SELECT COUNT(*) FROM memory_base_workflow_run",
    ),
    (
        "message_ingestion_record",
        "SELECT COUNT(*) FROM message_ingestion_record",
    ),
];

impl Store {
    /// Conversations newest first (`updated_at DESC, id DESC`), one page at a time (the search
    /// and its paths are in `search.rs`).
    pub async fn list_conversations(
        &self,
        filter: &ConversationFilter,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        let mut rows = Vec::new();
        self.stream_conversations(filter, |row| rows.push(row))
            .await?;
        Ok(rows)
    }

    /// The conversation `text` names: its whole id or a unique prefix (what the list shows).
    pub async fn resolve_conversation_id(&self, text: &str) -> Result<IdMatch, StoreError> {
        self.resolve_id(
            text,
            "SELECT id::text FROM conversations WHERE id::text LIKE $1 ORDER BY id::text LIMIT 6",
        )
        .await
    }

    /// `text` as a whole id (not checked: the caller's lookup says whether it exists), else the
    /// ids `prefix_sql` finds for the prefix pattern `$1` (at most [`ID_CANDIDATES`] + 1).
    pub(super) async fn resolve_id(
        &self,
        text: &str,
        prefix_sql: &'static str,
    ) -> Result<IdMatch, StoreError> {
        if let Some(id) = canonical_uuid(text) {
            return Ok(IdMatch::One(id));
        }
        let Some(pattern) = id_prefix_pattern(text) else {
            return Ok(IdMatch::Unknown);
        };
        on_pool!(self.pool, prefix_sql, |pool, sql| {
            sqlx::query_scalar(sql).bind(&pattern).fetch_all(pool).await
        })
        .map(IdMatch::from_found)
        .map_err(|e| self.query_failed(e))
    }

    /// One conversation with its app's name, mode and memory window.
    pub async fn conversation_info(
        &self,
        conversation_id: &str,
    ) -> Result<Option<ConversationInfo>, StoreError> {
        let Some(id) = canonical_uuid(conversation_id) else {
            return Ok(None);
        };
        let query = if self.catalog.has_column("apps", "memory_window") {
            CONVERSATION_INFO_SQL
        } else {
            CONVERSATION_INFO_WITHOUT_WINDOW_SQL
        };
        on_pool!(self.pool, query, |pool, sql| {
            sqlx::query_as(sql).bind(&id).fetch_optional(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// Dify's history query: the newest `limit` messages of a conversation, newest first;
    /// before regeneration threads only answered ones, as Dify's query then filtered
    /// ([`super::DifySchema::memory_skips_unanswered`]).
    /// Deliberate deviation: `id DESC` breaks ties between messages of the same second, where
    /// Dify's order is undefined, so the result is deterministic.
    pub async fn history_messages(
        &self,
        conversation_id: &str,
        limit: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let query = if self.profile.dify.memory_skips_unanswered() {
            ANSWERED_HISTORY_SQL
        } else {
            HISTORY_SQL
        };
        self.conversation_messages(conversation_id, query, Some(limit))
            .await
    }

    /// How many conversations Dify has deleted (0 where the schema cannot mark them).
    pub async fn deleted_conversation_count(&self) -> Result<i64, StoreError> {
        on_pool!(self.pool, DELETED_CONVERSATIONS_SQL, |pool, sql| {
            sqlx::query_scalar(sql).fetch_one(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// Every message of a conversation, oldest first (ties by id), for the message tree.
    pub async fn all_messages(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.conversation_messages(conversation_id, ALL_MESSAGES_SQL, None)
            .await
    }

    async fn conversation_messages(
        &self,
        conversation_id: &str,
        query: &'static str,
        limit: Option<i64>,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let Some(id) = canonical_uuid(conversation_id) else {
            return Ok(Vec::new());
        };
        let records: Vec<MessageRecord> = on_pool!(self.pool, query, |pool, sql| {
            let mut q = sqlx::query_as(sql).bind(&id);
            if let Some(limit) = limit {
                q = q.bind(limit.max(0));
            }
            q.fetch_all(pool).await
        })
        .map_err(|e| self.query_failed(e))?;
        Ok(records.into_iter().map(StoredMessage::from).collect())
    }

    /// The files of the given messages, with their upload names, ordered by message then time.
    pub async fn message_files(
        &self,
        message_ids: &[String],
    ) -> Result<Vec<MessageFile>, StoreError> {
        let ids = canonical_uuids(message_ids.iter().map(String::as_str));
        let mut files = Vec::new();
        for chunk in ids.chunks(IN_LIST_LEN) {
            let records: Vec<MessageFileRecord> =
                on_pool!(self.pool, MESSAGE_FILES_SQL.as_str(), |pool, sql| {
                    let mut query = sqlx::query_as(sql);
                    for id in padded(chunk) {
                        query = query.bind(id);
                    }
                    query.fetch_all(pool).await
                })
                .map_err(|e| self.query_failed(e))?;
            files.extend(records.into_iter().map(MessageFile::from));
        }
        // Chunks are ordered within themselves; keep the whole list in one order.
        files.sort_by(|a, b| a.message_id.cmp(&b.message_id));
        Ok(files)
    }

    /// How many agent thoughts (`message_agent_thoughts`: a thought with its tool calls and
    /// their observations) each of the given messages has; none where the schema has no agent
    /// tables. Messages without thoughts are left out.
    pub async fn agent_thought_counts(
        &self,
        message_ids: &[String],
    ) -> Result<Vec<(String, i64)>, StoreError> {
        if !self.profile.dify.agent_thoughts {
            return Ok(Vec::new());
        }
        let ids = canonical_uuids(message_ids.iter().map(String::as_str));
        let mut counts = Vec::new();
        for chunk in ids.chunks(IN_LIST_LEN) {
            let rows: Vec<(String, i64)> =
                on_pool!(self.pool, AGENT_THOUGHTS_SQL.as_str(), |pool, sql| {
                    let mut query = sqlx::query_as(sql);
                    for id in padded(chunk) {
                        query = query.bind(id);
                    }
                    query.fetch_all(pool).await
                })
                .map_err(|e| self.query_failed(e))?;
            counts.extend(rows);
        }
        counts.sort();
        Ok(counts)
    }

    /// Which of the given workflow run ids have a `workflow_runs` row.
    pub async fn existing_workflow_runs(
        &self,
        run_ids: &[String],
    ) -> Result<HashSet<String>, StoreError> {
        let ids = canonical_uuids(run_ids.iter().map(String::as_str));
        let mut found = HashSet::new();
        for chunk in ids.chunks(IN_LIST_LEN) {
            let rows: Vec<String> = on_pool!(self.pool, EXISTING_RUNS_SQL.as_str(), |pool, sql| {
                let mut query = sqlx::query_scalar(sql);
                for id in padded(chunk) {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
            found.extend(rows);
        }
        Ok(found)
    }

    /// Streams every message, calling `visit` once per conversation with all its messages
    /// (oldest first). One ordered query, so memory holds a few conversations at a time. On
    /// SQLite the scan reads SQLite directly on a blocking thread (see `sqlite_scan`); rows
    /// come out exactly as [`Store::for_each_conversation_via_sqlx`] gives them.
    pub async fn for_each_conversation(
        &self,
        visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        self.for_each_conversation_until(&CancelFlag::default(), visit, bad_row)
            .await
    }

    /// [`Store::for_each_conversation`] until `stop` is cancelled: from then on no conversation
    /// is handed over and the scan ends at its next row (on SQLite, the scan thread has stopped
    /// when this returns). Returns `Ok` either way; `stop` says which it was.
    pub async fn for_each_conversation_until(
        &self,
        stop: &CancelFlag,
        mut visit: impl FnMut(Vec<StoredMessage>),
        mut bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        if let DbPool::Sqlite(pool, dialect) = &self.pool {
            let sql = sqlite_scan::ScanSql {
                scan: with_rowid(dialect_text(*dialect, EVERY_MESSAGE_SQL)),
                by_rowid: dialect_text(*dialect, MESSAGE_BY_ROWID_SQL),
            };
            let decode = |raw: &sqlx::sqlite::SqliteRow| {
                sqlite_scan::decode_row::<MessageRecord>(raw, "messages")
            };
            let scan = sqlite_scan::for_each_conversation(
                pool,
                sql,
                decode,
                stop,
                &mut visit,
                &mut bad_row,
            );
            match scan.await {
                Ok(()) => return Ok(()),
                // A table without `rowid`: the row-by-row scan reads it.
                Err(sqlite_scan::Unavailable::Prepare) => {}
                Err(sqlite_scan::Unavailable::Sqlx(error)) => return Err(self.query_failed(error)),
            }
        }
        self.conversations_via_sqlx(stop, visit, bad_row).await
    }

    /// [`Store::for_each_conversation`] through sqlx's row stream on every backend: what
    /// PostgreSQL uses (rows arrive as the server sends them, one conversation held at a time),
    /// and the reference the SQLite scan is tested against.
    pub async fn for_each_conversation_via_sqlx(
        &self,
        visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        self.conversations_via_sqlx(&CancelFlag::default(), visit, bad_row)
            .await
    }

    async fn conversations_via_sqlx(
        &self,
        stop: &CancelFlag,
        mut visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        let mut current: Vec<StoredMessage> = Vec::new();
        let mut on_record = |record: MessageRecord| {
            if current
                .last()
                .is_some_and(|m| m.conversation_id != record.conversation_id)
            {
                visit(std::mem::take(&mut current));
            }
            current.push(record.into());
        };
        self.scan_rows_until(stop, EVERY_MESSAGE_SQL, "messages", &mut on_record, bad_row)
            .await?;
        if !current.is_empty() && !stop.is_cancelled() {
            visit(current);
        }
        Ok(())
    }

    /// Streams the rows of `postgres_sql` decoded as `R`, one at a time. A row that does not
    /// decode goes to `bad_row` with its id (the `id` column) and the scan goes on: one bad row
    /// never hides the rest of a table. `table` names the rows in reports.
    pub(super) async fn scan_rows<R: ScannedRow>(
        &self,
        postgres_sql: &'static str,
        table: &'static str,
        row: impl FnMut(R),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        let never = CancelFlag::default();
        self.scan_rows_until(&never, postgres_sql, table, row, bad_row)
            .await
    }

    /// [`Store::scan_rows`] until `stop` is cancelled: the stream is dropped at the next row.
    async fn scan_rows_until<R: ScannedRow>(
        &self,
        stop: &CancelFlag,
        postgres_sql: &'static str,
        table: &'static str,
        mut row: impl FnMut(R),
        mut bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        on_pool!(self.pool, postgres_sql, |pool, sql| {
            let mut rows = sqlx::query(sql).fetch(pool);
            while let Some(raw) = rows.try_next().await.map_err(|e| self.query_failed(e))? {
                if stop.is_cancelled() {
                    break;
                }
                match R::from_row(&raw) {
                    Ok(record) => row(record),
                    Err(error) => bad_row(BadRow {
                        table,
                        id: unreadable_row_id(&raw),
                        error: error.to_string(),
                    }),
                }
            }
        });
        Ok(())
    }

    /// Messages whose `workflow_run_id` points to no `workflow_runs` row (Dify declares no FK,
    /// and run cleanup leaves them behind). Rows that do not read go to `bad_row`.
    pub async fn dangling_workflow_runs(
        &self,
        bad_row: impl FnMut(BadRow),
    ) -> Result<Vec<DanglingRunRef>, StoreError> {
        let mut dangling = Vec::new();
        self.scan_rows(DANGLING_RUNS_SQL, "messages", |r| dangling.push(r), bad_row)
            .await?;
        Ok(dangling)
    }

    /// Node execution `inputs`, `process_data` and `outputs` values that are not valid JSON.
    /// The columns are streamed and parsed here, so any database size fits in memory. Rows that
    /// do not read at all go to `bad_row`.
    pub async fn bad_node_json(
        &self,
        bad_row: impl FnMut(BadRow),
    ) -> Result<Vec<BadNodeJson>, StoreError> {
        let mut bad = Vec::new();
        self.scan_rows(
            NODE_JSON_SQL,
            "workflow_node_executions",
            |record: NodeJsonRecord| bad.extend(record.bad_columns()),
            bad_row,
        )
        .await?;
        Ok(bad)
    }

    /// Whether Langflow's `message` table holds a message with this id.
    pub async fn lf_message_exists(&self, id: &str) -> Result<bool, StoreError> {
        let found: Option<i64> = on_pool!(
            self.pool,
            "SELECT 1::bigint FROM message WHERE id = $1::uuid",
            |pool, sql| sqlx::query_scalar(sql).bind(id).fetch_optional(pool).await
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(found.is_some())
    }

    /// Rows per table, for the tables this database has.
    pub async fn table_counts(&self) -> Result<Vec<TableCount>, StoreError> {
        let mut counts = Vec::new();
        for &(table, query) in COUNTED_TABLES {
            if !self.has_table(table) {
                continue;
            }
            let rows: i64 = on_pool!(self.pool, query, |pool, sql| {
                sqlx::query_scalar(sql).fetch_one(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
            counts.push(TableCount { table, rows });
        }
        Ok(counts)
    }
}

/// A row type [`Store::scan_rows`] decodes from either pool.
pub(super) trait ScannedRow:
    for<'r> FromRow<'r, sqlx::sqlite::SqliteRow>
    + for<'r> FromRow<'r, sqlx::postgres::PgRow>
    + Send
    + Unpin
{
}

impl<R> ScannedRow for R where
    R: for<'r> FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> FromRow<'r, sqlx::postgres::PgRow>
        + Send
        + Unpin
{
}

/// The `id` column of a row that did not decode, as far as it reads.
pub(super) fn unreadable_row_id<R: sqlx::Row>(raw: &R) -> String
where
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
{
    raw.try_get::<String, _>("id")
        .or_else(|_| {
            raw.try_get::<Vec<u8>, _>("id")
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        })
        .unwrap_or_else(|_| "(unreadable id)".to_owned())
}

/// `sql` (a SQLite `SELECT`) with `rowid` as its first column.
fn with_rowid(sql: &str) -> String {
    let columns = sql.strip_prefix("SELECT ").unwrap_or(sql);
    format!("SELECT m.rowid, {columns}")
}

/// `ids` (at most [`IN_LIST_LEN`]) padded to [`IN_LIST_LEN`] values by repeating the first: a
/// repeated value does not change an `IN` list's result.
pub(super) fn padded(ids: &[String]) -> impl Iterator<Item = &String> {
    ids.iter()
        .chain(ids.first().into_iter().cycle())
        .take(IN_LIST_LEN)
}

/// Conversations with their apps, up to the `WHERE`; `$memory_window` is the app's window
/// column expression.
macro_rules! conversation_info_select {
    ($memory_window:literal) => {
        concat!(
            "SELECT c.id::text AS id, c.name, c.mode, c.status, c.from_source, \
             c.dialogue_count::bigint AS dialogue_count, c.app_id::text AS app_id, \
             a.name AS app_name, a.mode AS app_mode, ",
            $memory_window,
            " AS memory_window, c.created_at, c.updated_at, c.is_deleted AS is_deleted \
             FROM conversations c LEFT JOIN apps a ON a.id = c.app_id "
        )
    };
}

/// One conversation with its app.
macro_rules! conversation_info_sql {
    ($memory_window:literal) => {
        concat!(
            conversation_info_select!($memory_window),
            "WHERE c.id = $1::uuid"
        )
    };
}

const CONVERSATION_INFO_SQL: &str = conversation_info_sql!("a.memory_window::bigint");

/// For Dify's own database, whose `apps` keeps the window in the app config, not a column.
const CONVERSATION_INFO_WITHOUT_WINDOW_SQL: &str = conversation_info_sql!("NULL::bigint");

const HISTORY_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE m.conversation_id = $1::uuid \
     ORDER BY m.created_at DESC, m.id DESC LIMIT $2"
);

const ANSWERED_HISTORY_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE m.conversation_id = $1::uuid AND m.answer <> '' \
     ORDER BY m.created_at DESC, m.id DESC LIMIT $2"
);

const ALL_MESSAGES_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE m.conversation_id = $1::uuid ORDER BY m.created_at, m.id"
);

/// Messages (`m`) of conversations Dify has not deleted. The subquery is uncorrelated, so it
/// runs once per scan (and finds nothing where the schema cannot mark a deletion).
macro_rules! not_deleted {
    () => {
        "m.conversation_id NOT IN (SELECT c.id FROM conversations c WHERE c.is_deleted)"
    };
}

const EVERY_MESSAGE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE ",
    not_deleted!(),
    " ORDER BY m.conversation_id, m.created_at, m.id"
);

/// One message by SQLite `rowid`, for the rows the SQLite scan leaves to sqlx.
const MESSAGE_BY_ROWID_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE m.rowid = $1"
);

const DELETED_CONVERSATIONS_SQL: &str =
    "SELECT COUNT(*)::bigint FROM conversations c WHERE c.is_deleted";

const DANGLING_RUNS_SQL: &str = concat!(
    "SELECT m.id::text AS id, m.id::text AS message_id, \
     m.conversation_id::text AS conversation_id, m.workflow_run_id::text AS workflow_run_id \
     FROM messages m LEFT JOIN workflow_runs r ON r.id = m.workflow_run_id \
     WHERE m.workflow_run_id IS NOT NULL AND r.id IS NULL AND ",
    not_deleted!(),
    " ORDER BY m.conversation_id, m.created_at, m.id"
);

const NODE_JSON_SQL: &str = "\
SELECT id::text AS id, workflow_run_id::text AS workflow_run_id, node_id, inputs, process_data, \
       outputs \
FROM workflow_node_executions ORDER BY created_at, id";

// After the query macros, which it uses.
mod windows;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_literally() {
        assert_eq!(like_escape("50%_off\\"), "50\\%\\_off\\\\");
        assert_eq!(like_escape("plain"), "plain");
    }

    #[test]
    fn uuids_are_canonicalised_deduplicated_and_filtered() {
        let ids = canonical_uuids([
            "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "6f9619ff-8b86-d011-b42d-00c04fc964ff",
            "not-a-uuid",
            "00000000-0000-0000-0000-000000000001",
        ]);
        assert_eq!(
            ids,
            [
                "6f9619ff-8b86-d011-b42d-00c04fc964ff",
                "00000000-0000-0000-0000-000000000001"
            ]
        );
    }

    #[test]
    fn in_list_has_one_placeholder_per_slot() {
        let sql = in_list_query("SELECT 1 WHERE x IN ", " ORDER BY x");
        assert!(sql.starts_with("SELECT 1 WHERE x IN ($1::uuid, $2::uuid, "));
        assert!(sql.ends_with(&format!("${IN_LIST_LEN}::uuid) ORDER BY x")));
        assert_eq!(sql.matches("::uuid").count(), IN_LIST_LEN);
    }

    #[test]
    fn in_lists_are_padded_with_the_first_id() {
        let ids = vec!["a".to_string(), "b".to_string()];
        let values: Vec<&String> = padded(&ids).collect();
        assert_eq!(values.len(), IN_LIST_LEN);
        assert_eq!((values[0], values[1]), (&ids[0], &ids[1]));
        assert!(values[2..].iter().all(|v| *v == "a"));
        let full: Vec<String> = (0..IN_LIST_LEN).map(|i| i.to_string()).collect();
        assert!(padded(&full).eq(full.iter()));
    }

    #[test]
    fn bad_json_columns_are_reported_by_name() {
        let record = NodeJsonRecord {
            id: "n1".into(),
            workflow_run_id: Some("r1".into()),
            node_id: "llm".into(),
            inputs: Some("{\"a\": 1}".into()),
            process_data: Some("{truncated".into()),
            outputs: None,
        };
        let bad: Vec<BadNodeJson> = record.bad_columns().collect();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].column, "process_data");
        assert_eq!(bad[0].node_execution_id, "n1");
        assert!(!bad[0].error.is_empty());
    }
}
