//! The [`Syncer`]: one database's syncs with one embedder, and what a base's check, delete and
//! regenerate do. A job's own steps are in `ingest.rs` (memscope's schema) and `sources/langflow/sync.rs`
//! (a database Langflow made).

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use serde::Serialize;
use tokio::sync::mpsc;

use super::error::{Refused, SyncError};
use super::job::{JobProgress, SessionSync, SyncOutcome, Trigger};
use crate::kb::embedder::{AnyEmbedder, Embedder};
use crate::kb::store::{KbLocation, VectorHome, VectorStore};
use crate::kb::{self, EmbeddingInfo};
use crate::memory::memory_base::{
    KbExpectation, MessagePosition, Mismatch, is_safe_kb_name, lock_name, mismatches,
    threshold_reached,
};
use crate::memory::names::Unknown;
use crate::store::CancelFlag;
use crate::store::Store;
use crate::store::memory_bases::{MemoryBaseInfo, MemoryBaseSessionInfo, SessionLock};
use crate::store::{BaseChange, Ingestion, KbHome};

/// How long a SQLite sync lease lasts without renewal. A killed holder blocks the session for
/// at most this long.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// Paths and timing shared by every sync.
#[derive(Debug, Clone)]
pub struct SyncSettings {
    pub kb_root: PathBuf,
    /// Where the knowledge bases of a database Langflow made live.
    pub langflow_kb_root: PathBuf,
    pub lease: Duration,
    /// Messages read, chunked, embedded and written per batch.
    pub batch_messages: i64,
}

impl SyncSettings {
    pub fn new(kb_root: impl Into<PathBuf>) -> SyncSettings {
        let kb_root = kb_root.into();
        SyncSettings {
            langflow_kb_root: kb_root.clone(),
            kb_root,
            lease: DEFAULT_LEASE,
            batch_messages: 2000,
        }
    }
}

/// A session's pending messages, read while its lock is held.
pub(crate) struct Pending {
    pub(crate) session: MemoryBaseSessionInfo,
    /// Where the session's cursor is in its timeline.
    pub(crate) cursor: Option<MessagePosition>,
    /// The messages after the cursor, oldest first.
    pub(crate) messages: Vec<MessagePosition>,
}

/// Runs syncs of one database with one embedder.
#[derive(Clone)]
pub struct Syncer<E: Embedder = AnyEmbedder> {
    pub store: Store,
    pub embedder: E,
    pub settings: SyncSettings,
}

/// A memory base's health.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub memory_base_id: String,
    pub name: String,
    pub kb_path: PathBuf,
    pub observed: crate::memory::memory_base::KbObservation,
    pub mismatches: Vec<Mismatch>,
    /// Why the check could not see everything (a vector store it cannot read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What delete removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeleteReport {
    pub memory_base_id: String,
    pub cancelled_jobs: Vec<String>,
    pub kb_path: PathBuf,
}

impl<E: Embedder> Syncer<E> {
    pub fn new(store: Store, embedder: E, settings: SyncSettings) -> Syncer<E> {
        Syncer {
            store,
            embedder,
            settings,
        }
    }

    /// The memory base `key` (id or name) names.
    pub async fn resolve(&self, key: &str) -> Result<MemoryBaseInfo, SyncError> {
        let mut found = self.store.find_memory_bases(key).await?;
        match found.len() {
            0 => {
                let names = self.store.memory_bases().await?.into_iter().map(|b| b.name);
                Err(Unknown::new("memory base", key, names).into())
            }
            1 => Ok(found.remove(0)),
            n => {
                // An id match wins over name matches.
                match found
                    .iter()
                    .position(|b| b.id == crate::store::dashed_id(key))
                {
                    Some(i) => Ok(found.remove(i)),
                    None => Err(SyncError::Ambiguous(key.to_owned(), n)),
                }
            }
        }
    }

