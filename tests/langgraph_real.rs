//! memscope's LangGraph reader on checkpoint databases LangGraph 1.2.22 wrote itself
//! (`tests/langgraph/build_db.py`: a tool-using agent, a time-travel branch, an `update_state`,
//! RemoveMessage, a subgraph and an encrypted saver, on SqliteSaver and PostgresSaver), compared
//! for every checkpoint with what LangGraph's own `list`, `get_state` and `get_state_history`
//! read from the same database.
//!
//! The tests need LangGraph's Python environment: `.ci/langgraph` installs it and prints its
//! interpreter, which `MEMSCOPE_LANGGRAPH_PYTHON` names. Without the variable the tests pass and
//! say they were skipped; with `MEMSCOPE_LANGGRAPH_MARKER_DIR` set, each test that really ran
//! leaves a marker there, so CI can prove they ran. The PostgreSQL test also needs
//! `MEMSCOPE_TEST_PG_URL`; it creates its own database and drops it.

mod app_driver;
mod langgraph_cli;
mod langgraph_sessions;
mod langgraph_tui;
#[path = "support/postgres_database.rs"]
mod postgres_database;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use memscope::sources::langgraph::decode::checkpoint::Checkpoint;
use memscope::sources::langgraph::decode::message::LangChainMessage;
use memscope::sources::langgraph::decode::tree::{CheckpointTree, ROOT_NAMESPACE};
use memscope::sources::langgraph::decode::{AesKey, DecodeError, KEY_VARIABLE};
use memscope::sources::langgraph::{CheckpointError, LangGraphPool};
use postgres_database::PostgresDatabase;
use serde_json::{Value, json};

const PYTHON_VAR: &str = "MEMSCOPE_LANGGRAPH_PYTHON";
const MARKER_VAR: &str = "MEMSCOPE_LANGGRAPH_MARKER_DIR";
/// The key the build's encrypted saver uses (UTF-8, as `LANGGRAPH_AES_KEY` gives it).
const AES_KEY: &str = "memscope-test-key-0123456789abcd";
const ENCRYPTED_THREAD: &str = "secret";

fn python() -> Option<String> {
    std::env::var(PYTHON_VAR).ok().filter(|p| !p.is_empty())
}

/// Runs the build script into `target` (`--sqlite FILE` or `--postgres URL`) and returns the
/// oracle it wrote.
fn build(python: &str, target: [&str; 2], dir: &Path) -> Value {
    let oracle = dir.join("oracle.json");
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/langgraph/build_db.py"))
        .args(target)
        .arg("--out")
        .arg(&oracle)
        .args(["--aes-key", AES_KEY])
        .output()
        .expect("LangGraph's python runs");
    assert!(
        output.status.success(),
        "build_db.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(oracle).unwrap()).unwrap()
}

fn mark(name: &str) {
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(name), "ran").unwrap();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The oracle's view of a message (`build_db.py`'s `message_json`), from memscope's reading.
fn message_json(message: &LangChainMessage) -> Value {
    json!({
        "type": message.kind,
        "class": message.class,
        "content": message.content,
        "id": message.id,
        "name": message.name,
        "tool_calls": message.tool_calls.iter().map(|c| json!({"id": c.id, "name": c.name, "args": c.args})).collect::<Vec<_>>(),
        "tool_call_id": message.tool_call_id,
        "usage_metadata": message.usage_metadata,
    })
}

fn messages_json(checkpoint: &Checkpoint) -> Vec<Value> {
    let (messages, unread) = checkpoint.messages();
    assert!(
        unread.is_empty(),
        "{}: unread messages {unread:?}",
        checkpoint.id
    );
    messages.iter().map(message_json).collect()
}

fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

