//! TUI frame costs (TestBackend, 120x40): the conversation list with a page of 50 rows, then
//! with a 10,000-message conversation open: drawing one frame, moving the selection (thread view + a budget request), and a budget key
//! press followed by the redraw of the cut line. Then the nodes pane of a chatflow thread of
//! 1,000 turns: computing a node's context (warm cache) and its timeline, as their jobs do, and
//! drawing the pane with the timeline's sparkline.

#[path = "../tests/tui_support/mod.rs"]
mod tui_support;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::inspect::nodes::{
    CHATFLOW_MODE, ExecutionDocs, FullColumn, MemoryFileRead, NodeContextView, NodeConversation,
    NodeSources, NodeSummary, NodeThread, node_context, timeline,
};
use memscope::memory::model::StoredMessage;
use memscope::memory::node_context::ThreadTurn;
use memscope::memory::tokens::{CountCache, CounterKind, preload};
use memscope::sources::conversation::ListedPage;
use memscope::sources::conversations_of;
use memscope::sources::dify::Dify;
use memscope::sources::dify::listing::listed;
use memscope::sources::dify::queries::ConversationSummary;
use memscope::sources::turn_trees::{RowWindows, TurnConversation, TurnInfo};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Loaded, NodeRow, Settings};
use memscope::tui::theme::Theme;
use memscope::tui::ui;
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, LoadReport, LoadedNodes, Stamped, start, update,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tui_support::run_budgets;

const MESSAGES: u32 = 10_000;

fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

fn time(seconds: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp(1_750_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

/// A long conversation: a chain where every tenth message was regenerated once.
fn conversation() -> Arc<Loaded> {
    let mut rows = Vec::with_capacity(MESSAGES as usize);
    let mut parent: Option<u32> = None;
    for n in 0..MESSAGES {
        rows.push(StoredMessage::turn(
            id(n),
            id(u32::MAX),
            parent.map(id).as_deref(),
            format!("question {n}: how does the refund policy apply to order {n}?"),
            format!("answer {n}: it applies within thirty days of delivery."),
            time(i64::from(n)),
        ));
        // A regeneration is a sibling: the chain goes on from the earlier answer.
        if n % 10 != 9 {
            parent = Some(n);
        }
    }
    let info = TurnInfo {
        id: id(u32::MAX),
        name: "Long conversation".to_owned(),
        mode: "chat".to_owned(),
        app_id: id(7),
        app_mode: Some("chat".to_owned()),
        is_deleted: false,
        app_window: None,
        answered_rows_only: false,
    };
    Arc::new(Loaded::new(TurnConversation {
        info,
        rows,
        files: Vec::new(),
        // Dify's default: the app sets no window.
        windows: RowWindows {
            app_honoured: 500,
            app_set_aside: 500,
        },
    }))
}

/// A summary of a conversation of the list.
fn summary(n: u32, name: &str, messages: u32) -> ConversationSummary {
    ConversationSummary {
        id: id(n),
        name: name.to_owned(),
        app_id: id(7),
        app_name: Some("bench".to_owned()),
        app_mode: Some("chat".to_owned()),
        mode: "chat".to_owned(),
        message_count: i64::from(messages),
        last_activity: time(i64::from(n)),
        updated_at: time(i64::from(n)),
        is_deleted: false,
    }
}

/// The list of a Dify database with a whole page shown.
fn list_state() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        tui_support::settings(),
        "sqlite://bench".into(),
        false,
    );
    start(&mut state);
    state.keeps(conversations_of(&Dify).expect("Dify keeps conversations"));
    let rows = (0..50).map(|n| listed(&summary(n, &format!("Refund question {n}"), 12)));
    let result = Ok(ListedPage {
        conversations: rows.collect(),
        next: Some("next".to_owned()),
    });
    let generation = state.list.generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::List(result))),
    );
    state
}

fn opened_state(cache: &mut CountCache) -> AppState {
    let settings = Settings {
        counter: CounterKind::OpenAi,
        encoding: None,
        ..tui_support::settings()
    };
    preload(settings.counter().encoding());
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings,
        "sqlite://bench".into(),
        false,
    );
    start(&mut state);
    state.keeps(conversations_of(&Dify).expect("Dify keeps conversations"));
    let generation = state.list.generation;
    let result = Ok(ListedPage {
        conversations: vec![listed(&summary(u32::MAX, "Long conversation", MESSAGES))],
        next: None,
    });
    update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::List(result))),
    );
    let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::Conversation { .. },
    })) = update(&mut state, Event::Key(enter)).pop()
    else {
        panic!("Enter opens the conversation");
    };
    let result = Ok(conversation());
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::Conversation(result))),
    );
    run_budgets(&mut state, effects, cache);
    state
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn frames(c: &mut Criterion) {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let list = list_state();
    c.bench_function("draw_frame_conversation_list_50_rows", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&list), &theme, frame))
                .unwrap();
        })
    });

    let mut cache = CountCache::new(CountCache::DEFAULT_CAPACITY);
    let mut state = opened_state(&mut cache);

    c.bench_function("draw_frame_10k_conversation", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&state), &theme, frame))
                .unwrap();
        })
    });

    c.bench_function("budget_key_to_redrawn_cut_line_10k", |b| {
        let mut step = 0u32;
        b.iter(|| {
            step += 1;
            let effects = update(&mut state, key(if step % 2 == 0 { '+' } else { '-' }));
            assert!(effects.is_empty());
            terminal
                .draw(|frame| ui::draw(&state, &theme, frame))
                .unwrap();
        })
    });

    c.bench_function("move_selection_10k_thread_view_and_budget", |b| {
        let mut step = 0u32;
        b.iter(|| {
            step += 1;
            let effects = update(&mut state, key(if step % 2 == 0 { 'j' } else { 'k' }));
            run_budgets(&mut state, effects, &mut cache);
            terminal
                .draw(|frame| ui::draw(&state, &theme, frame))
                .unwrap();
        })
    });

    let mut bottom = state.clone();
    update(&mut bottom, key('G'));
    c.bench_function("draw_frame_10k_cursor_at_the_bottom", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&bottom), &theme, frame))
                .unwrap();
        })
    });
}

