//! Langflow's own flush and memscope's `--write mb sync` of one session at the same time, each
//! order forced: Langflow holds its ingestion (job running, its session lock taken) while
//! memscope starts, then lets go; memscope's sync runs while Langflow's flush is asked for.
//! Whoever comes second finds the first's work: afterwards every message was ingested once
//! (one record, one set of chunks, counted once), no job is left running, and Langflow sees no
//! mismatch and would start a new flush.

use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::parity::{LangflowFlush, chunks_of};
use super::*;

const BASE: &str = "Research Notes";

/// `mb sync` of a session, started in the background; it waits up to a minute for the lock.
#[allow(
    clippy::zombie_processes,
    reason = "the process is returned, and its caller waits for it"
)]
fn spawn_sync(built: &Built, home: &Path, embed: &EmbedServer, session: &str) -> Child {
    Process::new(env!("CARGO_BIN_EXE_memscope"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env("LANGFLOW_KNOWLEDGE_BASES_DIR", &built.kb_dir)
        .env_remove("MEMSCOPE_DATABASE_URL")
        .env("MEMSCOPE_EMBEDDINGS_URL", &embed.url)
        .env("MEMSCOPE_EMBEDDINGS_DIMENSION", "16")
        .args(["--db", &built.url, "--write"])
        .args(["mb", "sync", BASE, "--session", session, "--wait", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every message pending before the race was ingested exactly once, and nothing is left over.
fn each_message_once(built: &Built, before: &Value, session: &str) {
    let said = langflow_says_probing(built, true);
    langflow_accepts(&said);
    let was = session_of(base_named(before, BASE), session);
    let now = session_of(base_named(&said, BASE), session);
    let pending: Vec<&str> = was["pending_message_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert!(!pending.is_empty(), "{session} had messages to race for");
    assert_eq!(now["pending_message_ids"], serde_json::json!([]), "{now}");
    assert_eq!(now["pending_runs"], 0, "{now}");
    assert_eq!(
        now["total_processed"].as_i64().unwrap(),
        was["total_processed"].as_i64().unwrap() + pending.len() as i64,
        "each message counted once"
    );
    let mut chunks_per_message: BTreeMap<String, usize> = BTreeMap::new();
    for chunk in chunks_of(&said, BASE, session) {
        let message = chunk["metadata"]["message_id"].as_str().unwrap().to_owned();
        *chunks_per_message.entry(message).or_default() += 1;
    }
    for id in &pending {
        assert_eq!(
            chunks_per_message.get(*id),
            Some(&1),
            "chunks of message {id}"
        );
    }
    assert!(
        chunks_per_message.values().all(|&n| n == 1),
        "{chunks_per_message:?}"
    );
}

/// Langflow first: its flush holds inside its embedding call while memscope's sync starts, then
/// goes on. Langflow's job completes; memscope finds the session busy (the same dedupe key is
/// running) or, once the session lock is free, nothing left to ingest.
fn langflow_first(built: &Built, session: &str) {
    let before = langflow_says(built);
    let home = tempfile::tempdir().unwrap();
    let embed = EmbedServer::start(&[]);
    let release = home.path().join("release");
    let flush = LangflowFlush::start(built, BASE, session, ("--hold-until", &release), "holding");
    let mut sync = spawn_sync(built, home.path(), &embed, session);
    // Let memscope reach Langflow's locks before they are let go; the outcome is checked
    // below whenever it got there.
    std::thread::sleep(Duration::from_secs(2));
    std::fs::write(&release, "").unwrap();
    let flushed = flush.finish();
    assert_eq!(flushed["status"], "completed", "{flushed}");
    let code = sync.wait().unwrap().code();
    assert!(
        matches!(code, Some(0 | 4)),
        "memscope's sync ended with {code:?}"
    );
    each_message_once(built, &before, session);
}

/// memscope first: its sync embeds (slowly) while Langflow's flush of the session is asked
/// for; Langflow answers as its endpoint does (409, a job with the same dedupe key runs), and
/// memscope's job completes.
fn memscope_first(built: &Built, session: &str) {
    let before = langflow_says(built);
    let home = tempfile::tempdir().unwrap();
    let slow = EmbedServer::start(&["--delay", "10"]);
    let start = home.path().join("start");
    let flush = LangflowFlush::start(built, BASE, session, ("--start-when", &start), "ready");
    let (mut sync, _job) = slow_sync_in(built, home.path(), &slow, BASE, session);
    std::fs::write(&start, "").unwrap();
    let flushed = flush.finish();
    assert_eq!(flushed["refused"], "DuplicateJobError", "{flushed}");
    assert!(sync.wait().unwrap().success(), "memscope's sync completed");
    each_message_once(built, &before, session);
}

fn both_orders(built: &Built) {
    langflow_first(built, "support-never");
    memscope_first(built, "support-synced");
}

#[test]
fn langflow_racing_langflows_own_flush_ingests_each_message_once_sqlite() {
    on_langflow("race_with_langflow", Backend::Sqlite, |built| {
        both_orders(&sqlite_copy(built))
    });
}

#[test]
fn langflow_racing_langflows_own_flush_ingests_each_message_once_postgres() {
    on_langflow("race_with_langflow", Backend::Postgres, |_| {
        let own = build(Backend::Postgres).expect("the Langflow database was built");
        both_orders(&own)
    });
}
