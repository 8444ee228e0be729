//! A LangGraph thread's screen: opening it on its latest checkpoint, moving in the checkpoint
//! tree (each move asks for the selected checkpoint, only that one decoded), the budget keys,
//! the node writes (`o`), and the results of its jobs.

use super::checkpoint_jobs::{CheckpointEffect, CheckpointEvent};
use super::effect::Effect;
use super::settings;
use crate::tui::action::Action;
use crate::tui::state::checkpoints::{CheckpointPane, CheckpointsState};
use crate::tui::state::{AppState, BUDGET_STEP, LoadStatus, MAX_BUDGET, Screen, current};

/// Opens `thread_id`: its tree loads, then its latest checkpoint.
pub(super) fn open_thread(state: &mut AppState, thread_id: String, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.checkpoints = Some(CheckpointsState::new(thread_id.clone(), generation));
    state.screen = Screen::Checkpoints;
    state.conversations_screen = Screen::Checkpoints;
    effects.push(Effect::Checkpoints(CheckpointEffect::LoadTree {
        generation,
        thread_id,
    }));
}

pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(thread) = state.checkpoints.as_mut() else {
        return;
    };
    let moved = match action {
        Action::Up => thread.move_by(-1),
        Action::Down => thread.move_by(1),
        Action::PageUp => thread.move_by(-10),
        Action::PageDown => thread.move_by(10),
        Action::Top => thread.move_by(isize::MIN / 2),
        Action::Bottom => thread.move_by(isize::MAX / 2),
        Action::JumpLatest => thread.to_latest(),
        Action::ToggleNodes => {
            thread.pane = match thread.pane {
                CheckpointPane::Messages => CheckpointPane::Writes,
                CheckpointPane::Writes => CheckpointPane::Messages,
            };
            false
        }
        Action::Refresh => {
            let id = thread.thread_id.clone();
            open_thread(state, id, effects);
            return;
        }
        Action::Back => {
            state.screen = Screen::Conversations;
            state.conversations_screen = Screen::Conversations;
            return;
        }
        Action::BudgetUp => return set_budget(state, state.settings.budget + BUDGET_STEP, effects),
        Action::BudgetDown => {
            return set_budget(state, state.settings.budget - BUDGET_STEP, effects);
        }
        Action::NextModel => return settings::next_model(state, effects),
        Action::NextCounter => return settings::next_counter(state, effects),
        Action::NextEncoding => return settings::next_encoding(state, effects),
        _ => false,
    };
    if moved {
        show_selected(state, effects);
    }
}

fn set_budget(state: &mut AppState, budget: i64, effects: &mut Vec<Effect>) {
    state.settings.budget = budget.clamp(0, MAX_BUDGET);
    recount(state, effects);
}

/// Asks for the selected checkpoint: it replaces the shown one when it arrives, and any answer
/// for an earlier selection is dropped.
fn show_selected(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let counter = state.settings.counter();
    let max_tokens = state.settings.budget;
    let Some(thread) = state.checkpoints.as_mut() else {
        return;
    };
    let Some((namespace, line)) = thread.selected() else {
        return;
    };
    let effect = CheckpointEffect::LoadCheckpoint {
        generation,
        thread_id: thread.thread_id.clone(),
        namespace: namespace.to_owned(),
        checkpoint_id: line.id.clone(),
        counter,
        max_tokens,
    };
    thread.shown_generation = generation;
    thread.shown_status = LoadStatus::Loading;
    effects.push(Effect::Checkpoints(effect));
}

/// The counter or the budget changed: the shown checkpoint's messages are counted again, not
/// read again.
pub(super) fn recount(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let counter = state.settings.counter();
    let max_tokens = state.settings.budget;
    let Some(thread) = state.checkpoints.as_mut() else {
        return;
    };
    let Some(shown) = thread.shown.as_ref() else {
        return;
    };
    let effect = CheckpointEffect::Count {
        generation,
        state: shown.state.clone(),
        counter,
        max_tokens,
    };
    thread.shown_generation = generation;
    thread.shown_status = LoadStatus::Loading;
    effects.push(Effect::Checkpoints(effect));
}

pub(super) fn on_job(
    state: &mut AppState,
    event: CheckpointEvent,
    effects: &mut Vec<Effect>,
) -> bool {
    match event {
        CheckpointEvent::Tree { generation, result } => {
            let Some(thread) = current(state.checkpoints.as_mut(), generation, |t| t.generation)
            else {
                return false;
            };
            match result {
                Ok(tree) => {
                    thread.set_tree(tree);
                    show_selected(state, effects);
                }
                Err(error) => thread.status = LoadStatus::Failed(error),
            }
            true
        }
        CheckpointEvent::Shown { generation, result } => {
            let Some(thread) = current(state.checkpoints.as_mut(), generation, |t| {
                t.shown_generation
            }) else {
                return false;
            };
            thread.shown_status.settle(&mut thread.shown, result);
            true
        }
    }
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;
