//! The one transaction that commits a finished ingestion (records, cursor and totals, stamped
//! runs), and regenerate's reset that makes everything pending again.

use chrono::{DateTime, Utc};

use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::pool::DbPool;

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

impl Store {
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
            DbPool::Mysql(..) => return Err(self.no_memory_bases_on_mysql()),
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
        self.run_in_one_transaction(&STATEMENTS, memory_base_id)
            .await
            .map(|_| ())
    }
}

const COMMIT_CURSOR_SQL: &str = "UPDATE memory_base_session SET cursor_id = $3::uuid, \
     total_processed = total_processed + $4, last_sync_at = $5 \
     WHERE memory_base_id = $1::uuid AND session_id = $2";
