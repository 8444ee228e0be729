//! What flows through the core: the events it reads, the effects it asks the job runner for,
//! and the job results that come back.

use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::chat_memory_jobs::{MemoryEffect, MemoryJob, MemoryLoad, MemoryLoaded};
use super::checkpoint_jobs::{
    CheckpointLoad, CheckpointLoaded, CheckpointWrite, CheckpointWritten,
};
use super::doctor_jobs::{DoctorEvent, DoctorScan};
use super::memory_base_jobs::{MbEffect, MbEvent, MbLoad, MbLoaded};
use super::opened_database::OpenedDatabase;
use super::session_effects::{SessionLoad, SessionLoaded, TrimWritten};
use crate::inspect::nodes::{ContextSource, NodeContextView, NodeThread, Timeline};
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::thread_view::ThreadMode;
use crate::memory::tree::NodeIndex;
use crate::sources::conversation::{ListQuery, ListedConversation, ListedPage};
use crate::sources::opened::ConversationKey;
use crate::tui::action::Action;
use crate::tui::state::confirm::StoredTrimWrite;
use crate::tui::state::prune::{PlannedPrune, UndoPlan};
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

/// A load's request or report, with the generation of its request: the one place a generation
/// travels. The runner stamps every report of a load with its request's generation, and the core
/// takes a report only while that request is its part's latest (`loads.rs`).
#[derive(Debug, Clone)]
pub struct Stamped<T> {
    pub generation: u64,
    pub value: T,
}

/// Work for the job runner.
#[derive(Debug, Clone)]
pub enum Effect {
    /// A read whose latest request wins: a later one of its kind stops it, and its reports are
    /// dropped once another request overtook it.
    Load(Stamped<Load>),
    /// Stops the list load that is running (a search scanning a large database).
    StopList,
    /// Asks for the conversation's newest message id, to notice messages written elsewhere.
    PollNewest { id: String },
    /// Memory bases: syncs and writes.
    MemoryBases(MbEffect),
    /// The chat memories tab's writes.
    ChatMemory(MemoryEffect),
    /// Stops the doctor's running scan where it is.
    StopDoctor,
    /// A confirmed write to a LangGraph thread.
    Checkpoints(CheckpointWrite),
    /// A confirmed trim in place of a session, or its undo.
    SessionTrim(StoredTrimWrite),
    /// Text for the terminal's clipboard (OSC 52).
    CopyToClipboard(String),
    /// Every job from now on runs on this database (`:open` opened it).
    SwitchDatabase(Box<OpenedDatabase>),
}

impl Effect {
    /// The load `load`, requested as `generation`.
    pub fn load(generation: u64, load: impl Into<Load>) -> Effect {
        Effect::Load(Stamped {
            generation,
            value: load.into(),
        })
    }
}

