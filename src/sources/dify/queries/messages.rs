//! A conversation's messages (Dify's history window, or all of them for the tree) and what
//! hangs off messages: their files, agent thoughts and workflow runs; Langflow's message check.

use std::collections::HashSet;
use std::sync::LazyLock;

use sqlx::FromRow;

use super::columns::MessageRecord;
use crate::memory::model::{MessageFile, StoredMessage};
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::ids::{canonical_uuid, canonical_uuids, in_list_query};
use crate::store::pool::on_pool;

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

/// The files of every message of one conversation, in one indexed query: a whole conversation
/// may hold 50,000 messages, which in `IN` lists of 256 ids were ~200 queries.
const CONVERSATION_FILES_SQL: &str = "SELECT mf.id::text AS id, mf.message_id::text AS message_id, \
     mf.type AS file_type, mf.transfer_method, mf.url, mf.belongs_to, \
     mf.upload_file_id::text AS upload_file_id, uf.name AS name \
     FROM message_files mf JOIN messages m ON m.id = mf.message_id \
     LEFT JOIN upload_files uf ON uf.id = mf.upload_file_id \
     WHERE m.conversation_id = $1::uuid ORDER BY mf.message_id, mf.created_at, mf.id";

static AGENT_THOUGHTS_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        "SELECT message_id::text AS message_id, COUNT(*)::bigint AS thoughts \
         FROM message_agent_thoughts WHERE message_id IN ",
        " GROUP BY message_id",
    )
});

static EXISTING_RUNS_SQL: LazyLock<String> =
    LazyLock::new(|| in_list_query("SELECT id::text FROM workflow_runs WHERE id IN ", ""));
static ARCHIVED_RUNS_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        "SELECT a.workflow_run_id::text FROM workflow_archive_logs a WHERE a.workflow_run_id IN ",
        "",
    )
});

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

impl Store {
    /// Dify's history query: the newest `limit` messages of a conversation, newest first;
    /// before regeneration threads only answered ones, as Dify's query then filtered
    /// ([`DifySchema::memory_skips_unanswered`](crate::sources::dify::schema::DifySchema::memory_skips_unanswered)).
    /// Deliberate deviation: `id DESC` breaks ties between messages of the same second, where
    /// Dify's order is undefined, so the result is deterministic.
    pub async fn history_messages(
        &self,
        conversation_id: &str,
        limit: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let query = if self.dify_schema().memory_skips_unanswered() {
            ANSWERED_HISTORY_SQL
        } else {
            HISTORY_SQL
        };
        self.conversation_messages(conversation_id, query, Some(limit))
            .await
    }

    /// Every message of a conversation, oldest first (ties by id), for the message tree.
    pub async fn all_messages(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        if let Some(id) = canonical_uuid(conversation_id)
            && let Some(messages) = self.scan_one_conversation(ALL_MESSAGES_SQL, &id).await?
        {
            return Ok(messages);
        }
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
        let records: Vec<MessageFileRecord> = self
            .rows_for_ids(MESSAGE_FILES_SQL.as_str(), &ids, None)
            .await?;
        let mut files: Vec<MessageFile> = records.into_iter().map(MessageFile::from).collect();
        // Chunks are ordered within themselves; keep the whole list in one order.
        files.sort_by(|a, b| a.message_id.cmp(&b.message_id));
        Ok(files)
    }

    /// The files of every message of the conversation, with their upload names, in the order
    /// [`Store::message_files`] gives them.
    pub async fn conversation_files(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<MessageFile>, StoreError> {
        let Some(id) = canonical_uuid(conversation_id) else {
            return Ok(Vec::new());
        };
        let records: Vec<MessageFileRecord> =
            on_pool!(self.pool, CONVERSATION_FILES_SQL, |pool, sql| {
                sqlx::query_as(sql).bind(&id).fetch_all(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
        let mut files: Vec<MessageFile> = records.into_iter().map(MessageFile::from).collect();
        // The database's order of uuids may not be their text's (MySQL's collation).
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
        if !self.dify_schema().agent_thoughts {
            return Ok(Vec::new());
        }
        let ids = canonical_uuids(message_ids.iter().map(String::as_str));
        let mut counts: Vec<(String, i64)> = self
            .rows_for_ids(AGENT_THOUGHTS_SQL.as_str(), &ids, None)
            .await?;
        counts.sort();
        Ok(counts)
    }

    /// Which of the given workflow run ids have a `workflow_runs` row.
    pub async fn existing_workflow_runs(
        &self,
        run_ids: &[String],
    ) -> Result<HashSet<String>, StoreError> {
        let ids = canonical_uuids(run_ids.iter().map(String::as_str));
        let rows: Vec<(String,)> = self
            .rows_for_ids(EXISTING_RUNS_SQL.as_str(), &ids, None)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Which of the given workflow run ids Dify archived out of the database (a
    /// `workflow_archive_logs` row; none where the schema has no such table).
    pub async fn archived_workflow_runs(
        &self,
        run_ids: &[String],
    ) -> Result<HashSet<String>, StoreError> {
        let ids = canonical_uuids(run_ids.iter().map(String::as_str));
        let rows: Vec<(String,)> = self
            .rows_for_ids(ARCHIVED_RUNS_SQL.as_str(), &ids, None)
            .await?;
        Ok(rows.into_iter().map(|(id,)| id.to_lowercase()).collect())
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
}

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
