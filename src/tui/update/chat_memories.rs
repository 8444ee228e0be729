//! The chat memories tab: its actions and job results.

use super::Effect;
use crate::tui::action::Action;
use crate::tui::state::AppState;

/// The tab came to the front.
pub(super) fn enter(_state: &mut AppState, _effects: &mut Vec<Effect>) {
    // SCAFFOLD: the helper building this tab replaces this.
}

pub(super) fn action(_state: &mut AppState, _action: Action, _effects: &mut Vec<Effect>) {
    // SCAFFOLD: the helper building this tab replaces this.
}

/// A polling tick while the tab is in front: notice changes made by other processes.
pub(super) fn poll(_state: &mut AppState, _effects: &mut Vec<Effect>) {
    // SCAFFOLD: the helper building this tab replaces this.
}
