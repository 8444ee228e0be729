//! A LangGraph thread's work for the job runner, and its results.

use std::sync::Arc;

use crate::inspect::langgraph_thread::{CheckpointState, ThreadTree};
use crate::memory::tokens::TokenCounter;
use crate::tui::state::checkpoints::{CheckpointWrite, ShownCheckpoint};

/// Work of the thread screen for the job runner.
#[derive(Debug, Clone)]
pub enum CheckpointEffect {
    /// The thread's checkpoint tree, from its rows alone.
    LoadTree { generation: u64, thread_id: String },
    /// One checkpoint read whole and its messages counted.
    LoadCheckpoint {
        generation: u64,
        thread_id: String,
        namespace: String,
        checkpoint_id: String,
        counter: TokenCounter,
        max_tokens: i64,
    },
    /// A confirmed write: one transaction.
    Write(CheckpointWrite),
    /// The shown checkpoint's messages counted again (the counter or the budget changed).
    Count {
        generation: u64,
        state: Arc<CheckpointState>,
        counter: TokenCounter,
        max_tokens: i64,
    },
}

/// Results of [`CheckpointEffect`]s.
#[derive(Debug)]
pub enum CheckpointEvent {
    Tree {
        generation: u64,
        result: Result<ThreadTree, String>,
    },
    Shown {
        generation: u64,
        result: Result<ShownCheckpoint, String>,
    },
    /// A write finished: what it did, or why it failed.
    Written {
        thread_id: String,
        result: Result<String, String>,
    },
}
