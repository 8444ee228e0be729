use std::sync::Arc;

use super::super::test_support::{code, key, screen, state};
use super::*;
use crate::memory::trim::MessageCount;
use crate::sources::checkpoint_history::{
    CheckpointHistory, CheckpointMessage, CheckpointState, NodeWrite, ThreadTree,
};
use crate::sources::langgraph::checkpoint_tree;
use crate::sources::langgraph::decode::message::LangChainMessage;
use crate::sources::langgraph::decode::tree::CheckpointTree;
use crate::sources::langgraph::decode::tree_fixtures::{agent_rows_with_subgraph, task};
use crate::sources::langgraph::thread_history::{ThreadHistories, checkpoint_message};
use crate::tui::state::ConversationScreens;
use crate::tui::state::Overlay;
use crate::tui::state::checkpoints::ShownCheckpoint;
use crate::tui::update::{CheckpointLoad, CheckpointLoaded};
use crate::tui::update::{Event, JobEvent, Load, Stamped, update};
use crossterm::event::KeyCode;

fn thread_tree() -> ThreadTree {
    let tasks = [task("", "1-b", "~__pregel_pull, agent")];
    let tree = CheckpointTree::build(&agent_rows_with_subgraph(), &tasks);
    checkpoint_tree::thread_tree("agent", &tree, None).unwrap()
}

/// `(generation, namespace, checkpoint)` of the one checkpoint load among `effects`.
fn checkpoint_load(effects: &[Effect]) -> (u64, String, String) {
    let loads: Vec<_> = effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Load(Stamped {
                generation,
                value:
                    Load::Checkpoints(CheckpointLoad::Checkpoint {
                        namespace,
                        checkpoint_id,
                        ..
                    }),
            }) => Some((*generation, namespace.clone(), checkpoint_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(loads.len(), 1, "{effects:?}");
    loads[0].clone()
}

fn checkpoint_state(id: &str) -> Arc<CheckpointState> {
    Arc::new(CheckpointState {
        namespace: String::new(),
        checkpoint_id: id.to_owned(),
        ts: "2026-01-01T00:00:00+00:00".to_owned(),
        messages: Vec::new(),
        warnings: Vec::new(),
        writes: vec![NodeWrite {
            node: Some("agent".to_owned()),
            task_path: "~__pregel_pull, agent".to_owned(),
            task_id: "t1".to_owned(),
            idx: 0,
            channel: "messages".to_owned(),
            value: Ok(serde_json::json!([])),
        }],
    })
}

fn shown(generation: u64, id: &str) -> Event {
    let budget = ThreadHistories
        .budget(&checkpoint_state(id), &MessageCount, 10)
        .unwrap();
    Event::Job(JobEvent::load(
        generation,
        CheckpointLoaded::Shown(Ok(Box::new(ShownCheckpoint {
            state: checkpoint_state(id),
            budget: Ok(budget),
            max_tokens: 10,
        }))),
    ))
}

/// A LangGraph database's state with thread `agent` open and its tree loaded; the effects
/// the tree's arrival asked for.
fn opened() -> (AppState, Vec<Effect>) {
    let mut state = state();
    state.conversation_screens = ConversationScreens::CheckpointThread;
    state.overlay = Overlay::Prompt(crate::tui::state::Prompt::Command("conv agent".into()));
    let effects = update(&mut state, code(KeyCode::Enter));
    let generation = match effects.as_slice() {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Checkpoints(CheckpointLoad::Tree { thread_id }),
            }),
        ] => {
            assert_eq!(thread_id, "agent");
            *generation
        }
        other => panic!("expected the tree's load: {other:?}"),
    };
    assert_eq!(state.screen, Screen::Checkpoints);
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Tree(Ok(thread_tree())),
        )),
    );
    (state, effects)
}

