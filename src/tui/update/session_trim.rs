//! A trim in place of an open session, where its source keeps sessions as a list memscope may
//! shorten (an OpenAI Agents SDK session): `A` in the session's trim preview reads what
//! `trim apply` would delete, then asks with those figures; yes deletes the older rows,
//! archived first; `u` asks to put the last trim's rows back. The command line does the same
//! through the same functions.

use super::effect::Effect;
use super::session_effects::{SessionLoad, TrimFigures, TrimWritten};
use crate::format::{count, thousands};
use crate::memory::trim::LimitType;
use crate::sources::stored_trim::Keep;
use crate::tui::state::confirm::{Confirm, PendingWrite, StoredTrimWrite};
use crate::tui::state::{AppState, Overlay};

/// What a write refused on a read-only database says.
const READ_ONLY: &str = "read-only database: memscope opened it without --write, so nothing \
     is written to it (start memscope with --write to trim a session or undo its trim)";

/// `A` in the trim preview of session `id`: the preview's policy says what to keep (its token
/// limit, or its message limit as items); the plan is read before the question.
pub(super) fn ask_to_apply(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    if state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    let Some(trim) = state.trim.as_ref() else {
        return;
    };
    if !trim.is_policy() {
        state.message = Some(
            "a session's trim keeps its newest items under a policy's limit: choose engine \
             policy (trim_messages is for previews)"
                .to_owned(),
        );
        return;
    }
    let policy = trim.policy();
    let keep = match policy.limit_type {
        LimitType::Tokens => Keep::MaxTokens(policy.max_tokens),
        LimitType::Messages => {
            Keep::Last(usize::try_from(policy.max_messages).unwrap_or(usize::MAX))
        }
    };
    let generation = state.generation();
    let Some(session) = state.session.as_mut() else {
        return;
    };
    session.trim_generation = generation;
    state.message = Some(format!("reading what a trim of session {id} would delete…"));
    let settings = state.settings.budget_settings();
    effects.push(Effect::load(
        generation,
        SessionLoad::TrimPlan { id, keep, settings },
    ));
}

/// The plan arrived: asked about with its figures, unless the preview was closed meanwhile.
pub(super) fn plan_arrived(state: &mut AppState, result: Result<TrimFigures, String>) -> bool {
    if state.overlay != Overlay::Trim {
        return false;
    }
    let figures = match result {
        Ok(figures) => figures,
        Err(error) => {
            state.message = Some(format!("no trim to apply: {error}"));
            return true;
        }
    };
    if figures.rows_deleted == 0 {
        state.message = Some(format!(
            "nothing to delete: session {} keeps {} already",
            figures.id,
            figures.keep.describe("item")
        ));
        return true;
    }
    let moved = match figures.moved {
        0 => String::new(),
        n => format!(
            " ({} beyond the limit, to keep each tool call with its output)",
            count(n as u64, "item")
        ),
    };
    let question = format!(
        "Trim session {} to {}? It deletes its {} oldest rows{moved}: {} items and {} tokens \
         become {} and {}. The rows are archived first, in one transaction; undo (u) puts \
         them back.",
        figures.id,
        figures.keep.describe("item"),
        thousands(figures.rows_deleted as u64),
        thousands(figures.items_before as u64),
        thousands(figures.tokens_before),
        thousands(figures.items_after as u64),
        thousands(figures.tokens_after),
    );
    state.message = None;
    state.overlay = Overlay::Confirm(Confirm {
        question,
        write: PendingWrite::StoredTrim(StoredTrimWrite::Apply {
            id: figures.id,
            keep: figures.keep,
            settings: state.settings.budget_settings(),
        }),
    });
    true
}

/// `u` in an open session its source trims in place: asks to put the last trim's rows back.
pub(super) fn ask_to_undo(state: &mut AppState) {
    let Some(session) = state.session.as_ref() else {
        return;
    };
    if !state.trims_in_place {
        state.message = Some(format!(
            "memscope does not trim this {} in place: there is no trim to undo",
            state.noun
        ));
        return;
    }
    if state.read_only {
        state.message = Some(READ_ONLY.to_owned());
        return;
    }
    let id = session.key.id.clone();
    state.overlay = Overlay::Confirm(Confirm {
        question: format!(
            "Undo memscope's last trim of session {id}? The rows it deleted are put back from \
             its archive, with their ids, in one transaction."
        ),
        write: PendingWrite::StoredTrim(StoredTrimWrite::Undo { id }),
    });
}

/// A trim or its undo is done: said, and the open session read again to show what is left.
pub(super) fn written(
    state: &mut AppState,
    written: TrimWritten,
    effects: &mut Vec<Effect>,
) -> bool {
    state.message = Some(match written.result {
        Ok(done) => done,
        Err(error) => format!("session {}: nothing was written: {error}", written.id),
    });
    if state
        .session
        .as_ref()
        .is_some_and(|s| s.key.id == written.id)
    {
        super::reopen::reopen(state, effects);
    }
    true
}
