//! A LangGraph thread's work for the job runner (its loads and its writes), and their results.

use std::sync::Arc;

use crate::memory::tokens::TokenCounter;
use crate::sources::checkpoint_history::{CheckpointState, ThreadTree};
pub use crate::tui::state::checkpoints::CheckpointWrite;
use crate::tui::state::checkpoints::ShownCheckpoint;

/// The thread screen's loads.
#[derive(Debug, Clone)]
pub enum CheckpointLoad {
    /// The thread's checkpoint tree, from its rows alone.
    Tree { thread_id: String },
    /// One checkpoint read whole and its messages counted.
    Checkpoint {
        thread_id: String,
        namespace: String,
        checkpoint_id: String,
        counter: TokenCounter,
        max_tokens: i64,
    },
    /// The shown checkpoint's messages counted again (the counter or the budget changed).
    Count {
        state: Arc<CheckpointState>,
        counter: TokenCounter,
        max_tokens: i64,
    },
}

/// What [`CheckpointLoad`]s report.
#[derive(Debug)]
pub enum CheckpointLoaded {
    Tree(Result<ThreadTree, String>),
    Shown(Result<Box<ShownCheckpoint>, String>),
}

/// A write finished: what it did, or why it failed.
#[derive(Debug)]
pub struct CheckpointWritten {
    pub write: CheckpointWrite,
    pub result: Result<String, String>,
}
