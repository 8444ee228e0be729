use std::path::{Path, PathBuf};

use super::super::checkpoints::open_thread;
use super::super::test_support::{code, key, screen, state};
use super::*;
use crate::sources::checkpoint_prune::{PrunePlan, ThreadPrune};
use crate::sources::conversation::{Extra, ListedConversation};
use crate::tui::state::Screen;
use crate::tui::state::prune::PlannedPrune;
use crate::tui::update::checkpoint_jobs::CheckpointWritten;
use crate::tui::update::effect::{JobEvent, LoadReport, Stamped};
use crate::tui::update::{Event, update};
use crossterm::event::KeyCode;

const ARCHIVE: &str =
    "/home/ada/.local/share/memscope/langgraph-archives/prune-20260301T101500.000000Z.jsonl";

/// A writable LangGraph database's state with thread `agent` open on its checkpoint tree.
fn on_tree(read_only: bool) -> AppState {
    let mut state = state();
    state.read_only = read_only;
    state.conversation_screens = ConversationScreens::CheckpointThread;
    open_thread(&mut state, "agent".to_owned(), &mut Vec::new());
    state
}

/// A LangGraph database's thread list with `threads` listed, the first selected.
fn on_list(threads: &[&str]) -> AppState {
    let mut state = state();
    state.conversation_screens = ConversationScreens::CheckpointThread;
    state.list.rows = threads
        .iter()
        .map(|id| ListedConversation {
            id: (*id).to_owned(),
            title: None,
            messages: Some(4),
            last_activity: None,
            deleted: false,
            problem: None,
            extra: Extra::new(),
            scope: None,
        })
        .collect();
    state
}

/// The one prune plan asked for among `effects`: `(generation, threads, keep_last)`.
fn plan_asked(effects: &[Effect]) -> (u64, Vec<String>, usize) {
    match effects {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::PrunePlan { threads, keep_last },
            }),
        ] => (*generation, threads.clone(), *keep_last),
        other => panic!("expected one prune plan: {other:?}"),
    }
}

/// A plan deleting `deleted` of thread `agent`'s 9 checkpoints (none: an empty plan).
fn plan(keep_last: usize, deleted: usize) -> PlannedPrune {
    let threads = match deleted {
        0 => Vec::new(),
        n => vec![ThreadPrune {
            thread_id: "agent".to_owned(),
            checkpoints_before: 9,
            checkpoints: n,
            writes: 14,
            blobs: 0,
            bytes: 48_213,
        }],
    };
    PlannedPrune {
        plan: PrunePlan {
            saver: "SqliteSaver",
            keep_last,
            before: None,
            checkpoints: deleted,
            writes: if deleted > 0 { 14 } else { 0 },
            blobs: 0,
            bytes: if deleted > 0 { 48_213 } else { 0 },
            threads,
        },
        archive: PathBuf::from(ARCHIVE),
        restore: crate::sources::langgraph::restore::restore_command(
            "sqlite://test.db",
            Path::new(ARCHIVE),
        ),
    }
}

fn planned(generation: u64, planned: Result<PlannedPrune, String>) -> Event {
    Event::Job(JobEvent::load(generation, LoadReport::PrunePlan(planned)))
}

#[test]
fn a_read_only_database_shows_the_plan_then_yes_says_write_is_needed() {
    let mut state = on_tree(true);
    let (generation, threads, _) = plan_asked(&update(&mut state, key('P')));
    assert_eq!(threads, ["agent"]);
    update(&mut state, planned(generation, Ok(plan(1, 8))));
    let text = screen(&state);
    for shown in ["8 of 9", "48 kB", "opened read-only", "--write"] {
        assert!(text.contains(shown), "{shown:?} in\n{text}");
    }
    // No archive or restore command is offered for a prune that cannot run.
    assert!(!text.contains("checkpoints restore"), "{text}");
    let effects = update(&mut state, key('y'));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(state.message.as_deref(), Some(READ_ONLY));
    assert_eq!(state.overlay, Overlay::Prune, "the plan stays shown");
}

