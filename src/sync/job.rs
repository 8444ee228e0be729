//! A sync job as its caller sees it: who asked, its progress and what it did.

use serde::Serialize;

use super::error::SyncError;

/// Who asked for a sync: a manual trigger reports a conflict, an automatic one stays quiet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    Manual,
    Automatic,
}

/// Where a job is, for progress gauges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobProgress {
    pub job_id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub stage: Stage,
    pub messages_done: u64,
    pub messages_total: u64,
    pub chunks_written: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Running,
    Committed,
    RolledBack { reason: String },
}

/// A finished job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobReport {
    pub job_id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub messages: u64,
    pub chunks: u64,
    pub cursor_id: String,
}

/// One session's result in a whole-base sync: its id, and what its job did.
pub type SessionSync = (String, Result<SyncOutcome, SyncError>);

/// What a sync trigger did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SyncOutcome {
    Completed(JobReport),
    NothingPending {
        session_id: String,
    },
    /// An automatic trigger lost the race to another sync.
    Skipped {
        session_id: String,
    },
}
