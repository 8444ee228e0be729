//! The sessions a memory base tracks: listing them with their pending runs and records,
//! starting to track one, and recording its completed flow runs.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;

use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::rows::LfMessageRow;

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

const SESSION_COLUMNS_SQL: &str = "SELECT s.id::text AS id, s.memory_base_id::text AS memory_base_id, s.session_id, \
     s.cursor_id::text AS cursor_id, s.total_processed::bigint AS total_processed, s.last_sync_at, \
     (SELECT count(*) FROM memory_base_workflow_run w WHERE w.memory_base_id = s.memory_base_id \
      AND w.session_id = s.session_id AND w.ingestion_job_id IS NULL) AS pending_runs, \
     (SELECT count(*) FROM message_ingestion_record r WHERE r.memory_base_id = s.memory_base_id \
      AND r.session_id = s.session_id) AS ingestion_records \
     FROM memory_base_session s";

/// Starts tracking a session, unless it is tracked: `$1` a new id, `$2` the base, `$3` the session.
pub(crate) const TRACK_SESSION_SQL: &str = "INSERT INTO memory_base_session \
     (id, memory_base_id, session_id, total_processed) VALUES ($1::uuid, $2::uuid, $3, 0) \
     ON CONFLICT (memory_base_id, session_id) DO NOTHING";

/// Records a completed flow run of a session once: `$1` a new id, `$2` the base, `$3` the
/// session, `$4` the run's workflow job, `$5` when it was recorded.
pub(crate) const RECORD_RUN_SQL: &str = "INSERT INTO memory_base_workflow_run \
     (id, memory_base_id, session_id, workflow_job_id, recorded_at) \
     VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5) \
     ON CONFLICT (memory_base_id, session_id, workflow_job_id) DO NOTHING";

/// One captured flow run, for a database whose app records runs itself: the run's completed
/// workflow job, its messages (owned by the flow's owner) and the bases that record it.
pub struct CapturedRun<'a> {
    pub flow_id: &'a str,
    pub owner: &'a str,
    pub session_id: &'a str,
    pub run_id: &'a str,
    pub messages: &'a [LfMessageRow],
    /// The auto-capture bases of the flow, which record the run.
    pub memory_base_ids: &'a [String],
    pub started: DateTime<Utc>,
    pub finished: DateTime<Utc>,
}

impl Store {
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
        on_pool!(self.pool, TRACK_SESSION_SQL, |pool, sql| sqlx::query(sql)
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(memory_base_id)
            .bind(session_id)
            .execute(pool)
            .await
            .map(|_| ()))
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
        on_pool!(self.pool, RECORD_RUN_SQL, |pool, sql| sqlx::query(sql)
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(memory_base_id)
            .bind(session_id)
            .bind(workflow_job_id)
            .bind(recorded_at)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }
}
