//! The jobs of the session list and an open session or thread, and what they report.

use std::sync::Arc;

use crate::inspect::budget::BudgetSettings;
use crate::inspect::session_budget::SessionBudget;
use crate::inspect::sessions::{ConversationRowPage, SessionKey, SessionView};

/// Work for the job runner.
#[derive(Debug, Clone)]
pub enum SessionEffect {
    /// A page of the list from `offset`, searched when `search` is given.
    LoadPage {
        generation: u64,
        search: Option<String>,
        offset: u64,
        limit: u32,
    },
    /// One conversation's messages and what its history is read from.
    Load { generation: u64, key: SessionKey },
    /// What the model is fed of `view`, counted.
    Budget {
        generation: u64,
        view: Arc<SessionView>,
        n_messages: u32,
        settings: BudgetSettings,
    },
}

/// Results of [`SessionEffect`]s.
#[derive(Debug)]
pub enum SessionEvent {
    Page {
        generation: u64,
        offset: u64,
        result: Result<ConversationRowPage, String>,
    },
    Loaded {
        generation: u64,
        result: Result<Arc<SessionView>, String>,
    },
    Budget {
        generation: u64,
        result: Result<Box<SessionBudget>, String>,
    },
}
