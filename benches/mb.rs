//! Memory bases on SQLite. Targets: ingestion with the hashing embedder >= 5,000 messages/s;
//! the pending-count query of one session among 1,000,000 messages <= 10 ms; KB search over
//! 100,000 chunks <= 60 ms.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use memscope::kb::embedder::HashingEmbedder;
use memscope::kb::store::{ChunkRecord, KbLocation, VectorStore};
use memscope::memory::memory_base::{MessagePosition, ThresholdUnit};
use memscope::store::Store;
use memscope::store::memory_bases::MemoryBaseInfo;
use memscope::store::rows::{Batch, FlowRow, LfMessageRow, LfUserRow, MemoryBaseRow};
use memscope::sync::{CancelFlag, SyncSettings, Syncer, Trigger};

const INGESTED: usize = 100_000;
const COUNTED: usize = 1_000_000;
const SESSIONS: usize = 1_000;
const SEARCHED: usize = 100_000;

fn uuid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

fn time(seconds: usize) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(1_750_000_000, 0).unwrap() + TimeDelta::seconds(seconds as i64)
}

const WORDS: [&str; 12] = [
    "refund", "parcel", "invoice", "login", "password", "deploy", "pipeline", "order", "delayed",
    "account", "support", "billing",
];

fn text(n: usize) -> String {
    (0..40)
        .map(|i| WORDS[(n * 7 + i * 3) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn message(n: usize, session: &str) -> LfMessageRow {
    LfMessageRow {
        id: uuid(n),
        timestamp: time(n),
        sender: if n % 2 == 1 { "Machine" } else { "User" }.into(),
        sender_name: "x".into(),
        session_id: session.into(),
        text: text(n),
        files: "[]".into(),
        error: false,
        edit: false,
        properties: "{}".into(),
        category: "message".into(),
        content_blocks: "[]".into(),
        flow_id: Some(uuid(2)),
        run_id: None,
        is_output: n % 2 == 1,
    }
}

/// A database with one flow and memory base, and `count` messages spread over `sessions`.
async fn database(dir: &std::path::Path, count: usize, sessions: usize) -> (Store, MemoryBaseInfo) {
    let url = format!("sqlite://{}", dir.join("bench.db").display());
    let store = Store::init(&url).await.unwrap();
    let setup = Batch {
        lf_users: vec![LfUserRow {
            id: uuid(1),
            username: "bench".into(),
            created_at: time(0),
        }],
        flows: vec![FlowRow {
            id: uuid(2),
            name: "bench".into(),
            user_id: uuid(1),
            updated_at: time(0),
        }],
        ..Batch::default()
    };
    store.insert_batch(&setup).await.unwrap();
    for start in (0..count).step_by(50_000) {
        let batch = Batch {
            lf_messages: (start..(start + 50_000).min(count))
                .map(|n| message(10 + n, &format!("session-{}", n % sessions)))
                .collect(),
            ..Batch::default()
        };
        store.insert_batch(&batch).await.unwrap();
    }
    store
        .create_memory_base(&MemoryBaseRow {
            id: uuid(3),
            name: "bench".into(),
            flow_id: uuid(2),
            user_id: uuid(1),
            threshold: 50,
            threshold_unit: ThresholdUnit::Messages.as_str().to_owned(),
            auto_capture: true,
            embedding_provider: "memscope".into(),
            embedding_model: "hashing-lexical".into(),
            kb_name: "bench_00000000".into(),
            created_at: time(0),
        })
        .await
        .unwrap();
    let base = store.find_memory_bases(&uuid(3)).await.unwrap().remove(0);
    (store, base)
}

fn ingestion(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (store, base) = runtime.block_on(database(dir.path(), INGESTED, 1));
    let syncer = Syncer::new(
        store.clone(),
        HashingEmbedder::default(),
        SyncSettings::new(dir.path().join("kb")),
    );
    let kb_path = syncer.kb_path(&base).unwrap();
    let mut group = c.benchmark_group("mb");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    group.throughput(Throughput::Elements(INGESTED as u64));
    group.bench_function("ingest 100k messages (hashing, SQLite)", |b| {
        b.iter_batched(
            || {
                runtime.block_on(store.reset_memory_base(&base.id)).unwrap();
                let _ = std::fs::remove_dir_all(&kb_path);
            },
            |()| {
                runtime
                    .block_on(syncer.sync_session(
                        &base,
                        "session-0",
                        Trigger::Manual,
                        Duration::ZERO,
                        None,
                        &CancelFlag::default(),
                    ))
                    .unwrap()
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn pending_count(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (store, base) = runtime.block_on(database(dir.path(), COUNTED, SESSIONS));
    // The cursor halfway through session 7's messages.
    let cursor = MessagePosition {
        timestamp: time(10 + COUNTED / 2 + 7),
        id: uuid(10 + COUNTED / 2 + 7),
    };
    c.bench_function("mb pending count, 1M messages", |b| {
        b.iter(|| {
            runtime
                .block_on(store.pending_output_messages(&base.flow_id, "session-7", Some(&cursor)))
                .unwrap()
        })
    });
}

fn search(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let embedder = HashingEmbedder::default();
    let store = runtime.block_on(async {
        let store = VectorStore::open_or_create(&KbLocation::embedded(dir.path()), 384)
            .await
            .unwrap();
        for start in (0..SEARCHED).step_by(10_000) {
            let chunks: Vec<ChunkRecord> = (start..start + 10_000)
                .map(|n| ChunkRecord {
                    chunk_id: uuid(n),
                    message_id: uuid(n),
                    session_id: format!("session-{}", n % SESSIONS),
                    job_id: uuid(0),
                    content: text(n),
                    metadata: serde_json::json!({}),
                    embedding: embedder.embed_one(&text(n)),
                })
                .collect();
            store.upsert(&chunks).await.unwrap();
        }
        store
    });
    let query = embedder.embed_one("refund for a delayed parcel");
    c.bench_function("mb search top 5 of 100k chunks", |b| {
        b.iter(|| runtime.block_on(store.search(&query, 5, None)).unwrap())
    });
    c.bench_function("mb search top 5 of 100k chunks, one session", |b| {
        b.iter(|| {
            runtime
                .block_on(store.search(&query, 5, Some("session-7")))
                .unwrap()
        })
    });
}

criterion_group!(benches, ingestion, pending_count, search);
criterion_main!(benches);
