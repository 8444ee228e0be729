//! Langflow's memory bases in the database: listing and editing bases, their sessions and
//! pending counts, ingestion jobs with a dedupe key, the per-(base, session) lock, and the one
//! transaction that commits a finished ingestion.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;
use sqlx::pool::PoolConnection;

use super::{DbPool, Store, StoreError, dashed_id};
use crate::memory::instant::parse_instant;
use crate::memory::memory_base::{
    MessagePosition, SessionTimeline, ThresholdUnit, TimelineEntry, advisory_lock_key,
    canonical_id, compare_ids,
};

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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobInfo {
    pub job_id: String,
    pub status: String,
    pub job_type: String,
    pub asset_id: Option<String>,
    pub dedupe_key: Option<String>,
    pub created_timestamp: DateTime<Utc>,
    pub finished_timestamp: Option<DateTime<Utc>>,
    /// Why memscope ended it, when it was not its own process (e.g. its process stopped).
    pub ended_reason: Option<String>,
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
    /// The knowledge base's name (the base's `kb_name`), which names its table on remote backends.
    pub name: String,
    pub backend_type: String,
    pub storage_generation: i64,
    /// `ready` unless Langflow is migrating, detaching or deleting its storage.
    pub storage_state: String,
}

/// A message to ingest.
#[derive(Debug, Clone, PartialEq)]
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
    /// Who holds it, as [`Store::sweep_abandoned_jobs`] checks: the lease's owner on SQLite,
    /// the backend pid holding the advisory lock on PostgreSQL.
    holder: String,
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
    /// Langflow's SQLite database has no cross-process session lock (Langflow serialises a
    /// session in its own process); the sync holds the knowledge base's file lock instead.
    KbFileLock,
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

/// The columns of a [`MessageRow`], the timestamp as text.
macro_rules! message_columns {
    () => {
        "SELECT m.id::text AS id, CAST(m.timestamp AS TEXT) AS timestamp, m.sender, \
         m.sender_name, m.session_id, m.text, m.content_blocks::text AS content_blocks, \
         m.flow_id::text AS flow_id, m.run_id::text AS run_id"
    };
}

/// A message as stored, before its timestamp is parsed.
#[derive(FromRow)]
struct MessageRow {
    id: String,
    timestamp: String,
    sender: String,
    sender_name: String,
    session_id: String,
    text: String,
    content_blocks: String,
    flow_id: Option<String>,
    run_id: Option<String>,
}

/// A recorded flow run no ingestion job has taken yet.
struct UnstampedRun {
    id: String,
    /// Its workflow job (its own id when it has none): the dedupe key's unit.
    unit: String,
    recorded_at: DateTime<Utc>,
}

const SESSION_COLUMNS_SQL: &str = "SELECT s.id::text AS id, s.memory_base_id::text AS memory_base_id, s.session_id, \
     s.cursor_id::text AS cursor_id, s.total_processed::bigint AS total_processed, s.last_sync_at, \
     (SELECT count(*) FROM memory_base_workflow_run w WHERE w.memory_base_id = s.memory_base_id \
      AND w.session_id = s.session_id AND w.ingestion_job_id IS NULL) AS pending_runs, \
     (SELECT count(*) FROM message_ingestion_record r WHERE r.memory_base_id = s.memory_base_id \
      AND r.session_id = s.session_id) AS ingestion_records \
     FROM memory_base_session s";

/// The select list of a [`JobRow`] and its `FROM`, with the reasons memscope kept when its
/// table exists (a database memscope did not create has none).
macro_rules! job_select {
    ($where:literal) => {
        [
            concat!(
                job_select!(@columns),
                "p.ended_reason FROM job \
                 LEFT JOIN memscope_job_process p ON p.job_id = job.job_id::text ",
                $where
            ),
            concat!(job_select!(@columns), "NULL AS ended_reason FROM job ", $where),
        ]
    };
    (@columns) => {
        "SELECT job.job_id::text AS job_id, job.status::text AS status, \
         job.type::text AS job_type, job.asset_id::text AS asset_id, job.dedupe_key, \
         CAST(job.created_timestamp AS TEXT) AS created_timestamp, \
         CAST(job.finished_timestamp AS TEXT) AS finished_timestamp, "
    };
}

