//! Ingestion jobs in memscope's formats: their statuses, creating one with a dedupe key,
//! failing, finishing and cancelling them, and listing them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;

use crate::memory::memory_base::compare_ids;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::profile::dashed_id;

/// Job statuses, as Langflow's `JobStatus` spells them.
pub mod job_status {
    pub const QUEUED: &str = "queued";
    pub const IN_PROGRESS: &str = "in_progress";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const CANCELLED: &str = "cancelled";
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

/// The result of creating an ingestion job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobCreation {
    Created,
    /// A queued, running or completed job has the same dedupe key.
    Duplicate {
        job_id: String,
    },
}

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
