//! A LangGraph thread in the TUI: its checkpoint tree beside the selected checkpoint's messages
//! or node writes, and the prune popup (`P`) over it, drawn into a TestBackend at two sizes and
//! compared with insta snapshots. The
//! state is driven through `update` as the app drives it, with job results delivered by hand.

#[macro_use]
mod tui_support;

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::KeyCode;
use memscope::sources::checkpoint_history::{
    CheckpointHistory, CheckpointState, NodeWrite, ThreadTree,
};
use memscope::sources::checkpoint_prune::{PrunePlan, ThreadPrune};
use memscope::sources::langgraph::checkpoint_tree;
use memscope::sources::langgraph::decode::message::{LangChainMessage, LangChainToolCall};
use memscope::sources::langgraph::decode::tree::{CheckpointRow, CheckpointTree, TaskRow};
use memscope::sources::langgraph::restore::restore_command;
use memscope::sources::langgraph::thread_history::{ThreadHistories, checkpoint_message};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::ConversationScreens;
use memscope::tui::state::checkpoints::ShownCheckpoint;
use memscope::tui::state::prune::PlannedPrune;
use memscope::tui::state::{AppState, Overlay, Settings};
use memscope::tui::update::{
    CheckpointLoad, CheckpointLoaded, Effect, Event, JobEvent, Load, LoadReport, Stamped, update,
};
use serde_json::json;
use tui_support::{code, key, screen_text};

/// LangGraph's ids are UUIDv6: they share their start and differ at the end.
fn id(n: u32) -> String {
    format!("1f0c8a2e-5b7d-6c{n:02x}-8000-00000000{n:04x}")
}

fn row(ns: &str, n: u32, parent: Option<u32>, source: &str, step: i64) -> CheckpointRow {
    CheckpointRow {
        checkpoint_ns: ns.to_owned(),
        checkpoint_id: id(n),
        parent_checkpoint_id: parent.map(id),
        metadata: json!({"source": source, "step": step, "parents": if ns.is_empty() { json!({}) } else { json!({"": id(3)}) }}),
    }
}

fn task(n: u32, node: &str) -> TaskRow {
    TaskRow {
        checkpoint_ns: String::new(),
        checkpoint_id: id(n),
        task_path: format!("~__pregel_pull, {node}"),
    }
}

/// A tool-using turn, a time-travel branch from its end, an operator's `update_state` on the
/// newest branch, and a subgraph run by the task that started from checkpoint 3.
fn thread_tree() -> ThreadTree {
    let rows = [
        row("", 1, None, "input", -1),
        row("", 2, Some(1), "loop", 0),
        row("", 3, Some(2), "loop", 1),
        row("", 4, Some(3), "loop", 2),
        row("", 5, Some(4), "input", 3),
        row("", 6, Some(5), "loop", 4),
        row("", 7, Some(4), "input", 3),
        row("", 8, Some(7), "loop", 4),
        row("", 9, Some(8), "update", 5),
        row("worker:7c1d", 20, None, "input", -1),
        row("worker:7c1d", 21, Some(20), "loop", 0),
    ];
    let tasks = [
        task(1, "__start__"),
        task(2, "agent"),
        task(3, "tools"),
        task(5, "agent"),
        task(7, "agent"),
    ];
    checkpoint_tree::thread_tree("support-42", &CheckpointTree::build(&rows, &tasks), None).unwrap()
}

fn message(kind: &str, text: &str) -> LangChainMessage {
    LangChainMessage {
        class: "Message".into(),
        kind: kind.into(),
        id: Some(format!("run-{kind}-{}", text.len())),
        content: json!(text),
        name: None,
        tool_calls: Vec::new(),
        tool_call_id: None,
        status: None,
        role: None,
        usage_metadata: None,
    }
}

fn messages() -> Vec<LangChainMessage> {
    let mut call = message("ai", "");
    call.tool_calls = vec![LangChainToolCall {
        id: Some("call_1".into()),
        name: "lookup".into(),
        args: json!({"query": "opening hours of the Lisbon store", "limit": 3}),
    }];
    let mut result = message(
        "tool",
        "The Lisbon store opens at 9:00 and closes at 19:00, Monday to Saturday; closed on Sundays and on public holidays.",
    );
    result.tool_call_id = Some("call_1".into());
    result.status = Some("success".into());
    vec![
        message("system", "You answer with the lookup tool."),
        message("human", "When does the store open?"),
        call,
        result,
        message("ai", "It opens at 9:00, Monday to Saturday."),
        message("human", "And on Sunday?"),
        message("ai", "Edited by an operator."),
    ]
}

