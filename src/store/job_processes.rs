//! Which process runs each ingestion job memscope created, and the sweep that marks a job whose
//! process is gone as failed, as Langflow's own orphan sweep does at start-up. A job is alive
//! while its session's lock is held by the holder it recorded (SQLite: a lease row that has not
//! expired; PostgreSQL: the advisory lock held by the recorded backend) and, on this host, while
//! its process runs. Jobs memscope did not create have no record and are left alone.

use chrono::{DateTime, Utc};

use super::catalog::Backend;
use super::error::StoreError;
use super::handle::Store;
use super::memory_bases::SessionLock;
pub use super::owners::{host_name, process_alive};
use super::pool::DbPool;
use super::profile::JobOwnership;
use crate::memory::memory_base::advisory_lock_key;

/// The reason kept for a job whose process stopped without ending it.
pub const ABANDONED: &str = "abandoned: its process stopped";

/// A job's recorded process.
struct JobProcess {
    job_id: String,
    lock_name: String,
    holder: String,
    host: String,
    pid: i64,
}

impl Store {
    /// Whether the database has memscope's record of job processes (a database memscope did not
    /// create has not).
    pub(super) fn tracks_job_processes(&self) -> bool {
        self.catalog.has_table("memscope_job_process")
    }

    /// Records that this process runs `job_id` under `lock`, before the job row exists: a job
    /// can never be running without a record to tell whether its process lives.
    pub async fn record_job_process(
        &self,
        job_id: &str,
        lock: &SessionLock,
    ) -> Result<(), StoreError> {
        self.ensure_writable()?;
        if !self.tracks_job_processes() {
            return Ok(());
        }
        on_pool!(
            self.pool,
            "INSERT INTO memscope_job_process (job_id, lock_name, holder, host, pid) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id) DO NOTHING",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(lock.name())
                .bind(lock.holder())
                .bind(host_name())
                .bind(i64::from(std::process::id()))
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Forgets the record of a job that was never created (a duplicate).
    pub async fn forget_job_process(&self, job_id: &str) -> Result<(), StoreError> {
        if self.read_only || !self.tracks_job_processes() {
            return Ok(());
        }
        on_pool!(
            self.pool,
            "DELETE FROM memscope_job_process WHERE job_id = $1",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Marks failed every queued or running job memscope created whose process is gone, keeping
    /// the reason [`ABANDONED`]; returns their ids. A read-only database is left as it is.
    pub async fn sweep_abandoned_jobs(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        if self.profile.capabilities().jobs == JobOwnership::Heartbeat {
            // The app's own record of liveness: the job's heartbeat.
            return self.lf_fail_abandoned_jobs(now, None).await;
        }
        if self.read_only || !self.tracks_job_processes() {
            return Ok(Vec::new());
        }
        let running: Vec<(String, String, String, String, i64)> = on_pool!(
            self.pool,
            "SELECT p.job_id, p.lock_name, p.holder, p.host, p.pid FROM memscope_job_process p \
             JOIN job j ON j.job_id::text = p.job_id \
             WHERE j.status::text IN ('queued', 'in_progress')",
            |pool, sql| sqlx::query_as(sql).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))?;
        let here = host_name();
        let mut gone = Vec::new();
        for (job_id, lock_name, holder, host, pid) in running {
            let process = JobProcess {
                job_id,
                lock_name,
                holder,
                host,
                pid,
            };
            if !self.is_alive(&process, &here, now).await? {
                gone.push(process.job_id);
            }
        }
        if gone.is_empty() {
            return Ok(gone);
        }
        let mut failed = Vec::with_capacity(gone.len());
        on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            for job_id in &gone {
                let ended = sqlx::query(match self.backend() {
                    Backend::Sqlite => super::sql::sqlite_text(FAIL_JOB_SQL),
                    Backend::Postgres => FAIL_JOB_SQL,
                    Backend::Mysql => self.sql(FAIL_JOB_SQL),
                })
                .bind(job_id)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if ended == 1 {
                    sqlx::query(match self.backend() {
                        Backend::Sqlite => super::sql::sqlite_text(KEEP_REASON_SQL),
                        Backend::Postgres => KEEP_REASON_SQL,
                        Backend::Mysql => self.sql(KEEP_REASON_SQL),
                    })
                    .bind(job_id)
                    .bind(ABANDONED)
                    .execute(&mut *tx)
                    .await?;
                    failed.push(job_id.clone());
                }
            }
            tx.commit().await
        }
        .await)
        .map_err(|e| self.query_failed(e))?;
        Ok(failed)
    }

    async fn is_alive(
        &self,
        process: &JobProcess,
        here: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let runs_here = match u32::try_from(process.pid) {
            Ok(pid) if process.host == here => process_alive(pid),
            _ => None,
        };
        if runs_here == Some(false) {
            return Ok(false);
        }
        let held: i64 = match &self.pool {
            // A running process of this host keeps its job while the lease is still its own,
            // even if a slow step let it expire (its next renewal succeeds).
            DbPool::Sqlite(pool, _) => sqlx::query_scalar(
                "SELECT count(*) FROM memscope_sync_lease \
                 WHERE lock_name = ? AND owner = ? AND (expires_at_ms >= ? OR ?)",
            )
            .bind(&process.lock_name)
            .bind(&process.holder)
            .bind(now.timestamp_millis())
            .bind(runs_here == Some(true))
            .fetch_one(pool)
            .await,
            DbPool::Postgres(pool, _) => {
                let Ok(backend) = process.holder.parse::<i32>() else {
                    return Ok(false);
                };
                // A bigint advisory key shows as its high half in classid, its low half in
                // objid, and objsubid 1.
                sqlx::query_scalar(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
                     AND pid = $1 AND objsubid = 1 \
                     AND classid::bigint = ($2 >> 32) AND objid::bigint = ($2 & 4294967295) \
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                )
                .bind(backend)
                .bind(advisory_lock_key(&process.lock_name))
                .fetch_one(pool)
                .await
            }
            // memscope runs no jobs on a MySQL database (it only reads one).
            DbPool::Mysql(..) => Ok(0),
        }
        .map_err(|e| self.query_failed(e))?;
        Ok(held > 0)
    }
}

const FAIL_JOB_SQL: &str = "UPDATE job SET status = 'failed', finished_timestamp = $2 \
     WHERE job_id = $1::uuid AND status IN ('queued', 'in_progress')";

const KEEP_REASON_SQL: &str = "UPDATE memscope_job_process SET ended_reason = $2 WHERE job_id = $1";