    /// A memory base's KB directory.
    pub fn kb_path(&self, base: &MemoryBaseInfo) -> Result<PathBuf, SyncError> {
        if !is_safe_kb_name(&base.kb_name) {
            return Err(SyncError::UnsafeKbName(base.kb_name.clone()));
        }
        let username = base.username.as_deref().unwrap_or(&base.user_id);
        Ok(kb::kb_dir(&self.settings.kb_root, username, &base.kb_name))
    }

    /// A memory base's KB: its directory, and its vectors (in the directory on SQLite, in a
    /// pgvector table of the memory database on PostgreSQL).
    pub fn kb_location(&self, base: &MemoryBaseInfo) -> Result<KbLocation, SyncError> {
        let dir = self.kb_path(base)?;
        let username = base.username.as_deref().unwrap_or(&base.user_id);
        Ok(KbLocation {
            dir,
            key: format!("{username}/{}", base.kb_name),
            home: match self.store.postgres_pool() {
                Some(pool) => VectorHome::Postgres(pool.clone()),
                None => VectorHome::Embedded,
            },
        })
    }

    /// Whether this syncer's embedder is the one the base was created with.
    pub fn embeds_for(&self, base: &MemoryBaseInfo) -> bool {
        base.embedding_model.is_empty() || base.embedding_model == self.embedder.model()
    }

    /// Whether the database's sessions are ingested as the app's own task does, in its formats
    /// (`sources/langflow/sync.rs`), rather than in memscope's.
    fn ingests_as_the_app(&self) -> bool {
        self.store.profile().capabilities().ingestion == Ingestion::AppTask
    }

    /// Fails with [`SyncError::WrongEmbedder`] unless this syncer's embedder is the base's.
    pub fn require_embedder(&self, base: &MemoryBaseInfo) -> Result<(), SyncError> {
        if self.embeds_for(base) {
            return Ok(());
        }
        Err(SyncError::WrongEmbedder {
            base: base.name.clone(),
            configured: base.embedding_model.clone(),
            offered: self.embedder.model().to_owned(),
        })
    }

    fn embedding_info(&self) -> EmbeddingInfo {
        EmbeddingInfo {
            provider: self.embedder.provider().to_owned(),
            model: self.embedder.model().to_owned(),
            dimension: self.embedder.dimension(),
        }
    }

    /// The session's messages after its live cursor, read under its lock: a sync that finished
    /// meanwhile moved the cursor. A session without a row gets one first.
    pub(crate) async fn pending(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
    ) -> Result<Pending, SyncError> {
        let store = &self.store;
        store
            .ensure_memory_base_session(&base.id, session_id)
            .await?;
        let session = store
            .memory_base_session(&base.id, session_id)
            .await?
            .ok_or_else(|| SyncError::NotFound(base.id.clone()))?;
        let timeline = store.session_timeline(&base.flow_id, session_id).await?;
        let cursor = store.cursor_position(&session, &timeline).await?;
        let messages = timeline.pending(cursor.as_ref()).cloned().collect();
        Ok(Pending {
            session,
            cursor,
            messages,
        })
    }

    /// Fails unless the base knows `session_id`: it has a session row, or messages of the base's
    /// flow. Langflow's own flush makes a row for any name it is given; memscope refuses a name
    /// with neither, so a typo never writes (names match exactly).
    pub async fn require_session(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
    ) -> Result<(), SyncError> {
        let store = &self.store;
        if store
            .memory_base_session(&base.id, session_id)
            .await?
            .is_some()
        {
            return Ok(());
        }
        let flow = store.flow_sessions(&base.flow_id).await?;
        if flow.iter().any(|s| s == session_id) {
            return Ok(());
        }
        let rows = store.memory_base_sessions(&base.id).await?;
        let valid = flow
            .into_iter()
            .chain(rows.into_iter().map(|row| row.session_id));
        let what = format!("session in memory base {}", base.name);
        Err(Unknown::new(what, session_id, valid).into())
    }

