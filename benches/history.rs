//! History assembly of a 10,000-message conversation on SQLite: fetch (the window's LIMIT query
//! and its files), extraction, prompt building and pruning. Target: <= 20 ms warm.
//!
//! `history_10k_plugin` is the steady-state side of benches/compare.sh's comparison with Dify's
//! Python path (benches/dify_history.py builds the same conversation): the `plugin` counter
//! with gpt-4o at the compared budgets, counts cold as in a fresh process.

use chrono::{NaiveDate, NaiveDateTime, TimeDelta};
use criterion::{Criterion, criterion_group, criterion_main};
use memscope::inspect::turn_trees::turn_trees;
use memscope::memory::budget_view::{BudgetSettings, BudgetView};
use memscope::memory::history::{HistoryOptions, assemble_history};
use memscope::memory::model::StoredMessage;
use memscope::memory::tokens::{CountCache, CounterKind, TokenCounter, preload};
use memscope::store::Store;
use memscope::store::rows::{AppRow, Batch, ConversationRow, MessageRow};

const MESSAGES: usize = 10_000;

fn at(start: NaiveDateTime, seconds: usize) -> NaiveDateTime {
    start + TimeDelta::seconds(seconds as i64)
}

fn uuid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

/// One conversation: a chain where every fifth turn is regenerated once, with prose answers.
fn conversation() -> Batch {
    let start = NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let app_id = uuid(1_000_000);
    let conversation_id = uuid(1_000_001);
    let mut batch = Batch {
        apps: vec![AppRow {
            id: app_id.clone(),
            tenant_id: uuid(1_000_002),
            name: "bench".into(),
            mode: "chat".into(),
            memory_window: None,
            created_at: start,
        }],
        conversations: vec![ConversationRow {
            id: conversation_id.clone(),
            app_id: app_id.clone(),
            name: "ten thousand messages".into(),
            mode: "chat".into(),
            model_provider: None,
            model_id: None,
            status: "normal".into(),
            invoke_from: None,
            from_source: "api".into(),
            dialogue_count: 0,
            created_at: start,
            updated_at: at(start, MESSAGES),
        }],
        ..Batch::default()
    };
    let mut parent: Option<String> = None;
    for i in 0..MESSAGES {
        let id = uuid(i);
        // A regeneration hangs from the same parent as the turn before it.
        let regenerated = i % 5 == 4;
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
                at(start, i),
            ),
        });
        parent = Some(id);
    }
    batch
}

fn history(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = runtime.block_on(async {
        let store = Store::init(&url).await.unwrap();
        store.insert_batch(&conversation()).await.unwrap();
        store
    });
    preload(memscope::memory::tokens::Encoding::O200kBase);
    let conversation_id = uuid(1_000_001);
    let settings = BudgetSettings {
        counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
        max_tokens: 2000,
        model: "gpt-4o".into(),
        context_window: memscope::memory::context_windows::ContextWindow::Exact(128_000),
        options: HistoryOptions::default(),
    };
    let assemble = |cache: &mut CountCache| {
        runtime.block_on(async {
            let rows = turn_trees(&store)
                .unwrap()
                .window(&store, &conversation_id, None)
                .await
                .unwrap();
            BudgetView::for_history(
                assemble_history(&rows.rows_newest_first, &rows.files, &settings.options),
                &settings,
                cache,
            )
        })
    };
    let view = assemble(&mut CountCache::default());
    assert_eq!(view.history.window, 500);
    assert!(view.dropped() > 0, "the bench conversation is over budget");

    let mut group = c.benchmark_group("history_10k_sqlite");
    group.bench_function("fetch_extract_build_prune_cold_counts", |b| {
        b.iter(|| assemble(&mut CountCache::default()))
    });
    let mut warm = CountCache::default();
    group.bench_function("fetch_extract_build_prune_cached_counts", |b| {
        b.iter(|| assemble(&mut warm))
    });
    group.finish();

    let mut group = c.benchmark_group("history_10k_plugin");
    for budget in [2_000, 16_000, 32_000, 128_000] {
        let settings = BudgetSettings {
            counter: TokenCounter::for_model(CounterKind::Plugin, "gpt-4o"),
            max_tokens: budget,
            model: "gpt-4o".into(),
            context_window: memscope::memory::context_windows::ContextWindow::Exact(128_000),
            options: HistoryOptions::default(),
        };
        group.bench_function(budget.to_string(), |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let rows = turn_trees(&store)
                        .unwrap()
                        .window(&store, &conversation_id, None)
                        .await
                        .unwrap();
                    BudgetView::for_history(
                        assemble_history(&rows.rows_newest_first, &rows.files, &settings.options),
                        &settings,
                        &mut CountCache::default(),
                    )
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, history);
criterion_main!(benches);
