//! `P`: a prune of a LangGraph database's older checkpoints, asked on a thread (the checkpoint
//! tree's, or the selected one of the thread list). Its plan is a load, made off the UI thread
//! and overtaken by the plan of a later rule; the popup shows it with the archive the rows will
//! go to, and yes runs the prune as a write, which archives every deleted row before it commits.

use crossterm::event::KeyCode;

use super::checkpoint_jobs::CheckpointWrite;
use super::checkpoint_writes::READ_ONLY;
use super::effect::{Effect, Load};
use crate::tui::action::Action;
use crate::tui::state::prune::{DEFAULT_KEEP_LAST, MAX_KEEP_LAST, PlannedPrune, PruneState};
use crate::tui::state::{AppState, ConversationScreens, LoadStatus, Overlay};

/// `P` on `thread_id`: the popup opens on "planning…" while the plan for the CLI's default
/// rule is made. A read-only database plans too (what a prune would delete and free); yes
/// then says `--write` is needed.
pub(super) fn ask(state: &mut AppState, thread_id: String, effects: &mut Vec<Effect>) {
    if state.conversation_screens != ConversationScreens::CheckpointThread {
        state.message = Some("only a LangGraph database has checkpoints to prune".to_owned());
        return;
    }
    state.prune = Some(PruneState::new(thread_id));
    state.overlay = Overlay::Prune;
    ask_for_plan(state, effects);
}

/// Asks for the plan of the rule now in the popup; a plan of an earlier rule is dropped.
fn ask_for_plan(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let Some(prune) = state.prune.as_mut() else {
        return;
    };
    prune.generation = generation;
    prune.status = LoadStatus::Loading;
    let load = Load::PrunePlan {
        threads: prune.threads(),
        keep_last: prune.keep_last,
    };
    effects.push(Effect::load(generation, load));
}

/// The latest plan arrived. A failure (a thread gone, one using a DeltaChannel, a failed read)
/// closes the popup and says why; so does an empty first plan, which has nothing to confirm.
pub(super) fn planned(state: &mut AppState, result: Result<PlannedPrune, String>) -> bool {
    let Some(prune) = state.prune.as_mut() else {
        return false;
    };
    match result {
        Err(error) => {
            let said = format!("cannot prune {}: {error}", prune.scope());
            close(state);
            state.message = Some(said);
        }
        Ok(planned) if planned.plan.threads.is_empty() && prune.planned.is_none() => {
            let said = prune.nothing_to_prune();
            close(state);
            state.message = Some(said);
        }
        Ok(planned) => {
            prune.planned = Some(planned);
            prune.status = LoadStatus::Loaded;
        }
    }
    true
}

fn close(state: &mut AppState) {
    state.prune = None;
    if state.overlay == Overlay::Prune {
        state.overlay = Overlay::None;
    }
}

/// Keys in the popup: the rule's keys plan again, yes prunes, no closes.
pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(prune) = state.prune.as_mut() else {
        state.overlay = Overlay::None;
        return;
    };
    prune.typing = false;
    match action {
        Action::Increase => {
            let more = prune.keep_last.saturating_add(1).min(MAX_KEEP_LAST);
            set_keep_last(state, more, effects);
        }
        Action::Decrease => {
            let fewer = prune.keep_last.saturating_sub(1);
            set_keep_last(state, fewer, effects);
        }
        Action::ToggleEveryThread => {
            prune.every_thread = !prune.every_thread;
            ask_for_plan(state, effects);
        }
        Action::Confirm => confirm(state, effects),
        Action::Back => close(state),
        _ => {}
    }
}

/// Digits type how many checkpoints each thread keeps (the first digit starts a new number),
/// backspace removes the last one. `false`: not a key of this field.
pub(super) fn type_key(state: &mut AppState, key: KeyCode, effects: &mut Vec<Effect>) -> bool {
    let Some(prune) = state.prune.as_mut() else {
        return false;
    };
    let keep_last = match key {
        KeyCode::Char(c @ '0'..='9') => {
            let digit = c as usize - '0' as usize;
            let kept = if prune.typing { prune.keep_last } else { 0 };
            kept.saturating_mul(10)
                .saturating_add(digit)
                .min(MAX_KEEP_LAST)
        }
        KeyCode::Backspace => prune.keep_last / 10,
        _ => return false,
    };
    prune.typing = true;
    set_keep_last(state, keep_last, effects);
    true
}

/// A new rule, planned again; never below the latest checkpoint, the one `get_state` reads.
fn set_keep_last(state: &mut AppState, keep_last: usize, effects: &mut Vec<Effect>) {
    let Some(prune) = state.prune.as_mut() else {
        return;
    };
    if keep_last < DEFAULT_KEEP_LAST {
        state.message = Some(
            "each thread keeps at least its latest checkpoint, the one get_state reads".to_owned(),
        );
        return;
    }
    if keep_last != prune.keep_last {
        prune.keep_last = keep_last;
        ask_for_plan(state, effects);
    }
}

/// Yes: the prune the shown plan describes, written into the plan's archive.
fn confirm(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(prune) = state.prune.as_ref() else {
        return;
    };
    let planned = match (&prune.status, &prune.planned) {
        (LoadStatus::Loaded, Some(planned)) => planned,
        _ => {
            state.message = Some("the plan is being made: yes waits for it".to_owned());
            return;
        }
    };
    if planned.plan.threads.is_empty() {
        state.message = Some(format!("{}: keep fewer", prune.nothing_to_prune()));
        return;
    }
    if state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    let write = CheckpointWrite::Prune {
        threads: prune.threads(),
        keep_last: prune.keep_last,
        archive: planned.archive.clone(),
    };
    close(state);
    state.message = Some("pruning…".to_owned());
    effects.push(Effect::Checkpoints(write));
}

#[cfg(test)]
#[path = "checkpoint_prune_tests.rs"]
mod tests;
