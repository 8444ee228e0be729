//! A LangGraph thread's writes from the TUI: a trim preview's removals written as the checkpoint
//! `update_state` with `RemoveMessage`s writes, and its undo, each after a confirmation.

use super::effect::Effect;
use crate::tui::action::Action;
use crate::tui::state::checkpoints::{CheckpointConfirm, CheckpointWrite, CheckpointsState};
use crate::tui::state::trim::TrimState;
use crate::tui::state::{AppState, Overlay};

/// What a write refused on a read-only database says.
pub(super) const READ_ONLY: &str = "read-only database: memscope opened it without --write, so \
     nothing is written to it (start memscope with --write to trim, undo or prune)";

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
    let system: String = trim
        .system_removals()
        .iter()
        .map(|r| format!(" It removes system message #{}: {}.", r.index, r.why))
        .collect();
    let question = format!(
        "Write this trim to thread {}? A new checkpoint after {} removes {} of its {}, \
         as update_state with RemoveMessage does; the stored checkpoints stay, and u undoes \
         it.{system}",
        thread.thread_id,
        shown.state.checkpoint_id,
        crate::format::thousands(remove.len() as u64),
        crate::format::count(seen.len() as u64, "message")
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
pub(super) fn ask_to_undo(state: &mut AppState) {
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