/// The loads: what the screens read, each kind at most once at a time.
#[derive(Debug, Clone)]
pub enum Load {
    /// Another database to open in place of this one (`:open`).
    Database {
        url: String,
    },
    List(ListQuery),
    /// Where `search` occurs in the messages of conversation `key`: why the list's filter
    /// matched it.
    Snippet {
        key: ConversationKey,
        search: String,
        /// What a source without a view of its own opens with.
        settings: BudgetSettings,
    },
    /// The open conversation's bundle as `memscope export` makes it (to checkpoint `leaf` of a
    /// LangGraph thread), under the budget in effect; written as a new file.
    Export {
        key: ConversationKey,
        leaf: Option<String>,
        budget: BudgetSettings,
        message_limit: i64,
    },
    /// Tokens of each conversation's latest thread, for the visible page.
    CountThreads {
        ids: Vec<String>,
        settings: BudgetSettings,
        message_limit: i64,
    },
    /// A conversation whole, with the row windows its memory reads when `[history]
    /// message_limit` asks for `message_limit` rows.
    Conversation {
        id: String,
        message_limit: i64,
    },
    Budget {
        loaded: Arc<Loaded>,
        leaf: NodeIndex,
        mode: ThreadMode,
        window: usize,
        settings: BudgetSettings,
    },
    /// The thread at `leaf` as node memory reads it, its nodes and their latest context sizes.
    Nodes {
        conversation_id: String,
        /// `None`: the newest message, Dify's own query.
        leaf: Option<String>,
        settings: BudgetSettings,
    },
    /// One node's context from `source`, with its budget.
    NodeContext {
        thread: Arc<NodeThread>,
        node_id: String,
        source: ContextSource,
        settings: BudgetSettings,
    },
    /// One node's executions across the thread's turns.
    Timeline {
        thread: Arc<NodeThread>,
        node_id: String,
    },
    MemoryBases(MbLoad),
    /// The chat memories tab and the trim preview.
    ChatMemory(MemoryLoad),
    /// The doctor view's scan of the whole database, cancelling a scan still running.
    Doctor(DoctorScan),
    /// The session list and an open session or thread.
    Sessions(SessionLoad),
    /// A LangGraph thread's tree and its shown checkpoint.
    Checkpoints(CheckpointLoad),
    /// What a prune keeping each thread's `keep_last` newest checkpoints would delete, and a
    /// new archive's path for it.
    PrunePlan {
        /// Empty: every thread.
        threads: Vec<String>,
        keep_last: usize,
    },
    /// What `u` undoes on thread `thread_id`: memscope's trim, or its last prune's archive.
    Undo {
        thread_id: String,
    },
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
    /// A load's report, stamped with its request's generation.
    Load(Stamped<LoadReport>),
    Newest {
        id: String,
        newest: Option<String>,
    },
    MemoryBases(MbEvent),
    ChatMemory(MemoryJob),
    Checkpoints(CheckpointWritten),
    /// A trim in place of a session, or its undo, done.
    SessionTrim(TrimWritten),
}

impl JobEvent {
    /// `report` of the load requested as `generation`.
    pub fn load(generation: u64, report: impl Into<LoadReport>) -> JobEvent {
        JobEvent::Load(Stamped {
            generation,
            value: report.into(),
        })
    }
}

/// What a [`Load`] reports: its result, or a step of it on the way (a row a search found, how
/// far a scan got).
#[derive(Debug)]
pub enum LoadReport {
    Database(Result<Box<OpenedDatabase>, String>),
    List(Result<ListedPage, String>),
    /// One row a scanning search found, before its page is complete.
    ListFound(ListedConversation),
    Snippet {
        key: ConversationKey,
        result: Result<Option<String>, String>,
    },
    ThreadTokens(Vec<(String, u64)>),
    /// Where a bundle was written, in words, or why not.
    Exported(Result<String, String>),
    Conversation(Result<Arc<Loaded>, String>),
    Budget(Result<Box<BudgetView>, String>),
    Nodes(Result<LoadedNodes, String>),
    NodeContext(Result<Box<NodeContextView>, String>),
    Timeline(Result<Timeline, String>),
    MemoryBases(MbLoaded),
    ChatMemory(MemoryLoaded),
    Doctor(DoctorEvent),
    Sessions(SessionLoaded),
    Checkpoints(CheckpointLoaded),
    PrunePlan(Result<PlannedPrune, String>),
    Undo(Result<UndoPlan, String>),
}

/// Each part's effects, loads and results travel as one kind of the enum that carries them.
macro_rules! wrap_into {
    ($($part:ty => $whole:ident :: $variant:ident),* $(,)?) => {$(
        impl From<$part> for $whole {
            fn from(part: $part) -> $whole {
                $whole::$variant(part)
            }
        }
    )*};
}

wrap_into!(
    MbEvent => JobEvent::MemoryBases,
    MemoryJob => JobEvent::ChatMemory,
    MbLoad => Load::MemoryBases,
    MemoryLoad => Load::ChatMemory,
    DoctorScan => Load::Doctor,
    MbLoaded => LoadReport::MemoryBases,
    MemoryLoaded => LoadReport::ChatMemory,
    DoctorEvent => LoadReport::Doctor,
    SessionLoad => Load::Sessions,
    SessionLoaded => LoadReport::Sessions,
    CheckpointLoad => Load::Checkpoints,
    CheckpointLoaded => LoadReport::Checkpoints,
    CheckpointWritten => JobEvent::Checkpoints,
    TrimWritten => JobEvent::SessionTrim,
);
