//! Writes on a database Langflow 1.13 made, in Langflow's own formats: ingestion jobs with its
//! dedupe check and heartbeat (`job_metadata.heartbeat_at`, which its start-up sweep reads),
//! the one commit of a finished ingestion, regenerate's reset and captured flow runs. Ids go
//! through the dialect (`$n::uuid`: 32 hex digits on SQLite), instants through [`StoredTime`].
//! Nothing of memscope's own schema is added to Langflow's database.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Encode, MySql, Postgres, Sqlite, Type};

use crate::store::Store;
use crate::store::StoreError;
use crate::store::memory_bases::{
    CapturedRun, IngestionCommit, JobCreation, MemoryBaseInfo, RECORD_RUN_SQL, TRACK_SESSION_SQL,
};
use crate::store::owners::{OWNER_PREFIX, host_name, process_alive};
pub use crate::store::owners::{job_owner, session_lock_key};
use crate::store::pool::{DbPool, on_pool};

/// An instant as the database keeps it: Langflow's SQLite `DATETIME` is naive UTC text with
/// microseconds (`2026-01-05 09:00:01.000000`); elsewhere a `timestamptz` or RFC 3339 text.
#[derive(Debug, Clone, Copy)]
pub struct StoredTime {
    at: DateTime<Utc>,
    naive_text: bool,
}

impl StoredTime {
    /// Langflow's SQLite form of an instant.
    pub fn naive_text(at: DateTime<Utc>) -> String {
        at.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    }
}

impl Type<Sqlite> for StoredTime {
    fn type_info() -> <Sqlite as sqlx::Database>::TypeInfo {
        <String as Type<Sqlite>>::type_info()
    }
}

impl Encode<'_, Sqlite> for StoredTime {
    fn encode_by_ref(
        &self,
        buf: &mut <Sqlite as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        if self.naive_text {
            Encode::<Sqlite>::encode(StoredTime::naive_text(self.at), buf)
        } else {
            Encode::<Sqlite>::encode_by_ref(&self.at, buf)
        }
    }
}

impl Type<Postgres> for StoredTime {
    fn type_info() -> <Postgres as sqlx::Database>::TypeInfo {
        <DateTime<Utc> as Type<Postgres>>::type_info()
    }
}

impl Encode<'_, Postgres> for StoredTime {
    fn encode_by_ref(
        &self,
        buf: &mut <Postgres as sqlx::Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        Encode::<Postgres>::encode_by_ref(&self.at, buf)
    }
}

impl Type<MySql> for StoredTime {
    fn type_info() -> <MySql as sqlx::Database>::TypeInfo {
        <DateTime<Utc> as Type<MySql>>::type_info()
    }
}

impl Encode<'_, MySql> for StoredTime {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        Encode::<MySql>::encode_by_ref(&self.at, buf)
    }
}

/// How long a heartbeat stays fresh for Langflow (`background_lease_ttl_s`, 45 s by default): an
/// `in_progress` job beating less recently is failed by its start-up sweep, and by memscope's.
pub const LANGFLOW_LEASE_TTL_SECS: i64 = 45;

/// `job_metadata` as Langflow's `JobService.heartbeat` writes it.
fn heartbeat_metadata(owner: &str, now: DateTime<Utc>) -> String {
    serde_json::json!({
        "owner": owner,
        "heartbeat_at": now.to_rfc3339_opts(SecondsFormat::Micros, false),
    })
    .to_string()
}

#[derive(Deserialize, Default)]
struct JobMetadata {
    owner: Option<String>,
    heartbeat_at: Option<String>,
}

