//! Syncs and regenerate on a database Langflow 1.13 made, done as Langflow's own ingestion task
//! (`langflow/services/memory_base/task.py`) does them, so that Langflow takes the result as its
//! own: its session lock on PostgreSQL and its knowledge base's exclusive file lock held from the
//! cursor read to the commit (a running Langflow and memscope never ingest one session twice),
//! its dedupe key, the job kept alive by its heartbeat (its start-up sweep fails the job of a
//! killed memscope), its documents and chunk metadata, the chunks where the knowledge base's
//! backend keeps them (`sources::langflow::kb::vectors`: the current generation's `vectors.sqlite3`, or
//! the pgvector table of Langflow's postgres backend), and one commit of the records, cursor, totals, stamped runs and the
//! knowledge-base row's figures. A failed or cancelled job deletes its chunks and ends
//! `failed` or `cancelled`, never left `in_progress`.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::mpsc;

use super::writes::{KbStats, LangflowJob, job_owner};
use crate::kb::embedder::{Embedder, check_vectors};
use crate::kb::rows::SearchHit;
use crate::kb::splitter::RecursiveSplitter;
use crate::memory::documents::document_text;
use crate::memory::memory_base::{MessagePosition, dedupe_key};
use crate::sources::langflow::kb::store::LangflowChunk;
use crate::sources::langflow::kb::vectors::{self, LangflowVectors};
use crate::store::CancelFlag;
use crate::store::memory_bases::{
    IngestionCommit, JobCreation, LangflowKbRow, MemoryBaseInfo, PendingMessage, job_status,
};
use crate::sync::error::{Refused, SyncError, failed_status};
use crate::sync::job::{JobProgress, JobReport, Stage, SyncOutcome};
use crate::sync::syncer::{CheckReport, Syncer};

/// Chunks embedded and written per batch.
const BATCH: usize = 256;

/// A chunk's metadata, in the order Langflow writes its keys.
#[derive(Serialize)]
struct ChunkMetadata<'a> {
    message_id: &'a str,
    session_id: &'a str,
    flow_id: &'a str,
    sender: &'a str,
    sender_name: &'a str,
    timestamp: String,
    run_id: &'a str,
    chunk_index: usize,
    total_chunks: usize,
    source: String,
    job_id: &'a str,
}

/// Python's `datetime.isoformat()` of a message time as Langflow 1.13 reads it: in UTC with
/// `+00:00` on SQLite and PostgreSQL alike (its model gives SQLite's naive text the UTC zone);
/// microseconds only when there are some.
fn isoformat(at: DateTime<Utc>) -> String {
    let mut text = at.format("%Y-%m-%dT%H:%M:%S").to_string();
    if at.timestamp_subsec_micros() != 0 {
        text.push_str(&at.format("%.6f").to_string());
    }
    text.push_str("+00:00");
    text
}

/// A message's chunks with Langflow's metadata, not yet embedded.
fn message_chunks(
    base: &MemoryBaseInfo,
    job_id: &str,
    message: &PendingMessage,
) -> Vec<LangflowChunk> {
    let pieces =
        RecursiveSplitter::default().split(&document_text(&message.text, &message.content_blocks));
    let total = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, content)| {
            let metadata = ChunkMetadata {
                message_id: &message.id,
                session_id: &message.session_id,
                flow_id: &base.flow_id,
                sender: &message.sender,
                sender_name: &message.sender_name,
                timestamp: isoformat(message.timestamp),
                run_id: message.run_id.as_deref().unwrap_or(""),
                chunk_index: index,
                total_chunks: total,
                source: format!("memory_base/{}", message.session_id),
                job_id,
            };
            LangflowChunk {
                // Langflow's sqlite backend gives a memory-base chunk `str(uuid4())`: a fresh
                // id per write (a failed job's chunks go by its job id, regenerate empties
                // the store first), so ids repeat nowhere.
                id: uuid::Uuid::new_v4().to_string(),
                content,
                metadata: serde_json::to_string(&metadata).unwrap_or_default(),
                job_id: job_id.to_owned(),
                session_id: message.session_id.clone(),
                vector: Vec::new(),
            }
        })
        .collect()
}

impl<E: Embedder> Syncer<E> {
    /// The base's knowledge-base row, when its vectors are in a backend memscope writes.
    async fn langflow_kb_row(&self, base: &MemoryBaseInfo) -> Result<LangflowKbRow, SyncError> {
        let row = self
            .store
            .langflow_knowledge_base(base)
            .await?
            .ok_or_else(|| SyncError::LangflowKb(format!("{} has no knowledge base", base.name)))?;
        if !vectors::writable(&row.backend_type) {
            return Err(SyncError::LangflowKb(format!(
                "the vectors of {} are in Langflow's {} backend, which memscope cannot write",
                base.name, row.backend_type
            )));
        }
        Ok(row)
    }