#[test]
fn conv_opens_a_thread_on_its_latest_checkpoint() {
    let (state, effects) = opened();
    let (_, namespace, id) = checkpoint_load(&effects);
    assert_eq!((namespace.as_str(), id.as_str()), ("", "1-h"));
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.selected().unwrap().1.id, "1-h");
    assert!(thread.shown_status.is_loading());
}

#[test]
fn a_thread_opened_with_conv_comes_back_after_a_tab_switch() {
    let (mut state, _) = opened();
    state.missing_tabs.clear();
    update(&mut state, key('2'));
    assert_eq!(state.screen, Screen::ChatMemories);
    update(&mut state, key('1'));
    assert_eq!(state.screen, Screen::Checkpoints);
    assert_eq!(state.checkpoints.as_ref().unwrap().thread_id, "agent");
}

#[test]
fn moving_reads_the_selected_checkpoint_and_drops_an_overtaken_answer() {
    let (mut state, effects) = opened();
    let (latest, _, _) = checkpoint_load(&effects);
    // Up from 1-h is 1-g; up again 1-f.
    let (first, _, id) = checkpoint_load(&update(&mut state, key('k')));
    assert_eq!(id, "1-g");
    let (second, _, id) = checkpoint_load(&update(&mut state, key('k')));
    assert_eq!(id, "1-f");
    update(&mut state, shown(latest, "1-h"));
    let thread = state.checkpoints.as_ref().unwrap();
    assert!(thread.shown.is_none(), "the latest's answer came too late");
    update(&mut state, shown(first, "1-g"));
    assert!(state.checkpoints.as_ref().unwrap().shown.is_none());
    update(&mut state, shown(second, "1-f"));
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.shown.as_ref().unwrap().state.checkpoint_id, "1-f");
    assert_eq!(thread.shown_status, LoadStatus::Loaded);
}

#[test]
fn a_subgraph_checkpoint_is_read_in_its_namespace() {
    let (mut state, _) = opened();
    update(&mut state, key('g'));
    update(&mut state, key('j'));
    update(&mut state, key('j'));
    let (_, namespace, id) = checkpoint_load(&update(&mut state, key('j')));
    assert_eq!((namespace.as_str(), id.as_str()), ("worker:abc", "1-c1"));
    let (_, _, id) = checkpoint_load(&update(&mut state, key('L')));
    assert_eq!(id, "1-h", "L goes back to the latest");
}

#[test]
fn o_shows_the_writes_and_i_reads_them_whole() {
    let (mut state, effects) = opened();
    let (generation, _, _) = checkpoint_load(&effects);
    update(&mut state, shown(generation, "1-h"));
    assert!(
        update(&mut state, key('o')).is_empty(),
        "nothing to read again"
    );
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.pane, CheckpointPane::Writes);
    update(&mut state, key('i'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i opens the writes whole: {:?}", state.overlay);
    };
    assert!(
        detail.text.contains("agent → messages (task t1"),
        "{}",
        detail.text
    );
}

#[test]
fn the_budget_keys_count_the_shown_checkpoint_again_without_reading_it() {
    let (mut state, effects) = opened();
    let (generation, _, _) = checkpoint_load(&effects);
    update(&mut state, shown(generation, "1-h"));
    let effects = update(&mut state, key('+'));
    match effects.as_slice() {
        [
            Effect::Load(Stamped {
                value:
                    Load::Checkpoints(CheckpointLoad::Count {
                        state: shown,
                        max_tokens,
                        ..
                    }),
                ..
            }),
        ] => {
            assert_eq!(shown.checkpoint_id, "1-h");
            assert_eq!(*max_tokens, state.settings.budget);
        }
        other => panic!("expected a recount: {other:?}"),
    }
    let effects = update(&mut state, key('c'));
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::Load(Stamped {
                value: Load::Checkpoints(CheckpointLoad::Count { .. }),
                ..
            })
        )),
        "a new counter recounts: {effects:?}"
    );
}