/// Whether an `in_progress` job is gone: its heartbeat is stale (or absent), as Langflow's
/// `is_lease_stale` decides, or memscope's process on this host that ran it stopped.
fn abandoned(metadata: Option<&str>, now: DateTime<Utc>, any_owner: bool) -> bool {
    let metadata: JobMetadata = metadata
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let ours = metadata
        .owner
        .as_deref()
        .and_then(|owner| owner.strip_prefix(OWNER_PREFIX));
    if ours.is_none() && !any_owner {
        return false;
    }
    if let Some((host, pid)) = ours.and_then(|rest| rest.rsplit_once(':'))
        && host == host_name()
        && pid
            .parse()
            .is_ok_and(|pid| process_alive(pid) == Some(false))
    {
        return true;
    }
    let beat = metadata
        .heartbeat_at
        .as_deref()
        .and_then(|text| crate::memory::instant::parse_instant(text).ok());
    beat.is_none_or(|beat| (now - beat).num_seconds() > LANGFLOW_LEASE_TTL_SECS)
}

/// The transaction lock Langflow's `create_job` takes on PostgreSQL before its dedupe check.
fn dedupe_lock_key(user_id: &str, dedupe_key: &str) -> i64 {
    let digest = Sha256::digest(format!("langflow.job.dedupe:{user_id}:{dedupe_key}").as_bytes());
    i64::from_be_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"))
}

/// A new ingestion job in a Langflow database.
pub struct LangflowJob<'a> {
    pub job_id: &'a str,
    pub base: &'a MemoryBaseInfo,
    /// `ingestion:{base}:{session}:{latest pending workflow job}`; none without a pending run.
    pub dedupe_key: Option<&'a str>,
    pub owner: &'a str,
    pub now: DateTime<Utc>,
}

/// The cached figures of a knowledge-base row, as Langflow's `sync_kb_stats_to_record` keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct KbStats {
    pub kb_id: String,
    pub chunks: i64,
    pub words: i64,
    pub characters: i64,
    pub size_bytes: i64,
}

impl Store {
    /// An instant bound in this database's form.
    pub(crate) fn stored_time(&self, at: DateTime<Utc>) -> StoredTime {
        StoredTime {
            at,
            naive_text: self.profile.dialect.compact_ids(),
        }
    }

    /// Creates an `in_progress` ingestion job as Langflow's `JobService.create_job` does: the
    /// dedupe check and the insert in one transaction that first takes the writer (SQLite) or
    /// the key's transaction lock (PostgreSQL), a queued, running, suspended or completed job
    /// of the owner with the same key being a duplicate.
    pub async fn lf_create_ingestion_job(
        &self,
        job: &LangflowJob<'_>,
    ) -> Result<JobCreation, StoreError> {
        self.ensure_writable_in_place()?;
        let base = job.base;
        let metadata = heartbeat_metadata(job.owner, job.now);
        let created = self.stored_time(job.now);
        let check = self.sql(
            "SELECT job_id::text FROM job WHERE dedupe_key = $1 AND user_id = $2::uuid \
             AND status::text IN ('queued', 'in_progress', 'suspended', 'completed') LIMIT 1",
        );
        let insert = self.sql(
            "INSERT INTO job (job_id, flow_id, status, type, user_id, asset_id, asset_type, \
             dedupe_key, created_timestamp, job_metadata) VALUES ($1::uuid, $2::uuid, \
             'in_progress', 'ingestion', $3::uuid, $4::uuid, 'memory_base', $5, $6, $7::jsonb)",
        );
        macro_rules! create {
            ($tx:ident) => {{
                if let Some(key) = job.dedupe_key {
                    let existing: Option<String> = sqlx::query_scalar(check)
                        .bind(key)
                        .bind(&base.user_id)
                        .fetch_optional(&mut *$tx)
                        .await?;
                    if let Some(job_id) = existing {
                        return Ok(JobCreation::Duplicate { job_id });
                    }
                }
                sqlx::query(insert)
                    .bind(job.job_id)
                    .bind(&base.flow_id)
                    .bind(&base.user_id)
                    .bind(&base.id)
                    .bind(job.dedupe_key)
                    .bind(created)
                    .bind(&metadata)
                    .execute(&mut *$tx)
                    .await?;
                $tx.commit().await?;
                Ok(JobCreation::Created)
            }};
        }
        let result: Result<JobCreation, sqlx::Error> = match &self.pool {
            DbPool::Sqlite(pool, _) => {
                async {
                    let mut tx = pool.begin().await?;
                    // Takes SQLite's writer before the check, as Langflow's create_job does.
                    sqlx::query("UPDATE job SET job_id = job_id WHERE 0")
                        .execute(&mut *tx)
                        .await?;
                    create!(tx)
                }
                .await
            }
            DbPool::Postgres(pool, _) => {
                async {
                    let mut tx = pool.begin().await?;
                    if let Some(key) = job.dedupe_key {
                        sqlx::query("SELECT pg_advisory_xact_lock($1)")
                            .bind(dedupe_lock_key(&base.user_id, key))
                            .execute(&mut *tx)
                            .await?;
                    }
                    create!(tx)
                }
                .await
            }
            DbPool::Mysql(..) => return Err(self.no_memory_bases_on_mysql()),
        };
        result.map_err(|e| self.query_failed(e))
    }