    /// Syncs one session of a base in a Langflow database. The session's lock (PostgreSQL) is
    /// held by the caller; this takes the knowledge base's file lock, waiting up to `wait`.
    pub(crate) async fn langflow_sync_locked(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        wait: Duration,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<SyncOutcome, Refused> {
        self.refuse_preprocessing(base).await?;
        let row = self.langflow_kb_row(base).await?;
        let root = &self.settings.langflow_kb_root;
        let Some(_kb_lock) = vectors::lock(root, &self.store, &row, wait).await? else {
            return Err(Refused::Busy);
        };
        let store = &self.store;
        let now = Utc::now();
        let prefix = format!("ingestion:{}:{session_id}:", base.id);
        store.lf_fail_abandoned_jobs(now, Some(&prefix)).await?;
        self.remove_unsuccessful_chunks(root, &row, session_id)
            .await?;
        let positions = self.pending(base, session_id).await?.messages;
        if positions.is_empty() {
            return Ok(SyncOutcome::NothingPending {
                session_id: session_id.to_owned(),
            });
        }
        // Langflow's key: the latest pending workflow run; none when no run is pending.
        let key = store
            .latest_pending_run(&base.id, session_id)
            .await?
            .map(|run| dedupe_key(&base.id, session_id, &run));
        let job = Job {
            id: uuid::Uuid::new_v4().to_string(),
            owner: job_owner(),
            created_at: now,
        };
        let created = store
            .lf_create_ingestion_job(&LangflowJob {
                job_id: &job.id,
                base,
                dedupe_key: key.as_deref(),
                owner: &job.owner,
                now,
            })
            .await?;
        if let JobCreation::Duplicate { .. } = created {
            return Err(Refused::Busy);
        }
        let mut vectors = match LangflowVectors::open(root, &row).await {
            Ok(vectors) => vectors,
            Err(error) => {
                let error = SyncError::from(error);
                self.end_failed(&job, &error).await;
                return Err(Refused::Failed(error));
            }
        };
        let result = self
            .langflow_write(
                base,
                session_id,
                &job,
                &positions,
                &mut vectors,
                progress,
                cancel,
            )
            .await;
        let outcome = match result {
            Ok(report) => store
                .lf_finish_job(&job.id, job_status::COMPLETED, None, Utc::now())
                .await
                .map(|()| SyncOutcome::Completed(report))
                .map_err(SyncError::from),
            Err(error) => {
                let cleanup = vectors.delete_job(&job.id).await;
                self.end_failed(&job, &error).await;
                let total = positions.len() as u64;
                let reason = error.to_string();
                let stage = Stage::RolledBack { reason };
                report(progress, &job, base, session_id, (0, total, 0), stage);
                cleanup.map_err(SyncError::from).and(Err(error))
            }
        };
        vectors.close().await;
        outcome.map_err(Refused::Failed)
    }

    /// Refuses a base that Langflow preprocesses: its task stores an LLM's distillation of the
    /// messages (`preprocessing.run_preprocessing`: the base's model through Langflow's model
    /// component, with the owner's key from Langflow's encrypted variables), which memscope
    /// cannot produce as Langflow does; storing the raw messages instead would give Langflow
    /// a knowledge base it never makes.
    pub(crate) async fn refuse_preprocessing(
        &self,
        base: &MemoryBaseInfo,
    ) -> Result<(), SyncError> {
        match self.store.lf_preprocessing_model(&base.id).await? {
            None => Ok(()),
            Some(model) => Err(SyncError::LangflowPreprocessing {
                base: base.name.clone(),
                model,
            }),
        }
    }

    /// Deletes the session's chunks of jobs that ended without committing (a killed process
    /// cannot clean up after itself), as Langflow's cleanup of a failed job does; held under
    /// the knowledge base's lock, so no running job's chunks are touched.
    async fn remove_unsuccessful_chunks(
        &self,
        root: &std::path::Path,
        row: &LangflowKbRow,
        session_id: &str,
    ) -> Result<(), SyncError> {
        let mut vectors = LangflowVectors::open(root, row).await?;
        let cleaned = async {
            let jobs = vectors.session_jobs(session_id).await?;
            for job in self.store.lf_unsuccessful_jobs(&jobs).await? {
                vectors.delete_job(&job).await?;
            }
            Ok::<(), SyncError>(())
        }
        .await;
        vectors.close().await;
        cleaned
    }

    /// Ends a job that failed (or was cancelled): its row says so even when the cause was the
    /// database itself, as far as the database still answers.
    async fn end_failed(&self, job: &Job, error: &SyncError) {
        let _ = self
            .store
            .lf_finish_job(
                &job.id,
                failed_status(error),
                Some(&error.to_string()),
                Utc::now(),
            )
            .await;
    }

    #[allow(clippy::too_many_arguments)]
    async fn langflow_write(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        job: &Job,
        positions: &[MessagePosition],
        vectors: &mut LangflowVectors,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<JobReport, SyncError> {
        let store = &self.store;
        let messages = store.messages_at(positions).await?;
        // Each chunk with the number of messages done once it is written.
        let (mut chunks, done_after): (Vec<LangflowChunk>, Vec<u64>) = messages
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                message_chunks(base, &job.id, m)
                    .into_iter()
                    .map(move |chunk| (chunk, i as u64 + 1))
            })
            .unzip();
        let mut beat = Instant::now();
        let mut written = 0;
        for batch in chunks.chunks_mut(BATCH) {
            self.still_wanted(job, cancel, &mut beat, true).await?;
            let texts: Vec<String> = batch.iter().map(|c| c.content.clone()).collect();
            let embeddings = self.embedder.embed(&texts).await?;
            check_vectors(&embeddings, texts.len(), self.embedder.dimension())?;
            for (chunk, vector) in batch.iter_mut().zip(embeddings) {
                chunk.vector = vector;
            }
            self.still_wanted(job, cancel, &mut beat, true).await?;
            vectors.upsert(batch).await?;
            written += batch.len() as u64;
            let done = done_after[written as usize - 1];
            let counts = (done, messages.len() as u64, written);
            report(progress, job, base, session_id, counts, Stage::Running);
        }
        let last = positions.last().expect("a job has pending messages");
        if chunks.is_empty() {
            // Langflow's task ends here too: nothing to embed, the cursor stays.
            return Ok(JobReport {
                job_id: job.id.clone(),
                memory_base_id: base.id.clone(),
                session_id: session_id.to_owned(),
                messages: 0,
                chunks: 0,
                cursor_id: base_cursor(store, base, session_id).await?,
            });
        }
        // Last check before the commit makes the job's work permanent.
        self.still_wanted(job, cancel, &mut beat, false).await?;
        let figures = vectors.figures().await?;
        let message_ids: Vec<String> = messages.iter().map(|m| m.id.clone()).collect();
        let committed = store
            .lf_commit_ingestion(
                &IngestionCommit {
                    memory_base_id: &base.id,
                    session_id,
                    job_id: &job.id,
                    message_ids: &message_ids,
                    cursor_id: &last.id,
                    // Not read on Langflow's database: every pending run is stamped.
                    runs_recorded_until: job.created_at,
                    now: Utc::now(),
                },
                &KbStats {
                    kb_id: self.langflow_kb_row(base).await?.id,
                    chunks: figures.chunks,
                    words: figures.words,
                    characters: figures.characters,
                    size_bytes: figures.size_bytes,
                },
            )
            .await?;
        if !committed {
            return Err(SyncError::Cancelled(job.id.clone()));
        }
        let total = message_ids.len() as u64;
        let counts = (total, total, written);
        report(progress, job, base, session_id, counts, Stage::Committed);
        Ok(JobReport {
            job_id: job.id.clone(),
            memory_base_id: base.id.clone(),
            session_id: session_id.to_owned(),
            messages: message_ids.len() as u64,
            chunks: written,
            cursor_id: last.id.clone(),
        })
    }

