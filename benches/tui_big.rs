//! A 50,000-message conversation with 2,415 regenerations in the TUI (TestBackend, 120x40):
//! opening it from SQLite (the load job's query and tree, the core's update, the first frame),
//! and what a key costs: the core's update and the redraw on the UI thread, and the budget job
//! the key starts on a worker. Targets: open <= 150 ms, a key <= 5 ms.
//!
//! `cargo bench --bench tui_big -- --measurement-time 5` (MEMSCOPE_BENCH_DIR=DIR keeps the
//! database as DIR/tui_big.db)

#[path = "../tests/tui_support/mod.rs"]
mod tui_support;

use std::hint::black_box;
use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime, TimeDelta};
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::inspect::turn_trees::turn_trees;
use memscope::memory::model::StoredMessage;
use memscope::memory::tokens::{CountCache, CounterKind, preload};
use memscope::sources::conversation::ListedPage;
use memscope::sources::conversations_of;
use memscope::sources::dify::Dify;
use memscope::sources::dify::listing::listed;
use memscope::sources::dify::queries::ConversationSummary;
use memscope::sources::turn_trees::TurnInfo;
use memscope::store::Store;
use memscope::store::rows::{AppRow, Batch, ConversationRow, MessageRow};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Loaded, Settings};
use memscope::tui::theme::Theme;
use memscope::tui::ui;
use memscope::tui::update::{Effect, Event, JobEvent, Load, LoadReport, Stamped, start, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tui_support::run_budgets;

const MESSAGES: usize = 50_000;
const REGENERATIONS: usize = 2_415;

fn uuid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

fn at(seconds: usize) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        + TimeDelta::seconds(seconds as i64)
}

/// One long chain in which [`REGENERATIONS`] turns, spread evenly, were regenerated: the
/// regeneration hangs from the same parent as the turn before it, and the chain goes on from
/// it, so every regeneration opens a branch the rest of the chain nests under.
fn conversation() -> Batch {
    let app_id = uuid(1_000_000);
    let conversation_id = uuid(1_000_001);
    let mut batch = Batch {
        apps: vec![AppRow {
            id: app_id.clone(),
            tenant_id: uuid(1_000_002),
            name: "bench".into(),
            mode: "chat".into(),
            memory_window: None,
            created_at: at(0),
        }],
        conversations: vec![ConversationRow {
            id: conversation_id.clone(),
            app_id: app_id.clone(),
            name: "fifty thousand messages".into(),
            mode: "chat".into(),
            model_provider: None,
            model_id: None,
            status: "normal".into(),
            invoke_from: None,
            from_source: "api".into(),
            dialogue_count: 0,
            created_at: at(0),
            updated_at: at(MESSAGES),
        }],
        ..Batch::default()
    };
    let mut parent: Option<String> = None;
    for i in 0..MESSAGES {
        let id = uuid(i);
        let regenerated =
            i > 0 && (i * REGENERATIONS) / MESSAGES != ((i + 1) * REGENERATIONS) / MESSAGES;
        let own_parent = if regenerated {
            batch.messages[i - 1].message.parent_message_id.clone()
        } else {
            parent.clone()
        };
        batch.messages.push(MessageRow {
            app_id: app_id.clone(),
            message: StoredMessage::turn(
                id.clone(),
                conversation_id.clone(),
                own_parent.as_deref(),
                format!("Question {i}: how does the retention policy apply to archived projects?"),
                format!(
                    "Answer {i}: archived projects keep their history for ninety days, then the \
                     summaries are kept and the raw messages are deleted. {}",
                    "Exports stay available to owners. ".repeat(i % 7)
                ),
                at(i),
            ),
        });
        parent = Some(id);
    }
    let regenerations = batch
        .messages
        .windows(2)
        .filter(|pair| pair[0].message.parent_message_id == pair[1].message.parent_message_id)
        .count();
    assert_eq!(regenerations, REGENERATIONS);
    batch
}

/// OpenAI's counting (the model's encoding), with the tests' budget.
fn settings() -> Settings {
    Settings {
        counter: CounterKind::OpenAi,
        encoding: None,
        ..tui_support::settings()
    }
}