    /// Renews a running job's heartbeat; `false` when the job is no longer in progress (it was
    /// cancelled or failed meanwhile).
    pub async fn lf_heartbeat(
        &self,
        job_id: &str,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.ensure_writable_in_place()?;
        let renewed = on_pool!(
            self.pool,
            "UPDATE job SET job_metadata = $2::jsonb \
             WHERE job_id = $1::uuid AND status::text = 'in_progress'",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(heartbeat_metadata(owner, now))
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(renewed == 1)
    }

    /// Fails the `in_progress` ingestion jobs that are gone, with Langflow's `worker_lost`
    /// error: memscope's own whose process stopped or whose heartbeat is stale, and, when
    /// `session_prefix` (a dedupe-key prefix held under the session's lock) is given, any of
    /// that session whose heartbeat is stale. Returns their ids.
    pub async fn lf_fail_abandoned_jobs(
        &self,
        now: DateTime<Utc>,
        session_prefix: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        if self.read_only {
            return Ok(Vec::new());
        }
        let running: Vec<(String, Option<String>, Option<String>)> = on_pool!(
            self.pool,
            "SELECT job_id::text, CAST(job_metadata AS TEXT), dedupe_key FROM job \
             WHERE type::text = 'ingestion' AND status::text = 'in_progress'",
            |pool, sql| sqlx::query_as(sql).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))?;
        let mut failed = Vec::new();
        for (job_id, metadata, key) in running {
            let in_session = session_prefix
                .is_some_and(|prefix| key.as_deref().is_some_and(|key| key.starts_with(prefix)));
            if !abandoned(metadata.as_deref(), now, in_session) {
                continue;
            }
            let updated = on_pool!(
                self.pool,
                "UPDATE job SET status = 'failed', finished_timestamp = $2, \
                 error = $3::jsonb WHERE job_id = $1::uuid AND status::text = 'in_progress'",
                |pool, sql| sqlx::query(sql)
                    .bind(&job_id)
                    .bind(self.stored_time(now))
                    .bind(r#"{"type": "worker_lost"}"#)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            )
            .map_err(|e| self.query_failed(e))?;
            if updated == 1 {
                failed.push(job_id);
            }
        }
        Ok(failed)
    }

    /// Ends a job with `status` (and an error payload for a failure) unless it already ended.
    pub async fn lf_finish_job(
        &self,
        job_id: &str,
        status: &str,
        error: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.ensure_writable_in_place()?;
        let error = error
            .map(|message| serde_json::json!({"type": "error", "message": message}).to_string());
        on_pool!(
            self.pool,
            "UPDATE job SET status = $2::job_status_enum, finished_timestamp = $3, \
             error = coalesce($4::jsonb, error) \
             WHERE job_id = $1::uuid AND status::text IN ('queued', 'in_progress')",
            |pool, sql| sqlx::query(sql)
                .bind(job_id)
                .bind(status)
                .bind(self.stored_time(now))
                .bind(error)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))
    }

    /// Commits a finished ingestion as Langflow's `_mark_messages_ingested` and `_advance_cursor`
    /// do, in one transaction with the knowledge-base row's figures: a record per message, the
    /// cursor moved and the total grown by the messages taken, and every run of the session still
    /// pending stamped with the job, those recorded while it ran too (`_advance_cursor` stamps
    /// all of them; `runs_recorded_until` is memscope's own rule and not used here). Fails
    /// (committing nothing) when the session is gone.
    pub async fn lf_commit_ingestion(
        &self,
        commit: &IngestionCommit<'_>,
        stats: &KbStats,
    ) -> Result<bool, StoreError> {
        self.ensure_writable_in_place()?;
        let now = self.stored_time(commit.now);
        let record = self.sql(
            "INSERT INTO message_ingestion_record (id, message_id, memory_base_id, job_id, \
             session_id, ingested_at) VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, $6) \
             ON CONFLICT (message_id, session_id, memory_base_id) DO NOTHING",
        );
        let cursor = self.sql(
            "UPDATE memory_base_session SET cursor_id = $3::uuid, \
             total_processed = total_processed + $4, last_sync_at = $5 \
             WHERE memory_base_id = $1::uuid AND session_id = $2",
        );
        let stamp = self.sql(
            "UPDATE memory_base_workflow_run SET ingestion_job_id = $1::uuid \
             WHERE memory_base_id = $2::uuid AND session_id = $3 AND ingestion_job_id IS NULL",
        );
        let figures = self.sql(
            "UPDATE knowledge_base SET chunks = $2, words = $3, characters = $4, \
             size_bytes = $5, updated_at = $6, source_types = $7::jsonb WHERE id = $1::uuid",
        );
        let source_types = self.kb_source_types(&stats.kb_id).await?;
        let updated = on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            for message_id in commit.message_ids {
                sqlx::query(record)
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind(message_id)
                    .bind(commit.memory_base_id)
                    .bind(commit.job_id)
                    .bind(commit.session_id)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
            }
            let updated = sqlx::query(cursor)
                .bind(commit.memory_base_id)
                .bind(commit.session_id)
                .bind(commit.cursor_id)
                .bind(commit.message_ids.len() as i64)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query(stamp)
                .bind(commit.job_id)
                .bind(commit.memory_base_id)
                .bind(commit.session_id)
                .execute(&mut *tx)
                .await?;
            sqlx::query(figures)
                .bind(&stats.kb_id)
                .bind(stats.chunks)
                .bind(stats.words)
                .bind(stats.characters)
                .bind(stats.size_bytes)
                .bind(now)
                .bind(&source_types)
                .execute(&mut *tx)
                .await?;
            if updated == 1 {
                tx.commit().await?;
            }
            Ok::<_, sqlx::Error>(updated)
        }
        .await)
        .map_err(|e| self.query_failed(e))?;
        Ok(updated == 1)
    }

    /// The LLM a base distils its messages with before they are stored (Langflow's
    /// preprocessing: `memory_base.preprocessing` and `preproc_model`), or `None` when it
    /// stores them as they are.
    pub async fn lf_preprocessing_model(
        &self,
        memory_base_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(bool, Option<String>)> = on_pool!(
            self.pool,
            "SELECT preprocessing, preproc_model FROM memory_base WHERE id = $1::uuid",
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(row
            .filter(|(preprocessing, _)| *preprocessing)
            .map(|(_, model)| model.unwrap_or_default()))
    }

    /// Of `job_ids`, those of ingestion jobs that ended without committing (failed, cancelled
    /// or timed out): what they wrote into a knowledge base is no one's.
    pub async fn lf_unsuccessful_jobs(
        &self,
        job_ids: &[String],
    ) -> Result<Vec<String>, StoreError> {
        let mut ended = Vec::new();
        for job_id in job_ids {
            let Ok(id) = uuid::Uuid::parse_str(job_id) else {
                continue;
            };
            let status: Option<String> = on_pool!(
                self.pool,
                "SELECT status::text FROM job WHERE job_id = $1::uuid AND type::text = 'ingestion'",
                |pool, sql| sqlx::query_scalar(sql)
                    .bind(id.to_string())
                    .fetch_optional(pool)
                    .await
            )
            .map_err(|e| self.query_failed(e))?;
            if status.is_some_and(|s| matches!(s.as_str(), "failed" | "cancelled" | "timed_out")) {
                ended.push(job_id.clone());
            }
        }
        Ok(ended)
    }

    /// The knowledge-base row's source types with Langflow's `memory` marker, as JSON.
    async fn kb_source_types(&self, kb_id: &str) -> Result<String, StoreError> {
        let stored: Option<String> = on_pool!(
            self.pool,
            "SELECT CAST(source_types AS TEXT) FROM knowledge_base WHERE id = $1::uuid",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(kb_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let mut types: Vec<String> = stored
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        types.push("memory".to_owned());
        types.sort();
        types.dedup();
        Ok(serde_json::to_string(&types).unwrap_or_default())
    }

    /// Regenerate's reset as Langflow's `regenerate` does it, in one transaction: every
    /// session's cursor cleared, the base's ingestion records and preprocessing outputs deleted.
    pub async fn lf_reset_memory_base(&self, memory_base_id: &str) -> Result<(), StoreError> {
        self.ensure_writable_in_place()?;
        const STATEMENTS: [&str; 3] = [
            "UPDATE memory_base_session SET cursor_id = NULL WHERE memory_base_id = $1::uuid",
            "DELETE FROM message_ingestion_record WHERE memory_base_id = $1::uuid",
            "DELETE FROM memory_base_preprocessing_output WHERE memory_base_id = $1::uuid",
        ];
        self.run_in_one_transaction(&STATEMENTS, memory_base_id)
            .await
            .map(|_| ())
    }

    /// Records one captured flow run as Langflow's run endpoint and its memory-base hook do, in
    /// one transaction: the completed workflow job, its messages owned by the flow's owner, and
    /// for each auto-capture base of the flow the session and the run.
    pub async fn lf_record_capture(&self, capture: &CapturedRun<'_>) -> Result<(), StoreError> {
        self.ensure_writable_in_place()?;
        let job = self.sql(
            "INSERT INTO job (job_id, flow_id, status, type, user_id, created_timestamp, \
             finished_timestamp) VALUES ($1::uuid, $2::uuid, 'completed', 'workflow', $3::uuid, \
             $4, $5)",
        );
        let message = self.sql(
            "INSERT INTO message (id, timestamp, sender, sender_name, session_id, text, files, \
             error, edit, properties, category, content_blocks, flow_id, run_id, user_id, \
             is_output) VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::json, $8, $9, $10::json, $11, \
             $12::json, $13::uuid, $14::uuid, $15::uuid, $16)",
        );
        let session = self.sql(TRACK_SESSION_SQL);
        let run = self.sql(RECORD_RUN_SQL);
        let started = self.stored_time(capture.started);
        let finished = self.stored_time(capture.finished);
        on_pool!(self.pool, |pool| async {
            let mut tx = pool.begin().await?;
            sqlx::query(job)
                .bind(capture.run_id)
                .bind(capture.flow_id)
                .bind(capture.owner)
                .bind(started)
                .bind(finished)
                .execute(&mut *tx)
                .await?;
            for m in capture.messages {
                sqlx::query(message)
                    .bind(&m.id)
                    .bind(self.stored_time(m.timestamp))
                    .bind(&m.sender)
                    .bind(&m.sender_name)
                    .bind(&m.session_id)
                    .bind(&m.text)
                    .bind(&m.files)
                    .bind(m.error)
                    .bind(m.edit)
                    .bind(&m.properties)
                    .bind(&m.category)
                    .bind(&m.content_blocks)
                    .bind(&m.flow_id)
                    .bind(&m.run_id)
                    .bind(capture.owner)
                    .bind(m.is_output)
                    .execute(&mut *tx)
                    .await?;
            }
            for base_id in capture.memory_base_ids {
                sqlx::query(session)
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind(base_id)
                    .bind(capture.session_id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(run)
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind(base_id)
                    .bind(capture.session_id)
                    .bind(capture.run_id)
                    .bind(finished)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await)
        .map_err(|e| self.query_failed(e))
    }
}

#[cfg(test)]
#[path = "writes_tests.rs"]
mod tests;