const NODE_TURNS: u32 = 1_000;
/// Turns a node's context keeps (20 messages, as in the nodes bench): it grows, then stays.
const NODE_WINDOW: usize = 10;
const NODE_ID: &str = "1733817600001";

/// A chatflow thread of [`NODE_TURNS`] turns, each with a run.
fn node_thread() -> Arc<NodeThread> {
    let info = conversation().conversation.info.clone();
    Arc::new(NodeThread {
        info: NodeConversation {
            app_mode: Some(CHATFLOW_MODE.to_owned()),
            ..info.into()
        },
        leaf: None,
        turns: (0..NODE_TURNS)
            .map(|n| ThreadTurn {
                message_id: id(n),
                workflow_run_id: id(n + NODE_TURNS),
                app_mode: None,
            })
            .collect(),
        dangling: Vec::new(),
        archived: Vec::new(),
    })
}

/// The node's execution in every run: design B's context of the last turns, and the prompts.
fn node_executions() -> Vec<ExecutionDocs> {
    (0..NODE_TURNS as usize)
        .map(|n| {
            let context: Vec<serde_json::Value> = (n.saturating_sub(NODE_WINDOW - 1)..=n)
                .flat_map(|turn| {
                    [
                        serde_json::json!({"role": "user", "content": format!("question {turn}")}),
                        serde_json::json!({"role": "assistant", "content": format!("answer {turn}")}),
                    ]
                })
                .collect();
            let column = |value: serde_json::Value| FullColumn {
                text: Some(value.to_string()),
                ..FullColumn::default()
            };
            ExecutionDocs {
                id: format!("execution-{n}"),
                workflow_run_id: id(n as u32 + NODE_TURNS),
                status: "succeeded".to_owned(),
                outputs: column(serde_json::json!({"text": "answer", "context": context})),
                process_data: column(serde_json::json!({"prompts": context})),
            }
        })
        .collect()
}

fn no_memory_file() -> MemoryFileRead {
    MemoryFileRead::Missing {
        path: format!("node_memory/{NODE_ID}.json"),
    }
}

/// The long conversation with its nodes pane open on a loaded node, context and timeline.
fn nodes_state(cache: &mut CountCache, executions: &[ExecutionDocs]) -> AppState {
    let mut state = opened_state(cache);
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::Nodes { .. },
    })) = update(&mut state, key('o')).pop()
    else {
        panic!("o opens the nodes pane");
    };
    let row = NodeRow {
        summary: NodeSummary {
            node_id: NODE_ID.to_owned(),
            node_type: "llm".to_owned(),
            title: "Research".to_owned(),
            executions: NODE_TURNS as usize,
            on_thread: NODE_TURNS as usize,
            latest_run: Some(id(2 * NODE_TURNS - 1)),
        },
        latest: None,
    };
    let result = Ok(LoadedNodes {
        thread: node_thread(),
        rows: vec![row],
    });
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::Nodes(result))),
    );
    run_node_jobs(&mut state, effects, executions, cache);
    state
}

/// What the node jobs compute once their rows are read.
fn run_node_jobs(
    state: &mut AppState,
    effects: Vec<Effect>,
    executions: &[ExecutionDocs],
    cache: &mut CountCache,
) {
    for effect in effects {
        let job = match effect {
            Effect::Load(Stamped {
                generation,
                value:
                    Load::NodeContext {
                        thread,
                        node_id,
                        source,
                        settings,
                    },
            }) => {
                let sources = NodeSources {
                    node_id,
                    memory_file: no_memory_file(),
                    last_run: executions.last().cloned().into_iter().collect(),
                };
                let context = node_context(&thread, &sources, source);
                let view = NodeContextView::compute(context, &settings, cache);
                let result = Ok(Box::new(view));
                JobEvent::load(generation, LoadReport::NodeContext(result))
            }
            Effect::Load(Stamped {
                generation,
                value: Load::Timeline { thread, node_id },
            }) => {
                let result = Ok(timeline(&thread, &node_id, &no_memory_file(), executions));
                JobEvent::load(generation, LoadReport::Timeline(result))
            }
            _ => continue,
        };
        update(state, Event::Job(job));
    }
}

fn nodes(c: &mut Criterion) {
    let mut cache = CountCache::new(CountCache::DEFAULT_CAPACITY);
    let executions = node_executions();
    let mut state = nodes_state(&mut cache, &executions);
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();

    c.bench_function("node_context_switch_source_warm_20_messages", |b| {
        b.iter(|| {
            let effects = update(&mut state, key('s'));
            run_node_jobs(&mut state, effects, &executions, &mut cache);
        })
    });

    let thread = node_thread();
    c.bench_function("node_timeline_job_1000_turns", |b| {
        b.iter(|| timeline(&thread, NODE_ID, &no_memory_file(), black_box(&executions)))
    });

    c.bench_function("draw_frame_nodes_pane_1000_turn_timeline", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&state), &theme, frame))
                .unwrap();
        })
    });
}

criterion_group!(benches, frames, nodes);
criterion_main!(benches);
