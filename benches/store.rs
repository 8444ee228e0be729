//! Throughput of `insert_batch` and of the `doctor` scans, on SQLite and (with
//! `MEMSCOPE_TEST_PG_URL` set) PostgreSQL. `cargo bench --bench store`; set
//! `MEMSCOPE_PERF_MESSAGES=1000000` for the full demo size. One timed pass each: a million rows
//! do not fit criterion's repetitions.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::fixtures::{app, conversation, id, message};
use memscope::store::Store;
use memscope::store::rows::Batch;

const MESSAGES_PER_CONVERSATION: u128 = 100;
/// Messages per `insert_batch` call, as a generator would write them.
const MESSAGES_PER_BATCH: u128 = 50_000;

/// CPU seconds this process has used (all threads), where `/proc` has them: on a shared machine
/// wall time mostly measures the neighbours.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn total_messages() -> u128 {
    std::env::var("MEMSCOPE_PERF_MESSAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000)
}

/// Messages `first..first + count` with their conversations, text about as long as real turns.
fn batch(first: u128, count: u128) -> Batch {
    let bot = app(1, "Perf bot", "chat");
    let mut batch = Batch::default();
    for n in first..first + count {
        let conversation_number = n / MESSAGES_PER_CONVERSATION;
        if n % MESSAGES_PER_CONVERSATION == 0 {
            batch.conversations.push(conversation(
                1_000_000_000 + conversation_number,
                &bot,
                "perf",
                0,
            ));
        }
        let owner = conversation(1_000_000_000 + conversation_number, &bot, "perf", 0);
        let mut row = message(2_000_000_000 + n, &owner, (n % 86_400) as i64);
        row.message.query = format!("question {n}: {}", "how do I reset my password? ".repeat(3));
        row.message.answer = format!(
            "answer {n}: {}",
            "Open settings, choose security. ".repeat(12)
        );
        if n > 0 && n % MESSAGES_PER_CONVERSATION != 0 {
            row.message.parent_message_id = Some(id(2_000_000_000 + n - 1));
        }
        batch.messages.push(row);
    }
    if first == 0 {
        batch.apps.push(bot);
    }
    batch
}

async fn insert_and_scan_throughput(db: common::TestDb) {
    let total = total_messages();
    let store = Store::init(db.url()).await.expect("init");
    let mut insert_seconds = 0.0;
    let mut insert_cpu_seconds = 0.0;
    let mut first = 0;
    while first < total {
        let count = MESSAGES_PER_BATCH.min(total - first);
        let rows = batch(first, count);
        let (started, cpu_before) = (Instant::now(), cpu_seconds());
        store.insert_batch(&rows).await.expect("insert");
        insert_seconds += started.elapsed().as_secs_f64();
        insert_cpu_seconds += cpu_seconds().zip(cpu_before).map_or(0.0, |(a, b)| a - b);
        first += count;
    }
    eprintln!(
        "{:?}: inserted {total} messages in {insert_seconds:.1} s wall ({:.0} messages/s), \
         {insert_cpu_seconds:.1} s CPU in this process ({:.0} messages/CPU-s)",
        db.backend,
        total as f64 / insert_seconds,
        total as f64 / insert_cpu_seconds
    );

    let started = Instant::now();
    let mut conversations = 0u128;
    let mut messages = 0usize;
    store
        .for_each_conversation(
            |group| {
                conversations += 1;
                messages += group.len();
            },
            |bad| panic!("{bad:?}"),
        )
        .await
        .expect("stream");
    eprintln!(
        "{:?}: streamed {messages} messages in {conversations} conversations in {:.1} s",
        db.backend,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(messages as u128, total);
    assert_eq!(conversations, total.div_ceil(MESSAGES_PER_CONVERSATION));

    let started = Instant::now();
    let dangling = store
        .dangling_workflow_runs(|bad| panic!("{bad:?}"))
        .await
        .expect("dangling");
    eprintln!(
        "{:?}: dangling run scan in {:.1} s",
        db.backend,
        started.elapsed().as_secs_f64()
    );
    assert!(dangling.is_empty());
    store.close().await;
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("store: bench");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        common::run_sqlite(insert_and_scan_throughput).await;
        if std::env::var_os(common::PG_URL_VAR).is_some() {
            common::run_postgres("store_bench", insert_and_scan_throughput).await;
        }
    });
}
