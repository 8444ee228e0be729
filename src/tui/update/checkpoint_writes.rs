//! A LangGraph thread's writes from the TUI: a trim preview's removals written as the checkpoint
//! `update_state` with `RemoveMessage`s writes, and `u`'s undo of the thread's trim or last
//! prune, each after a confirmation.

use super::effect::{Effect, Load};
use crate::format::{noun, thousands};
use crate::tui::state::checkpoints::{CheckpointWrite, CheckpointsState};
use crate::tui::state::confirm::{Confirm, PendingWrite};
use crate::tui::state::prune::{UndoAsk, UndoPlan};
use crate::tui::state::trim::TrimState;
use crate::tui::state::{AppState, ConversationScreens, Overlay};

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
        Ok(confirm) => state.overlay = Overlay::Confirm(confirm),
        Err(why) => state.message = Some(why),
    }
}

/// The confirmation of the preview's plan, or why it cannot be written.
fn removal(trim: &TrimState, thread: &CheckpointsState) -> Result<Confirm, String> {
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
        .filter(|m| m.prompt.is_some())
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
    Ok(Confirm {
        question,
        write: PendingWrite::Checkpoint(CheckpointWrite::Trim {
            thread_id: thread.thread_id.clone(),
            checkpoint_id: shown.state.checkpoint_id.clone(),
            remove,
        }),
    })
}

/// `u` on thread `thread_id`: what it undoes is looked for off the UI thread (memscope's trim
/// when it is the thread's latest checkpoint, else the thread's last prune), then asked.
pub(super) fn ask_to_undo(state: &mut AppState, thread_id: String, effects: &mut Vec<Effect>) {
    if state.conversation_screens != ConversationScreens::CheckpointThread {
        state.message = Some("only a LangGraph thread has a trim or a prune to undo".to_owned());
        return;
    }
    let generation = state.generation();
    state.undo = Some(UndoAsk {
        thread_id: thread_id.clone(),
        generation,
    });
    state.message = Some(format!("looking for what to undo on thread {thread_id}…"));
    effects.push(Effect::load(generation, Load::Undo { thread_id }));
}

/// What `u` undoes arrived: its confirmation, or on a read-only database what it would do.
pub(super) fn undo_planned(state: &mut AppState, result: Result<UndoPlan, String>) -> bool {
    let Some(UndoAsk { thread_id, .. }) = state.undo.take() else {
        return false;
    };
    let confirm = match result {
        Err(error) => {
            state.message = Some(format!("nothing to undo on thread {thread_id}: {error}"));
            return true;
        }
        Ok(UndoPlan::Trim) if state.read_only => {
            state.message = Some(READ_ONLY.to_owned());
            return true;
        }
        Ok(UndoPlan::Trim) => Confirm {
            question: format!(
                "Undo memscope's trim of thread {thread_id}? Its latest checkpoint, the trim's, \
                 is deleted with its writes, when no run started from it."
            ),
            write: PendingWrite::Checkpoint(CheckpointWrite::Undo { thread_id }),
        },
        Ok(UndoPlan::Restore(archive)) => {
            let what = format!(
                "{} {} ({} {} with their writes and blobs) of {} from {}",
                thousands(archive.checkpoints as u64),
                noun(archive.checkpoints as u64, "checkpoint"),
                thousands(archive.rows as u64),
                noun(archive.rows as u64, "row"),
                threads(&archive.threads),
                archive.path.display()
            );
            if state.read_only {
                state.message = Some(format!(
                    "undoing thread {thread_id}'s last prune would put back {what}; memscope \
                     opened this database without --write: start it with --write to restore"
                ));
                return true;
            }
            Confirm {
                question: format!(
                    "Undo the last prune of thread {thread_id}? This puts back {what}, into the \
                     database it was pruned from only, and only once."
                ),
                write: PendingWrite::Checkpoint(CheckpointWrite::Restore {
                    thread_id,
                    archive: archive.path,
                }),
            }
        }
    };
    state.overlay = Overlay::Confirm(confirm);
    true
}

/// The threads an archive holds: "thread a", "2 threads (a, b)".
fn threads(threads: &[String]) -> String {
    match threads {
        [one] => format!("thread {one}"),
        many => format!(
            "{} {} ({})",
            thousands(many.len() as u64),
            noun(many.len() as u64, "thread"),
            many.join(", ")
        ),
    }
}

#[cfg(test)]
#[path = "checkpoint_undo_tests.rs"]
mod tests;