fn checkpoint_state(n: u32) -> CheckpointState {
    CheckpointState {
        namespace: String::new(),
        checkpoint_id: id(n),
        ts: "2026-03-02T10:15:00.123456+00:00".to_owned(),
        messages: messages().iter().map(checkpoint_message).collect(),
        warnings: Vec::new(),
        writes: vec![
            NodeWrite {
                node: Some("agent".into()),
                task_path: "~__pregel_pull, agent".into(),
                task_id: "9a1b".into(),
                idx: 0,
                channel: "messages".into(),
                value: Ok(json!([{"content": "It opens at 9:00.", "type": "ai"}])),
            },
            NodeWrite {
                node: Some("agent".into()),
                task_path: "~__pregel_pull, agent".into(),
                task_id: "9a1b".into(),
                idx: 1,
                channel: "branch:to:tools".into(),
                value: Err("the value is pickled; memscope never runs pickle".into()),
            },
        ],
    }
}

/// A 60-token budget, so the thread shows a cut line.
fn settings() -> Settings {
    Settings {
        budget: 60,
        ..tui_support::settings()
    }
}

fn state() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/checkpoints.sqlite".to_owned(),
        true,
    );
    state.conversation_screens = ConversationScreens::CheckpointThread;
    state.keeps(&memscope::sources::langgraph::conversation::LangGraphThreads);
    state
}

fn tree_generation(effects: &[Effect]) -> u64 {
    match effects {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Checkpoints(CheckpointLoad::Tree { .. }),
            }),
        ] => *generation,
        other => panic!("expected the tree's load: {other:?}"),
    }
}

fn checkpoint_request(effects: &[Effect]) -> (u64, String) {
    effects
        .iter()
        .find_map(|effect| match effect {
            Effect::Load(Stamped {
                generation,
                value: Load::Checkpoints(CheckpointLoad::Checkpoint { checkpoint_id, .. }),
            }) => Some((*generation, checkpoint_id.clone())),
            _ => None,
        })
        .expect("a checkpoint is read")
}

/// Opens the thread with `:conv`; the tree arrives; returns the checkpoint load it asks for.
fn opened(state: &mut AppState) -> (u64, String) {
    key(state, ':');
    for c in "conv support-42".chars() {
        key(state, c);
    }
    let generation = tree_generation(&code(state, KeyCode::Enter));
    let effects = update(
        state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Tree(Ok(thread_tree())),
        )),
    );
    checkpoint_request(&effects)
}

fn deliver(state: &mut AppState, generation: u64, n: u32) {
    let checkpoint = Arc::new(checkpoint_state(n));
    let counter = state.settings.counter();
    let budget = ThreadHistories
        .budget(&checkpoint, &counter, state.settings.budget)
        .map_err(|e| e.to_string());
    update(
        state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Shown(Ok(Box::new(ShownCheckpoint {
                state: checkpoint,
                budget,
                max_tokens: state.settings.budget,
            }))),
        )),
    );
}

#[test]
fn a_thread_loading_then_its_tree_with_the_latest_checkpoint_s_messages() {
    let mut state = state();
    key(&mut state, ':');
    for c in "conv support-42".chars() {
        key(&mut state, c);
    }
    code(&mut state, KeyCode::Enter);
    snapshot!("thread_loading", &state);

    let mut state = self::state();
    let (generation, latest) = opened(&mut state);
    assert_eq!(latest, id(9), "a thread opens on its latest checkpoint");
    snapshot!("thread_reading_checkpoint", &state);
    deliver(&mut state, generation, 9);
    snapshot!("thread_messages", &state);
    let screen = screen_text(&state, 120, 32);
    assert!(screen.contains("★ latest"), "{screen}");
    assert!(
        screen.contains("↳ worker:"),
        "the subgraph under checkpoint 3: {screen}"
    );
    assert!(
        screen.contains("cut line"),
        "60 tokens cut the thread: {screen}"
    );
    let narrow = screen_text(&state, 80, 24);
    assert!(
        narrow.contains("budget 60 tokens: 63 before, 16 after;")
            && narrow.contains("4 of 7 messages dropped"),
        "at 80x24 the budget's numbers stay whole: {narrow}"
    );
}

