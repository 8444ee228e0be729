//! `u` on a LangGraph thread: it asks the job runner what to undo (memscope's trim when it is
//! the thread's latest checkpoint, else the thread's last prune), then asks first; a read-only
//! database says what would be put back and that `--write` is needed.

use std::path::PathBuf;

use super::super::checkpoints::open_thread;
use super::super::test_support::{key, state};
use super::*;
use crate::sources::checkpoint_prune::ArchivedPrune;
use crate::sources::conversation::{Extra, ListedConversation};
use crate::tui::state::Screen;
use crate::tui::update::checkpoint_jobs::CheckpointWritten;
use crate::tui::update::effect::{JobEvent, LoadReport, Stamped};
use crate::tui::update::{Event, update};

const ARCHIVE: &str =
    "/home/ada/.local/share/memscope/langgraph-archives/prune-20260301T101500.000000Z.jsonl";

/// A LangGraph database's state with thread `agent` open on its checkpoint tree.
fn on_tree(read_only: bool) -> AppState {
    let mut state = state();
    state.read_only = read_only;
    state.conversation_screens = ConversationScreens::CheckpointThread;
    open_thread(&mut state, "agent".to_owned(), &mut Vec::new());
    state
}

/// The one undo asked for among `effects`: `(generation, thread)`.
fn undo_asked(effects: &[Effect]) -> (u64, String) {
    match effects {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Undo { thread_id },
            }),
        ] => (*generation, thread_id.clone()),
        other => panic!("expected one undo asked: {other:?}"),
    }
}

fn archived() -> ArchivedPrune {
    ArchivedPrune {
        path: PathBuf::from(ARCHIVE),
        threads: vec!["agent".to_owned()],
        checkpoints: 1_204,
        rows: 3_611,
    }
}

fn found(generation: u64, result: Result<UndoPlan, String>) -> Event {
    Event::Job(JobEvent::load(generation, LoadReport::Undo(result)))
}

fn question(state: &AppState) -> &str {
    match &state.overlay {
        Overlay::Confirm(confirm) => &confirm.question,
        other => panic!("expected a confirmation: {other:?}"),
    }
}

#[test]
fn u_on_a_pruned_thread_asks_to_put_its_last_prune_back_and_yes_restores_it() {
    let mut state = on_tree(false);
    let effects = update(&mut state, key('u'));
    let (generation, thread) = undo_asked(&effects);
    assert_eq!(thread, "agent");
    assert_eq!(
        state.overlay,
        Overlay::None,
        "nothing asked before it is known"
    );
    update(
        &mut state,
        found(generation, Ok(UndoPlan::Restore(archived()))),
    );
    assert_eq!(
        question(&state),
        format!(
            "Undo the last prune of thread agent? This puts back 1,204 checkpoints (3,611 rows \
             with their writes and blobs) of thread agent from {ARCHIVE}, into the database it \
             was pruned from only, and only once."
        )
    );
    let effects = update(&mut state, key('y'));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Checkpoints(CheckpointWrite::Restore { thread_id, archive })]
                if thread_id == "agent" && archive == &PathBuf::from(ARCHIVE)
        ),
        "{effects:?}"
    );
    assert_eq!(state.overlay, Overlay::None);
}

#[test]
fn u_undoes_memscope_s_trim_when_it_is_the_latest_checkpoint() {
    let mut state = on_tree(false);
    let (generation, _) = undo_asked(&update(&mut state, key('u')));
    update(&mut state, found(generation, Ok(UndoPlan::Trim)));
    assert!(
        question(&state).starts_with("Undo memscope's trim of thread agent?"),
        "{}",
        question(&state)
    );
    let effects = update(&mut state, key('y'));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Checkpoints(CheckpointWrite::Undo { thread_id })] if thread_id == "agent"
    ));
}

#[test]
fn a_read_only_database_says_what_u_would_put_back_and_that_write_is_needed() {
    let mut state = on_tree(true);
    let (generation, _) = undo_asked(&update(&mut state, key('u')));
    update(
        &mut state,
        found(generation, Ok(UndoPlan::Restore(archived()))),
    );
    assert_eq!(state.overlay, Overlay::None);
    assert_eq!(
        state.message,
        Some(format!(
            "undoing thread agent's last prune would put back 1,204 checkpoints (3,611 rows \
             with their writes and blobs) of thread agent from {ARCHIVE}; memscope opened this \
             database without --write: start it with --write to restore"
        ))
    );
}

#[test]
fn nothing_to_undo_says_why_and_an_overtaken_answer_is_dropped() {
    let mut state = on_tree(false);
    let (first, _) = undo_asked(&update(&mut state, key('u')));
    let (second, _) = undo_asked(&update(&mut state, key('u')));
    update(&mut state, found(first, Ok(UndoPlan::Trim)));
    assert_eq!(
        state.overlay,
        Overlay::None,
        "the first answer was overtaken"
    );
    update(
        &mut state,
        found(second, Err("no archive holds a prune of it".to_owned())),
    );
    assert_eq!(
        state.message.as_deref(),
        Some("nothing to undo on thread agent: no archive holds a prune of it")
    );
    assert_eq!(state.overlay, Overlay::None);
}

#[test]
fn u_on_the_thread_list_asks_for_the_selected_thread_and_a_langflow_list_has_none() {
    let mut state = state();
    state.conversation_screens = ConversationScreens::CheckpointThread;
    let listed = |state: &mut AppState| {
        state.list.rows = vec![ListedConversation {
            id: "agent".to_owned(),
            title: None,
            messages: Some(4),
            last_activity: None,
            deleted: false,
            problem: None,
            extra: Extra::new(),
            scope: None,
        }];
    };
    listed(&mut state);
    assert_eq!(state.screen, Screen::Conversations);
    let (_, thread) = undo_asked(&update(&mut state, key('u')));
    assert_eq!(thread, "agent");

    let mut flows = super::super::test_support::state();
    flows.conversation_screens = ConversationScreens::Messages;
    listed(&mut flows);
    let effects = update(&mut flows, key('u'));
    assert!(effects.is_empty(), "{effects:?}");
    assert!(flows.undo.is_none());
}

#[test]
fn a_restore_reloads_the_thread_and_the_list_and_a_refusal_says_why() {
    let mut state = on_tree(false);
    let write = CheckpointWrite::Restore {
        thread_id: "agent".to_owned(),
        archive: PathBuf::from(ARCHIVE),
    };
    let effects = update(
        &mut state,
        Event::Job(JobEvent::Checkpoints(CheckpointWritten {
            write: write.clone(),
            result: Ok("undid thread agent's last prune: restored 3,611 rows".to_owned()),
        })),
    );
    let loads = |kind: fn(&Load) -> bool| {
        effects
            .iter()
            .any(|e| matches!(e, Effect::Load(Stamped { value, .. }) if kind(value)))
    };
    assert!(loads(|l| matches!(l, Load::Checkpoints(_))));
    assert!(loads(|l| matches!(l, Load::List(_))));
    let why = format!(
        "the rows of {ARCHIVE} are in this database already (it was restored before): nothing \
         was written"
    );
    update(
        &mut state,
        Event::Job(JobEvent::Checkpoints(CheckpointWritten {
            write,
            result: Err(why.clone()),
        })),
    );
    assert_eq!(state.message, Some(format!("write failed: {why}")));
}
