//! Langflow's memory bases in the database: listing and editing bases, their sessions and
//! pending counts, ingestion jobs with a dedupe key, the per-(base, session) lock, and the one
//! transaction that commits a finished ingestion.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;
use sqlx::pool::PoolConnection;

use super::{DbPool, Store, StoreError, canonical_id};
use crate::memory::memory_base::{MessagePosition, ThresholdUnit, advisory_lock_key};

/// Job statuses, as Langflow's `JobStatus` spells them.
pub mod job_status {
    pub const QUEUED: &str = "queued";
    pub const IN_PROGRESS: &str = "in_progress";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const CANCELLED: &str = "cancelled";
}

/// A memory base with its flow, owner and totals.
#[derive(Debug, Clone, PartialEq, Serialize, FromRow)]
pub struct MemoryBaseInfo {
    pub id: String,
    pub name: String,
    pub flow_id: String,
    pub flow_name: Option<String>,
    pub user_id: String,
    pub username: Option<String>,
    pub threshold: i64,
    pub threshold_unit: String,
    pub auto_capture: bool,
    pub embedding_provider: String,
    pub embedding_model: String,
    pub kb_name: String,
    pub created_at: DateTime<Utc>,
    pub sessions: i64,
    pub total_processed: i64,
    pub ingestion_records: i64,
    pub active_jobs: i64,
    pub last_sync_at: Option<DateTime<Utc>>,
}

impl MemoryBaseInfo {
    /// The unit; an unknown column value counts runs, Langflow's shipped behaviour.
    pub fn unit(&self) -> ThresholdUnit {
        ThresholdUnit::parse(&self.threshold_unit).unwrap_or(ThresholdUnit::Runs)
    }
}

/// One tracked session of a memory base.
#[derive(Debug, Clone, PartialEq, Serialize, FromRow)]
pub struct MemoryBaseSessionInfo {
    pub id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub cursor_id: Option<String>,
    pub total_processed: i64,
    pub last_sync_at: Option<DateTime<Utc>>,
    /// Completed runs not yet ingested.
    pub pending_runs: i64,
    /// Ingestion records of the session.
    pub ingestion_records: i64,
}

/// An ingestion job row.
#[derive(Debug, Clone, PartialEq, Serialize, FromRow)]
pub struct JobInfo {
    pub job_id: String,
    pub status: String,
    pub job_type: String,
    pub asset_id: Option<String>,
    pub dedupe_key: Option<String>,
    pub created_timestamp: DateTime<Utc>,
    pub finished_timestamp: Option<DateTime<Utc>>,
}

impl JobInfo {
    /// The session an ingestion job syncs, read from its dedupe key.
    pub fn session_id(&self) -> Option<&str> {
        let key = self.dedupe_key.as_deref()?;
        let key = key.strip_prefix("regenerated:").unwrap_or(key);
        let key = key.strip_prefix("ingestion:")?;
        let (_, rest) = key.split_once(':')?;
        Some(rest.rsplit_once(':').map_or(rest, |(session, _)| session))
    }

    pub fn is_active(&self) -> bool {
        self.status == job_status::QUEUED || self.status == job_status::IN_PROGRESS
    }
}

/// The `knowledge_base` row of a memory base in a database Langflow made.
#[derive(Debug, Clone, PartialEq, Serialize, FromRow)]
pub struct LangflowKbRow {
    pub id: String,
    pub user_id: String,
    pub backend_type: String,
    pub storage_generation: i64,
}

/// A message to ingest.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct PendingMessage {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    pub sender: String,
    pub sender_name: String,
    pub session_id: String,
    pub text: String,
    pub content_blocks: String,
    pub flow_id: Option<String>,
    pub run_id: Option<String>,
}

impl PendingMessage {
    pub fn position(&self) -> MessagePosition {
        MessagePosition {
            timestamp: self.timestamp,
            id: self.id.clone(),
        }
    }
}

/// A new memory base.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemoryBase {
    pub id: String,
    pub name: String,
    pub flow_id: String,
    pub user_id: String,
    pub threshold: i64,
    pub unit: ThresholdUnit,
    pub auto_capture: bool,
    pub embedding_provider: String,
    pub embedding_model: String,
    pub kb_name: String,
    pub created_at: DateTime<Utc>,
}

/// Fields of a memory base to change; `None` keeps the value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryBaseUpdate {
    pub name: Option<String>,
    pub threshold: Option<i64>,
    pub unit: Option<ThresholdUnit>,
    pub auto_capture: Option<bool>,
}

/// What a finished ingestion commits, all in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestionCommit<'a> {
    pub memory_base_id: &'a str,
    pub session_id: &'a str,
    pub job_id: &'a str,
    pub message_ids: &'a [String],
    /// The last ingested message: the new cursor.
    pub cursor_id: &'a str,
    /// Runs recorded up to the job's creation are stamped with the job.
    pub runs_recorded_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// The result of creating an ingestion job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobCreation {
    Created,
    /// A queued, running or completed job has the same dedupe key.
    Duplicate {
        job_id: String,
    },
}