    /// Takes a session's lock, waiting up to `wait` for it.
    async fn lock(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        wait: Duration,
    ) -> Result<Option<SessionLock>, SyncError> {
        let name = lock_name(&base.id, session_id);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(lock) = self
                .store
                .try_lock_session(&name, self.settings.lease)
                .await?
            {
                return Ok(Some(lock));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Syncs one session now: ingests everything after its cursor. A manual trigger that finds
    /// the session locked (waiting up to `wait`) or a duplicate job gets [`SyncError::Conflict`];
    /// an automatic one gets [`SyncOutcome::Skipped`].
    pub async fn sync_session(
        &self,
        base: &MemoryBaseInfo,
        session_id: &str,
        trigger: Trigger,
        wait: Duration,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<SyncOutcome, SyncError> {
        let conflict = || match trigger {
            Trigger::Manual => Err(SyncError::Conflict {
                base: base.name.clone(),
                session: session_id.to_owned(),
            }),
            Trigger::Automatic => Ok(SyncOutcome::Skipped {
                session_id: session_id.to_owned(),
            }),
        };
        if self.ingests_as_the_app() {
            self.refuse_preprocessing(base).await?;
        }
        self.require_embedder(base)?;
        self.require_session(base, session_id).await?;
        // Jobs whose process stopped are failed first, here as in every list of jobs.
        self.store.sweep_abandoned_jobs(Utc::now()).await?;
        let Some(lock) = self.lock(base, session_id, wait).await? else {
            return conflict();
        };
        if self.ingests_as_the_app() {
            let result = self
                .langflow_sync_locked(base, session_id, wait, progress, cancel)
                .await;
            // An advisory lock that cannot be released goes with its connection.
            let _ = lock.release().await;
            return match result {
                Err(Refused::Busy) => conflict(),
                Err(Refused::Failed(error)) => Err(error),
                Ok(outcome) => Ok(outcome),
            };
        }
        let result = self
            .sync_locked(base, session_id, lock, progress, cancel)
            .await;
        match result {
            Err(Refused::Busy) => conflict(),
            Err(Refused::Failed(error)) => Err(error),
            Ok(outcome) => Ok(outcome),
        }
    }

    /// Syncs every session of a base, one after the other, tracking first the sessions of its
    /// flow that have messages but no session row yet.
    pub async fn sync_base(
        &self,
        base: &MemoryBaseInfo,
        trigger: Trigger,
        wait: Duration,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<Vec<SessionSync>, SyncError> {
        if self.ingests_as_the_app() {
            self.refuse_preprocessing(base).await?;
        }
        for session_id in self.store.flow_sessions(&base.flow_id).await? {
            self.store
                .ensure_memory_base_session(&base.id, &session_id)
                .await?;
        }
        let sessions = self.store.memory_base_sessions(&base.id).await?;
        let mut outcomes = Vec::with_capacity(sessions.len());
        for session in sessions {
            let result = self
                .sync_session(base, &session.session_id, trigger, wait, progress, cancel)
                .await;
            outcomes.push((session.session_id, result));
        }
        Ok(outcomes)
    }

    /// Whether a session's pending count reached its base's threshold.
    pub async fn is_due(&self, base: &MemoryBaseInfo, session_id: &str) -> Result<bool, SyncError> {
        let Some(session) = self.store.memory_base_session(&base.id, session_id).await? else {
            return Ok(false);
        };
        let pending = self.store.pending_count(base, &session).await?;
        Ok(threshold_reached(pending, base.threshold))
    }

    /// Asks a job to stop, whichever process runs it.
    pub async fn cancel_job(&self, job_id: &str) -> Result<bool, SyncError> {
        Ok(self.store.cancel_job(job_id, Utc::now()).await?)
    }

    /// Deletes a memory base: cancels its jobs, waits (up to `wait`) until each session's lock
    /// is free, so no job writes any more, then deletes its rows and its KB directory.
    pub async fn delete(
        &self,
        base: &MemoryBaseInfo,
        wait: Duration,
    ) -> Result<DeleteReport, SyncError> {
        self.store.ensure_base_change(BaseChange::Delete)?;
        let kb = self.kb_location(base)?;
        let cancelled_jobs = self.store.cancel_jobs_of_base(&base.id, Utc::now()).await?;
        let locks = self.lock_all_sessions(base, wait).await?;
        self.store.delete_memory_base(&base.id).await?;
        let removed = kb::remove_kb(&kb).await;
        release_all(locks).await;
        removed?;
        Ok(DeleteReport {
            memory_base_id: base.id.clone(),
            cancelled_jobs,
            kb_path: kb.dir,
        })
    }

    async fn lock_all_sessions(
        &self,
        base: &MemoryBaseInfo,
        wait: Duration,
    ) -> Result<Vec<SessionLock>, SyncError> {
        let mut locks = Vec::new();
        for session in self.store.memory_base_sessions(&base.id).await? {
            match self.lock(base, &session.session_id, wait).await {
                Ok(Some(lock)) => locks.push(lock),
                Ok(None) => {
                    release_all(locks).await;
                    return Err(SyncError::Busy {
                        base: base.name.clone(),
                        session: session.session_id,
                        seconds: wait.as_secs(),
                    });
                }
                Err(error) => {
                    release_all(locks).await;
                    return Err(error);
                }
            }
        }
        Ok(locks)
    }

    /// Compares the KB on disk with what the database says was ingested. A database Langflow
    /// made is checked as Langflow's own mismatch check does.
    pub async fn check(&self, base: &MemoryBaseInfo) -> Result<CheckReport, SyncError> {
        if self.store.profile().capabilities().knowledge_bases == KbHome::AppRows {
            return self.check_langflow(base).await;
        }
        let kb = self.kb_location(base)?;
        let observed = kb::observe(&kb).await;
        let expected = KbExpectation {
            total_processed: base.total_processed,
            ingestion_records: base.ingestion_records,
            embedding_model: base.embedding_model.clone(),
            dimension: self.embedder.dimension() as i64,
        };
        Ok(CheckReport {
            memory_base_id: base.id.clone(),
            name: base.name.clone(),
            mismatches: mismatches(&expected, &observed),
            kb_path: kb.dir,
            observed,
            note: None,
        })
    }

    /// Rebuilds a memory base's KB: with every session locked (none may be syncing), clears the
    /// cursors, records and run stamps and removes the KB directory; then syncs every session.
    pub async fn regenerate(
        &self,
        base: &MemoryBaseInfo,
        progress: Option<&mpsc::UnboundedSender<JobProgress>>,
        cancel: &CancelFlag,
    ) -> Result<Vec<SessionSync>, SyncError> {
        if self.ingests_as_the_app() {
            // As Langflow's regenerate: only the knowledge base's exclusive lock (taken by the
            // reset), which every sync holds from its cursor read to its commit; a session lock
            // per session would hold one PostgreSQL connection each and exhaust the pool.
            self.langflow_reset(base).await?;
            return self
                .sync_base(base, Trigger::Manual, Duration::ZERO, progress, cancel)
                .await;
        }
        let kb = self.kb_location(base)?;
        let locks = self.lock_all_sessions(base, Duration::ZERO).await?;
        let reset = async {
            self.store.reset_memory_base(&base.id).await?;
            kb::remove_kb(&kb).await.map_err(SyncError::from)
        }
        .await;
        release_all(locks).await;
        reset?;
        self.sync_base(base, Trigger::Manual, Duration::ZERO, progress, cancel)
            .await
    }

    /// Rewrites `embedding_metadata.json` from the vector store.
    pub(super) async fn refresh_metadata(
        &self,
        base: &MemoryBaseInfo,
        kb_path: &Path,
        store: &VectorStore,
    ) -> Result<(), SyncError> {
        if !kb_path.is_dir() {
            // Deleted under a job that outlived its lease: nothing to describe.
            return Ok(());
        }
        let stats = store.stats().await?;
        kb::write_metadata(kb_path, &self.embedding_info(), &stats, base.created_at).map_err(
            |source| SyncError::Io {
                path: kb_path.to_path_buf(),
                source,
            },
        )
    }
}

async fn release_all(locks: Vec<SessionLock>) {
    for lock in locks {
        // A lock that cannot be released explicitly is released when its connection closes or
        // its lease expires.
        let _ = lock.release().await;
    }
}
