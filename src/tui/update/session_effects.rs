//! The loads of the session list and an open session or thread, and what they report. Each is
//! stamped with its request's generation like every other load (`loads.rs` drops stale ones).

use std::sync::Arc;

use crate::inspect::listing::ConversationList;
use crate::memory::budget_view::BudgetSettings;
use crate::sources::opened::{ConversationKey, FedHistory, OpenConversation};

/// Reads for the job runner.
#[derive(Debug, Clone)]
pub enum SessionLoad {
    /// A page of the list from `after` (the start of the first page when `None`), searched
    /// when `search` is given.
    Page {
        search: Option<String>,
        after: Option<String>,
        limit: u32,
    },
    /// One conversation's messages and its memory.
    Open {
        key: ConversationKey,
        settings: BudgetSettings,
    },
    /// What the model is fed of `view`, counted, with the memory's window at `window`, in the
    /// memory's view `perspective` (whose model: an ADK session's agents).
    Budget {
        view: Arc<OpenConversation>,
        window: Option<u32>,
        perspective: Option<usize>,
        settings: BudgetSettings,
    },
}

/// Results of [`SessionLoad`]s.
#[derive(Debug)]
pub enum SessionLoaded {
    Page {
        after: Option<String>,
        result: Result<ConversationList, String>,
    },
    Opened(Result<Arc<OpenConversation>, String>),
    Budget(Result<Box<FedHistory>, String>),
}
