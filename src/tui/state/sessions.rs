//! Conversations of databases that keep no regeneration trees (Langflow's sessions of each flow,
//! LangGraph's threads): the list, paged by offset, and the open one with what its model is fed.

use std::sync::Arc;

use super::load::LoadStatus;
use super::screen::Screen;
use super::search::MessageSearch;
use crate::inspect::session_budget::SessionBudget;
use crate::inspect::sessions::{ConversationRow, SessionKey, SessionView};
use crate::memory::agent_history::AGENT_DEFAULT_N_MESSAGES;

/// One page of the list, where it starts, and the page being loaded.
#[derive(Debug, Clone, Default)]
pub struct SessionListState {
    pub status: LoadStatus,
    pub rows: Vec<ConversationRow>,
    pub selected: usize,
    /// Rows before the shown page.
    pub offset: u64,
    pub has_more: bool,
    /// The offset of the page being loaded, which becomes the shown one when its rows arrive.
    pub loading_offset: Option<u64>,
    pub generation: u64,
}

impl SessionListState {
    /// The number of the page whose rows are shown.
    pub fn page_number(&self, page_size: u64) -> u64 {
        self.offset / page_size.max(1) + 1
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<&ConversationRow> {
        self.rows.get(self.selected)
    }
}

/// An open conversation: its messages, the selected one, and its budget.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub key: SessionKey,
    pub status: LoadStatus,
    pub view: Option<Arc<SessionView>>,
    pub generation: u64,
    /// The selected message.
    pub selected: usize,
    /// Langflow's Agent reads the newest `n_messages` of the session.
    pub n_messages: u32,
    pub budget: Option<SessionBudget>,
    pub budget_status: LoadStatus,
    pub budget_generation: u64,
    /// Where esc goes: the list, the doctor's findings or the memory bases it was opened from.
    pub back_to: Screen,
    /// A search in the messages (`/`), by their positions in the view.
    pub search: Option<MessageSearch>,
}

impl SessionState {
    pub fn new(key: SessionKey, generation: u64, back_to: Screen) -> SessionState {
        SessionState {
            key,
            status: LoadStatus::Loading,
            view: None,
            generation,
            selected: 0,
            n_messages: AGENT_DEFAULT_N_MESSAGES,
            budget: None,
            budget_status: LoadStatus::Loading,
            budget_generation: 0,
            back_to,
            search: None,
        }
    }

    /// Whether message `id` is fed to the model, by the cut the budget panel shows; `None`
    /// while the budget is counted.
    pub fn is_fed(&self, id: &str) -> Option<bool> {
        Some(self.budget.as_ref()?.is_sent(id))
    }
}
