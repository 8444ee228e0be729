//! The conversation list of a database whose conversations are sessions or threads (Langflow,
//! LangGraph): its pages by offset, its `/` search over ids and message text, and opening a row.

use super::effect::Effect;
use super::selection::moved;
use super::session::open_session;
use super::session_effects::SessionEffect;
use crate::inspect::sessions::ConversationRowPage;
use crate::tui::action::Action;
use crate::tui::state::{AppState, LoadStatus, Overlay, PAGE_SIZE, Prompt, Screen, current};

/// Asks for the page the list is on or going to; `show_loading` empties nothing but says so.
pub(super) fn reload(state: &mut AppState, show_loading: bool) -> Effect {
    let generation = state.generation();
    let list = &mut state.sessions;
    list.generation = generation;
    if show_loading {
        list.status = LoadStatus::Loading;
    }
    Effect::Sessions(SessionEffect::LoadPage {
        generation,
        search: Some(state.list.filter.clone()).filter(|f| !f.is_empty()),
        offset: list.loading_offset.unwrap_or(list.offset),
        limit: PAGE_SIZE as u32,
    })
}

/// The filter changed: back to the first page, the old rows gone at once.
pub(super) fn first_page(state: &mut AppState) -> Effect {
    let list = &mut state.sessions;
    list.rows.clear();
    list.offset = 0;
    list.loading_offset = None;
    list.selected = 0;
    reload(state, true)
}

pub(super) fn list_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let list = &mut state.sessions;
    if let Some(selected) = moved(list.selected, list.rows.len(), action) {
        list.selected = selected;
        return;
    }
    match action {
        Action::Open => {
            if let Some(row) = list.selected_row() {
                let key = row.key.clone();
                open_session(state, key, Screen::Conversations, effects);
            }
        }
        Action::Filter => {
            state.overlay = Overlay::Prompt(Prompt::Filter(state.list.filter.clone()));
        }
        Action::NextPage | Action::PrevPage if list.loading_offset.is_some() => {
            state.message = Some("a page is loading: wait for it".to_owned());
        }
        Action::NextPage if list.has_more => {
            list.loading_offset = Some(list.offset + list.rows.len() as u64);
            effects.push(reload(state, true));
        }
        Action::PrevPage if list.offset > 0 => {
            list.loading_offset = Some(list.offset.saturating_sub(PAGE_SIZE as u64));
            effects.push(reload(state, true));
        }
        Action::Refresh => effects.push(reload(state, true)),
        Action::Doctor => effects.extend(super::doctor::open(state).map(Effect::Doctor)),
        Action::Back if !state.list.filter.is_empty() => {
            super::list::filter_list(state, String::new(), effects);
        }
        _ => {}
    }
}

/// A page arrived, or failed: the shown page stays what it was on failure.
pub(super) fn page_loaded(
    state: &mut AppState,
    generation: u64,
    offset: u64,
    result: Result<ConversationRowPage, String>,
) -> bool {
    let Some(list) = current(Some(&mut state.sessions), generation, |l| l.generation) else {
        return false;
    };
    list.loading_offset = None;
    match result {
        Ok(page) => {
            let selected_key = (offset == list.offset)
                .then(|| list.selected_row().map(|r| r.key.clone()))
                .flatten();
            list.selected = selected_key
                .and_then(|key| page.rows.iter().position(|r| r.key == key))
                .unwrap_or(0)
                .min(page.rows.len().saturating_sub(1));
            list.offset = offset;
            list.rows = page.rows;
            list.has_more = page.has_more;
            list.status = LoadStatus::Loaded;
        }
        Err(error) => list.status = LoadStatus::Failed(error),
    }
    true
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
