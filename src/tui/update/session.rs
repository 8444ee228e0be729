//! An open session or thread: its messages in order, and beside them what the model is fed,
//! with the budget keys, Langflow's `n_messages` and the trim preview over that history.

use std::sync::Arc;

use super::budget::{budget_panel_action, recompute_session_budget, set_budget};
use super::effect::Effect;
use super::reopen::reopen;
use super::selection::moved;
use super::{settings, trim};
use crate::sources::opened::{FedHistory, OpenConversation};
use crate::tui::action::Action;
use crate::tui::state::{AppState, BUDGET_STEP, ConversationScreens, LoadStatus, Screen};

/// `>` and `<` move a memory's message window (Langflow's `n_messages`) by this much.
pub const HISTORY_STEP: u32 = 10;

pub(super) fn session_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    if state.session.is_none() {
        state.screen = Screen::Conversations;
        return;
    }
    if budget_panel_action(state, action) {
        return;
    }
    let Some(session) = state.session.as_mut() else {
        return;
    };
    let count = session.view.as_ref().map_or(0, |v| v.messages.len());
    if let Some(selected) = moved(session.selected, count, action) {
        session.selected = selected;
        return;
    }
    match action {
        Action::Back => super::back::go_back(state),
        Action::Refresh => reopen(state, effects),
        Action::NextView => next_view(state, effects),
        Action::Undo => super::session_trim::ask_to_undo(state),
        Action::HistoryUp | Action::HistoryDown => change_history(state, action, effects),
        Action::BudgetUp | Action::BudgetDown => {
            let step = if action == Action::BudgetUp {
                BUDGET_STEP
            } else {
                -BUDGET_STEP
            };
            set_budget(state, state.settings.budget + step);
            recompute_session_budget(state, effects);
        }
        Action::NextModel => settings::next_model(state, effects),
        Action::NextCounter => settings::next_counter(state, effects),
        Action::NextEncoding => settings::next_encoding(state, effects),
        Action::TrimPreview => trim::open_for_session(state, effects),
        // A thread's tree is its checkpoints, with their own screen; any other session's is
        // what `thread` draws.
        Action::Open => match state.conversation_screens {
            ConversationScreens::CheckpointThread => {
                let id = session.key.id.clone();
                super::checkpoints::open_thread(state, id, effects);
            }
            ConversationScreens::Messages | ConversationScreens::TurnTree => {
                super::tree_screen::open(state, effects);
            }
        },
        _ => {}
    }
}

/// `v`: the conversation's next view (an advanced session's next branch), read as the model
/// is fed it there.
fn next_view(state: &mut AppState, effects: &mut Vec<Effect>) {
    let noun = state.noun;
    let Some(session) = state.session.as_mut() else {
        return;
    };
    let Some(views) = session.view.as_ref().and_then(|v| v.views.clone()) else {
        state.message = Some(format!(
            "this {noun} has one history: there is no other view to switch to"
        ));
        return;
    };
    session.key.view = views.next(session.key.view.as_deref()).map(str::to_owned);
    state.message = Some(views.describe(session.key.view.as_deref()));
    reopen(state, effects);
}

/// `>` or `<`: the memory reads more or fewer messages where it has a window (Langflow's
/// Agent, `n_messages`); other memories have none, and the key says so.
fn change_history(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let noun = state.noun;
    let Some(session) = state.session.as_mut() else {
        return;
    };
    let Some(view) = &session.view else {
        state.message = Some("the conversation is still loading".to_owned());
        return;
    };
    let Some(window) = view.memory.window() else {
        state.message = Some(format!(
            "this {noun}'s memory has no message window: the model is fed what the budget \
             panel shows"
        ));
        return;
    };
    let now = session.window.unwrap_or(window.default);
    let moved = match action {
        Action::HistoryUp => now.saturating_add(HISTORY_STEP),
        _ => now.saturating_sub(HISTORY_STEP),
    };
    session.window = Some(moved);
    state.message = Some(format!(
        "{} {moved}: {}",
        window.name,
        (window.describe)(moved)
    ));
    recompute_session_budget(state, effects);
}

/// The conversation arrived: its budget is counted next.
pub(super) fn session_loaded(
    state: &mut AppState,
    result: Result<Arc<OpenConversation>, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(session) = state.session.as_mut() else {
        return false;
    };
    match result {
        Ok(view) => {
            session.selected = session.selected.min(view.messages.len().saturating_sub(1));
            session.view = Some(view);
            session.status = LoadStatus::Loaded;
            recompute_session_budget(state, effects);
        }
        Err(error) => {
            // Nothing left to count: the spinner stops with the load.
            session.budget_status = LoadStatus::Failed(error.clone());
            session.status = LoadStatus::Failed(error);
        }
    }
    true
}

pub(super) fn budget_computed(
    state: &mut AppState,
    result: Result<Box<FedHistory>, String>,
) -> bool {
    let Some(session) = state.session.as_mut() else {
        return false;
    };
    session
        .budget_status
        .settle(&mut session.budget, result.map(|budget| *budget));
    true
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