/// Holds the per-(memory base, session) sync lock until released (or the process dies).
pub struct SessionLock {
    name: String,
    held: HeldLock,
}

enum HeldLock {
    /// A session-level advisory lock lives on its connection, which is closed (not returned to
    /// the pool) when the lock is dropped, so the lock can never leak to another pool user.
    Advisory {
        connection: PoolConnection<sqlx::Postgres>,
        key: i64,
    },
    Lease {
        pool: sqlx::SqlitePool,
        owner: String,
    },
}

macro_rules! base_query {
    ($suffix:literal) => {
        concat!(
            "SELECT mb.id::text AS id, mb.name, mb.flow_id::text AS flow_id, \
             f.name AS flow_name, mb.user_id::text AS user_id, u.username, \
             mb.threshold::bigint AS threshold, mb.threshold_unit AS threshold_unit, \
             mb.auto_capture, mb.embedding_provider AS embedding_provider, mb.embedding_model, \
             mb.kb_name, mb.created_at, \
             (SELECT count(*) FROM memory_base_session s WHERE s.memory_base_id = mb.id) AS sessions, \
             (SELECT coalesce(sum(s.total_processed), 0)::bigint FROM memory_base_session s \
              WHERE s.memory_base_id = mb.id) AS total_processed, \
             (SELECT count(*) FROM message_ingestion_record r WHERE r.memory_base_id = mb.id) \
              AS ingestion_records, \
             (SELECT count(*) FROM job j WHERE j.asset_id = mb.id \
              AND j.status IN ('queued', 'in_progress')) AS active_jobs, \
             (SELECT max(s.last_sync_at) FROM memory_base_session s WHERE s.memory_base_id = mb.id) \
              AS last_sync_at \
             FROM memory_base mb LEFT JOIN flow f ON f.id = mb.flow_id \
             LEFT JOIN \"user\" u ON u.id = mb.user_id ",
            $suffix
        )
    };
}

/// The messages of a flow's session (`$1`, `$2`) strictly after a cursor (`$3` timestamp, `$4`
/// id; both NULL: from the start), in the (timestamp, id) order every cursor uses. Bind with
/// [`bind_range!`].
macro_rules! session_after_cursor {
    () => {
        "m.flow_id = $1::uuid AND m.session_id = $2 AND ($3::timestamptz IS NULL \
         OR m.timestamp > $3::timestamptz OR (m.timestamp = $3::timestamptz AND m.id > $4::uuid))"
    };
}

/// [`session_after_cursor!`] and up to a job's last message (`$5` timestamp, `$6` id).
macro_rules! session_range {
    () => {
        concat!(
            session_after_cursor!(),
            " AND (m.timestamp < $5::timestamptz \
             OR (m.timestamp = $5::timestamptz AND m.id <= $6::uuid))"
        )
    };
}

/// Binds `$1`…`$4` of [`session_after_cursor!`], and `$5`, `$6` of [`session_range!`] when an
/// upper end is given.
macro_rules! bind_range {
    ($query:expr, $flow:expr, $session:expr, $after:expr) => {
        $query
            .bind($flow)
            .bind($session)
            .bind($after.map(|c: &MessagePosition| c.timestamp))
            .bind($after.map(|c: &MessagePosition| c.id.as_str()))
    };
    ($query:expr, $flow:expr, $session:expr, $after:expr, $until:expr) => {
        bind_range!($query, $flow, $session, $after)
            .bind($until.timestamp)
            .bind($until.id.as_str())
    };
}

const SESSION_COLUMNS_SQL: &str = "SELECT s.id::text AS id, s.memory_base_id::text AS memory_base_id, s.session_id, \
     s.cursor_id::text AS cursor_id, s.total_processed::bigint AS total_processed, s.last_sync_at, \
     (SELECT count(*) FROM memory_base_workflow_run w WHERE w.memory_base_id = s.memory_base_id \
      AND w.session_id = s.session_id AND w.ingestion_job_id IS NULL) AS pending_runs, \
     (SELECT count(*) FROM message_ingestion_record r WHERE r.memory_base_id = s.memory_base_id \
      AND r.session_id = s.session_id) AS ingestion_records \
     FROM memory_base_session s";

const JOB_COLUMNS: &str = "SELECT job_id::text AS job_id, status::text AS status, type::text AS job_type, \
     asset_id::text AS asset_id, dedupe_key, created_timestamp, finished_timestamp FROM job";