#[test]
fn o_shows_the_node_writes_and_i_reads_tool_calls_whole() {
    let mut state = state();
    let (generation, _) = opened(&mut state);
    deliver(&mut state, generation, 9);
    key(&mut state, 'o');
    snapshot!("thread_writes", &state);
    key(&mut state, 'i');
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i opens the writes whole");
    };
    assert!(
        detail.text.contains("the value is pickled"),
        "{}",
        detail.text
    );
    code(&mut state, KeyCode::Esc);
    key(&mut state, 'o');
    key(&mut state, 'i');
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i opens the messages whole");
    };
    // Cut in the pane, whole here: the tool call's arguments and the whole tool result.
    assert!(
        detail
            .text
            .contains("\"query\": \"opening hours of the Lisbon store\""),
        "{}",
        detail.text
    );
    assert!(
        detail
            .text
            .contains("closed on Sundays and on public holidays.")
    );
    assert!(detail.text.contains("result of tool call call_1 (success)"));
    snapshot!("thread_messages_whole", &state);
}

#[test]
fn moving_up_the_tree_reads_that_checkpoint_and_a_failure_says_why() {
    let mut state = state();
    let (generation, _) = opened(&mut state);
    deliver(&mut state, generation, 9);
    let (generation, id_up) = checkpoint_request(&key(&mut state, 'k'));
    assert_eq!(id_up, id(8));
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Shown(Err(
                "checkpoint 1f0c…: LANGGRAPH_AES_KEY is not set".to_owned()
            )),
        )),
    );
    snapshot!("thread_checkpoint_failed", &state);
}

#[test]
fn t_previews_a_trim_of_the_shown_checkpoint_s_messages() {
    let mut state = state();
    let (generation, _) = opened(&mut state);
    deliver(&mut state, generation, 9);
    key(&mut state, 'T');
    assert_eq!(state.overlay, Overlay::Trim);
    let trim = state.trim.as_ref().unwrap();
    assert_eq!(trim.sessions.as_ref().unwrap().tokens.messages.len(), 7);
    // It opens on the cut the messages pane shows: trim_messages, last, start_on human,
    // include_system.
    snapshot!("thread_trim_preview", &state);
}

/// A plan for `P` on support-42 and two more threads (every thread, `a`): checkpoints deleted of
/// those there were, writes, blobs, bytes freed.
fn prune_plan(keep_last: usize) -> PlannedPrune {
    let thread =
        |thread_id: &str, before: usize, deleted: usize, writes: i64, bytes: i64| ThreadPrune {
            thread_id: thread_id.to_owned(),
            checkpoints_before: before,
            checkpoints: deleted,
            writes,
            blobs: 0,
            bytes,
        };
    let threads = vec![
        thread("support-42", 11, 11 - keep_last, 23, 1_482_113),
        thread("research-ada-0001", 260, 260 - keep_last, 912, 48_205_991),
        thread("research-ada-0002", 3, 3 - keep_last, 4, 9_310),
    ];
    let archive = PathBuf::from(
        "/home/ada/.local/share/memscope/langgraph-archives/prune-20260302T101500.123456Z.jsonl",
    );
    PlannedPrune {
        plan: PrunePlan {
            saver: "SqliteSaver",
            keep_last,
            before: None,
            checkpoints: threads.iter().map(|t| t.checkpoints).sum(),
            writes: threads.iter().map(|t| t.writes).sum(),
            blobs: 0,
            bytes: threads.iter().map(|t| t.bytes).sum(),
            threads,
        },
        restore: restore_command("sqlite:///data/checkpoints.sqlite", &archive),
        archive,
    }
}

fn plan_generation(effects: &[Effect]) -> u64 {
    match effects {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::PrunePlan { .. },
            }),
        ] => *generation,
        other => panic!("expected a prune plan: {other:?}"),
    }
}

#[test]
fn p_shows_the_prune_plan_with_its_archive_before_anything_is_deleted() {
    let mut state = state();
    state.read_only = false;
    let (generation, _) = opened(&mut state);
    deliver(&mut state, generation, 9);
    let planning = plan_generation(&key(&mut state, 'P'));
    snapshot!("thread_prune_planning", &state);
    let every_thread = plan_generation(&key(&mut state, 'a'));
    let keep_two = plan_generation(&key(&mut state, '+'));
    for (generation, keep_last) in [(planning, 1), (every_thread, 1), (keep_two, 2)] {
        update(
            &mut state,
            Event::Job(JobEvent::load(
                generation,
                LoadReport::PrunePlan(Ok(prune_plan(keep_last))),
            )),
        );
    }
    assert_eq!(state.overlay, Overlay::Prune);
    snapshot!("thread_prune_plan", &state);
}
