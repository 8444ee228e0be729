//! Switching tabs.

use super::effect::Effect;
use super::{chat_memories, memory_bases};
use crate::tui::state::{AppState, Screen, Tab};

/// Brings `tab` to the front. The conversations tab comes back on the screen it was left on;
/// the other tabs reload their lists, which other processes may have changed.
pub(super) fn show_tab(state: &mut AppState, tab: Tab, effects: &mut Vec<Effect>) {
    let current = state.screen.tab();
    if current == tab {
        return;
    }
    if current == Tab::Conversations {
        state.conversations_screen = state.screen;
    }
    state.screen = match tab {
        Tab::Conversations if state.is_open(state.conversations_screen) => {
            state.conversations_screen
        }
        Tab::Conversations => Screen::Conversations,
        Tab::ChatMemories => Screen::ChatMemories,
        Tab::MemoryBases => Screen::MemoryBases,
    };
    // A tab whose part the database lacks only says why: there is nothing to load.
    if state.tab_missing(tab).is_some() {
        return;
    }
    match tab {
        Tab::Conversations => {}
        Tab::ChatMemories => chat_memories::enter(state, effects),
        Tab::MemoryBases => memory_bases::enter(state, effects),
    }
}
