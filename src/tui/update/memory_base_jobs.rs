//! The memory bases tab's work for the job runner (its loads, [`MbLoad`], and its syncs and
//! writes, [`MbEffect`]) and their results ([`MbLoaded`], [`MbEvent`]).

use chrono::{DateTime, Utc};

use crate::inspect::memory_bases::{BaseStatus, NewBaseRequest, SessionStatus};
use crate::kb::store::SearchHit;
use crate::store::memory_bases::{JobInfo, MemoryBaseInfo, MemoryBaseUpdate};
use crate::sync::watch::WatchEvent;
use crate::sync::{JobProgress, SyncOutcome};

/// The memory bases tab's loads.
#[derive(Debug, Clone)]
pub enum MbLoad {
    Bases,
    Sessions {
        base: Box<MemoryBaseInfo>,
    },
    /// The job table's recent rows (every process's jobs).
    Jobs {
        limit: i64,
    },
    Search {
        base: Box<MemoryBaseInfo>,
        query: String,
        top_k: usize,
    },
}

/// Syncs and writes on memory bases for the job runner.
#[derive(Debug, Clone)]
pub enum MbEffect {
    /// A manual sync of one session, or of every session of the base.
    Sync {
        base: Box<MemoryBaseInfo>,
        session: Option<String>,
    },
    Update {
        base: Box<MemoryBaseInfo>,
        update: MemoryBaseUpdate,
    },
    /// Checks a new base's flow, name and model before the confirmation.
    CheckCreate(NewBaseRequest),
    Create(NewBaseRequest),
    Delete(Box<MemoryBaseInfo>),
    Regenerate(Box<MemoryBaseInfo>),
    CancelJob {
        job_id: String,
    },
}

/// How one session's sync ended, as the screen reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncResult {
    Completed {
        session_id: String,
        job_id: String,
        messages: u64,
    },
    NothingPending {
        session_id: String,
    },
    /// Another sync holds the session: a manual trigger's Conflict.
    Conflict {
        session_id: String,
    },
    Failed {
        /// `None` in a whole base's sync, whose error names the session.
        session_id: Option<String>,
        /// The job's id when the failure was a job's (cancelled or rolled back).
        job_id: Option<String>,
        error: String,
    },
}

impl SyncResult {
    /// The sync outcomes of the syncer, as reported.
    pub fn from_outcome(outcome: SyncOutcome) -> SyncResult {
        match outcome {
            SyncOutcome::Completed(job) => SyncResult::Completed {
                session_id: job.session_id,
                job_id: job.job_id,
                messages: job.messages,
            },
            SyncOutcome::NothingPending { session_id } => SyncResult::NothingPending { session_id },
            // Only automatic triggers skip; a manual one never gets here.
            SyncOutcome::Skipped { session_id } => SyncResult::Conflict { session_id },
        }
    }
}

/// Results of [`MbLoad`]s.
#[derive(Debug)]
pub enum MbLoaded {
    Bases(Result<Vec<BaseStatus>, String>),
    Sessions(Result<Vec<SessionStatus>, String>),
    Jobs {
        result: Result<Vec<JobInfo>, String>,
        now: DateTime<Utc>,
    },
    Hits(Result<Vec<SearchHit>, String>),
}

/// Results of [`MbEffect`]s and reports of running jobs and the watcher.
#[derive(Debug)]
pub enum MbEvent {
    /// A running job's report; `automatic` when the watcher started it.
    Progress {
        progress: JobProgress,
        at: DateTime<Utc>,
        automatic: bool,
    },
    /// A manual sync finished (the whole base's or one session's).
    Synced {
        base_name: String,
        result: Result<Vec<SyncResult>, String>,
    },
    /// A write other than a sync finished: what it did, or why it failed.
    Written { result: Result<String, String> },
    /// What [`MbEffect::CheckCreate`] found.
    CreateChecked {
        request: NewBaseRequest,
        result: Result<(), String>,
    },
    /// A base was created, or why not.
    Created { result: Result<String, String> },
    /// One watcher check of one session.
    Watched(WatchEvent),
    /// A watcher pass failed (it tries again at the next interval).
    WatchFailed(String),
    Cancelled {
        job_id: String,
        result: Result<bool, String>,
    },
}
