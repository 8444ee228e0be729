//! Node contexts of a chatflow conversation with 1,000 runs on SQLite, among 30,000 executions
//! of other conversations. Targets: opening a node's context <= 30 ms warm (indexed lookups
//! only); the timeline of 1,000 runs <= 100 ms.
//!
//! Time is the CPU time of every thread of the process, not wall time: the machines this runs
//! on are shared, so wall time measures the neighbours' load too. All threads count, because
//! SQLite queries run on sqlx's worker thread, not the benchmark's.

use std::path::Path;

use chrono::{NaiveDate, NaiveDateTime, TimeDelta};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, criterion_group, criterion_main};
use memscope::inspect::nodes::{
    ContextSource, NodeContextView, load_node_sources, load_thread, load_timeline, node_context,
    timeline,
};
use memscope::memory::budget_view::BudgetSettings;
use memscope::memory::history::{HistoryOptions, PopRule};
use memscope::memory::model::StoredMessage;
use memscope::memory::node_context::ThreadTurn;
use memscope::memory::thread::ExtractionMode;
use memscope::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter, preload};
use memscope::store::Store;
use memscope::store::rows::{
    AppRow, Batch, ConversationRow, MessageRow, NodeExecutionRow, WorkflowRunRow,
};
use serde_json::{Value, json};

const RUNS: usize = 1_000;
/// Other conversations of the same size, so a scan of the executions table would show.
const OTHER_CONVERSATIONS: usize = 10;
/// The node keeps a window of this many context messages, as a pruned node memory would.
const CONTEXT_WINDOW: usize = 20;
const LLM_NODE: &str = "1733817600001";

fn at(seconds: usize) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        + TimeDelta::seconds(seconds as i64)
}

fn uuid(space: usize, n: usize) -> String {
    format!("00000000-0000-4000-{space:04x}-{n:012x}")
}

fn query(turn: usize) -> String {
    format!("Turn {turn}: what should the itinerary look like for the next day in Kyoto?")
}

fn reply(turn: usize) -> String {
    format!(
        "Turn {turn}: breakfast at Nishiki Market, Fushimi Inari before 8:00, lunch in Gion, \
         and a kaiseki dinner in Pontocho. {}",
        "Book ahead on weekends. ".repeat(turn % 5)
    )
}

/// The node's context after `turn`: the last turns inside the window, then the new reply.
fn context(turn: usize) -> Vec<Value> {
    let first = (turn + 1).saturating_sub(CONTEXT_WINDOW / 2);
    (first..=turn)
        .flat_map(|t| {
            [
                json!({"role": "user", "content": query(t), "name": null}),
                json!({"role": "assistant", "content": reply(t), "name": null}),
            ]
        })
        .collect()
}

/// One chatflow conversation: a chain of `RUNS` turns, each run executing start, LLM, answer.
fn conversation(space: usize, app: &AppRow) -> Batch {
    let conversation_id = uuid(space, 0);
    let mut batch = Batch {
        conversations: vec![ConversationRow {
            id: conversation_id.clone(),
            app_id: app.id.clone(),
            name: format!("chatflow {space}"),
            mode: "advanced-chat".into(),
            model_provider: None,
            model_id: None,
            status: "normal".into(),
            invoke_from: None,
            from_source: "api".into(),
            dialogue_count: RUNS as i64,
            created_at: at(0),
            updated_at: at(RUNS * 10),
        }],
        ..Batch::default()
    };
    for turn in 0..RUNS {
        let run_id = uuid(space, 100_000 + turn);
        let parent = turn.checked_sub(1).map(|p| uuid(space, 1 + p));
        let mut message = StoredMessage::turn(
            uuid(space, 1 + turn),
            conversation_id.clone(),
            parent.as_deref(),
            query(turn),
            reply(turn),
            at(turn * 10),
        );
        message.answer_tokens = 60;
        message.workflow_run_id = Some(run_id.clone());
        batch.messages.push(MessageRow {
            app_id: app.id.clone(),
            message,
        });
        batch.workflow_runs.push(WorkflowRunRow {
            id: run_id.clone(),
            tenant_id: app.tenant_id.clone(),
            app_id: app.id.clone(),
            workflow_id: uuid(space, 99),
            run_type: "chat".into(),
            status: "succeeded".into(),
            total_tokens: 100,
            created_at: at(turn * 10),
            finished_at: Some(at(turn * 10 + 5)),
        });
        let mut prompts = vec![json!({"role": "system", "text": "You plan trips.", "files": []})];
        prompts.extend(
            context(turn)
                .iter()
                .map(|m| json!({"role": m["role"], "text": m["content"], "files": []})),
        );
        prompts.pop();
        let nodes = [
            (
                "1733817600000",
                "start",
                json!({"sys.query": query(turn)}),
                None,
            ),
            (
                LLM_NODE,
                "llm",
                json!({"text": reply(turn), "finish_reason": "stop", "context": context(turn)}),
                Some(json!({"model_mode": "chat", "prompts": prompts})),
            ),
            ("answer", "answer", json!({"answer": reply(turn)}), None),
        ];
        for (index, (node_id, node_type, outputs, process_data)) in nodes.into_iter().enumerate() {
            batch.node_executions.push(NodeExecutionRow {
                id: uuid(space, 200_000 + turn * 3 + index),
                tenant_id: app.tenant_id.clone(),
                app_id: app.id.clone(),
                workflow_id: uuid(space, 99),
                workflow_run_id: Some(run_id.clone()),
                index: index as i64 + 1,
                node_id: node_id.into(),
                node_type: node_type.into(),
                title: node_type.into(),
                inputs: Some("{}".into()),
                process_data: process_data.map(|data| data.to_string()),
                outputs: Some(outputs.to_string()),
                status: "succeeded".into(),
                error: None,
                execution_metadata: None,
                created_at: at(turn * 10 + index),
            });
        }
    }
    batch
}