#[test]
fn a_failed_tree_says_why_and_esc_goes_back_to_the_list() {
    let mut state = state();
    state.conversation_screens = ConversationScreens::CheckpointThread;
    let mut effects = Vec::new();
    open_thread(&mut state, "gone".to_owned(), &mut effects);
    let generation = state.checkpoints.as_ref().unwrap().generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Tree(Err("no thread gone in this database".to_owned())),
        )),
    );
    assert_eq!(
        state.checkpoints.as_ref().unwrap().status,
        LoadStatus::Failed("no thread gone in this database".to_owned())
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
}

fn said(kind: &str, text: &str) -> CheckpointMessage {
    checkpoint_message(&LangChainMessage {
        class: String::new(),
        kind: kind.to_owned(),
        id: Some(format!("{kind}-{}", text.len())),
        content: serde_json::json!(text),
        name: None,
        tool_calls: Vec::new(),
        tool_call_id: None,
        status: None,
        role: None,
        usage_metadata: None,
    })
}

#[test]
fn t_opens_the_trim_preview_on_the_cut_the_messages_pane_shows() {
    let (mut state, effects) = opened();
    let (generation, _, _) = checkpoint_load(&effects);
    let messages = vec![
        said("system", "You are a support assistant."),
        said("human", "How do I export a project?"),
        said("ai", "Open the project, then choose Export in its menu."),
        said("human", "And to archive one?"),
        said("ai", "Choose Archive in the same menu; it can be restored."),
        said("human", "Thanks!"),
        said("ai", "You are welcome."),
    ];
    let shown = Arc::new(CheckpointState {
        messages,
        ..(*checkpoint_state("1-h")).clone()
    });
    let counter = state.settings.counter();
    let budget = ThreadHistories.budget(&shown, &counter, 40).unwrap();
    assert!(budget.kept[0] && budget.dropped() > 0, "{:?}", budget.kept);
    let kept = budget.kept.clone();
    let options = budget.options.clone();
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Shown(Ok(Box::new(ShownCheckpoint {
                state: shown,
                budget: Ok(budget),
                max_tokens: 40,
            }))),
        )),
    );
    update(&mut state, key('T'));
    assert_eq!(state.overlay, Overlay::Trim);
    let trim = state.trim.as_ref().unwrap();
    assert!(!trim.is_policy(), "trim_messages, as the pane's cut");
    assert_eq!(trim.trim_options(), options);
    let Some(Ok(plan)) = &trim.plan else {
        panic!("no plan: {:?}", trim.plan);
    };
    let planned: Vec<bool> = plan
        .steps
        .iter()
        .map(|step| !matches!(step, crate::memory::trim::Step::Remove { .. }))
        .collect();
    assert_eq!(planned, kept, "the preview keeps what the pane keeps");
}

/// The thread as it was before its latest checkpoint, 1-h, was written.
fn tree_before_1h() -> ThreadTree {
    let rows: Vec<_> = agent_rows_with_subgraph()
        .into_iter()
        .filter(|r| r.checkpoint_id != "1-h")
        .collect();
    let tasks = [task("", "1-b", "~__pregel_pull, agent")];
    checkpoint_tree::thread_tree("agent", &CheckpointTree::build(&rows, &tasks), None).unwrap()
}

/// Ticks until the polling clock asks for the tree again: that load's generation.
fn polled(state: &mut AppState) -> u64 {
    for _ in 1..crate::tui::state::POLL_EVERY_TICKS {
        assert!(
            !update(state, Event::Tick)
                .iter()
                .any(|e| matches!(e, Effect::Load(_))),
            "no poll before the clock says"
        );
    }
    match update(state, Event::Tick).as_slice() {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Checkpoints(CheckpointLoad::Tree { thread_id }),
            }),
        ] if thread_id == "agent" => *generation,
        other => panic!("expected the tree read again: {other:?}"),
    }
}

fn tree_read(generation: u64, tree: ThreadTree) -> Event {
    Event::Job(JobEvent::load(generation, CheckpointLoaded::Tree(Ok(tree))))
}

