//! Esc on an opened screen (a conversation, session, thread of checkpoints or tree): back to
//! the screen it was opened from while that still shows something, else the list. A leaf.

use crate::tui::state::{AppState, Screen};

pub(super) fn go_back(state: &mut AppState) {
    let to = state.unit(state.screen).and_then(|unit| unit.back_to());
    state.screen = match to {
        Some(to) if state.is_open(to) => to,
        _ => Screen::Conversations,
    };
    if state.screen.tab() == Screen::Conversations.tab() {
        state.conversations_screen = state.screen;
    }
}
