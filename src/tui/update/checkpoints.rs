//! A LangGraph thread's screen: opening it on its latest checkpoint, moving in the checkpoint
//! tree (each move asks for the selected checkpoint, only that one decoded), the budget keys,
//! the node writes (`o`), and the results of its jobs.

use super::checkpoint_jobs::{CheckpointLoad, CheckpointLoaded, CheckpointWritten};
use super::effect::Effect;
use super::settings;
use crate::tui::action::Action;
use crate::tui::state::checkpoints::{
    CheckpointConfirm, CheckpointPane, CheckpointWrite, CheckpointsState,
};
use crate::tui::state::trim::TrimState;
use crate::tui::state::{AppState, BUDGET_STEP, LoadStatus, MAX_BUDGET, Overlay, Screen};

/// Opens `thread_id`: its tree loads, then its latest checkpoint.
pub(super) fn open_thread(state: &mut AppState, thread_id: String, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.checkpoints = Some(CheckpointsState::new(thread_id.clone(), generation));
    state.screen = Screen::Checkpoints;
    state.conversations_screen = Screen::Checkpoints;
    effects.push(Effect::load(generation, CheckpointLoad::Tree { thread_id }));
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
        Action::TrimPreview => return super::trim::open_for_checkpoint(state, effects),
        Action::Undo => return ask_to_undo(state),
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

/// A load's report, for the latest request (`loads.rs` dropped any other).
pub(super) fn on_load(
    state: &mut AppState,
    report: CheckpointLoaded,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(thread) = state.checkpoints.as_mut() else {
        return false;
    };
    match report {
        CheckpointLoaded::Tree(Ok(tree)) => {
            thread.set_tree(tree);
            show_selected(state, effects);
        }
        CheckpointLoaded::Tree(Err(error)) => thread.status = LoadStatus::Failed(error),
        CheckpointLoaded::Shown(result) => thread.shown_status.settle(&mut thread.shown, result),
    }
    true
}

/// A write finished: it says what it did, and the thread opens again on its (new) latest
/// checkpoint.
pub(super) fn written(
    state: &mut AppState,
    written: CheckpointWritten,
    effects: &mut Vec<Effect>,
) -> bool {
    let CheckpointWritten { thread_id, result } = written;
    state.message = Some(match result {
        Ok(done) => done,
        Err(error) => format!("write failed: {error}"),
    });
    if state
        .checkpoints
        .as_ref()
        .is_some_and(|t| t.thread_id == thread_id)
    {
        let screen = state.screen;
        open_thread(state, thread_id, effects);
        state.screen = screen;
    }
    true
}

/// What a write refused on a read-only database says.
const READ_ONLY: &str = "read-only database: memscope opened it without --write, so nothing is \
     written to it (start memscope with --write to trim or undo)";

/// `A` in the trim preview of a checkpoint: asks to write the plan's removals as the checkpoint
/// `update_state` with `RemoveMessage`s writes, after the thread's latest checkpoint.
pub(super) fn ask_to_apply_trim(state: &mut AppState) {
    let refusal = match (state.trim.as_ref(), state.checkpoints.as_ref()) {
        _ if state.read_only => Err(READ_ONLY.to_owned()),
        (Some(trim), Some(thread)) => removal(trim, thread),
        _ => return,
    };
    match refusal {
        Ok(confirm) => state.overlay = Overlay::ConfirmCheckpoint(confirm),
        Err(why) => state.message = Some(why),
    }
}

/// The confirmation of the preview's plan, or why it cannot be written.
fn removal(trim: &TrimState, thread: &CheckpointsState) -> Result<CheckpointConfirm, String> {
    let shown = thread
        .shown
        .as_ref()
        .ok_or("the checkpoint is still being read")?;
    let latest = thread.tree.as_ref().and_then(|t| t.latest.clone());
    if latest.as_deref() != Some(shown.state.checkpoint_id.as_str()) {
        return Err(
            "a trim is written after the thread's latest checkpoint: select it (L) and \
                    preview again"
                .to_owned(),
        );
    }
    let plan = match &trim.plan {
        Some(Ok(plan)) if !plan.is_noop() => plan,
        Some(Err(error)) => return Err(format!("no plan to apply: {error}")),
        _ => return Err("nothing to apply: the plan keeps every message".to_owned()),
    };
    if plan.modified().count() > 0 || plan.summary.is_some() {
        return Err(
            "this trim changes or adds messages; on a LangGraph thread apply writes \
                    removals only, as RemoveMessage does: drop those options"
                .to_owned(),
        );
    }
    // The plan's indices are those of the messages a model sees, in order.
    let seen: Vec<_> = shown
        .state
        .messages
        .iter()
        .filter(|m| m.role().is_some())
        .collect();
    let remove = plan
        .removed()
        .map(|(index, _)| seen.get(index).and_then(|m| m.id.clone()))
        .collect::<Option<Vec<String>>>()
        .ok_or("a message to remove has no id, so RemoveMessage cannot name it")?;
    let question = format!(
        "Write this trim to thread {}? A new checkpoint after {} removes {} of its {} messages, \
         as update_state with RemoveMessage does; the stored checkpoints stay, and u undoes it.",
        thread.thread_id,
        shown.state.checkpoint_id,
        remove.len(),
        seen.len()
    );
    Ok(CheckpointConfirm {
        question,
        write: CheckpointWrite::Trim {
            thread_id: thread.thread_id.clone(),
            checkpoint_id: shown.state.checkpoint_id.clone(),
            remove,
        },
    })
}

/// `u`: asks to delete memscope's trim checkpoint (the thread's latest).
fn ask_to_undo(state: &mut AppState) {
    if state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    let Some(thread) = state.checkpoints.as_ref() else {
        return;
    };
    let question = format!(
        "Undo memscope's trim of thread {}? Its latest checkpoint, the trim's, is deleted with \
         its writes, when no run started from it.",
        thread.thread_id
    );
    state.overlay = Overlay::ConfirmCheckpoint(CheckpointConfirm {
        question,
        write: CheckpointWrite::Undo {
            thread_id: thread.thread_id.clone(),
        },
    });
}

/// Yes writes and closes the preview; no goes back to where it was asked.
pub(super) fn confirm_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Overlay::ConfirmCheckpoint(confirm) = &state.overlay else {
        return;
    };
    match action {
        Action::Confirm => {
            let write = confirm.write.clone();
            state.overlay = Overlay::None;
            state.trim = None;
            state.message = Some("writing…".to_owned());
            effects.push(Effect::Checkpoints(write));
        }
        Action::Back => {
            state.overlay = if state.trim.is_some() {
                Overlay::Trim
            } else {
                Overlay::None
            };
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;
