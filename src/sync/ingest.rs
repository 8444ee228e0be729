//! One ingestion job, run while its session's lock is held.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::error::{Refused, SyncError, failed_status};
use super::job::{JobProgress, JobReport, Stage, SyncOutcome};
use super::syncer::{Pending, Syncer};
use crate::kb::embedder::{Embedder, check_vectors};
use crate::kb::splitter::RecursiveSplitter;
use crate::kb::store::{ChunkRecord, VectorStore};
use crate::memory::documents::document_text;
use crate::memory::memory_base::{
    JobArgs, MessagePosition, ThresholdUnit, canonical_id, chunk_id, dedupe_key,
};
use crate::store::CancelFlag;
use crate::store::memory_bases::{
    IngestionCommit, JobCreation, MemoryBaseInfo, PendingMessage, SessionLock, job_status,
};

/// A message's chunks with Langflow's metadata (without embeddings yet).
pub fn message_chunks(
    splitter: &RecursiveSplitter,
    memory_base_id: &str,
    job_id: &str,
    message: &PendingMessage,
) -> Vec<(String, String, Value)> {
    let pieces = splitter.split(&document_text(&message.text, &message.content_blocks));
    let total = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, content)| {
            let metadata = json!({
                "message_id": message.id,
                "session_id": message.session_id,
                "flow_id": message.flow_id,
                "sender": message.sender,
                "sender_name": message.sender_name,
                "timestamp": message.timestamp.to_rfc3339(),
                "run_id": message.run_id,
                "chunk_index": index,
                "total_chunks": total,
                "source": format!("memory_base/{}", message.session_id),
                "job_id": job_id,
            });
            (
                chunk_id(memory_base_id, &message.id, index),
                content,
                metadata,
            )
        })
        .collect()
}

/// Texts embedded per call.
const EMBED_BATCH: usize = 256;

