//! An open session or thread: its messages in order, and beside them what the model is fed,
//! with the budget keys, Langflow's `n_messages` and the trim preview over that history.

use std::sync::Arc;

use super::budget::{budget_panel_action, recompute_session_budget, set_budget};
use super::effect::Effect;
use super::selection::moved;
use super::session_effects::SessionLoad;
use super::{settings, trim};
use crate::inspect::session_budget::SessionBudget;
use crate::inspect::sessions::SessionView;
use crate::store::ConversationShape;
use crate::tui::action::Action;
use crate::tui::state::{AppState, BUDGET_STEP, LoadStatus, Screen};

/// `>` and `<` move Langflow's `n_messages` by this much.
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
        Action::Back => {
            state.screen = match session.back_to {
                Screen::Doctor if state.doctor.is_none() => Screen::Conversations,
                back => back,
            };
        }
        Action::Refresh => {
            let generation = state.generation();
            let Some(session) = state.session.as_mut() else {
                return;
            };
            session.generation = generation;
            session.status = LoadStatus::Loading;
            let key = session.key.clone();
            effects.push(Effect::load(generation, SessionLoad::Open { key }));
        }
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
        Action::Open => match state.shape {
            ConversationShape::CheckpointThreads => {
                let id = session.key.id.clone();
                super::checkpoints::open_thread(state, id, effects);
            }
            ConversationShape::FlowSessions | ConversationShape::RegenerationTrees => {
                state.message = Some(
                    "a Langflow session is one log: there is no checkpoint tree to open".to_owned(),
                );
            }
        },
        _ => {}
    }
}

/// `>` or `<`: Langflow's Agent reads `n_messages` more or fewer; other histories have no
/// message window, and the key says so.
fn change_history(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(session) = state.session.as_mut() else {
        return;
    };
    let Some(view) = &session.view else {
        state.message = Some("the conversation is still loading".to_owned());
        return;
    };
    if !view.has_message_window() {
        state.message = Some(
            "n_messages is the Langflow Agent's: a LangGraph thread's model is fed its whole \
             messages channel"
                .to_owned(),
        );
        return;
    }
    session.n_messages = match action {
        Action::HistoryUp => session.n_messages.saturating_add(HISTORY_STEP),
        _ => session.n_messages.saturating_sub(HISTORY_STEP),
    };
    state.message = Some(match session.n_messages {
        0 => "n_messages 0: the Agent's memory is off, nothing is fed".to_owned(),
        n => format!("n_messages {n}: the Agent reads the newest {n} messages"),
    });
    recompute_session_budget(state, effects);
}

/// The conversation arrived: its budget is counted next.
pub(super) fn session_loaded(
    state: &mut AppState,
    result: Result<Arc<SessionView>, String>,
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
    result: Result<Box<SessionBudget>, String>,
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