    /// Fails with [`SyncError::Cancelled`] when the job was cancelled, here or in the database;
    /// renews its heartbeat (which finds a cancel too) every few seconds, or now unless `lazily`.
    async fn still_wanted(
        &self,
        job: &Job,
        cancel: &CancelFlag,
        beat: &mut Instant,
        lazily: bool,
    ) -> Result<(), SyncError> {
        if cancel.is_cancelled() {
            return Err(SyncError::Cancelled(job.id.clone()));
        }
        if lazily && beat.elapsed() < HEARTBEAT_EVERY {
            let status = self.store.job(&job.id).await?.map(|j| j.status);
            if status.as_deref() != Some(job_status::IN_PROGRESS) {
                return Err(SyncError::Cancelled(job.id.clone()));
            }
            return Ok(());
        }
        if !self
            .store
            .lf_heartbeat(&job.id, &job.owner, Utc::now())
            .await?
        {
            return Err(SyncError::Cancelled(job.id.clone()));
        }
        *beat = Instant::now();
        Ok(())
    }

    /// Checks a base as Langflow's own mismatch check does: its knowledge-base row against the
    /// vectors where its backend keeps them.
    pub(crate) async fn check_langflow(
        &self,
        base: &MemoryBaseInfo,
    ) -> Result<CheckReport, SyncError> {
        let row = self.store.langflow_knowledge_base(base).await?;
        let observed =
            super::kb::read::observe(&self.settings.langflow_kb_root, row.as_ref()).await;
        Ok(CheckReport {
            memory_base_id: base.id.clone(),
            name: base.name.clone(),
            mismatches: crate::memory::memory_base::langflow_mismatches(
                base.total_processed,
                &observed,
            ),
            kb_path: observed.path.clone().unwrap_or_default(),
            note: observed.chunks.as_ref().err().cloned(),
            observed: observed.into(),
        })
    }

