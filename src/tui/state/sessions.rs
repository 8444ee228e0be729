//! Conversations of databases that keep no regeneration trees (Langflow's sessions of each flow,
//! LangGraph's threads, and every source that keeps a log): the list, paged by the cursors its
//! source gives, and the open one with what its model is fed.

use std::sync::Arc;

use super::load::LoadStatus;
use super::screen::Screen;
use super::search::MessageSearch;
use crate::sources::conversation::ListedConversation;
use crate::sources::opened::{ConversationKey, FedHistory, OpenConversation};

/// One page of the list, where it starts, and the page being loaded.
#[derive(Debug, Clone, Default)]
pub struct SessionListState {
    pub status: LoadStatus,
    pub rows: Vec<ListedConversation>,
    pub selected: usize,
    /// Where the shown page starts (`None`: the first page).
    pub start: Option<String>,
    /// Where each page before the shown one starts, oldest first: `[` goes back through them.
    pub earlier: Vec<Option<String>>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<String>,
    /// The page being loaded, which becomes the shown one when its rows arrive.
    pub loading: Option<PageTurn>,
    pub generation: u64,
}

/// A page asked for: where it starts, and how it stands to the shown one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageTurn {
    pub start: Option<String>,
    pub step: PageStep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageStep {
    Forward,
    Back,
}

impl SessionListState {
    /// The number of the page whose rows are shown.
    pub fn page_number(&self) -> usize {
        self.earlier.len() + 1
    }

    /// The number of the page being loaded.
    pub fn loading_page(&self) -> Option<usize> {
        let turn = self.loading.as_ref()?;
        Some(match turn.step {
            PageStep::Forward => self.page_number() + 1,
            PageStep::Back => self.page_number().saturating_sub(1).max(1),
        })
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<&ListedConversation> {
        self.rows.get(self.selected)
    }

    /// What opens the selected row.
    pub fn selected_key(&self) -> Option<ConversationKey> {
        self.selected_row().map(key_of)
    }
}

/// What opens a row of the list.
pub fn key_of(row: &ListedConversation) -> ConversationKey {
    ConversationKey {
        id: row.id.clone(),
        scope: row.scope.clone(),
    }
}

/// An open conversation: its messages, the selected one, and its budget.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub key: ConversationKey,
    pub status: LoadStatus,
    pub view: Option<Arc<OpenConversation>>,
    pub generation: u64,
    /// The selected message.
    pub selected: usize,
    /// The memory's message window as the user set it (`>`, `<`); `None`: its default.
    pub window: Option<u32>,
    /// The memory's view as the user switched it (`a`: an ADK session's agent); `None`: its
    /// first.
    pub perspective: Option<usize>,
    pub budget: Option<FedHistory>,
    pub budget_status: LoadStatus,
    pub budget_generation: u64,
    /// Where esc goes: the list, the doctor's findings or the memory bases it was opened from.
    pub back_to: Screen,
    /// A search in the messages (`/`), by their positions in the view.
    pub search: Option<MessageSearch>,
}

impl SessionState {
    pub fn new(key: ConversationKey, generation: u64, back_to: Screen) -> SessionState {
        SessionState {
            key,
            status: LoadStatus::Loading,
            view: None,
            generation,
            selected: 0,
            window: None,
            perspective: None,
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
