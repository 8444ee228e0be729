//! A LangGraph thread's screen: opening it on its latest checkpoint, moving in the checkpoint
//! tree (each move asks for the selected checkpoint, only that one decoded), the budget keys,
//! the node writes (`o`), and the results of its jobs.

use super::checkpoint_jobs::{
    CheckpointLoad, CheckpointLoaded, CheckpointWrite, CheckpointWritten,
};
use super::checkpoint_loads::{recount, show_selected};
use super::conversation;
use super::effect::Effect;
use super::{checkpoint_prune, checkpoint_writes};
use super::{open_session, settings};
use crate::sources::opened::ConversationKey;
use crate::tui::action::Action;
use crate::tui::state::checkpoints::{CheckpointPane, CheckpointsState};
use crate::tui::state::{
    AppState, BUDGET_STEP, ConversationScreens, LoadStatus, MAX_BUDGET, Screen,
};

/// Opens `thread_id`: its tree loads, then its latest checkpoint. Esc goes back where it was
/// opened from (opened again from its own screen, where that was).
pub(super) fn open_thread(state: &mut AppState, thread_id: String, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let back_to = match (state.screen, state.checkpoints.as_ref()) {
        (Screen::Checkpoints, Some(open)) => open.back_to,
        (Screen::Session | Screen::Doctor, _) => state.screen,
        _ => Screen::Conversations,
    };
    state.checkpoints = Some(CheckpointsState::new(
        thread_id.clone(),
        generation,
        back_to,
    ));
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
        Action::Back => return super::back::go_back(state),
        Action::BudgetUp => return set_budget(state, state.settings.budget + BUDGET_STEP, effects),
        Action::BudgetDown => {
            return set_budget(state, state.settings.budget - BUDGET_STEP, effects);
        }
        Action::TrimPreview => return super::trim::open_for_checkpoint(state, effects),
        Action::Undo => {
            let id = thread.thread_id.clone();
            return checkpoint_writes::ask_to_undo(state, id, effects);
        }
        Action::Prune => {
            let id = thread.thread_id.clone();
            return checkpoint_prune::ask(state, id, effects);
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

/// Opens a conversation as the database keeps them (`:conv ID`): a LangGraph thread on its
/// checkpoint tree, a Langflow session as the log its flow's Agent reads (a session id several
/// flows use says so and names them), a Dify conversation on its regeneration tree.
pub(super) fn open_any_conversation(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    match state.conversation_screens {
        ConversationScreens::CheckpointThread => open_thread(state, id, effects),
        ConversationScreens::Messages => {
            let key = ConversationKey::new(id);
            open_session::open_session(state, key, Screen::Conversations, effects)
        }
        ConversationScreens::TurnTree => conversation::open_conversation(state, id, effects),
    }
}

/// A polling tick on a loaded tree: the tree is read again, as the thread list is, and a change
/// another process made (a new checkpoint, a prune) shows.
pub(super) fn poll(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let Some(thread) = state.checkpoints.as_mut() else {
        return;
    };
    if thread.status != LoadStatus::Loaded || thread.tree.is_none() {
        return;
    }
    thread.generation = generation;
    let thread_id = thread.thread_id.clone();
    effects.push(Effect::load(generation, CheckpointLoad::Tree { thread_id }));
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
    // A tree already shown was read again by a poll.
    let polled = thread.tree.is_some();
    match report {
        CheckpointLoaded::Tree(Ok(tree)) if polled => {
            if !thread.refresh_tree(tree) {
                return false;
            }
            show_selected(state, effects);
        }
        CheckpointLoaded::Tree(Ok(tree)) => {
            thread.set_tree(tree);
            show_selected(state, effects);
        }
        // A poll that failed (the database busy a moment) leaves the tree shown as it was.
        CheckpointLoaded::Tree(Err(_)) if polled => return false,
        CheckpointLoaded::Tree(Err(error)) => thread.status = LoadStatus::Failed(error),
        CheckpointLoaded::Shown(result) => {
            let result = result.map(|shown| *shown);
            thread.shown_status.settle(&mut thread.shown, result);
            // Another checkpoint's messages: the search finds its matches among them, and the
            // pane shows the newest until it goes to one.
            thread.message_at = None;
            super::search::reapply(state, super::search::View::Checkpoint);
        }
    }
    true
}

/// A write finished: it says what it did, the open thread it changed opens again on its
/// (new) latest checkpoint, and after a prune the thread list is read again.
pub(super) fn written(
    state: &mut AppState,
    written: CheckpointWritten,
    effects: &mut Vec<Effect>,
) -> bool {
    let CheckpointWritten { write, result } = written;
    state.message = Some(match result {
        Ok(done) => done,
        Err(error) => format!("write failed: {error}"),
    });
    let changed = state
        .checkpoints
        .as_ref()
        .map(|t| t.thread_id.clone())
        .filter(|id| write.changes(id));
    if let Some(thread_id) = changed {
        let screen = state.screen;
        open_thread(state, thread_id, effects);
        state.screen = screen;
    }
    if matches!(
        write,
        CheckpointWrite::Prune { .. } | CheckpointWrite::Restore { .. }
    ) {
        effects.push(super::list_query::reload_list(state, false));
    }
    true
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;
