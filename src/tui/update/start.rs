//! The first requests of a session, and of every database `:open` opens after it.

use super::effect::Effect;
use super::tabs::show_tab;
use super::{list_query, memory_bases};
use crate::tui::state::{AppState, Tab};

/// The first requests of a session: the first page of conversations and the memory bases,
/// each where the database holds them. The TUI opens on the first tab the database has.
pub fn start(state: &mut AppState) -> Vec<Effect> {
    let mut effects = Vec::new();
    if state.tab_missing(Tab::Conversations).is_none() {
        effects.push(list_query::reload_list(state, true));
    }
    if state.tab_missing(Tab::MemoryBases).is_none() {
        memory_bases::start(state, &mut effects);
    }
    if let Some(first) = Tab::ALL
        .into_iter()
        .find(|tab| state.tab_missing(*tab).is_none())
        .filter(|tab| *tab != Tab::Conversations)
    {
        show_tab(state, first, &mut effects);
    }
    effects
}