impl Store {
    /// Every memory base, by owner then name.
    pub async fn memory_bases(&self) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("ORDER BY u.username, mb.name, mb.id"),
            |pool, sql| sqlx::query_as(sql).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The memory bases whose id or name is `key` (names are unique per user only).
    pub async fn find_memory_bases(&self, key: &str) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("WHERE mb.id::text = $1 OR mb.name = $2 ORDER BY u.username, mb.id"),
            |pool, sql| sqlx::query_as(sql)
                .bind(super::canonical_id(key))
                .bind(key)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The memory bases watching a flow.
    pub async fn memory_bases_of_flow(
        &self,
        flow_id: &str,
    ) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("WHERE mb.flow_id = $1::uuid ORDER BY mb.name, mb.id"),
            |pool, sql| sqlx::query_as(sql).bind(flow_id).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The knowledge-base row of a base in a database Langflow made: Langflow links them by
    /// owner and name.
    pub async fn langflow_knowledge_base(
        &self,
        base: &MemoryBaseInfo,
    ) -> Result<Option<LangflowKbRow>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT kb.id::text AS id, kb.user_id::text AS user_id, kb.backend_type, \
             kb.storage_generation::bigint AS storage_generation FROM knowledge_base kb \
             WHERE kb.user_id = $1::uuid AND kb.name = $2",
            |pool, sql| sqlx::query_as(sql)
                .bind(&base.user_id)
                .bind(&base.kb_name)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// A flow's owner (`None` when the flow does not exist).
    pub async fn flow_owner(&self, flow_id: &str) -> Result<Option<Option<String>>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT user_id::text FROM flow WHERE id = $1::uuid",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(flow_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// A flow id by id or name.
    pub async fn find_flows(&self, key: &str) -> Result<Vec<String>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT id::text FROM flow WHERE id::text = $1 OR name = $2 ORDER BY id",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(super::canonical_id(key))
                .bind(key)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    pub async fn create_memory_base(&self, base: &NewMemoryBase) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "INSERT INTO memory_base (id, name, flow_id, user_id, threshold, threshold_unit, \
             auto_capture, embedding_provider, embedding_model, kb_name, created_at) \
             VALUES ($1::uuid, $2, $3::uuid, $4::uuid, $5, $6, $7, $8, $9, $10, $11)",
            |pool, sql| sqlx::query(sql)
                .bind(&base.id)
                .bind(&base.name)
                .bind(&base.flow_id)
                .bind(&base.user_id)
                .bind(base.threshold as i32)
                .bind(base.unit.as_str())
                .bind(base.auto_capture)
                .bind(&base.embedding_provider)
                .bind(&base.embedding_model)
                .bind(&base.kb_name)
                .bind(base.created_at)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }

    /// Changes a memory base; returns whether it exists.
    pub async fn update_memory_base(
        &self,
        id: &str,
        update: &MemoryBaseUpdate,
    ) -> Result<bool, StoreError> {
        // Name, threshold and auto-capture are what Langflow's own update changes, in place.
        self.ensure_writable_in_place()?;
        let result = if self.catalog.has_column("memory_base", "threshold_unit") {
            on_pool!(
                self.pool,
                "UPDATE memory_base SET name = coalesce($2, name), \
                 threshold = coalesce($3, threshold), auto_capture = coalesce($4, auto_capture), \
                 threshold_unit = coalesce($5, threshold_unit) WHERE id = $1::uuid",
                |pool, sql| sqlx::query(sql)
                    .bind(canonical_id(id))
                    .bind(&update.name)
                    .bind(update.threshold.map(|t| t as i32))
                    .bind(update.auto_capture)
                    .bind(update.unit.map(ThresholdUnit::as_str))
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            )
        } else {
            if update.unit.is_some_and(|unit| unit != ThresholdUnit::Runs) {
                return Err(StoreError::Lacks {
                    url: self.url.clone(),
                    explanation: format!(
                        "{}, whose memory-base thresholds always count flow runs",
                        self.profile.describe()
                    ),
                });
            }
            on_pool!(
                self.pool,
                "UPDATE memory_base SET name = coalesce($2, name), \
                 threshold = coalesce($3, threshold), auto_capture = coalesce($4, auto_capture) \
                 WHERE id = $1::uuid",
                |pool, sql| sqlx::query(sql)
                    .bind(canonical_id(id))
                    .bind(&update.name)
                    .bind(update.threshold.map(|t| t as i32))
                    .bind(update.auto_capture)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            )
        }
        .map_err(|e| self.query_failed(e))?;
        Ok(result > 0)
    }

    /// Deletes a memory base with its sessions, ingestion records, runs and sync leases, in one
    /// transaction. Its jobs stay, as history.
    pub async fn delete_memory_base(&self, id: &str) -> Result<bool, StoreError> {
        self.ensure_writable()?;
        const STATEMENTS: [&str; 5] = [
            "DELETE FROM message_ingestion_record WHERE memory_base_id = $1::uuid",
            "DELETE FROM memory_base_workflow_run WHERE memory_base_id = $1::uuid",
            "DELETE FROM memory_base_session WHERE memory_base_id = $1::uuid",
            "DELETE FROM memscope_sync_lease WHERE lock_name LIKE $1 || ':%'",
            "DELETE FROM memory_base WHERE id = $1::uuid",
        ];
        let deleted = on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            let mut last = 0;
            for statement in STATEMENTS {
                let text = self.sql(statement);
                last = sqlx::query(text)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(last)
        }
        .await)
        .map_err(|e| self.query_failed(e))?;
        Ok(deleted > 0)
    }

    /// The tracked sessions of a memory base, most recently synced first.
    pub async fn memory_base_sessions(
        &self,
        memory_base_id: &str,
    ) -> Result<Vec<MemoryBaseSessionInfo>, StoreError> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            format!(
                "{SESSION_COLUMNS_SQL} WHERE s.memory_base_id = $1::uuid \
                 ORDER BY s.last_sync_at DESC, s.session_id"
            )
        });
        on_pool!(self.pool, SQL.as_str(), |pool, sql| sqlx::query_as(sql)
            .bind(memory_base_id)
            .fetch_all(pool)
            .await)
        .map_err(|e| self.query_failed(e))
    }

    pub async fn memory_base_session(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Option<MemoryBaseSessionInfo>, StoreError> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            format!("{SESSION_COLUMNS_SQL} WHERE s.memory_base_id = $1::uuid AND s.session_id = $2")
        });
        on_pool!(self.pool, SQL.as_str(), |pool, sql| sqlx::query_as(sql)
            .bind(memory_base_id)
            .bind(session_id)
            .fetch_optional(pool)
            .await)
        .map_err(|e| self.query_failed(e))
    }

    /// Sessions of a flow that have messages, tracked or not.
    pub async fn flow_sessions(&self, flow_id: &str) -> Result<Vec<String>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT DISTINCT session_id FROM message WHERE flow_id = $1::uuid ORDER BY session_id",
            |pool, sql| sqlx::query_scalar(sql).bind(flow_id).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Starts tracking a session (nothing when it is tracked already).
    pub async fn ensure_memory_base_session(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "INSERT INTO memory_base_session (id, memory_base_id, session_id, total_processed) \
             VALUES ($1::uuid, $2::uuid, $3, 0) ON CONFLICT (memory_base_id, session_id) DO NOTHING",
            |pool, sql| sqlx::query(sql)
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(memory_base_id)
                .bind(session_id)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }

    /// Records a completed flow run of a session for a memory base (once per run).
    pub async fn record_workflow_run(
        &self,
        memory_base_id: &str,
        session_id: &str,
        workflow_job_id: &str,
        recorded_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "INSERT INTO memory_base_workflow_run (id, memory_base_id, session_id, \
             workflow_job_id, recorded_at) VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5) \
             ON CONFLICT (memory_base_id, session_id, workflow_job_id) DO NOTHING",
            |pool, sql| sqlx::query(sql)
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(memory_base_id)
                .bind(session_id)
                .bind(workflow_job_id)
                .bind(recorded_at)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }

    /// Where a session's cursor sits; `None` when it has none. When the cursor's message was
    /// deleted (a trim, a delete), the newest message the session still has a record of takes
    /// its place: every message before the cursor was ingested, so nothing after that one was,
    /// and the session is not read again from the start.
    pub async fn cursor_position(
        &self,
        session: &MemoryBaseSessionInfo,
    ) -> Result<Option<MessagePosition>, StoreError> {
        let Some(id) = session.cursor_id.as_deref() else {
            return Ok(None);
        };
        let timestamp: Option<DateTime<Utc>> = on_pool!(
            self.pool,
            "SELECT timestamp FROM message WHERE id = $1::uuid",
            |pool, sql| sqlx::query_scalar(sql).bind(id).fetch_optional(pool).await
        )
        .map_err(|e| self.query_failed(e))?;
        if let Some(timestamp) = timestamp {
            return Ok(Some(MessagePosition {
                timestamp,
                id: id.to_owned(),
            }));
        }
        let newest_recorded: Option<(DateTime<Utc>, String)> = on_pool!(
            self.pool,
            "SELECT m.timestamp, m.id::text FROM message_ingestion_record r \
             JOIN message m ON m.id = r.message_id \
             WHERE r.memory_base_id = $1::uuid AND r.session_id = $2 \
             ORDER BY m.timestamp DESC, m.id DESC LIMIT 1",
            |pool, sql| sqlx::query_as(sql)
                .bind(&session.memory_base_id)
                .bind(&session.session_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(newest_recorded.map(|(timestamp, id)| MessagePosition { timestamp, id }))
    }

    /// Output messages of a flow's session strictly after `cursor` (the `messages` unit).
    pub async fn pending_output_messages(
        &self,
        flow_id: &str,
        session_id: &str,
        cursor: Option<&MessagePosition>,
    ) -> Result<i64, StoreError> {
        on_pool!(
            self.pool,
            concat!(
                "SELECT count(*) FROM message m WHERE m.is_output AND ",
                session_after_cursor!()
            ),
            |pool, sql| bind_range!(sqlx::query_scalar(sql), flow_id, session_id, cursor)
                .fetch_one(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The pending count of a session in a base's unit.
    pub async fn pending_count(
        &self,
        base: &MemoryBaseInfo,
        session: &MemoryBaseSessionInfo,
    ) -> Result<i64, StoreError> {
        match base.unit() {
            ThresholdUnit::Runs => Ok(session.pending_runs),
            ThresholdUnit::Messages => {
                let cursor = self.cursor_position(session).await?;
                self.pending_output_messages(&base.flow_id, &session.session_id, cursor.as_ref())
                    .await
            }
        }
    }

    /// The newest message of a flow's session after `cursor`: the upper end of a job's scope.
    pub async fn last_message_after(
        &self,
        flow_id: &str,
        session_id: &str,
        cursor: Option<&MessagePosition>,
    ) -> Result<Option<MessagePosition>, StoreError> {
        let row: Option<(String, DateTime<Utc>)> = on_pool!(
            self.pool,
            concat!(
                "SELECT m.id::text, m.timestamp FROM message m WHERE ",
                session_after_cursor!(),
                " ORDER BY m.timestamp DESC, m.id DESC LIMIT 1"
            ),
            |pool, sql| bind_range!(sqlx::query_as(sql), flow_id, session_id, cursor)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(row.map(|(id, timestamp)| MessagePosition { timestamp, id }))
    }

    /// Up to `limit` messages of a flow's session after `after` and up to `until`, in
    /// (timestamp, id) order.
    pub async fn messages_between(
        &self,
        flow_id: &str,
        session_id: &str,
        after: Option<&MessagePosition>,
        until: &MessagePosition,
        limit: i64,
    ) -> Result<Vec<PendingMessage>, StoreError> {
        on_pool!(
            self.pool,
            concat!(
                "SELECT m.id::text AS id, m.timestamp, m.sender, m.sender_name, m.session_id, \
                 m.text, m.content_blocks::text AS content_blocks, m.flow_id::text AS flow_id, \
                 m.run_id::text AS run_id FROM message m WHERE ",
                session_range!(),
                " ORDER BY m.timestamp, m.id LIMIT $7"
            ),
            |pool, sql| bind_range!(sqlx::query_as(sql), flow_id, session_id, after, until)
                .bind(limit)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The messages a base's ingestion records name, in (timestamp, id) order, with the job
    /// that ingested each: what the KB should hold.
    pub async fn ingested_messages(
        &self,
        memory_base_id: &str,
    ) -> Result<Vec<(PendingMessage, Option<String>)>, StoreError> {
        #[derive(FromRow)]
        struct Ingested {
            #[sqlx(flatten)]
            message: PendingMessage,
            job_id: Option<String>,
        }
        let rows: Vec<Ingested> = on_pool!(
            self.pool,
            "SELECT m.id::text AS id, m.timestamp, m.sender, m.sender_name, m.session_id, m.text, \
             m.content_blocks::text AS content_blocks, m.flow_id::text AS flow_id, \
             m.run_id::text AS run_id, r.job_id::text AS job_id \
             FROM message_ingestion_record r JOIN message m ON m.id = r.message_id \
             WHERE r.memory_base_id = $1::uuid ORDER BY m.timestamp, m.id",
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(rows.into_iter().map(|r| (r.message, r.job_id)).collect())
    }

    /// How many messages [`Store::messages_between`] pages through, in all.
    pub async fn count_messages_between(
        &self,
        flow_id: &str,
        session_id: &str,
        after: Option<&MessagePosition>,
        until: &MessagePosition,
    ) -> Result<i64, StoreError> {
        on_pool!(
            self.pool,
            concat!("SELECT count(*) FROM message m WHERE ", session_range!()),
            |pool, sql| bind_range!(sqlx::query_scalar(sql), flow_id, session_id, after, until)
                .fetch_one(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The newest pending unit of a session: its latest unstamped run's workflow job (unit
    /// `runs`, when it has any), else the newest message after the cursor.
    pub async fn latest_pending_run(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Option<String>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT coalesce(workflow_job_id::text, id::text) FROM memory_base_workflow_run \
             WHERE memory_base_id = $1::uuid AND session_id = $2 AND ingestion_job_id IS NULL \
             ORDER BY recorded_at DESC, id DESC LIMIT 1",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(memory_base_id)
                .bind(session_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Creates an in-progress ingestion job unless a queued, running or completed job has the
    /// same dedupe key (Langflow's `DuplicateJobError`; failed and cancelled jobs may be retried).
    pub async fn create_ingestion_job(
        &self,
        job_id: &str,
        flow_id: &str,
        user_id: &str,
        memory_base_id: &str,
        dedupe_key: &str,
        now: DateTime<Utc>,
    ) -> Result<JobCreation, StoreError> {
        self.ensure_writable()?;
        let existing: Option<String> = on_pool!(
            self.pool,
            "SELECT job_id::text FROM job WHERE dedupe_key = $1 \
             AND status IN ('queued', 'in_progress', 'completed') LIMIT 1",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(dedupe_key)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        if let Some(job_id) = existing {
            return Ok(JobCreation::Duplicate { job_id });
        }
        on_pool!(
            self.pool,
            "INSERT INTO job (job_id, flow_id, status, type, user_id, asset_id, asset_type, \
             dedupe_key, created_timestamp) VALUES ($1::uuid, $2::uuid, 'in_progress', \
             'ingestion', $3::uuid, $4::uuid, 'memory_base', $5, $6)",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(flow_id)
                .bind(user_id)
                .bind(memory_base_id)
                .bind(dedupe_key)
                .bind(now)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(JobCreation::Created)
    }

    /// Marks jobs of a session that are still queued or running as failed: called under the
    /// session's lock, so their process is gone (killed mid-sync).
    pub async fn fail_abandoned_jobs(
        &self,
        memory_base_id: &str,
        session_id: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        self.ensure_writable()?;
        let prefix = format!("ingestion:{memory_base_id}:{session_id}:");
        on_pool!(
            self.pool,
            "UPDATE job SET status = 'failed', finished_timestamp = $3 \
             WHERE asset_id = $1::uuid AND status IN ('queued', 'in_progress') \
             AND substr(dedupe_key, 1, length($2)) = $2",
            |pool, sql| sqlx::query(sql)
                .bind(memory_base_id)
                .bind(&prefix)
                .bind(now)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Ends a job with `status` unless it already ended (a cancel wins over a late finish).
    pub async fn finish_job(
        &self,
        job_id: &str,
        status: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "UPDATE job SET status = $2, finished_timestamp = $3 \
             WHERE job_id = $1::uuid AND status IN ('queued', 'in_progress')",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(status)
                .bind(now)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }

    /// Asks a queued or running job to stop; its process notices at its next check. Returns
    /// whether the job was active.
    pub async fn cancel_job(&self, job_id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
        self.ensure_writable()?;
        let cancelled = on_pool!(
            self.pool,
            "UPDATE job SET status = 'cancelled', finished_timestamp = $2 \
             WHERE job_id = $1::uuid AND status IN ('queued', 'in_progress')",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(now)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(cancelled > 0)
    }

    /// Cancels every queued or running job of a memory base; returns their ids.
    pub async fn cancel_jobs_of_base(
        &self,
        memory_base_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "UPDATE job SET status = 'cancelled', finished_timestamp = $2 \
             WHERE asset_id = $1::uuid AND status IN ('queued', 'in_progress') \
             RETURNING job_id::text",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(memory_base_id)
                .bind(now)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    pub async fn job(&self, job_id: &str) -> Result<Option<JobInfo>, StoreError> {
        static SQL: std::sync::LazyLock<String> =
            std::sync::LazyLock::new(|| format!("{JOB_COLUMNS} WHERE job_id = $1::uuid"));
        on_pool!(self.pool, SQL.as_str(), |pool, sql| sqlx::query_as(sql)
            .bind(job_id)
            .fetch_optional(pool)
            .await)
        .map_err(|e| self.query_failed(e))
    }

    /// Ingestion jobs, newest first, of one memory base or all.
    pub async fn ingestion_jobs(
        &self,
        memory_base_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<JobInfo>, StoreError> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            format!(
                "{JOB_COLUMNS} WHERE type = 'ingestion' \
                 AND ($1::uuid IS NULL OR asset_id = $1::uuid) \
                 ORDER BY created_timestamp DESC, job_id LIMIT $2"
            )
        });
        on_pool!(self.pool, SQL.as_str(), |pool, sql| sqlx::query_as(sql)
            .bind(memory_base_id)
            .bind(limit)
            .fetch_all(pool)
            .await)
        .map_err(|e| self.query_failed(e))
    }

    /// Commits a finished ingestion in one transaction: ingestion records, the cursor and
    /// totals, and the stamped runs. Fails (committing nothing) when the session is gone.
    pub async fn commit_ingestion(&self, commit: &IngestionCommit<'_>) -> Result<bool, StoreError> {
        self.ensure_writable()?;
        let record_ids: Vec<String> = commit
            .message_ids
            .iter()
            .map(|_| uuid::Uuid::new_v4().to_string())
            .collect();
        let updated = match &self.pool {
            DbPool::Sqlite(pool, _) => {
                let mut tx = pool.begin().await.map_err(|e| self.query_failed(e))?;
                let pairs: Vec<[&str; 2]> = record_ids
                    .iter()
                    .zip(commit.message_ids)
                    .map(|(id, message)| [id.as_str(), message.as_str()])
                    .collect();
                let inserted = sqlx::query(
                    "INSERT INTO message_ingestion_record (id, message_id, memory_base_id, job_id, \
                     session_id, ingested_at) SELECT json_extract(value, '$[0]'), \
                     json_extract(value, '$[1]'), ?, ?, ?, ? FROM json_each(?) WHERE true \
                     ON CONFLICT (message_id, session_id, memory_base_id) DO NOTHING",
                )
                .bind(commit.memory_base_id)
                .bind(commit.job_id)
                .bind(commit.session_id)
                .bind(commit.now)
                .bind(serde_json::to_string(&pairs).unwrap_or_default())
                .execute(&mut *tx)
                .await
                .map_err(|e| self.query_failed(e))?
                .rows_affected() as i64;
                let updated = sqlx::query(self.sql(COMMIT_CURSOR_SQL))
                    .bind(commit.memory_base_id)
                    .bind(commit.session_id)
                    .bind(commit.cursor_id)
                    .bind(inserted)
                    .bind(commit.now)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.query_failed(e))?
                    .rows_affected();
                sqlx::query(self.sql(STAMP_RUNS_SQL))
                    .bind(commit.memory_base_id)
                    .bind(commit.session_id)
                    .bind(commit.job_id)
                    .bind(commit.runs_recorded_until)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.query_failed(e))?;
                if updated == 1 {
                    tx.commit().await.map_err(|e| self.query_failed(e))?;
                }
                updated
            }
            DbPool::Postgres(pool, _) => {
                let mut tx = pool.begin().await.map_err(|e| self.query_failed(e))?;
                let inserted = sqlx::query(
                    "INSERT INTO message_ingestion_record (id, message_id, memory_base_id, job_id, \
                     session_id, ingested_at) SELECT r.id, r.message_id, $3::uuid, $4::uuid, $5, $6 \
                     FROM UNNEST($1::uuid[], $2::uuid[]) AS r(id, message_id) \
                     ON CONFLICT (message_id, session_id, memory_base_id) DO NOTHING",
                )
                .bind(&record_ids)
                .bind(commit.message_ids)
                .bind(commit.memory_base_id)
                .bind(commit.job_id)
                .bind(commit.session_id)
                .bind(commit.now)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.query_failed(e))?
                .rows_affected() as i64;
                let updated = sqlx::query(COMMIT_CURSOR_SQL)
                    .bind(commit.memory_base_id)
                    .bind(commit.session_id)
                    .bind(commit.cursor_id)
                    .bind(inserted)
                    .bind(commit.now)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.query_failed(e))?
                    .rows_affected();
                sqlx::query(STAMP_RUNS_SQL)
                    .bind(commit.memory_base_id)
                    .bind(commit.session_id)
                    .bind(commit.job_id)
                    .bind(commit.runs_recorded_until)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.query_failed(e))?;
                if updated == 1 {
                    tx.commit().await.map_err(|e| self.query_failed(e))?;
                }
                updated
            }
        };
        Ok(updated == 1)
    }

    /// Regenerate's reset, in one transaction: every session's cursor and totals cleared, the
    /// ingestion records deleted, the runs unstamped and the old jobs' dedupe keys retired, so
    /// everything is pending again.
    pub async fn reset_memory_base(&self, memory_base_id: &str) -> Result<(), StoreError> {
        self.ensure_writable()?;
        const STATEMENTS: [&str; 4] = [
            "DELETE FROM message_ingestion_record WHERE memory_base_id = $1::uuid",
            // The old jobs' scopes are to be ingested again: their keys must not dedupe.
            "UPDATE job SET dedupe_key = 'regenerated:' || dedupe_key \
             WHERE asset_id = $1::uuid AND dedupe_key LIKE 'ingestion:%'",
            "UPDATE memory_base_workflow_run SET ingestion_job_id = NULL \
             WHERE memory_base_id = $1::uuid",
            "UPDATE memory_base_session SET cursor_id = NULL, total_processed = 0 \
             WHERE memory_base_id = $1::uuid",
        ];
        on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            for statement in STATEMENTS {
                let text = self.sql(statement);
                sqlx::query(text)
                    .bind(memory_base_id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await)
        .map_err(|e| self.query_failed(e))
    }

    /// Takes the per-(base, session) lock without waiting: `None` when someone holds it. On
    /// PostgreSQL an advisory lock; on SQLite a lease row valid for `lease`, which the holder
    /// renews with [`SessionLock::heartbeat`].
    pub async fn try_lock_session(
        &self,
        lock_name: &str,
        lease: Duration,
    ) -> Result<Option<SessionLock>, StoreError> {
        self.ensure_writable()?;
        match &self.pool {
            DbPool::Postgres(pool, _) => {
                let mut connection = pool.acquire().await.map_err(|e| self.query_failed(e))?;
                connection.close_on_drop();
                let key = advisory_lock_key(lock_name);
                let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(key)
                    .fetch_one(&mut *connection)
                    .await
                    .map_err(|e| self.query_failed(e))?;
                Ok(locked.then(|| SessionLock {
                    name: lock_name.to_owned(),
                    held: HeldLock::Advisory { connection, key },
                }))
            }
            DbPool::Sqlite(pool, _) => {
                let owner = uuid::Uuid::new_v4().to_string();
                let now = epoch_ms(Utc::now());
                let taken = sqlx::query(
                    "INSERT INTO memscope_sync_lease (lock_name, owner, expires_at_ms) \
                     VALUES (?, ?, ?) ON CONFLICT (lock_name) DO UPDATE SET \
                     owner = excluded.owner, expires_at_ms = excluded.expires_at_ms, job_id = NULL \
                     WHERE memscope_sync_lease.expires_at_ms < ?",
                )
                .bind(lock_name)
                .bind(&owner)
                .bind(now + lease.as_millis() as i64)
                .bind(now)
                .execute(pool)
                .await
                .map_err(|e| self.query_failed(e))?
                .rows_affected();
                Ok((taken == 1).then(|| SessionLock {
                    name: lock_name.to_owned(),
                    held: HeldLock::Lease {
                        pool: pool.clone(),
                        owner,
                    },
                }))
            }
        }
    }
}

const COMMIT_CURSOR_SQL: &str = "UPDATE memory_base_session SET cursor_id = $3::uuid, \
     total_processed = total_processed + $4, last_sync_at = $5 \
     WHERE memory_base_id = $1::uuid AND session_id = $2";

const STAMP_RUNS_SQL: &str = "UPDATE memory_base_workflow_run SET ingestion_job_id = $3::uuid \
     WHERE memory_base_id = $1::uuid AND session_id = $2 AND ingestion_job_id IS NULL \
     AND recorded_at <= $4";

fn epoch_ms(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

impl SessionLock {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Renews a SQLite lease; `false` when it was lost (it expired and someone else took it).
    /// Advisory locks need no renewal.
    pub async fn heartbeat(&mut self, lease: Duration) -> Result<bool, sqlx::Error> {
        match &self.held {
            HeldLock::Advisory { .. } => Ok(true),
            HeldLock::Lease { pool, owner } => {
                let renewed = sqlx::query(
                    "UPDATE memscope_sync_lease SET expires_at_ms = ? \
                     WHERE lock_name = ? AND owner = ?",
                )
                .bind(epoch_ms(Utc::now()) + lease.as_millis() as i64)
                .bind(&self.name)
                .bind(owner)
                .execute(pool)
                .await?
                .rows_affected();
                Ok(renewed == 1)
            }
        }
    }

    /// Releases the lock. Dropping it instead releases it too (an advisory lock's connection
    /// closes), except that a lease then lasts until it expires.
    pub async fn release(self) -> Result<(), sqlx::Error> {
        match self.held {
            HeldLock::Advisory {
                mut connection,
                key,
            } => {
                sqlx::query("SELECT pg_advisory_unlock($1)")
                    .bind(key)
                    .execute(&mut *connection)
                    .await?;
                Ok(())
            }
            HeldLock::Lease { pool, owner } => {
                sqlx::query("DELETE FROM memscope_sync_lease WHERE lock_name = ? AND owner = ?")
                    .bind(&self.name)
                    .bind(&owner)
                    .execute(&pool)
                    .await?;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(key: Option<&str>, status: &str) -> JobInfo {
        JobInfo {
            job_id: "j".into(),
            status: status.into(),
            job_type: "ingestion".into(),
            asset_id: None,
            dedupe_key: key.map(str::to_owned),
            created_timestamp: Utc::now(),
            finished_timestamp: None,
        }
    }

    #[test]
    fn a_jobs_session_is_read_from_its_dedupe_key() {
        assert_eq!(
            job(Some("ingestion:b:s-1:r"), "completed").session_id(),
            Some("s-1")
        );
        assert_eq!(
            job(Some("ingestion:b:a:b:r"), "completed").session_id(),
            Some("a:b")
        );
        assert_eq!(
            job(Some("regenerated:ingestion:b:s:r"), "completed").session_id(),
            Some("s")
        );
        assert_eq!(job(None, "completed").session_id(), None);
        assert_eq!(job(Some("other"), "completed").session_id(), None);
        assert!(job(None, job_status::IN_PROGRESS).is_active());
        assert!(!job(None, job_status::CANCELLED).is_active());
    }
}
