//! The conversation list of a database whose conversations are sessions or threads (Langflow,
//! LangGraph, every source that keeps a log): its pages by the cursors its source gives, its `/`
//! search over ids and message text, and opening a session from a row, from a memory base's
//! session or from a doctor finding.

use super::effect::Effect;
use super::selection::moved;
use super::session_effects::SessionLoad;
use crate::inspect::doctor::Finding;
use crate::inspect::listing::ConversationList;
use crate::sources::doctor::FindingTarget;
use crate::sources::opened::ConversationKey;
use crate::tui::action::Action;
use crate::tui::state::memory_bases::Focus;
use crate::tui::state::sessions::{PageStep, PageTurn, SessionState, key_of};
use crate::tui::state::{AppState, LoadStatus, Overlay, PAGE_SIZE, Prompt, Screen, Tab};

/// Asks for the page the list is on or going to; `show_loading` empties nothing but says so.
pub(super) fn reload(state: &mut AppState, show_loading: bool) -> Effect {
    let generation = state.generation();
    let list = &mut state.sessions;
    list.generation = generation;
    if show_loading {
        list.status = LoadStatus::Loading;
    }
    let after = match &list.loading {
        Some(turn) => turn.start.clone(),
        None => list.start.clone(),
    };
    let page = SessionLoad::Page {
        search: Some(state.list.filter.clone()).filter(|f| !f.is_empty()),
        after,
        limit: PAGE_SIZE,
    };
    Effect::load(generation, page)
}

/// The filter changed: back to the first page, the old rows gone at once.
pub(super) fn first_page(state: &mut AppState) -> Effect {
    let list = &mut state.sessions;
    list.rows.clear();
    list.start = None;
    list.earlier.clear();
    list.next = None;
    list.loading = None;
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
            if let Some(key) = list.selected_key() {
                open_session(state, key, Screen::Conversations, effects);
            }
        }
        Action::Filter => {
            state.overlay = Overlay::Prompt(Prompt::Filter(state.list.filter.clone()));
        }
        Action::NextPage | Action::PrevPage if list.loading.is_some() => {
            state.message = Some("a page is loading: wait for it".to_owned());
        }
        Action::NextPage if list.next.is_some() => {
            list.loading = Some(PageTurn {
                start: list.next.clone(),
                step: PageStep::Forward,
            });
            effects.push(reload(state, true));
        }
        Action::PrevPage if !list.earlier.is_empty() => {
            list.loading = Some(PageTurn {
                start: list.earlier.last().cloned().flatten(),
                step: PageStep::Back,
            });
            effects.push(reload(state, true));
        }
        Action::Refresh => effects.push(reload(state, true)),
        Action::Doctor => effects.extend(super::doctor::open(state)),
        Action::Prune => match list.selected_row() {
            Some(row) => {
                let id = row.id.clone();
                super::checkpoint_prune::ask(state, id, effects);
            }
            None => state.message = Some("no thread selected to prune".to_owned()),
        },
        Action::Undo => match list.selected_row() {
            Some(row) => {
                let id = row.id.clone();
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
    key: ConversationKey,
    back_to: Screen,
    effects: &mut Vec<Effect>,
) {
    let generation = state.generation();
    state.budget_panel = Default::default();
    state.session = Some(SessionState::new(key.clone(), generation, back_to));
    // The tree of the session open before is not this one's.
    state.tree = None;
    state.screen = Screen::Session;
    let settings = state.settings.budget_settings();
    effects.push(Effect::load(
        generation,
        SessionLoad::Open { key, settings },
    ));
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
    let key = ConversationKey::scoped(session_id, Some(base.base.flow_id.clone()));
    open_session(state, key, Screen::MemoryBases, effects);
}

/// Enter on a doctor finding: where the finding leads (a Langflow session of its flow); a
/// finding about what several conversations share (a session id several flows use) searches
/// the list instead, one row per conversation. Esc comes back to the findings.
pub(super) fn open_from_doctor(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    let target = match state.doctor.as_ref().and_then(|d| d.selected_finding()) {
        Some(Finding(finding)) => finding.leads_to(),
        _ => FindingTarget::Conversation(ConversationKey::new(id)),
    };
    match target {
        FindingTarget::Search { text, why } => {
            state.message = Some(why);
            state.screen = Screen::Conversations;
            state.list.filter = text;
            effects.push(first_page(state));
        }
        FindingTarget::Conversation(key) => open_session(state, key, Screen::Doctor, effects),
    }
}

/// A page arrived, or failed: the shown page stays what it was on failure.
pub(super) fn page_loaded(
    state: &mut AppState,
    after: Option<String>,
    result: Result<ConversationList, String>,
) -> bool {
    let list = &mut state.sessions;
    let turn = list.loading.take();
    match result {
        Ok(page) => {
            let same_page = turn.is_none() && after == list.start;
            let selected_key = same_page.then(|| list.selected_key()).flatten();
            list.selected = selected_key
                .and_then(|key| page.conversations.iter().position(|r| key_of(r) == key))
                .unwrap_or(0)
                .min(page.conversations.len().saturating_sub(1));
            match turn.map(|t| t.step) {
                Some(PageStep::Forward) => list.earlier.push(list.start.take()),
                Some(PageStep::Back) => {
                    list.earlier.pop();
                }
                None => {}
            }
            list.start = after;
            list.rows = page.conversations;
            list.next = page.next;
            list.status = LoadStatus::Loaded;
        }
        Err(error) => list.status = LoadStatus::Failed(error),
    }
    true
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