#[test]
fn an_open_tree_shows_what_another_process_wrote_and_the_cursor_stays_put() {
    let (mut state, effects) = opened();
    let (generation, _, _) = checkpoint_load(&effects);
    update(&mut state, shown(generation, "1-h"));
    // Unchanged: nothing read again, nothing redrawn.
    let generation = polled(&mut state);
    assert!(update(&mut state, tree_read(generation, thread_tree())).is_empty());
    assert_eq!(
        state.checkpoints.as_ref().unwrap().selected().unwrap().1.id,
        "1-h"
    );

    // Another process deleted 1-h: the cursor was on the latest and follows it.
    let generation = polled(&mut state);
    let effects = update(&mut state, tree_read(generation, tree_before_1h()));
    assert_eq!(checkpoint_load(&effects).2, "1-g");
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.selected().unwrap().1.id, "1-g");
    assert_eq!(thread.status, LoadStatus::Loaded);

    // Up on 1-f, a new latest (1-h) arrives: the cursor stays on 1-f.
    update(&mut state, key('k'));
    let generation = polled(&mut state);
    let effects = update(&mut state, tree_read(generation, thread_tree()));
    assert_eq!(checkpoint_load(&effects).2, "1-f");
    let thread = state.checkpoints.as_ref().unwrap();
    assert!(
        thread
            .tree
            .as_ref()
            .unwrap()
            .nodes
            .iter()
            .any(|n| n.id == "1-h" && n.latest)
    );

    // A poll that fails leaves the tree shown.
    let generation = polled(&mut state);
    let failed = Event::Job(JobEvent::load(
        generation,
        CheckpointLoaded::Tree(Err("database is locked".to_owned())),
    ));
    update(&mut state, failed);
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.status, LoadStatus::Loaded);
    assert_eq!(thread.selected().unwrap().1.id, "1-f");
}

/// `/` in the checkpoint tree searches the shown checkpoint's messages and stays on the
/// thread: the pane goes to the first match, `n` to the next, esc clears the search before it
/// leaves the thread.
#[test]
fn slash_in_the_tree_searches_the_shown_checkpoint_s_messages() {
    let (mut state, effects) = opened();
    let (generation, _, _) = checkpoint_load(&effects);
    let mut messages = vec![said("system", "You are a support assistant.")];
    for turn in 0..30 {
        messages.push(said("human", &format!("Question {turn} about billing?")));
        messages.push(said("ai", &format!("Answer {turn}.")));
    }
    messages[7] = said("human", "Where is my parcel?");
    messages[41] = said("ai", "The parcel left the depot.");
    let shown = Arc::new(CheckpointState {
        messages,
        ..(*checkpoint_state("1-h")).clone()
    });
    let counter = state.settings.counter();
    let budget = ThreadHistories.budget(&shown, &counter, 40).unwrap();
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            CheckpointLoaded::Shown(Ok(Box::new(ShownCheckpoint {
                state: shown,
                budget: Ok(budget),
                max_tokens: 40,
            }))),
        )),
    );
    // The newest messages are in view, the early question is not.
    assert!(!screen(&state).contains("Where is my parcel?"));

    update(&mut state, key('/'));
    for c in "PARCEL".chars() {
        update(&mut state, key(c));
    }
    update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Checkpoints, "the thread stays open");
    let thread = state.checkpoints.as_ref().unwrap();
    assert_eq!(thread.search.as_ref().unwrap().matches, [7, 41]);
    assert_eq!(thread.message_at, Some(7));
    assert!(screen(&state).contains("Where is my parcel?"));
    update(&mut state, key('n'));
    assert_eq!(state.checkpoints.as_ref().unwrap().message_at, Some(41));
    assert!(state.message.as_deref().unwrap().contains("match 2 of 2"));

    // Esc clears the search and stays; the next one leaves the thread.
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Checkpoints);
    assert!(state.checkpoints.as_ref().unwrap().search.is_none());
    update(&mut state, code(KeyCode::Esc));
    assert_ne!(state.screen, Screen::Checkpoints);
}
