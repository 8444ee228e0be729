//! The loads of a LangGraph thread's shown checkpoint: read when the selection moves, counted
//! again when the counter or the budget changes.

use super::checkpoint_jobs::CheckpointLoad;
use super::effect::Effect;
use crate::tui::state::{AppState, LoadStatus};

/// Asks for the selected checkpoint: it replaces the shown one when it arrives, and any answer
/// for an earlier selection is dropped.
pub(super) fn show_selected(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let counter = state.settings.counter();
    let max_tokens = state.settings.budget;
    let Some(thread) = state.checkpoints.as_mut() else {
        return;
    };
    let Some((namespace, line)) = thread.selected() else {
        return;
    };
    let load = CheckpointLoad::Checkpoint {
        thread_id: thread.thread_id.clone(),
        namespace: namespace.to_owned(),
        checkpoint_id: line.id.clone(),
        counter,
        max_tokens,
    };
    thread.shown_generation = generation;
    thread.shown_status = LoadStatus::Loading;
    effects.push(Effect::load(generation, load));
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
    let load = CheckpointLoad::Count {
        state: shown.state.clone(),
        counter,
        max_tokens,
    };
    thread.shown_generation = generation;
    thread.shown_status = LoadStatus::Loading;
    effects.push(Effect::load(generation, load));
}
