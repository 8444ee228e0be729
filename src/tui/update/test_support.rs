//! Fixtures of the core's tests: a state, a conversation and its nodes, a chat memory, and
//! keys to press.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::chat_memory_jobs::MemoryLoaded;
use super::effect::{Effect, Event, JobEvent, Load, LoadReport, LoadedNodes, Stamped};
use super::{start, update};
use crate::inspect::nodes::{ContextSource, NodeContextView, NodeThread};
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::assemble_history;
use crate::memory::model::StoredMessage;
use crate::memory::tokens::{CountCache, CounterKind, Encoding};
use crate::sources::conversation::{ListedConversation, ListedPage, extra};
use crate::sources::turn_trees::{RowWindows, TurnConversation, TurnInfo};
use crate::store::ChatMemorySummary;
use crate::tui::action::Action;
use crate::tui::keymap::Keymap;
use crate::tui::state::{
    AppState, ConversationState, LoadStatus, Loaded, NodeRow, Screen, Settings,
};

pub(super) fn settings() -> Settings {
    Settings {
        models: vec!["gpt-4o".to_owned(), "gpt-4".to_owned()],
        model_index: 0,
        counter: CounterKind::Raw,
        encoding: Some(Encoding::Cl100kBase),
        budget: 2000,
        message_limit: 0,
        app_window: true,
        context_windows: Default::default(),
    }
}

pub(super) fn state() -> AppState {
    AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite://test.db".to_owned(),
        false,
    )
}

pub(super) fn time(seconds: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp(1_700_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

pub(super) fn message(id: &str, parent: Option<&str>, at: i64) -> StoredMessage {
    let (query, answer) = (format!("question {id}"), format!("answer {id}"));
    StoredMessage::turn(id, "c1", parent, query, answer, time(at))
}

/// A Dify conversation as its source lists it.
pub(super) fn summary(id: &str) -> ListedConversation {
    ListedConversation {
        id: id.to_owned(),
        title: Some(format!("conversation {id}")),
        messages: Some(3),
        last_activity: Some(time(0).and_utc()),
        deleted: false,
        problem: None,
        extra: extra(serde_json::json!({
            "app_id": "app", "app": "app", "app_mode": "chat", "mode": "chat"
        })),
        scope: None,
    }
}

/// `rows` as a page of the list: a full page goes on after its last row, as a source's cursor.
pub(super) fn page_of(rows: Vec<ListedConversation>) -> ListedPage {
    let full = rows.len() >= crate::tui::state::PAGE_SIZE as usize;
    let next = rows.last().filter(|_| full).map(|row| row.id.clone());
    ListedPage {
        conversations: rows,
        next,
    }
}

/// a → b, a → b2 (regeneration of b), b → c.
pub(super) fn loaded() -> Arc<Loaded> {
    let rows = vec![
        message("a", None, 0),
        message("b", Some("a"), 10),
        message("b2", Some("a"), 20),
        message("c", Some("b"), 30),
    ];
    let info = TurnInfo {
        id: "c1".to_owned(),
        name: "first".to_owned(),
        mode: "chat".to_owned(),
        app_id: "app".to_owned(),
        app_mode: Some("chat".to_owned()),
        is_deleted: false,
        app_window: None,
        answered_rows_only: false,
    };
    Arc::new(Loaded::new(TurnConversation {
        info,
        rows,
        files: Vec::new(),
        // Dify's default, the app setting no window and `[history]` asking for none.
        windows: RowWindows {
            app_honoured: 500,
            app_set_aside: 500,
        },
    }))
}

/// The screen `state` draws on a terminal of 120×32, monochrome.
pub(super) fn screen(state: &AppState) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 32)).unwrap();
    terminal
        .draw(|frame| crate::tui::ui::draw(state, &crate::tui::theme::Theme::monochrome(), frame))
        .unwrap();
    terminal.backend().to_string()
}

pub(super) fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub(super) fn code(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(super) fn list_loaded(state: &mut AppState, ids: &[&str]) -> Vec<Effect> {
    let generation = state.list.generation;
    let rows = ids.iter().map(|id| summary(id)).collect();
    update(
        state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::List(Ok(page_of(rows))),
        )),
    )
}

/// Opens the fixture conversation and delivers its load.
pub(super) fn opened() -> AppState {
    let mut state = state();
    start(&mut state);
    list_loaded(&mut state, &["c1"]);
    let effects = update(&mut state, code(KeyCode::Enter));
    let generation = match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Conversation { id, .. },
            }),
        ] if id == "c1" => *generation,
        other => panic!("expected a conversation load, got {other:?}"),
    };
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Conversation(Ok(loaded())),
        )),
    );
    state
}

pub(super) fn budget_effect(effects: &[Effect]) -> (u64, Vec<StoredMessage>, BudgetSettings) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Load(Stamped {
                generation,
                value:
                    Load::Budget {
                        loaded,
                        leaf,
                        mode,
                        window,
                        settings,
                    },
            }) => Some((
                *generation,
                loaded.budget_rows(*leaf, *mode, *window),
                settings.clone(),
            )),
            _ => None,
        })
        .expect("a budget request")
}

pub(super) fn conversation(state: &AppState) -> &ConversationState {
    state.conversation.as_ref().unwrap()
}

