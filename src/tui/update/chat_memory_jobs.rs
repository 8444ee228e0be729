//! The chat memories tab's and the trim preview's work for the job runner (its loads and its
//! writes), and their results.

use std::sync::Arc;

use crate::memory::tokens::TokenCounter;
use crate::memory::trim::{ChatMemoryPolicy, TrimPlan};
use crate::store::ChatMemorySummary;
use crate::store::rows::{ChatMemoryMessageRow, ChatMemoryRow};
use crate::tui::state::chat_memories::Write;
use crate::tui::state::trim::TrimSessions;

/// The chat memories tab's and the trim preview's loads.
#[derive(Debug, Clone)]
pub enum MemoryLoad {
    List,
    /// Tokens of each memory's whole list.
    Tokens {
        ids: Vec<String>,
        counter: TokenCounter,
    },
    /// One page of a memory (seed 004's "get memory data" with limit and offset).
    Page {
        id: String,
        limit: i64,
        offset: i64,
        counter: TokenCounter,
    },
    /// A memory's whole list, counted, with its policy: the trim preview's source.
    TrimSource {
        id: String,
        counter: TokenCounter,
    },
    /// The preview's plan summarized: by the extractive summarizer (`offline`, a slice too
    /// large to summarize within a keystroke) or by the configured one.
    Summary {
        sessions: Arc<TrimSessions>,
        policy: ChatMemoryPolicy,
        offline: bool,
    },
}

/// The chat memories tab's writes for the job runner.
#[derive(Debug, Clone)]
pub enum MemoryEffect {
    Write {
        write: Write,
        counter: TokenCounter,
    },
    /// How many messages a delete waiting for its confirmation would remove, or for an undo,
    /// how many changes are left to revert (its confirmation waits for a nonzero answer).
    CountDelete {
        write: Write,
    },
}

/// A page of messages with the memory it belongs to.
#[derive(Debug)]
pub struct MemoryPage {
    pub memory: ChatMemoryRow,
    pub rows: Vec<ChatMemoryMessageRow>,
    pub tokens: Vec<u64>,
}

/// Results of [`MemoryLoad`]s.
#[derive(Debug)]
pub enum MemoryLoaded {
    List(Result<Vec<ChatMemorySummary>, String>),
    Tokens(Vec<(String, u64)>),
    Page(Result<MemoryPage, String>),
    TrimSource(Result<(Arc<TrimSessions>, ChatMemoryPolicy), String>),
    Summary(Result<TrimPlan, String>),
}

/// Results of [`MemoryEffect`]s.
#[derive(Debug)]
pub enum MemoryJob {
    /// What [`MemoryEffect::CountDelete`] counted.
    DeleteCount {
        write: Write,
        result: Result<usize, String>,
    },
    /// A write finished: what to tell the user, or why it failed.
    Written {
        memory_id: String,
        result: Result<String, String>,
    },
}

/// What a refused write says on a read-only database.
pub const READ_ONLY: &str =
    "read-only database: writes are refused (open a writable database to change chat memories)";