/// Every read compared with LangGraph's: the thread list, each thread's tree, and every
/// checkpoint's body, messages and writes.
async fn compare(pool: &LangGraphPool, oracle: &Value) {
    let key = AesKey::new(AES_KEY.as_bytes()).unwrap();
    let threads = pool.threads().await.unwrap();
    let oracle_threads = oracle["threads"].as_object().unwrap();
    assert_eq!(
        threads
            .iter()
            .map(|t| t.thread_id.as_str())
            .collect::<Vec<_>>(),
        oracle_threads
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    for summary in &threads {
        let expected = &oracle_threads[&summary.thread_id];
        let thread_id = summary.thread_id.as_str();
        let checkpoints = expected["checkpoints"].as_array().unwrap();
        assert_eq!(
            summary.checkpoints as usize,
            checkpoints.len(),
            "{thread_id}"
        );
        assert_eq!(
            summary.latest_checkpoint_id.as_deref(),
            Some(text(&expected["state"]["checkpoint_id"])),
            "{thread_id}: get_state's checkpoint"
        );

        let (rows, tasks) = pool.thread_rows(thread_id).await.unwrap();
        let tree = CheckpointTree::build(&rows, &tasks);
        compare_tree(thread_id, &tree, expected);

        for expected in checkpoints {
            let ns = text(&expected["checkpoint_ns"]);
            let id = text(&expected["checkpoint_id"]);
            let stored = pool.checkpoint(thread_id, ns, id).await.unwrap().unwrap();
            assert_eq!(
                stored.parent_checkpoint_id.as_deref(),
                expected["parent_checkpoint_id"].as_str()
            );
            if thread_id == ENCRYPTED_THREAD {
                let error = stored.decode(None).unwrap_err();
                assert!(
                    matches!(
                        error,
                        CheckpointError::Decode {
                            error: DecodeError::MissingKey { .. },
                            ..
                        } | CheckpointError::Blob {
                            error: DecodeError::MissingKey { .. },
                            ..
                        }
                    ),
                    "{error}"
                );
                assert!(error.to_string().contains(KEY_VARIABLE), "{error}");
            }
            let (checkpoint, warnings) = stored.decode(Some(&key)).unwrap();
            assert!(warnings.is_empty(), "{id}: {warnings:?}");
            compare_checkpoint(&checkpoint, expected);
            let writes: Vec<Value> = stored
                .writes
                .iter()
                .map(|write| {
                    let value =
                        write_json(&write.channel, &write.decode(Some(&key)).unwrap().value);
                    json!({"task_id": write.task_id, "channel": write.channel, "value": value})
                })
                .collect();
            let expected_writes: Vec<Value> = expected["pending_writes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| {
                    let is_list = w["value"].is_array();
                    let value = if is_list {
                        w["value"].clone()
                    } else {
                        Value::Null
                    };
                    json!({"task_id": w["task_id"], "channel": w["channel"], "value": value})
                })
                .collect();
            assert_eq!(
                sorted(writes),
                sorted(expected_writes),
                "{thread_id} {id}: writes"
            );
        }
    }
}

/// A `messages` write as the oracle shows it: its list of messages (other writes: null).
fn write_json(channel: &str, value: &memscope::sources::langgraph::decode::Value) -> Value {
    match value.as_list() {
        Some(items) if channel == "messages" => items
            .iter()
            .map(|item| message_json(&LangChainMessage::from_value(item).unwrap().unwrap()))
            .collect(),
        _ => Value::Null,
    }
}

fn sorted(mut values: Vec<Value>) -> Vec<Value> {
    values.sort_by_key(|v| v.to_string());
    values
}

fn compare_tree(thread_id: &str, tree: &CheckpointTree, expected: &Value) {
    let checkpoints = expected["checkpoints"].as_array().unwrap();
    let root: Vec<&Value> = checkpoints
        .iter()
        .filter(|c| c["checkpoint_ns"] == ROOT_NAMESPACE)
        .collect();
    assert_eq!(
        tree.root.checkpoints.len(),
        root.len(),
        "{thread_id}: root checkpoints"
    );
    assert!(
        tree.root.anomalies().is_empty(),
        "{thread_id}: {:?}",
        tree.root.anomalies()
    );
    for expected in &root {
        let node = tree.root.find(text(&expected["checkpoint_id"])).unwrap();
        assert_eq!(
            node.parent.as_deref(),
            expected["parent_checkpoint_id"].as_str()
        );
        assert_eq!(
            node.source.as_deref(),
            expected["metadata"]["source"].as_str()
        );
        assert_eq!(node.step, expected["metadata"]["step"].as_i64());
    }
    // get_state_history: the root namespace newest first, each with its parent and metadata, and
    // the tasks it ran, which wrote its `loop` child.
    let history = expected["history"].as_array().unwrap();
    let mut ids: Vec<&str> = tree
        .root
        .checkpoints
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    ids.reverse();
    assert_eq!(
        ids,
        history
            .iter()
            .map(|h| text(&h["checkpoint_id"]))
            .collect::<Vec<_>>()
    );
    let tasks_of: BTreeMap<&str, &Value> = history
        .iter()
        .map(|h| (text(&h["checkpoint_id"]), &h["tasks"]))
        .collect();
    for node in &tree.root.checkpoints {
        if node.source.as_deref() == Some("loop") {
            let parent = node.parent.as_deref().unwrap();
            assert_eq!(
                json!(node.nodes),
                *tasks_of[parent],
                "{thread_id} {}: nodes",
                node.id
            );
        }
    }
    // get_state's checkpoint, and the thread from the first checkpoint to it.
    let latest = text(&expected["state"]["checkpoint_id"]);
    assert_eq!(tree.latest().unwrap().id, latest);
    let mut chain = vec![latest];
    while let Some(parent) = root
        .iter()
        .find(|c| c["checkpoint_id"] == chain[0])
        .and_then(|c| c["parent_checkpoint_id"].as_str())
    {
        chain.insert(0, parent);
    }
    assert_eq!(tree.thread(None).unwrap(), chain);
    // Subgraph namespaces, each attached to the root checkpoint its task started from.
    let mut namespaces: BTreeMap<&str, &str> = BTreeMap::new();
    for c in checkpoints
        .iter()
        .filter(|c| c["checkpoint_ns"] != ROOT_NAMESPACE)
    {
        namespaces.insert(
            text(&c["checkpoint_ns"]),
            text(&c["metadata"]["parents"][""]),
        );
    }
    let found: BTreeMap<&str, &str> = tree
        .subgraphs
        .iter()
        .map(|ns| (ns.name.as_str(), ns.root_checkpoint.as_deref().unwrap()))
        .collect();
    assert_eq!(found, namespaces, "{thread_id}: subgraphs");
}