    /// The `top_k` chunks of the knowledge base Langflow keeps for a base nearest to `query`,
    /// embedded with the base's own model; none when the base has no knowledge base.
    pub(crate) async fn search_langflow(
        &self,
        base: &MemoryBaseInfo,
        query: &str,
        session_id: Option<&str>,
        top_k: usize,
    ) -> Result<Vec<SearchHit>, SyncError> {
        self.require_embedder(base)?;
        let Some(row) = self.store.langflow_knowledge_base(base).await? else {
            return Ok(Vec::new());
        };
        let Some(vector) = self.embedder.embed(&[query.to_owned()]).await?.pop() else {
            return Ok(Vec::new());
        };
        let root = &self.settings.langflow_kb_root;
        Ok(super::kb::read::search(root, &row, &vector, top_k, session_id).await?)
    }

    /// Regenerate as Langflow's does it, under the knowledge base's exclusive lock: cursors
    /// cleared, records and preprocessing outputs deleted; and the store emptied, so that the
    /// re-ingestion holds each message once. Then every session is synced.
    pub(crate) async fn langflow_reset(&self, base: &MemoryBaseInfo) -> Result<(), SyncError> {
        self.refuse_preprocessing(base).await?;
        let row = self.langflow_kb_row(base).await?;
        let root = &self.settings.langflow_kb_root;
        let Some(_kb_lock) = vectors::lock(root, &self.store, &row, Duration::ZERO).await? else {
            return Err(SyncError::Busy {
                base: base.name.clone(),
                session: "(all sessions)".to_owned(),
                seconds: 0,
            });
        };
        let mut vectors = LangflowVectors::open(root, &row).await?;
        let reset = async {
            self.store.lf_reset_memory_base(&base.id).await?;
            vectors.delete_all().await?;
            Ok::<(), SyncError>(())
        }
        .await;
        vectors.close().await;
        reset
    }
}

/// Heartbeats are renewed this often: well inside Langflow's 45 s lease.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

/// A job memscope runs in a Langflow database.
struct Job {
    id: String,
    owner: String,
    created_at: DateTime<Utc>,
}

async fn base_cursor(
    store: &crate::store::Store,
    base: &MemoryBaseInfo,
    session_id: &str,
) -> Result<String, SyncError> {
    Ok(store
        .memory_base_session(&base.id, session_id)
        .await?
        .and_then(|s| s.cursor_id)
        .unwrap_or_default())
}

/// Messages done and in all, and chunks written.
type Counts = (u64, u64, u64);

fn report(
    progress: Option<&mpsc::UnboundedSender<JobProgress>>,
    job: &Job,
    base: &MemoryBaseInfo,
    session_id: &str,
    (messages_done, messages_total, chunks_written): Counts,
    stage: Stage,
) {
    if let Some(progress) = progress {
        let _ = progress.send(JobProgress {
            job_id: job.id.clone(),
            memory_base_id: base.id.clone(),
            session_id: session_id.to_owned(),
            stage,
            messages_done,
            messages_total,
            chunks_written,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_pythons_isoformat() {
        let at = DateTime::parse_from_rfc3339("2026-01-05T09:00:01Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(isoformat(at), "2026-01-05T09:00:01+00:00");
        let at = at + chrono::Duration::microseconds(250);
        assert_eq!(isoformat(at), "2026-01-05T09:00:01.000250+00:00");
    }
}
