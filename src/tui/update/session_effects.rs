//! The loads of the session list and an open session or thread, and what they report. Each is
//! stamped with its request's generation like every other load (`loads.rs` drops stale ones).

use std::sync::Arc;

use crate::inspect::session_budget::SessionBudget;
use crate::inspect::sessions::{ConversationRowPage, SessionKey, SessionView};
use crate::memory::budget_view::BudgetSettings;

/// Reads for the job runner.
#[derive(Debug, Clone)]
pub enum SessionLoad {
    /// A page of the list from `offset`, searched when `search` is given.
    Page {
        search: Option<String>,
        offset: u64,
        limit: u32,
    },
    /// One conversation's messages and what its history is read from.
    Open { key: SessionKey },
    /// What the model is fed of `view`, counted.
    Budget {
        view: Arc<SessionView>,
        n_messages: u32,
        settings: BudgetSettings,
    },
}

/// Results of [`SessionLoad`]s.
#[derive(Debug)]
pub enum SessionLoaded {
    Page {
        offset: u64,
        result: Result<ConversationRowPage, String>,
    },
    Opened(Result<Arc<SessionView>, String>),
    Budget(Result<Box<SessionBudget>, String>),
}