/// A job as stored, before its timestamps are parsed.
#[derive(FromRow)]
struct JobRow {
    job_id: String,
    status: String,
    job_type: String,
    asset_id: Option<String>,
    dedupe_key: Option<String>,
    created_timestamp: String,
    finished_timestamp: Option<String>,
    ended_reason: Option<String>,
}

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
                .bind(dashed_id(key))
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
            "SELECT kb.id::text AS id, kb.user_id::text AS user_id, kb.name, kb.backend_type, \
             kb.storage_generation::bigint AS storage_generation, kb.storage_state \
             FROM knowledge_base kb \
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
                .bind(dashed_id(key))
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
                    .bind(dashed_id(id))
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
                    .bind(dashed_id(id))
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
        // Ids through the dialect, no instant: in Langflow's formats too.
        self.ensure_writable_in_place()?;
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

    /// A session's messages in (instant, id) order, read through the (flow, session) index.
    /// Timestamps are selected as text and parsed here ([`parse_stored_time`]): compared as
    /// text in SQL they order wrongly, and an odd format cannot fail the query.
    pub async fn session_timeline(
        &self,
        flow_id: &str,
        session_id: &str,
    ) -> Result<SessionTimeline, StoreError> {
        // One small integer for the flags: bit 0 output, bit 1 error (as Langflow leaves error
        // messages out: `error` set, or category `error`).
        let rows: Vec<(String, String, i32)> = on_pool!(
            self.pool,
            "SELECT m.id::text, CAST(m.timestamp AS TEXT), \
             CASE WHEN m.is_output THEN 1 ELSE 0 END \
             + CASE WHEN m.error OR m.category IS NULL OR m.category = 'error' THEN 2 ELSE 0 END \
             FROM message m WHERE m.flow_id = $1::uuid AND m.session_id = $2",
            |pool, sql| sqlx::query_as(sql)
                .bind(flow_id)
                .bind(session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let entries = rows
            .into_iter()
            .map(|(id, timestamp, flags)| {
                Ok(TimelineEntry {
                    position: MessagePosition {
                        timestamp: self.parse_stored_time(&timestamp, "message", &id)?,
                        id,
                    },
                    is_output: flags & 1 != 0,
                    is_error: flags & 2 != 0,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(SessionTimeline::new(entries))
    }

    /// A stored timestamp as an instant; `what` and `id` name its row in the error.
    fn parse_stored_time(
        &self,
        text: &str,
        what: &str,
        id: &str,
    ) -> Result<DateTime<Utc>, StoreError> {
        parse_instant(text).map_err(|source| StoreError::BadTimestamp {
            url: self.url.clone(),
            row: format!("{what} {id}"),
            source,
        })
    }

    /// Where a session's cursor sits in its timeline; `None` when it has none. When the cursor's
    /// message was deleted (a trim, a delete), the newest message the session still has a record
    /// of takes its place: every message before the cursor was ingested, so nothing after that
    /// one was, and the session is not read again from the start.
    pub async fn cursor_position(
        &self,
        session: &MemoryBaseSessionInfo,
        timeline: &SessionTimeline,
    ) -> Result<Option<MessagePosition>, StoreError> {
        let Some(id) = session.cursor_id.as_deref() else {
            return Ok(None);
        };
        if let Some(position) = timeline.find(id) {
            return Ok(Some(position.clone()));
        }
        let recorded: Vec<String> = on_pool!(
            self.pool,
            "SELECT message_id::text FROM message_ingestion_record \
             WHERE memory_base_id = $1::uuid AND session_id = $2",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(&session.memory_base_id)
                .bind(&session.session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let recorded = recorded.iter().map(|id| canonical_id(id)).collect();
        Ok(timeline.newest_of(&recorded).cloned())
    }

    /// Output messages of a flow's session strictly after `cursor` (the `messages` unit),
    /// error messages left out.
    pub async fn pending_output_messages(
        &self,
        flow_id: &str,
        session_id: &str,
        cursor: Option<&MessagePosition>,
    ) -> Result<i64, StoreError> {
        Ok(self
            .session_timeline(flow_id, session_id)
            .await?
            .pending_outputs(cursor))
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
                let timeline = self
                    .session_timeline(&base.flow_id, &session.session_id)
                    .await?;
                let cursor = self.cursor_position(session, &timeline).await?;
                Ok(timeline.pending_outputs(cursor.as_ref()))
            }
        }
    }

    /// The messages at `positions`, in that order; messages deleted meanwhile are left out.
    pub async fn messages_at(
        &self,
        positions: &[MessagePosition],
    ) -> Result<Vec<PendingMessage>, StoreError> {
        let ids: Vec<&str> = positions.iter().map(|p| p.id.as_str()).collect();
        let rows: Vec<MessageRow> = match &self.pool {
            DbPool::Sqlite(pool, dialect) => {
                // Langflow's SQLite keeps ids as 32 hex digits.
                let ids: Vec<String> = ids
                    .iter()
                    .map(|id| match dialect.compact_ids() {
                        true => id.replace('-', "").to_ascii_lowercase(),
                        false => (*id).to_owned(),
                    })
                    .collect();
                sqlx::query_as(super::sql::dialect_text(
                    *dialect,
                    concat!(
                        message_columns!(),
                        " FROM message m WHERE m.id IN (SELECT value FROM json_each($1))"
                    ),
                ))
                .bind(serde_json::to_string(&ids).unwrap_or_default())
                .fetch_all(pool)
                .await
            }
            DbPool::Postgres(pool, _) => {
                sqlx::query_as(concat!(
                    message_columns!(),
                    " FROM message m WHERE m.id = ANY($1::uuid[])"
                ))
                .bind(&ids)
                .fetch_all(pool)
                .await
            }
        }
        .map_err(|e| self.query_failed(e))?;
        let mut by_id: std::collections::HashMap<String, PendingMessage> = rows
            .into_iter()
            .map(|row| Ok((canonical_id(&row.id), self.pending_message(row)?)))
            .collect::<Result<_, StoreError>>()?;
        Ok(positions
            .iter()
            .filter_map(|p| by_id.remove(&canonical_id(&p.id)))
            .collect())
    }

    fn pending_message(&self, row: MessageRow) -> Result<PendingMessage, StoreError> {
        Ok(PendingMessage {
            timestamp: self.parse_stored_time(&row.timestamp, "message", &row.id)?,
            id: row.id,
            sender: row.sender,
            sender_name: row.sender_name,
            session_id: row.session_id,
            text: row.text,
            content_blocks: row.content_blocks,
            flow_id: row.flow_id,
            run_id: row.run_id,
        })
    }

    /// The messages a base's ingestion records name, in (instant, id) order, with the job
    /// that ingested each: what the KB should hold.
    pub async fn ingested_messages(
        &self,
        memory_base_id: &str,
    ) -> Result<Vec<(PendingMessage, Option<String>)>, StoreError> {
        #[derive(FromRow)]
        struct Ingested {
            #[sqlx(flatten)]
            message: MessageRow,
            job_id: Option<String>,
        }
        let rows: Vec<Ingested> = on_pool!(
            self.pool,
            concat!(
                message_columns!(),
                ", r.job_id::text AS job_id FROM message_ingestion_record r \
                 JOIN message m ON m.id = r.message_id WHERE r.memory_base_id = $1::uuid"
            ),
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let mut ingested = rows
            .into_iter()
            .map(|r| Ok((self.pending_message(r.message)?, r.job_id)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        ingested.sort_by_key(|(message, _)| message.position());
        Ok(ingested)
    }

    /// The newest pending unit of a session: its latest unstamped run's workflow job (unit
    /// `runs`, when it has any), by the instant it was recorded.
    pub async fn latest_pending_run(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let runs = self.unstamped_runs(memory_base_id, session_id).await?;
        Ok(runs
            .into_iter()
            .max_by(|a, b| {
                a.recorded_at
                    .cmp(&b.recorded_at)
                    .then_with(|| compare_ids(&a.id, &b.id))
            })
            .map(|run| run.unit))
    }

    /// The session's runs not yet stamped with an ingestion job.
    async fn unstamped_runs(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Vec<UnstampedRun>, StoreError> {
        let rows: Vec<(String, String, String)> = on_pool!(
            self.pool,
            "SELECT id::text, coalesce(workflow_job_id::text, id::text), CAST(recorded_at AS TEXT) \
             FROM memory_base_workflow_run \
             WHERE memory_base_id = $1::uuid AND session_id = $2 AND ingestion_job_id IS NULL",
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .bind(session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        rows.into_iter()
            .map(|(id, unit, recorded_at)| {
                Ok(UnstampedRun {
                    recorded_at: self.parse_stored_time(&recorded_at, "workflow run", &id)?,
                    id,
                    unit,
                })
            })
            .collect()
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
        // A status and a time in the database's own formats: Langflow's take it too.
        self.ensure_writable_in_place()?;
        let cancelled = on_pool!(
            self.pool,
            "UPDATE job SET status = 'cancelled', finished_timestamp = $2 \
             WHERE job_id = $1::uuid AND status IN ('queued', 'in_progress')",
            |pool, sql| sqlx::query(sql)
                .bind(dashed_id(job_id))
                .bind(self.stored_time(now))
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
        const SQL: [&str; 2] = job_select!("WHERE job.job_id = $1::uuid");
        let sql = SQL[usize::from(!self.tracks_job_processes())];
        let row: Option<JobRow> = on_pool!(self.pool, sql, |pool, sql| {
            sqlx::query_as(sql).bind(job_id).fetch_optional(pool).await
        })
        .map_err(|e| self.query_failed(e))?;
        row.map(|row| self.job_info(row)).transpose()
    }

    fn job_info(&self, row: JobRow) -> Result<JobInfo, StoreError> {
        let finished_timestamp = match &row.finished_timestamp {
            Some(text) => Some(self.parse_stored_time(text, "job", &row.job_id)?),
            None => None,
        };
        Ok(JobInfo {
            created_timestamp: self.parse_stored_time(
                &row.created_timestamp,
                "job",
                &row.job_id,
            )?,
            finished_timestamp,
            job_id: row.job_id,
            status: row.status,
            job_type: row.job_type,
            asset_id: row.asset_id,
            dedupe_key: row.dedupe_key,
            ended_reason: row.ended_reason,
        })
    }

    /// Ingestion jobs, newest first (by the instant they were created), of one memory base or
    /// all. Jobs whose process stopped are marked failed first (on a writable database), so no
    /// list shows a dead job running.
    pub async fn ingestion_jobs(
        &self,
        memory_base_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<JobInfo>, StoreError> {
        self.sweep_abandoned_jobs(Utc::now()).await?;
        const SQL: [&str; 2] = job_select!(
            "WHERE job.type::text = 'ingestion' AND ($1::uuid IS NULL OR job.asset_id = $1::uuid)"
        );
        let sql = SQL[usize::from(!self.tracks_job_processes())];
        let rows: Vec<JobRow> = on_pool!(self.pool, sql, |pool, sql| {
            sqlx::query_as(sql)
                .bind(memory_base_id)
                .fetch_all(pool)
                .await
        })
        .map_err(|e| self.query_failed(e))?;
        let mut jobs = rows
            .into_iter()
            .map(|row| self.job_info(row))
            .collect::<Result<Vec<_>, StoreError>>()?;
        jobs.sort_by(|a, b| {
            b.created_timestamp
                .cmp(&a.created_timestamp)
                .then_with(|| compare_ids(&a.job_id, &b.job_id))
        });
        jobs.truncate(limit.max(0) as usize);
        Ok(jobs)
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
        // Runs recorded up to the job's creation, compared as instants.
        let runs: Vec<String> = self
            .unstamped_runs(commit.memory_base_id, commit.session_id)
            .await?
            .into_iter()
            .filter(|run| run.recorded_at <= commit.runs_recorded_until)
            .map(|run| run.id)
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
                sqlx::query(
                    "UPDATE memory_base_workflow_run SET ingestion_job_id = ? \
                     WHERE ingestion_job_id IS NULL AND id IN (SELECT value FROM json_each(?))",
                )
                .bind(commit.job_id)
                .bind(serde_json::to_string(&runs).unwrap_or_default())
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
                sqlx::query(
                    "UPDATE memory_base_workflow_run SET ingestion_job_id = $1::uuid \
                     WHERE ingestion_job_id IS NULL AND id = ANY($2::uuid[])",
                )
                .bind(commit.job_id)
                .bind(&runs)
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
        let langflow = self.profile.source == super::Source::Langflow;
        if langflow {
            self.ensure_writable_in_place()?;
        } else {
            self.ensure_writable()?;
        }
        match &self.pool {
            DbPool::Sqlite(..) if langflow => Ok(Some(SessionLock {
                name: lock_name.to_owned(),
                holder: super::owners::job_owner(),
                held: HeldLock::KbFileLock,
            })),
            DbPool::Postgres(pool, _) => {
                let mut connection = pool.acquire().await.map_err(|e| self.query_failed(e))?;
                connection.close_on_drop();
                // Langflow's own key on its database: its ingestion and memscope's exclude
                // each other.
                let key = if langflow {
                    super::owners::session_lock_key(lock_name)
                } else {
                    advisory_lock_key(lock_name)
                };
                let (locked, backend): (bool, i32) =
                    sqlx::query_as("SELECT pg_try_advisory_lock($1), pg_backend_pid()")
                        .bind(key)
                        .fetch_one(&mut *connection)
                        .await
                        .map_err(|e| self.query_failed(e))?;
                Ok(locked.then(|| SessionLock {
                    name: lock_name.to_owned(),
                    holder: backend.to_string(),
                    held: HeldLock::Advisory { connection, key },
                }))
            }
            DbPool::Sqlite(pool, _) => {
                let owner = lease_owner();
                let now = epoch_ms(Utc::now());
                self.break_dead_lease(pool, lock_name).await?;
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
                    holder: owner.clone(),
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

/// A new lease owner: unique, and naming its host and process so that a process of the same
/// host can tell when the holder died.
fn lease_owner() -> String {
    format!(
        "{}@{}:{}",
        uuid::Uuid::new_v4(),
        super::owners::host_name(),
        std::process::id()
    )
}

/// Whether a lease's owner is a process of this host that stopped.
fn owner_is_dead(owner: &str) -> bool {
    let Some((rest, pid)) = owner.rsplit_once(':') else {
        return false;
    };
    let Some((_, host)) = rest.split_once('@') else {
        return false;
    };
    host == super::owners::host_name()
        && pid
            .parse()
            .is_ok_and(|pid| super::owners::process_alive(pid) == Some(false))
}

impl Store {
    /// Deletes a session's lease whose holder was a process of this host that stopped (killed):
    /// its session need not stay blocked until the lease expires.
    async fn break_dead_lease(
        &self,
        pool: &sqlx::SqlitePool,
        lock_name: &str,
    ) -> Result<(), StoreError> {
        let owner: Option<String> =
            sqlx::query_scalar("SELECT owner FROM memscope_sync_lease WHERE lock_name = ?")
                .bind(lock_name)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.query_failed(e))?;
        if let Some(owner) = owner.filter(|owner| owner_is_dead(owner)) {
            sqlx::query("DELETE FROM memscope_sync_lease WHERE lock_name = ? AND owner = ?")
                .bind(lock_name)
                .bind(&owner)
                .execute(pool)
                .await
                .map_err(|e| self.query_failed(e))?;
        }
        Ok(())
    }
}

fn epoch_ms(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

impl SessionLock {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Renews a SQLite lease; `false` when it was lost (it expired and someone else took it).
    /// Advisory locks need no renewal.
    pub async fn heartbeat(&mut self, lease: Duration) -> Result<bool, sqlx::Error> {
        match &self.held {
            HeldLock::Advisory { .. } | HeldLock::KbFileLock => Ok(true),
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
            HeldLock::KbFileLock => Ok(()),
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
            ended_reason: None,
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