fn compare_checkpoint(checkpoint: &Checkpoint, expected: &Value) {
    let id = text(&expected["checkpoint_id"]);
    assert_eq!(checkpoint.id, id);
    assert_eq!(checkpoint.v, expected["v"].as_i64(), "{id}: v");
    assert_eq!(checkpoint.ts, text(&expected["ts"]), "{id}: ts");
    assert_eq!(
        json!(checkpoint.channel_versions),
        expected["channel_versions"],
        "{id}"
    );
    assert_eq!(
        json!(checkpoint.versions_seen),
        expected["versions_seen"],
        "{id}"
    );
    assert_eq!(
        json!(checkpoint.updated_channels),
        expected["updated_channels"],
        "{id}"
    );
    let values = expected["channel_values"].as_object().unwrap();
    assert_eq!(
        checkpoint.channel_values.keys().collect::<Vec<_>>(),
        values.keys().collect::<Vec<_>>(),
        "{id}: channels"
    );
    let expected_messages = values.get("messages").cloned().unwrap_or(json!([]));
    assert_eq!(
        json!(messages_json(checkpoint)),
        expected_messages,
        "{id}: messages"
    );
}

#[test]
fn sqlite_saver_reads_as_langgraph_reads_it() {
    let Some(python) = python() else {
        eprintln!("LangGraph test skipped ({PYTHON_VAR} is not set; .ci/langgraph sets it up)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("checkpoints.sqlite");
    let oracle = build(&python, ["--sqlite", file.to_str().unwrap()], dir.path());
    // The binary opens the WAL-mode file read-only and leaves no file behind (before this
    // test's own read-only pool below, which leaves `-wal` and `-shm`).
    let before = langgraph_cli::files(dir.path());
    let url = format!("sqlite://{}", file.display());
    langgraph_cli::compare_cli(&url, &oracle, AES_KEY, Some(ENCRYPTED_THREAD));
    langgraph_cli::export::check(&url, &oracle, AES_KEY);
    for thread in ["agent", "pruned", "nested"] {
        langgraph_tui::compare_tui(&url, &oracle, thread);
    }
    // SQLite removes its `-wal` and `-shm` files when the TUI's last connection closes, on the
    // connection's own worker thread, which may still be closing it when the app is dropped.
    let mut left = langgraph_cli::files(dir.path());
    for _ in 0..100 {
        if left == before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = langgraph_cli::files(dir.path());
    }
    assert_eq!(left, before);
    langgraph_sessions::compare_sessions(&url, &oracle, ENCRYPTED_THREAD);
    runtime().block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&file)
            .read_only(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        compare(&LangGraphPool::Sqlite(pool.clone()), &oracle).await;
        pool.close().await;
    });
    langgraph_cli::doctor::check(&url, &oracle, AES_KEY, ENCRYPTED_THREAD);
    // Last: the writes change the database; the undo and the restore put the thread back.
    langgraph_tui::trim_and_undo(&url, "agent");
    let target = ["--sqlite", file.to_str().unwrap()];
    langgraph_tui::prune::prune_and_restore(&url, &python, target, "agent");
    mark("sqlite_saver_reads_as_langgraph_reads_it");
}

#[test]
fn postgres_saver_reads_as_langgraph_reads_it() {
    let Some(python) = python() else {
        eprintln!("LangGraph test skipped ({PYTHON_VAR} is not set; .ci/langgraph sets it up)");
        return;
    };
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        eprintln!("LangGraph test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    };
    let database = PostgresDatabase::create(admin, "lg");
    let dir = tempfile::tempdir().unwrap();
    let oracle = build(&python, ["--postgres", &database.url], dir.path());
    runtime().block_on(async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&database.url)
            .await
            .unwrap();
        compare(&LangGraphPool::Postgres(pool.clone()), &oracle).await;
        pool.close().await;
    });
    for thread in ["agent", "pruned", "nested"] {
        langgraph_tui::compare_tui(&database.url, &oracle, thread);
    }
    langgraph_cli::compare_cli(&database.url, &oracle, AES_KEY, Some(ENCRYPTED_THREAD));
    langgraph_cli::export::check(&database.url, &oracle, AES_KEY);
    langgraph_cli::doctor::check(&database.url, &oracle, AES_KEY, ENCRYPTED_THREAD);
    langgraph_sessions::compare_sessions(&database.url, &oracle, ENCRYPTED_THREAD);
    langgraph_tui::trim_and_undo(&database.url, "agent");
    let target = ["--postgres", database.url.as_str()];
    langgraph_tui::prune::prune_and_restore(&database.url, &python, target, "agent");
    mark("postgres_saver_reads_as_langgraph_reads_it");
}
