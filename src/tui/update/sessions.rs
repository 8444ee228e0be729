//! The conversation list of a database whose conversations are sessions or threads (Langflow,
//! LangGraph): its pages by offset, its `/` search over ids and message text, and opening a
//! session from a row, from a memory base's session or from a doctor finding.

use super::effect::Effect;
use super::selection::moved;
use super::session_effects::SessionLoad;
use crate::inspect::doctor::Finding;
use crate::inspect::sessions::{ConversationRowPage, SessionKey};
use crate::sources::langflow::doctor::LangflowFinding;
use crate::tui::action::Action;
use crate::tui::state::memory_bases::Focus;
use crate::tui::state::sessions::SessionState;
use crate::tui::state::{AppState, LoadStatus, Overlay, PAGE_SIZE, Prompt, Screen, Tab};

/// Asks for the page the list is on or going to; `show_loading` empties nothing but says so.
pub(super) fn reload(state: &mut AppState, show_loading: bool) -> Effect {
    let generation = state.generation();
    let list = &mut state.sessions;
    list.generation = generation;
    if show_loading {
        list.status = LoadStatus::Loading;
    }
    let page = SessionLoad::Page {
        search: Some(state.list.filter.clone()).filter(|f| !f.is_empty()),
        offset: list.loading_offset.unwrap_or(list.offset),
        limit: PAGE_SIZE as u32,
    };
    Effect::load(generation, page)
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
        Action::Doctor => effects.extend(super::doctor::open(state)),
        Action::Prune => match list.selected_row() {
            Some(row) => {
                let id = row.key.id.clone();
                super::checkpoint_prune::ask(state, id, effects);
            }
            None => state.message = Some("no thread selected to prune".to_owned()),
        },
        Action::Undo => match list.selected_row() {
            Some(row) => {
                let id = row.key.id.clone();
                super::checkpoint_writes::ask_to_undo(state, id, effects);
            }
            None => state.message = Some("no thread selected to undo".to_owned()),
        },
        Action::Back if !state.list.filter.is_empty() => {
            state.list.filter.clear();
            effects.push(first_page(state));
        }
        _ => {}
    }
}

/// Opens the conversation `key` names; esc goes back to `back_to`.
pub(super) fn open_session(
    state: &mut AppState,
    key: SessionKey,
    back_to: Screen,
    effects: &mut Vec<Effect>,
) {
    let generation = state.generation();
    state.budget_panel = Default::default();
    state.session = Some(SessionState::new(key.clone(), generation, back_to));
    state.screen = Screen::Session;
    effects.push(Effect::load(generation, SessionLoad::Open { key }));
}

/// `c` on a session of the memory-bases tab: straight into its conversation, of the base's
/// flow where sessions belong to flows; esc comes back.
pub(super) fn open_from_memory_base(state: &mut AppState, effects: &mut Vec<Effect>) {
    let tab = &state.memory_bases;
    let chosen = match (&tab.search, tab.focus) {
        (Some(search), _) => search
            .hits
            .get(search.selected)
            .map(|hit| hit.session_id.clone()),
        (None, Focus::Sessions) => tab.selected_session().map(|s| s.session.session_id.clone()),
        (None, Focus::Bases) => None,
    };
    let (Some(session_id), Some(base)) = (chosen, tab.selected_base()) else {
        state.message = Some("choose a session first (enter lists the base's sessions)".into());
        return;
    };
    if let Some(why) = state.tab_missing(Tab::Conversations) {
        state.message = Some(why.to_owned());
        return;
    }
    if !state.lists_sessions() {
        super::conversation::open_conversation(state, session_id, effects);
        return;
    }
    let key = SessionKey {
        id: session_id,
        flow_id: Some(base.base.flow_id.clone()),
    };
    open_session(state, key, Screen::MemoryBases, effects);
}

/// Enter on a doctor finding: its session of its flow; a session id several flows use is
/// looked up in the list instead, one row per flow. Esc comes back to the findings.
pub(super) fn open_from_doctor(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    let finding = state.doctor.as_ref().and_then(|d| d.selected_finding());
    let flow_id = match finding {
        Some(Finding::Langflow(LangflowFinding::SharedSession { flows, .. })) => {
            state.message = Some(format!(
                "session {id:?} is used by {} flows: the list shows one row for each",
                flows.len()
            ));
            state.screen = Screen::Conversations;
            state.list.filter = id;
            effects.push(first_page(state));
            return;
        }
        Some(Finding::Langflow(finding)) => finding.flow_id().map(str::to_owned),
        _ => None,
    };
    open_session(state, SessionKey { id, flow_id }, Screen::Doctor, effects);
}

/// A page arrived, or failed: the shown page stays what it was on failure.
pub(super) fn page_loaded(
    state: &mut AppState,
    offset: u64,
    result: Result<ConversationRowPage, String>,
) -> bool {
    let list = &mut state.sessions;
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
