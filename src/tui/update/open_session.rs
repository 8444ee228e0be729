//! Opening a session or thread (Langflow, LangGraph, every source that keeps a log) on the
//! session screens: from a row of the list, from a memory base's session or from a doctor
//! finding.

use super::effect::Effect;
use super::session_effects::SessionLoad;
use crate::inspect::doctor::Finding;
use crate::sources::doctor::FindingTarget;
use crate::sources::opened::ConversationKey;
use crate::tui::state::memory_bases::Focus;
use crate::tui::state::session::SessionState;
use crate::tui::state::{AppState, Screen, Tab};

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
            super::list_query::filter_list(state, text, effects);
        }
        FindingTarget::Conversation(key) => open_session(state, key, Screen::Doctor, effects),
    }
}

#[cfg(test)]
#[path = "open_session_tests.rs"]
mod tests;
