//! An open conversation of a database that keeps no regeneration trees (a Langflow session of a
//! flow, a LangGraph thread, any source that keeps a log), with what its model is fed.

use std::sync::Arc;

use super::load::LoadStatus;
use super::screen::Screen;
use super::screen_unit::{Around, ConversationScreens, ScreenUnit};
use super::search::MessageSearch;
use crate::sources::opened::{ConversationKey, FedHistory, OpenConversation};
use crate::tui::keymap::KeyContext;

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
    pub budget: Option<FedHistory>,
    pub budget_status: LoadStatus,
    pub budget_generation: u64,
    /// Where esc goes: the list, the doctor's findings or the memory bases it was opened from.
    pub back_to: Screen,
    /// A search in the messages (`/`), by their positions in the view.
    pub search: Option<MessageSearch>,
    /// The latest request for the plan of a trim in place (`A` in its trim preview).
    pub trim_generation: u64,
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
            budget: None,
            budget_status: LoadStatus::Loading,
            budget_generation: 0,
            back_to,
            search: None,
            trim_generation: 0,
        }
    }

    /// Whether message `id` is fed to the model, by the cut the budget panel shows; `None`
    /// while the budget is counted.
    pub fn is_fed(&self, id: &str) -> Option<bool> {
        Some(self.budget.as_ref()?.is_sent(id))
    }
}

impl ScreenUnit for SessionState {
    /// A thread of checkpoints' messages, a session whose memory reads a message window the
    /// keys can move, or any other session.
    fn key_context(&self, around: &Around) -> KeyContext {
        let has_window = self
            .view
            .as_ref()
            .is_some_and(|v| v.memory.window().is_some());
        match around.conversation_screens {
            ConversationScreens::CheckpointThread => KeyContext::Thread,
            _ if has_window => KeyContext::FlowSession,
            _ => KeyContext::Session,
        }
    }

    fn busy(&self) -> bool {
        self.status.is_loading() || self.budget_status.is_loading()
    }

    fn breadcrumbs(&self, _around: &Around) -> Vec<String> {
        vec![self.key.id.clone()]
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        let message = self.view.as_ref()?.messages.get(self.selected)?;
        Some(("message id", message.message.id.clone()))
    }

    fn back_to(&self) -> Option<Screen> {
        Some(self.back_to)
    }

    fn exported(&self) -> Option<(ConversationKey, Option<String>)> {
        Some((self.key.clone(), None))
    }
}