#[test]
fn p_on_the_tree_plans_the_thread_then_the_popup_shows_the_plan() {
    let mut state = on_tree(false);
    let (generation, threads, keep_last) = plan_asked(&update(&mut state, key('P')));
    assert_eq!(threads, ["agent"]);
    assert_eq!(keep_last, 1, "the CLI's --keep-last default");
    assert_eq!(state.overlay, Overlay::Prune);
    assert!(state.busy());
    assert!(screen(&state).contains("planning…"));

    update(&mut state, planned(generation, Ok(plan(1, 8))));
    let text = screen(&state);
    assert!(!text.contains("planning…"), "{text}");
    for shown in [
        "Prune thread agent, keeping its latest checkpoint",
        "8 of 9",
        "48 kB",
        "prune-20260301T101500.000000Z.jsonl",
        "checkpoints restore",
    ] {
        assert!(text.contains(shown), "{shown:?} in\n{text}");
    }
}

#[test]
fn an_empty_first_plan_says_there_is_nothing_to_prune_and_asks_nothing() {
    let mut state = on_tree(false);
    let (generation, _, _) = plan_asked(&update(&mut state, key('P')));
    update(&mut state, planned(generation, Ok(plan(1, 0))));
    assert_eq!(state.overlay, Overlay::None);
    assert!(state.prune.is_none());
    assert_eq!(
        state.message.as_deref(),
        Some("nothing to prune: thread agent has no checkpoint older than its latest checkpoint")
    );
}

#[test]
fn a_failed_plan_closes_the_popup_and_says_why() {
    let mut state = on_tree(false);
    let (generation, _, _) = plan_asked(&update(&mut state, key('P')));
    let delta = "thread agent uses a DeltaChannel, whose value is rebuilt from older \
                 checkpoints' writes: memscope does not prune it";
    update(&mut state, planned(generation, Err(delta.to_owned())));
    assert_eq!(state.overlay, Overlay::None);
    assert_eq!(
        state.message.as_deref(),
        Some(format!("cannot prune thread agent: {delta}").as_str())
    );
}

#[test]
fn keep_last_plans_again_and_the_overtaken_plan_is_dropped() {
    let mut state = on_tree(false);
    let (first, _, _) = plan_asked(&update(&mut state, key('P')));
    let (second, _, keep_last) = plan_asked(&update(&mut state, key('+')));
    assert_eq!(keep_last, 2);
    assert!(second > first);
    update(&mut state, planned(first, Ok(plan(1, 8))));
    let prune = state.prune.as_ref().unwrap();
    assert!(prune.planned.is_none(), "the plan for 1 came too late");
    assert!(prune.status.is_loading());
    update(&mut state, planned(second, Ok(plan(2, 7))));
    let prune = state.prune.as_ref().unwrap();
    assert_eq!(prune.planned.as_ref().unwrap().plan.keep_last, 2);
    assert_eq!(prune.status, LoadStatus::Loaded);

    // Down again, never below the latest checkpoint.
    let (_, _, keep_last) = plan_asked(&update(&mut state, key('-')));
    assert_eq!(keep_last, 1);
    assert!(update(&mut state, key('-')).is_empty());
    assert!(
        state
            .message
            .as_deref()
            .unwrap()
            .contains("at least its latest")
    );
}

#[test]
fn digits_type_how_many_each_thread_keeps() {
    let mut state = on_tree(false);
    update(&mut state, key('P'));
    let (_, _, keep_last) = plan_asked(&update(&mut state, key('2')));
    assert_eq!(keep_last, 2, "the first digit starts a new number");
    let (_, _, keep_last) = plan_asked(&update(&mut state, key('0')));
    assert_eq!(keep_last, 20);
    let (_, _, keep_last) = plan_asked(&update(&mut state, code(KeyCode::Backspace)));
    assert_eq!(keep_last, 2);
    assert!(update(&mut state, code(KeyCode::Backspace)).is_empty());
    assert_eq!(state.prune.as_ref().unwrap().keep_last, 2);
}