/// The design-A file of the measured conversation: one turn per run.
fn write_memory_file(root: &Path, app_id: &str, conversation_id: &str) {
    let turns: serde_json::Map<String, Value> = (0..RUNS)
        .map(|turn| {
            (
                uuid(0, 100_000 + turn),
                json!({"user_content": query(turn), "user_files": [],
                       "assistant_content": reply(turn), "assistant_files": []}),
            )
        })
        .collect();
    let dir = root.join("node_memory").join(app_id).join(conversation_id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{LLM_NODE}.json")),
        json!({"version": 1, "turns": turns}).to_string(),
    )
    .unwrap();
}

/// CPU time of all the process's threads, in nanoseconds, from Linux's scheduler statistics.
struct ProcessCpuTime;

fn process_cpu_nanos() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .expect("this benchmark needs Linux's /proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

impl Measurement for ProcessCpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        process_cpu_nanos()
    }
    fn end(&self, start: u64) -> u64 {
        process_cpu_nanos().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, nanos: &u64) -> f64 {
        *nanos as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as wall time's are, so its formatter reads them right.
        static WALL_TIME: WallTime = WallTime;
        WALL_TIME.formatter()
    }
}

fn nodes(c: &mut Criterion<ProcessCpuTime>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let storage = dir.path().join("storage");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let app = AppRow {
        id: uuid(9_999, 1),
        tenant_id: uuid(9_999, 2),
        name: "bench chatflow".into(),
        mode: "advanced-chat".into(),
        memory_window: None,
        created_at: at(0),
    };
    let store = runtime.block_on(async {
        let store = Store::init(&url).await.unwrap();
        store
            .insert_batch(&Batch {
                apps: vec![app.clone()],
                ..Batch::default()
            })
            .await
            .unwrap();
        for space in 0..=OTHER_CONVERSATIONS {
            store
                .insert_batch(&conversation(space, &app))
                .await
                .unwrap();
        }
        store
    });
    let conversation_id = uuid(0, 0);
    write_memory_file(&storage, &app.id, &conversation_id);
    let storage = memscope::storage::ObjectStore::open(&memscope::storage::StorageBackend::Fs {
        root: storage,
    })
    .unwrap();
    preload(Encoding::O200kBase);
    let settings = BudgetSettings {
        counter: TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
        max_tokens: 2000,
        model: "gpt-4o".into(),
        context_window: memscope::memory::context_windows::ContextWindow::Exact(128_000),
        options: HistoryOptions::default(),
    };

    let open = |source: ContextSource, cache: &mut CountCache| {
        runtime.block_on(async {
            let thread = load_thread(
                &store,
                &conversation_id,
                None,
                ExtractionMode::Dify,
                PopRule::default(),
            )
            .await
            .unwrap();
            let sources = load_node_sources(&store, &storage, &thread, LLM_NODE)
                .await
                .unwrap();
            NodeContextView::compute(node_context(&thread, &sources, source), &settings, cache)
        })
    };
    let view = open(ContextSource::Outputs, &mut CountCache::default());
    assert_eq!(view.context.messages.len(), CONTEXT_WINDOW);
    assert!(view.context.problems.is_empty());
    // The thread is Dify's 500-row window; the file holds a turn for each of them.
    let files = open(ContextSource::Files, &mut CountCache::default());
    assert_eq!(files.context.messages.len(), 1_000);

    // Dify reads at most 500 rows, so the thread of 1,000 runs has 500 turns; the second
    // timeline covers every run, as a thread without that window would.
    let windowed = runtime
        .block_on(load_thread(
            &store,
            &conversation_id,
            None,
            ExtractionMode::Dify,
            PopRule::default(),
        ))
        .unwrap();
    let mut every_run = windowed.clone();
    every_run.turns = (0..RUNS)
        .map(|turn| ThreadTurn {
            message_id: uuid(0, 1 + turn),
            workflow_run_id: uuid(0, 100_000 + turn),
            app_mode: None,
        })
        .collect();
    let load_and_compute_timeline = |thread: &memscope::inspect::nodes::NodeThread| {
        runtime.block_on(async {
            let sources = load_node_sources(&store, &storage, thread, LLM_NODE)
                .await
                .unwrap();
            let executions = load_timeline(&store, &storage, thread, LLM_NODE)
                .await
                .unwrap();
            timeline(thread, LLM_NODE, &sources.memory_file, &executions)
        })
    };
    for (thread, turns) in [(&windowed, 500), (&every_run, RUNS)] {
        let built = load_and_compute_timeline(thread);
        assert_eq!(built.turns.len(), turns);
        assert_eq!(built.disagreements().count(), 0);
    }

    let mut group = c.benchmark_group("nodes_1000_runs_sqlite");
    for source in ContextSource::ALL {
        let name = format!("open_node_context_{source:?}").to_lowercase();
        group.bench_function(format!("{name}_cold_counts"), |b| {
            b.iter(|| open(source, &mut CountCache::default()))
        });
        // A UI keeps its count cache: reopening a context counts nothing twice.
        let mut warm = CountCache::default();
        group.bench_function(format!("{name}_cached_counts"), |b| {
            b.iter(|| open(source, &mut warm))
        });
    }
    group.bench_function("timeline_thread_500_turns", |b| {
        b.iter(|| load_and_compute_timeline(&windowed))
    });
    group.bench_function("timeline_every_run_1000_turns", |b| {
        b.iter(|| load_and_compute_timeline(&every_run))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ProcessCpuTime);
    targets = nodes
}
criterion_main!(benches);
