//! Trim targets: a preview recomputed on a 10,000-message memory once its counts are cached
//! (target ≤ 5 ms), and applying then undoing a 10,000-message trim on SQLite (≤ 200 ms).

use std::hint::black_box;

use chrono::NaiveDateTime;
use criterion::{Criterion, criterion_group, criterion_main};
use memscope::inspect::trim::{TrimCounter, TrimSession, change_for, load_memory, row_message};
use memscope::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter};
use memscope::memory::trim::{ChatMemoryPolicy, Strategy, TrimOptions};
use memscope::store::Store;
use memscope::store::rows::{Batch, ChatMemoryMessageRow, ChatMemoryRow};

const MESSAGES: usize = 10_000;

fn rows(memory_id: &str) -> Vec<ChatMemoryMessageRow> {
    let at = NaiveDateTime::default();
    (0..MESSAGES)
        .map(|i| ChatMemoryMessageRow {
            id: uuid::Uuid::from_u128(0x5000_0000_0000_4000_8000_0000_0000_0000 | i as u128)
                .to_string(),
            chat_memory_id: memory_id.to_owned(),
            seq: i as i64,
            role: if i % 2 == 0 { "user" } else { "assistant" }.to_owned(),
            content: serde_json::json!(format!(
                "Message {i}: the invoice for order {} was sent twice; please refund one copy.",
                i * 7
            ))
            .to_string(),
            tool_calls: None,
            tool_call_id: None,
            files: None,
            workflow_request_id: Some(format!("request-{}", i / 2)),
            is_summary: false,
            created_at: at,
        })
        .collect()
}

fn preview(c: &mut Criterion) {
    let messages: Vec<_> = rows("m").iter().map(row_message).collect();
    let counter = TokenCounter::with_encoding(CounterKind::OpenAi, Encoding::O200kBase);
    let mut cache = CountCache::default();
    let session = TrimSession::new(messages, TrimCounter::Tokens(counter), &mut cache);
    let policy = ChatMemoryPolicy::from_json(
        r#"{"limit_type":"tokens","max_tokens":4000,"strategy":"drop_middle","keep_first":2,
            "summarization":{"enabled":true}}"#,
    )
    .unwrap();
    let mut group = c.benchmark_group("trim preview, 10k messages, counts cached");
    group.bench_function("drop middle at 4,000 tokens with a summary prompt", |b| {
        b.iter(|| session.preview_policy(black_box(&policy)).unwrap())
    });
    // The extractive summary of the ~9,900 removed messages: too slow for a keystroke, so the
    // TUI writes it in a latest-wins job when the slice is over INLINE_SUMMARY_MESSAGES.
    group.bench_function(
        "drop middle at 4,000 tokens with the extractive summary written",
        |b| {
            b.iter(|| {
                let planner = session.planner(black_box(&policy)).unwrap();
                memscope::summarize::extractive_plan(&planner, planner.plan())
            })
        },
    );
    let without_summary = ChatMemoryPolicy {
        summarization: Default::default(),
        ..policy.clone()
    };
    group.bench_function("drop middle at 4,000 tokens", |b| {
        b.iter(|| session.preview_policy(black_box(&without_summary)).unwrap())
    });
    let options = TrimOptions {
        strategy: Strategy::Last,
        include_system: true,
        ..TrimOptions::new(4000)
    };
    group.bench_function("trim_messages last at 4,000 tokens", |b| {
        b.iter(|| session.preview_trim_messages(black_box(&options)).unwrap())
    });
    group.finish();
}

fn apply_and_undo(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("trim.db").display());
    let memory_id = uuid::Uuid::from_u128(7).to_string();
    let store = runtime.block_on(async {
        let store = Store::init(&url).await.unwrap();
        let at = NaiveDateTime::default();
        let mut batch = Batch::default();
        batch.chat_memories.push(ChatMemoryRow {
            id: memory_id.clone(),
            memory_node_id: "node".into(),
            chat_id: "chat".into(),
            label: "bench".into(),
            policy: r#"{"max_messages":1}"#.into(),
            created_at: at,
            updated_at: at,
        });
        // One more than the trim removes: a 1-message limit keeps the newest.
        batch.chat_memory_messages = rows(&memory_id);
        batch.chat_memory_messages.push(ChatMemoryMessageRow {
            id: uuid::Uuid::from_u128(8).to_string(),
            seq: MESSAGES as i64,
            ..batch.chat_memory_messages[0].clone()
        });
        store.insert_batch(&batch).await.unwrap();
        store
    });
    let loaded = runtime.block_on(load_memory(&store, &memory_id)).unwrap();
    let mut cache = CountCache::default();
    let session = TrimSession::new(loaded.messages(), TrimCounter::Messages, &mut cache);
    let plan = session.preview_policy(&loaded.policy).unwrap();
    let change = change_for(&plan, &loaded.policy, &loaded.rows, &memory_id, "trim");
    assert_eq!(change.removed.len(), MESSAGES);
    let mut group = c.benchmark_group("trim apply");
    group.sample_size(10);
    group.bench_function("apply and undo a 10,000-message trim (SQLite)", |b| {
        b.iter(|| {
            runtime.block_on(async {
                store
                    .apply_chat_memory_change(&memory_id, &change)
                    .await
                    .unwrap();
                store.undo_chat_memory_change(&memory_id).await.unwrap()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, preview, apply_and_undo);
criterion_main!(benches);