/// The list showing the conversation, Enter pressed: the state waiting for the load job.
fn waiting_state(info: &TurnInfo) -> (AppState, u64) {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite://bench".into(),
        false,
    );
    start(&mut state);
    state.keeps(conversations_of(&Dify).expect("Dify keeps conversations"));
    let generation = state.list.generation;
    let summary = ConversationSummary {
        id: info.id.clone(),
        name: info.name.clone(),
        app_id: info.app_id.clone(),
        app_name: Some("bench".into()),
        app_mode: info.app_mode.clone(),
        mode: info.mode.clone(),
        message_count: MESSAGES as i64,
        last_activity: at(MESSAGES),
        updated_at: at(MESSAGES),
        is_deleted: false,
    };
    let result = Ok(ListedPage {
        conversations: vec![listed(&summary)],
        next: None,
    });
    update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::List(result))),
    );
    let enter = Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::Conversation { .. },
    })) = update(&mut state, enter).pop()
    else {
        panic!("Enter opens the conversation");
    };
    (state, generation)
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn big_conversation(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // MEMSCOPE_BENCH_DIR keeps the database (`tui_big.db`) for `memscope thread` and the TUI.
    let dir = tempfile::tempdir().unwrap();
    let path = match std::env::var_os("MEMSCOPE_BENCH_DIR") {
        Some(kept) => std::path::PathBuf::from(kept).join("tui_big.db"),
        None => dir.path().join("bench.db"),
    };
    let _ = std::fs::remove_file(&path);
    let url = format!("sqlite://{}", path.display());
    let store = runtime.block_on(async {
        let store = Store::init(&url).await.unwrap();
        store.insert_batch(&conversation()).await.unwrap();
        store
    });
    preload(settings().counter().encoding());
    let conversation_id = uuid(1_000_001);
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    // What the load job does on its worker: the query, then the tree and its lines.
    let load = || {
        let conversation = runtime
            .block_on(turn_trees(&store).unwrap().conversation(
                &store,
                &conversation_id,
                Some(settings().message_limit),
            ))
            .unwrap();
        Arc::new(Loaded::new(conversation))
    };
    let loaded = load();
    assert_eq!(loaded.tree.len(), MESSAGES);

    let mut group = c.benchmark_group("tui_50k_conversation");
    group.sample_size(10);
    group.bench_function("open_query_tree_update_first_frame", |b| {
        b.iter(|| {
            let (mut state, generation) = waiting_state(&loaded.conversation.info);
            let result = Ok(load());
            update(
                &mut state,
                Event::Job(JobEvent::load(generation, LoadReport::Conversation(result))),
            );
            terminal
                .draw(|frame| ui::draw(black_box(&state), &theme, frame))
                .unwrap();
            state
        })
    });
    group.bench_function("open_load_job_only", |b| b.iter(load));
    group.bench_function("open_ui_thread_update_and_first_frame", |b| {
        b.iter(|| {
            let (mut state, generation) = waiting_state(&loaded.conversation.info);
            let result = Ok(loaded.clone());
            update(
                &mut state,
                Event::Job(JobEvent::load(generation, LoadReport::Conversation(result))),
            );
            terminal
                .draw(|frame| ui::draw(black_box(&state), &theme, frame))
                .unwrap();
            state
        })
    });
    group.finish();

    let mut cache = CountCache::default();
    let (mut state, generation) = waiting_state(&loaded.conversation.info);
    let result = Ok(loaded.clone());
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::Conversation(result))),
    );
    run_budgets(&mut state, effects, &mut cache);

    let mut group = c.benchmark_group("tui_50k_key");
    let mut step = 0u32;
    // The cursor starts on the latest leaf, at the bottom of the tree.
    group.bench_function("move_at_the_bottom_with_budget_job", |b| {
        b.iter(|| {
            step += 1;
            let effects = update(&mut state, key(if step % 2 == 0 { 'j' } else { 'k' }));
            run_budgets(&mut state, effects, &mut cache);
            terminal
                .draw(|frame| ui::draw(&state, &theme, frame))
                .unwrap();
        })
    });
    // Each pair of keys undoes itself, so every iteration starts where the last one did.
    let pairs = [
        (
            "move_at_the_bottom_update_and_frame",
            KeyCode::Char('j'),
            KeyCode::Char('k'),
        ),
        (
            "page_down_up_update_and_frame",
            KeyCode::PageDown,
            KeyCode::PageUp,
        ),
        (
            "budget_key_update_and_frame",
            KeyCode::Char('+'),
            KeyCode::Char('-'),
        ),
        (
            "top_bottom_update_and_frame",
            KeyCode::Char('g'),
            KeyCode::Char('G'),
        ),
    ];
    for (name, forth, back) in pairs {
        group.bench_function(name, |b| {
            b.iter(|| {
                step += 1;
                let code = if step % 2 == 0 { forth } else { back };
                let effects = update(
                    &mut state,
                    Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
                );
                terminal
                    .draw(|frame| ui::draw(&state, &theme, frame))
                    .unwrap();
                effects
            })
        });
    }
    group.finish();
}

criterion_group!(benches, big_conversation);
criterion_main!(benches);