impl<E: Embedder> Syncer<E> {
    pub(super) async fn sync_locked(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        mut lock: SessionLock,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<SyncOutcome, Refused> {
        let result = self
            .create_and_run(base, session_id, &mut lock, progress, cancel)
            .await;
        // A lock that cannot be released explicitly goes with its connection or lease.
        let _ = lock.release().await;
        result
    }

    async fn create_and_run(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        lock: &mut SessionLock,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<SyncOutcome, Refused> {
        let store = &self.store;
        let now = Utc::now();
        // We hold the lock: jobs still marked running for this session died with their process.
        store.fail_abandoned_jobs(&base.id, session_id, now).await?;
        let Pending {
            session,
            cursor,
            messages,
        } = self.pending(base, session_id).await?;
        let Some(until) = messages.last().cloned() else {
            return Ok(SyncOutcome::NothingPending {
                session_id: session_id.to_owned(),
            });
        };
        let latest_unit = match base.unit() {
            ThresholdUnit::Runs => store
                .latest_pending_run(&base.id, session_id)
                .await?
                .unwrap_or_else(|| until.id.clone()),
            ThresholdUnit::Messages => until.id.clone(),
        };
        let args = JobArgs {
            job_id: uuid::Uuid::new_v4().to_string(),
            memory_base_id: base.id.clone(),
            session_id: session_id.to_owned(),
            flow_id: base.flow_id.clone(),
            threshold: base.threshold,
            unit: base.unit(),
            cursor_at_dispatch: session.cursor_id.clone(),
            dedupe_key: dedupe_key(&base.id, session_id, &latest_unit),
            manual: true,
        };
        // Recorded first: a job is never running without a record of who runs it.
        store.record_job_process(&args.job_id, lock).await?;
        let created = store
            .create_ingestion_job(
                &args.job_id,
                &base.flow_id,
                &base.user_id,
                &base.id,
                &args.dedupe_key,
                now,
            )
            .await?;
        if let JobCreation::Duplicate { .. } = created {
            store.forget_job_process(&args.job_id).await?;
            return Err(Refused::Busy);
        }
        let scope = Scope {
            args: &args,
            base,
            cursor: cursor.as_ref(),
            messages: &messages,
            until: &until,
            created_at: now,
        };
        match self.run_job(&scope, lock, progress, cancel).await {
            Ok(report) => {
                store
                    .finish_job(&args.job_id, job_status::COMPLETED, Utc::now())
                    .await?;
                Ok(SyncOutcome::Completed(report))
            }
            Err(error) => {
                let reason = error.to_string();
                let rollback = self.roll_back(&scope).await;
                // The job row says how it ended even if the rollback failed.
                let _ = store
                    .finish_job(&args.job_id, failed_status(&error), Utc::now())
                    .await;
                send(
                    progress,
                    &scope,
                    Stage::RolledBack { reason },
                    Counts::default(),
                );
                rollback?;
                Err(Refused::Failed(error))
            }
        }
    }

    /// Deletes what the job wrote to the KB; the cursor never moved. When the base itself is
    /// gone (deleted while this job outlived its lease), its whole KB directory goes.
    async fn roll_back(&self, scope: &Scope<'_>) -> Result<(), SyncError> {
        let kb = self.kb_location(scope.base)?;
        if let Some(vectors) = VectorStore::open_existing(&kb).await? {
            let result = async {
                vectors.delete_job(&scope.args.job_id).await?;
                self.refresh_metadata(scope.base, &kb.dir, &vectors).await
            }
            .await;
            vectors.close().await;
            result?;
        }
        if self
            .store
            .find_memory_bases(&scope.base.id)
            .await?
            .is_empty()
        {
            crate::kb::remove_kb(&kb).await?;
        }
        Ok(())
    }

    async fn run_job(
        &self,
        scope: &Scope<'_>,
        lock: &mut SessionLock,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<JobReport, SyncError> {
        let kb = self.kb_location(scope.base)?;
        // Creating the KB directory of a base deleted meanwhile would leave an orphan: check
        // that the job is still wanted and the lock still ours first.
        self.ensure_still_wanted(scope.args, cancel).await?;
        let mut heartbeat = Heartbeat::new(self.settings.lease);
        heartbeat.force(lock).await?;
        let vectors = VectorStore::open_or_create(&kb, self.embedder.dimension()).await?;
        let result = self
            .write_and_commit(scope, &vectors, lock, &mut heartbeat, progress, cancel)
            .await;
        if result.is_ok() {
            self.refresh_metadata(scope.base, &kb.dir, &vectors).await?;
        }
        vectors.close().await;
        result
    }

    async fn write_and_commit(
        &self,
        scope: &Scope<'_>,
        vectors: &VectorStore,
        lock: &mut SessionLock,
        heartbeat: &mut Heartbeat,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<JobReport, SyncError> {
        let store = &self.store;
        let args = scope.args;
        let mut counts = Counts {
            total: scope.messages.len() as u64,
            ..Counts::default()
        };
        send(progress, scope, Stage::Running, counts);
        let mut message_ids: Vec<String> = Vec::with_capacity(scope.messages.len());
        let mut taken: HashSet<String> = HashSet::with_capacity(scope.messages.len());
        let mut round: Vec<MessagePosition> = scope.messages.to_vec();
        for late_round in 0.. {
            if late_round > MAX_LATE_ROUNDS {
                return Err(SyncError::NoProgress {
                    session: args.session_id.clone(),
                    reason: format!(
                        "messages kept arriving before its last message {} for {MAX_LATE_ROUNDS} \
                         rounds; the next sync takes them",
                        scope.until.id
                    ),
                });
            }
            let mut after: Option<MessagePosition> = scope.cursor.cloned();
            for batch in round.chunks(self.settings.batch_messages.max(1) as usize) {
                self.ensure_still_wanted(args, cancel).await?;
                let last = batch.last().expect("chunks are never empty");
                if !last.is_after(after.as_ref()) {
                    return Err(SyncError::NoProgress {
                        session: args.session_id.clone(),
                        reason: format!(
                            "its batch ends at message {}, not after the cursor",
                            last.id
                        ),
                    });
                }
                after = Some(last.clone());
                taken.extend(batch.iter().map(|p| canonical_id(&p.id)));
                let page = store.messages_at(batch).await?;
                let ingested = self
                    .write_page(args, &page, vectors, lock, heartbeat)
                    .await?;
                counts.messages += batch.len() as u64;
                counts.chunks += ingested.chunks;
                message_ids.extend(ingested.message_ids);
                send(progress, scope, Stage::Running, counts);
            }
            // Messages written meanwhile with a time inside the scope would fall behind the new
            // cursor: they are taken too, so none is skipped.
            round = store
                .session_timeline(&args.flow_id, &args.session_id)
                .await?
                .pending(scope.cursor)
                .take_while(|p| *p <= scope.until)
                .filter(|p| !taken.contains(&canonical_id(&p.id)))
                .cloned()
                .collect();
            if round.is_empty() {
                break;
            }
            counts.total += round.len() as u64;
        }
        // Last chance to stop before the commit makes the job's work permanent.
        self.ensure_still_wanted(args, cancel).await?;
        heartbeat.beat(lock).await?;
        let cursor = &scope.until.id;
        let committed = store
            .commit_ingestion(&IngestionCommit {
                memory_base_id: &args.memory_base_id,
                session_id: &args.session_id,
                job_id: &args.job_id,
                message_ids: &message_ids,
                cursor_id: cursor,
                runs_recorded_until: scope.created_at,
                now: Utc::now(),
            })
            .await?;
        if !committed {
            // The session (or the whole base) was deleted under us.
            return Err(SyncError::Cancelled(args.job_id.clone()));
        }
        send(progress, scope, Stage::Committed, counts);
        Ok(JobReport {
            job_id: args.job_id.clone(),
            memory_base_id: args.memory_base_id.clone(),
            session_id: args.session_id.clone(),
            messages: counts.messages,
            chunks: counts.chunks,
            cursor_id: cursor.clone(),
        })
    }

    /// Chunks, embeds and writes one page of messages into the KB. Blank messages have no
    /// chunks and get no ingestion record (the cursor still passes them), so the records always
    /// equal the messages in the KB.
    async fn write_page(
        &self,
        args: &JobArgs,
        page: &[PendingMessage],
        vectors: &VectorStore,
        lock: &mut SessionLock,
        heartbeat: &mut Heartbeat,
    ) -> Result<WrittenPage, SyncError> {
        let splitter = RecursiveSplitter::default();
        let mut pieces = Vec::new();
        for message in page {
            for (id, content, metadata) in
                message_chunks(&splitter, &args.memory_base_id, &args.job_id, message)
            {
                pieces.push((message, id, content, metadata));
            }
        }
        let mut records = Vec::with_capacity(pieces.len());
        for batch in pieces.chunks(EMBED_BATCH) {
            heartbeat.beat(lock).await?;
            let texts: Vec<String> = batch.iter().map(|(_, _, c, _)| c.clone()).collect();
            let embeddings = self.embedder.embed(&texts).await?;
            check_vectors(&embeddings, texts.len(), self.embedder.dimension())?;
            for ((message, id, content, metadata), embedding) in batch.iter().zip(embeddings) {
                records.push(ChunkRecord {
                    chunk_id: id.clone(),
                    message_id: message.id.clone(),
                    session_id: message.session_id.clone(),
                    job_id: args.job_id.clone(),
                    content: content.clone(),
                    metadata: metadata.clone(),
                    embedding,
                });
            }
        }
        heartbeat.beat(lock).await?;
        vectors.upsert(&records).await?;
        let with_chunks: HashSet<&str> = records.iter().map(|r| r.message_id.as_str()).collect();
        Ok(WrittenPage {
            chunks: records.len() as u64,
            message_ids: page
                .iter()
                .filter(|m| with_chunks.contains(m.id.as_str()))
                .map(|m| m.id.clone())
                .collect(),
        })
    }

    /// Fails with [`SyncError::Cancelled`] when the job was cancelled, here or in the database.
    async fn ensure_still_wanted(
        &self,
        args: &JobArgs,
        cancel: &CancelFlag,
    ) -> Result<(), SyncError> {
        let cancelled_here = cancel.is_cancelled();
        let status = self.store.job(&args.job_id).await?.map(|job| job.status);
        if cancelled_here || status.as_deref() != Some(job_status::IN_PROGRESS) {
            return Err(SyncError::Cancelled(args.job_id.clone()));
        }
        Ok(())
    }
}

impl<E: Embedder> Syncer<E> {
    /// Writes into the KB exactly the messages the ingestion records name, each under the job
    /// that ingested it, without touching cursors or records: materialises a KB whose
    /// database state was written by someone else (the demo) or repairs one. Returns the
    /// number of chunks written.
    pub async fn rebuild_from_records(&self, base: &MemoryBaseInfo) -> Result<u64, SyncError> {
        let kb = self.kb_location(base)?;
        let ingested = self.store.ingested_messages(&base.id).await?;
        let vectors = VectorStore::open_or_create(&kb, self.embedder.dimension()).await?;
        let splitter = RecursiveSplitter::default();
        let mut written = 0;
        let result = async {
            for page in ingested.chunks(self.settings.batch_messages.max(1) as usize) {
                let mut pieces = Vec::new();
                for (message, job_id) in page {
                    let job_id = job_id.as_deref().unwrap_or("");
                    for (id, content, metadata) in
                        message_chunks(&splitter, &base.id, job_id, message)
                    {
                        pieces.push((message, job_id, id, content, metadata));
                    }
                }
                let texts: Vec<String> = pieces.iter().map(|p| p.3.clone()).collect();
                let embeddings = self.embedder.embed(&texts).await?;
                check_vectors(&embeddings, texts.len(), self.embedder.dimension())?;
                let records: Vec<ChunkRecord> = pieces
                    .into_iter()
                    .zip(embeddings)
                    .map(
                        |((message, job_id, chunk_id, content, metadata), embedding)| ChunkRecord {
                            chunk_id,
                            message_id: message.id.clone(),
                            session_id: message.session_id.clone(),
                            job_id: job_id.to_owned(),
                            content,
                            metadata,
                            embedding,
                        },
                    )
                    .collect();
                vectors.upsert(&records).await?;
                written += records.len() as u64;
            }
            self.refresh_metadata(base, &kb.dir, &vectors).await
        }
        .await;
        vectors.close().await;
        result.map(|()| written)
    }
}

/// A job's fixed scope: messages after `cursor` up to `until`.
struct Scope<'a> {
    args: &'a JobArgs,
    base: &'a MemoryBaseInfo,
    cursor: Option<&'a MessagePosition>,
    /// The pending messages when the job started, in (instant, id) order.
    messages: &'a [MessagePosition],
    /// The last of them: the new cursor.
    until: &'a MessagePosition,
    created_at: DateTime<Utc>,
}

/// What one page wrote.
struct WrittenPage {
    chunks: u64,
    /// Its messages that have chunks: they get ingestion records.
    message_ids: Vec<String>,
}

/// How many times a job takes messages that arrived inside its scope before it gives up.
const MAX_LATE_ROUNDS: usize = 3;

#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    total: u64,
    messages: u64,
    chunks: u64,
}

fn send(
    progress: Option<&mpsc::UnboundedSender<JobProgress>>,
    scope: &Scope<'_>,
    stage: Stage,
    counts: Counts,
) {
    if let Some(progress) = progress {
        // A closed receiver only means nobody is watching any more.
        let _ = progress.send(JobProgress {
            job_id: scope.args.job_id.clone(),
            memory_base_id: scope.args.memory_base_id.clone(),
            session_id: scope.args.session_id.clone(),
            stage,
            messages_done: counts.messages,
            messages_total: counts.total,
            chunks_written: counts.chunks,
        });
    }
}

/// Renews the SQLite lease a third of the way through its life.
struct Heartbeat {
    lease: Duration,
    last: Instant,
}

impl Heartbeat {
    fn new(lease: Duration) -> Heartbeat {
        Heartbeat {
            lease,
            last: Instant::now(),
        }
    }

    async fn beat(&mut self, lock: &mut SessionLock) -> Result<(), SyncError> {
        if self.last.elapsed() < self.lease / 3 {
            return Ok(());
        }
        self.force(lock).await
    }

    /// Renews now; fails when the lease was lost.
    async fn force(&mut self, lock: &mut SessionLock) -> Result<(), SyncError> {
        if !lock.heartbeat(self.lease).await.map_err(SyncError::Lock)? {
            return Err(SyncError::LeaseLost(lock.name().to_owned()));
        }
        self.last = Instant::now();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str, blocks: &str) -> PendingMessage {
        PendingMessage {
            id: "m1".into(),
            timestamp: Utc::now(),
            sender: "Machine".into(),
            sender_name: "AI".into(),
            session_id: "s1".into(),
            text: text.into(),
            content_blocks: blocks.into(),
            flow_id: Some("f".into()),
            run_id: Some("r".into()),
        }
    }

    #[test]
    fn documents_join_text_code_and_json_blocks() {
        let blocks = r#"[{"title": "t", "contents": [
            {"type": "text", "text": "step one"},
            {"type": "code", "code": "print(1)", "language": "python"},
            {"type": "json", "data": {"a": 1}},
            {"type": "media", "urls": ["x"]}
        ]}]"#;
        assert_eq!(
            document_text("Hello", blocks),
            "Hello\n\nstep one\n\n```python\nprint(1)\n```\n\n{\"a\": 1}"
        );
        assert_eq!(document_text("Hello", "not json"), "Hello");
        assert_eq!(document_text("", "[]"), "");
    }

    #[test]
    fn chunks_carry_langflows_metadata() {
        let long = "word ".repeat(500);
        let chunks = message_chunks(
            &RecursiveSplitter::default(),
            "b",
            "j",
            &message(&long, "[]"),
        );
        assert_eq!(chunks.len(), 3);
        let (id, _, metadata) = &chunks[2];
        assert_eq!(id, &chunk_id("b", "m1", 2));
        assert_eq!(metadata["chunk_index"], 2);
        assert_eq!(metadata["total_chunks"], 3);
        for key in [
            "message_id",
            "session_id",
            "flow_id",
            "sender",
            "timestamp",
            "run_id",
            "job_id",
        ] {
            assert!(!metadata[key].is_null(), "{key}");
        }
        assert!(
            message_chunks(&RecursiveSplitter::default(), "b", "j", &message(" ", "[]")).is_empty()
        );
    }
}
