//! What flows through the core: the events it reads, the effects it asks the job runner for,
//! and the job results that come back.

use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::chat_memory_jobs::{MemoryEffect, MemoryJob};
use super::checkpoint_jobs::{CheckpointEffect, CheckpointEvent};
use super::doctor::{DoctorEffect, DoctorEvent};
use super::memory_base_jobs::{MbEffect, MbEvent};
use crate::inspect::budget::{BudgetSettings, BudgetView};
use crate::inspect::conversation::ThreadMode;
use crate::inspect::nodes::{ContextSource, NodeContextView, NodeThread, Timeline};
use crate::memory::tree::NodeIndex;
use crate::store::{ConversationFilter, ConversationSummary};
use crate::tui::action::Action;
use crate::tui::state::{Loaded, NodeRow};

/// What reaches the core.
#[derive(Debug)]
pub enum Event {
    Key(KeyEvent),
    Action(Action),
    Job(JobEvent),
    Tick,
    Resize,
}

/// Work for the job runner. Loads carry a generation: only the latest one's result is used.
#[derive(Debug, Clone)]
pub enum Effect {
    LoadList {
        generation: u64,
        filter: ConversationFilter,
    },
    /// Stops the list load that is running (a search scanning a large database).
    StopList,
    /// Tokens of each conversation's latest thread, for the visible page.
    CountThreads {
        generation: u64,
        ids: Vec<String>,
        settings: BudgetSettings,
        message_limit: i64,
    },
    LoadConversation {
        generation: u64,
        id: String,
    },
    ComputeBudget {
        generation: u64,
        loaded: Arc<Loaded>,
        leaf: NodeIndex,
        mode: ThreadMode,
        window: usize,
        settings: BudgetSettings,
    },
    /// Asks for the conversation's newest message id, to notice messages written elsewhere.
    PollNewest {
        id: String,
    },
    /// The thread at `leaf` as node memory reads it, its nodes and their latest context sizes.
    LoadNodes {
        generation: u64,
        conversation_id: String,
        /// `None`: the newest message, Dify's own query.
        leaf: Option<String>,
        settings: BudgetSettings,
    },
    /// One node's context from `source`, with its budget.
    LoadNodeContext {
        generation: u64,
        thread: Arc<NodeThread>,
        node_id: String,
        source: ContextSource,
        settings: BudgetSettings,
    },
    /// One node's executions across the thread's turns.
    LoadTimeline {
        generation: u64,
        thread: Arc<NodeThread>,
        node_id: String,
    },
    /// Memory bases: loads, syncs and writes.
    MemoryBases(MbEffect),
    /// The chat memories tab and the trim preview.
    ChatMemory(MemoryEffect),
    /// The doctor view's scan.
    Doctor(DoctorEffect),
    /// A LangGraph thread's tree and its shown checkpoint.
    Checkpoints(CheckpointEffect),
    /// Text for the terminal's clipboard (OSC 52).
    CopyToClipboard(String),
}

/// What the nodes job reports: the thread and the pane's rows.
#[derive(Debug)]
pub struct LoadedNodes {
    pub thread: Arc<NodeThread>,
    pub rows: Vec<NodeRow>,
}

/// Results of effects.
#[derive(Debug)]
pub enum JobEvent {
    List {
        generation: u64,
        result: Result<Vec<ConversationSummary>, String>,
    },
    /// One row a scanning search found, before its page is complete.
    ListFound {
        generation: u64,
        row: ConversationSummary,
    },
    ThreadTokens {
        generation: u64,
        tokens: Vec<(String, u64)>,
    },
    Conversation {
        generation: u64,
        result: Result<Arc<Loaded>, String>,
    },
    Budget {
        generation: u64,
        result: Result<Box<BudgetView>, String>,
    },
    Newest {
        id: String,
        newest: Option<String>,
    },
    Nodes {
        generation: u64,
        result: Result<LoadedNodes, String>,
    },
    NodeContext {
        generation: u64,
        result: Result<Box<NodeContextView>, String>,
    },
    Timeline {
        generation: u64,
        result: Result<Timeline, String>,
    },
    MemoryBases(MbEvent),
    ChatMemory(MemoryJob),
    Doctor(DoctorEvent),
    Checkpoints(CheckpointEvent),
}

/// Each part's results travel as one kind of [`JobEvent`].
macro_rules! job_event_from {
    ($($part:ty => $variant:ident),*) => {$(
        impl From<$part> for JobEvent {
            fn from(event: $part) -> JobEvent {
                JobEvent::$variant(event)
            }
        }
    )*};
}

job_event_from!(
    MbEvent => MemoryBases,
    MemoryJob => ChatMemory,
    DoctorEvent => Doctor,
    CheckpointEvent => Checkpoints
);
