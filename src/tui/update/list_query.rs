//! What the conversation list asks its source for: the page its filter, its page cursors and
//! the source's switches name. Apart from the list's keys, so that what opens a row and what
//! searches the list (a doctor finding, the prompt) reach it without reaching each other.

use super::effect::{Effect, Load};
use crate::sources::conversation::{ListQuery, SourceOptions};
use crate::tui::state::{AppState, LoadStatus, PAGE_SIZE};

/// Filters the list by `text` from its first page, unless that filter is the one shown. The
/// rows of the old filter go at once, so nothing stale stands under the new one while it loads.
pub(super) fn filter_list(state: &mut AppState, text: String, effects: &mut Vec<Effect>) {
    let filter = text.trim().to_owned();
    if filter == state.list.filter {
        return;
    }
    state.list.filter = filter;
    state.list.reset_pages();
    state.list.rows.clear();
    effects.push(reload_list(state, true));
}

/// The list's setting that shows the conversations deleted in the app.
pub(super) const DELETED: &str = "include-deleted";

pub(super) fn reload_list(state: &mut AppState, show_loading: bool) -> Effect {
    let generation = state.generation();
    state.list.generation = generation;
    state.list.found_so_far.clear();
    if show_loading {
        state.list.status = LoadStatus::Loading;
    }
    let query = ListQuery {
        search: Some(state.list.filter.clone()).filter(|f| !f.is_empty()),
        after: state.list.requested_after(),
        limit: PAGE_SIZE,
        options: SourceOptions::default().with_switch(DELETED, state.list.include_deleted),
    };
    Effect::load(generation, Load::List(query))
}
