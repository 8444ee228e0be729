//! The loads of the session list and an open session or thread, and what they report. Each is
//! stamped with its request's generation like every other load (`loads.rs` drops stale ones).

use std::sync::Arc;

use crate::inspect::tree::ThreadDocument;
use crate::memory::budget_view::BudgetSettings;
use crate::sources::opened::{ConversationKey, FedHistory, OpenConversation};
use crate::sources::stored_trim::Keep;

/// Reads for the job runner.
#[derive(Debug, Clone)]
pub enum SessionLoad {
    /// One conversation's messages and its memory.
    Open {
        key: ConversationKey,
        settings: BudgetSettings,
    },
    /// What the model is fed of `view`, counted, with the memory's window at `window`.
    Budget {
        view: Arc<OpenConversation>,
        window: Option<u32>,
        settings: BudgetSettings,
    },
    /// What a trim in place of session `id` keeping `keep` would delete.
    TrimPlan {
        id: String,
        keep: Keep,
        settings: BudgetSettings,
    },
    /// The tree of the conversation `key` names, as `thread` draws it.
    Tree { key: ConversationKey },
}

/// What a trim in place would do, for the question that asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimFigures {
    pub id: String,
    pub keep: Keep,
    pub rows_deleted: usize,
    pub items_before: usize,
    pub items_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Items dropped beyond the limit, to keep calls with their outputs.
    pub moved: usize,
}

/// Results of [`SessionLoad`]s.
#[derive(Debug)]
pub enum SessionLoaded {
    Opened(Result<Arc<OpenConversation>, String>),
    Budget(Result<Box<FedHistory>, String>),
    TrimPlan(Result<TrimFigures, String>),
    Tree(Result<Arc<ThreadDocument>, String>),
}

/// A trim in place, or its undo, carried out: what it did, in a sentence, or why it failed.
#[derive(Debug)]
pub struct TrimWritten {
    pub id: String,
    pub result: Result<String, String>,
}