/// Ids of the nodes the tree pane marks as on the thread.
pub(super) fn thread_ids(state: &AppState) -> Vec<String> {
    let c = conversation(state);
    let loaded = c.loaded.as_ref().unwrap();
    (0..loaded.tree.len())
        .filter(|&node| c.marks.on_thread(node))
        .map(|node| loaded.tree.id(node).to_owned())
        .collect()
}

pub(super) fn on_thread(state: &AppState, id: &str) -> bool {
    thread_ids(state).iter().any(|t| t == id)
}

pub(super) fn selected_id(state: &AppState) -> String {
    let c = conversation(state);
    c.loaded.as_ref().unwrap().tree.id(c.selected).to_owned()
}

/// The fixture conversation, reloaded, with its budget counted and delivered.
pub(super) fn opened_with_budget() -> AppState {
    let mut state = opened();
    let effects = update(&mut state, Event::Action(Action::Refresh));
    let generation = match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Conversation { .. },
            }),
        ] => *generation,
        other => panic!("{other:?}"),
    };
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Conversation(Ok(loaded())),
        )),
    );
    deliver_budget(&mut state, &effects);
    state
}

/// Computes the budget requested among `effects` and delivers it.
pub(super) fn deliver_budget(state: &mut AppState, effects: &[Effect]) {
    let (generation, rows, settings) = budget_effect(effects);
    let view = BudgetView::for_history(
        assemble_history(&rows, &[], &settings.options),
        &settings,
        &mut CountCache::new(100),
    );
    update(
        state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Budget(Ok(Box::new(view))),
        )),
    );
}

/// A chatflow thread of one turn for the nodes pane.
pub(super) fn node_thread() -> Arc<NodeThread> {
    let info = loaded().conversation.info.clone();
    Arc::new(NodeThread {
        info: crate::inspect::nodes::NodeConversation {
            app_mode: Some(crate::inspect::nodes::CHATFLOW_MODE.to_owned()),
            ..info.into()
        },
        leaf: None,
        turns: vec![crate::memory::node_context::ThreadTurn {
            message_id: "c".to_owned(),
            workflow_run_id: "run-c".to_owned(),
            app_mode: None,
        }],
        dangling: Vec::new(),
        archived: Vec::new(),
    })
}

pub(super) fn node_row(node_id: &str) -> NodeRow {
    NodeRow {
        summary: crate::inspect::nodes::NodeSummary {
            node_id: node_id.to_owned(),
            node_type: "llm".to_owned(),
            title: node_id.to_uppercase(),
            executions: 1,
            on_thread: 1,
            latest_run: Some("run-c".to_owned()),
        },
        latest: None,
    }
}

pub(super) fn nodes_generation(effects: &[Effect]) -> u64 {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Load(Stamped {
                generation,
                value: Load::Nodes { .. },
            }) => Some(*generation),
            _ => None,
        })
        .expect("a nodes load")
}

/// The fixture conversation with its nodes pane open and loaded (nodes `llm1`, `llm2`).
pub(super) fn nodes_open() -> (AppState, Vec<Effect>) {
    let mut state = opened();
    let generation = nodes_generation(&update(&mut state, key('o')));
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Nodes(Ok(LoadedNodes {
                thread: node_thread(),
                rows: vec![node_row("llm1"), node_row("llm2")],
            })),
        )),
    );
    (state, effects)
}

pub(super) fn context_request(effects: &[Effect]) -> (u64, String, ContextSource) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Load(Stamped {
                generation,
                value: Load::NodeContext {
                    node_id, source, ..
                },
            }) => Some((*generation, node_id.clone(), *source)),
            _ => None,
        })
        .expect("a node context load")
}

pub(super) fn empty_context(source: ContextSource) -> Box<NodeContextView> {
    let sources = crate::inspect::nodes::NodeSources {
        node_id: "llm1".to_owned(),
        memory_file: crate::inspect::nodes::MemoryFileRead::Missing {
            path: "llm1.json".to_owned(),
        },
        last_run: Vec::new(),
    };
    let context = crate::inspect::nodes::node_context(&node_thread(), &sources, source);
    let settings = settings().budget_settings();
    Box::new(NodeContextView::compute(
        context,
        &settings,
        &mut CountCache::new(10),
    ))
}

pub(super) fn memory_row(policy: &str, messages: i64) -> ChatMemorySummary {
    ChatMemorySummary {
        id: "00000000-0000-4000-8000-000000000001".to_owned(),
        memory_node_id: "node-1".to_owned(),
        chat_id: "chat-1".to_owned(),
        label: "Support".to_owned(),
        policy: policy.to_owned(),
        created_at: chrono::NaiveDateTime::default(),
        updated_at: chrono::NaiveDateTime::default(),
        message_count: messages,
    }
}

/// The chat memories tab with one memory listed.
pub(super) fn memories(policy: &str, messages: i64) -> AppState {
    let mut state = state();
    // The conversations tab is not loading: busy() speaks for this tab alone.
    state.list.status = LoadStatus::Loaded;
    update(&mut state, key('2'));
    assert_eq!(state.screen, Screen::ChatMemories);
    let generation = state.chat_memories.generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::List(Ok(vec![memory_row(policy, messages)])),
        )),
    );
    state
}
