//! What a sync fails with, and the job status a failure ends with.

use std::path::PathBuf;

use crate::kb::KbError;
use crate::kb::embedder::EmbedError;
use crate::kb::store::VectorStoreError;
use crate::store::StoreError;
use crate::store::memory_bases::job_status;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("no memory base {0:?}")]
    NotFound(String),
    /// A session, job or base name that matched nothing, with the valid ones.
    #[error(transparent)]
    Unknown(#[from] crate::memory::names::Unknown),
    #[error("{0:?} names {1} memory bases; use the id")]
    Ambiguous(String, usize),
    #[error("memory base {base}: session {session} is already syncing")]
    Conflict { base: String, session: String },
    #[error("ingestion job {0} was cancelled")]
    Cancelled(String),
    #[error("lost the sync lease {0}: it expired and another process took it")]
    LeaseLost(String),
    #[error("memory base {base}: session {session} stayed locked for {seconds} s")]
    Busy {
        base: String,
        session: String,
        seconds: u64,
    },
    #[error("memory base {base} embeds with {configured}, not {offered}")]
    WrongEmbedder {
        base: String,
        configured: String,
        offered: String,
    },
    #[error("session {session} made no progress, so the sync stopped: {reason}")]
    NoProgress { session: String, reason: String },
    /// A knowledge base of a Langflow database that memscope cannot write.
    #[error("Langflow knowledge base: {0}")]
    LangflowKb(String),
    /// A Langflow memory base whose messages Langflow distils with an LLM before storing them.
    #[error(
        "memory base {base} has Langflow distil its messages with the LLM {model} before they \
         are stored, a call memscope cannot make as Langflow does, so memscope does not sync \
         it; flush or regenerate it in Langflow (its UI, or POST /api/v1/memories/{{id}}/flush)"
    )]
    LangflowPreprocessing { base: String, model: String },
    #[error("kb_name {0:?} is not a safe directory name")]
    UnsafeKbName(String),
    #[error("sync lock: {0}")]
    Lock(#[source] sqlx::Error),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    VectorStore(#[from] VectorStoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl From<KbError> for SyncError {
    fn from(error: KbError) -> Self {
        match error {
            KbError::Store(error) => SyncError::VectorStore(error),
            KbError::Io { path, source } => SyncError::Io { path, source },
        }
    }
}

/// Why a sync that held its session's lock did not produce an outcome.
pub(crate) enum Refused {
    /// The session or its knowledge base is busy, or a job with the same dedupe key is queued,
    /// running or done.
    Busy,
    Failed(SyncError),
}

impl<T: Into<SyncError>> From<T> for Refused {
    fn from(error: T) -> Self {
        Refused::Failed(error.into())
    }
}

/// The job status a failed sync ends with.
pub(crate) fn failed_status(error: &SyncError) -> &'static str {
    match error {
        SyncError::Cancelled(_) => job_status::CANCELLED,
        _ => job_status::FAILED,
    }
}