#[test]
fn yes_prunes_into_the_plans_archive_and_waits_for_a_plan_being_made() {
    let mut state = on_tree(false);
    let (generation, _, _) = plan_asked(&update(&mut state, key('P')));
    assert!(update(&mut state, key('y')).is_empty(), "no plan yet");
    assert_eq!(state.overlay, Overlay::Prune);
    update(&mut state, planned(generation, Ok(plan(1, 8))));
    let effects = update(&mut state, key('y'));
    let [Effect::Checkpoints(write)] = effects.as_slice() else {
        panic!("yes writes: {effects:?}");
    };
    assert_eq!(
        write,
        &CheckpointWrite::Prune {
            threads: vec!["agent".to_owned()],
            keep_last: 1,
            archive: PathBuf::from(ARCHIVE),
        }
    );
    assert_eq!(state.overlay, Overlay::None);
    assert!(state.prune.is_none());
    assert_eq!(state.message.as_deref(), Some("pruning…"));
}

#[test]
fn no_or_esc_closes_the_popup_and_a_late_plan_finds_nothing_to_answer() {
    for back in [key('n'), code(KeyCode::Esc)] {
        let mut state = on_tree(false);
        let (generation, _, _) = plan_asked(&update(&mut state, key('P')));
        assert!(update(&mut state, back).is_empty());
        assert_eq!(state.overlay, Overlay::None);
        assert!(state.prune.is_none());
        assert_eq!(state.screen, Screen::Checkpoints);
        update(&mut state, planned(generation, Ok(plan(1, 8))));
        assert_eq!(state.overlay, Overlay::None);
        assert!(state.message.is_none());
    }
}

#[test]
fn p_on_the_thread_list_prunes_the_selected_thread_and_a_toggles_every_thread() {
    let mut state = on_list(&["support", "agent"]);
    update(&mut state, key('j'));
    let (_, threads, _) = plan_asked(&update(&mut state, key('P')));
    assert_eq!(threads, ["agent"]);
    let (generation, threads, _) = plan_asked(&update(&mut state, key('a')));
    assert!(threads.is_empty(), "every thread");
    update(&mut state, planned(generation, Ok(plan(1, 8))));
    assert!(screen(&state).contains("Prune every thread"));
    let effects = update(&mut state, key('y'));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Checkpoints(CheckpointWrite::Prune { threads, .. })] if threads.is_empty()
    ));
}

#[test]
fn a_langflow_session_list_has_no_prune_key() {
    let mut state = on_list(&["s1"]);
    state.conversation_screens = ConversationScreens::Messages;
    assert!(update(&mut state, key('P')).is_empty());
    assert!(state.prune.is_none());
}

#[test]
fn the_prune_s_result_reloads_the_open_thread_and_the_list() {
    let mut state = on_tree(false);
    let write = CheckpointWrite::Prune {
        threads: vec!["agent".to_owned()],
        keep_last: 2,
        archive: PathBuf::from(ARCHIVE),
    };
    let done = format!("pruned 7 checkpoints …; archived in {ARCHIVE}");
    let effects = update(
        &mut state,
        Event::Job(JobEvent::Checkpoints(CheckpointWritten {
            write,
            result: Ok(done.clone()),
        })),
    );
    assert_eq!(state.message.as_deref(), Some(done.as_str()));
    assert_eq!(
        state.message_log.last(),
        Some(&done),
        "! shows the archive's path whole"
    );
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::Load(Stamped {
            value: Load::Checkpoints(_),
            ..
        })
    )));
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::Load(Stamped {
            value: Load::List(_),
            ..
        })
    )));
}

#[test]
fn a_failed_prune_says_why() {
    let mut state = on_tree(false);
    let write = CheckpointWrite::Prune {
        threads: vec!["agent".to_owned()],
        keep_last: 1,
        archive: PathBuf::from(ARCHIVE),
    };
    let why = format!("{ARCHIVE} exists already; name a new archive file");
    update(
        &mut state,
        Event::Job(JobEvent::Checkpoints(CheckpointWritten {
            write,
            result: Err(why.clone()),
        })),
    );
    assert_eq!(state.message, Some(format!("write failed: {why}")));
}
