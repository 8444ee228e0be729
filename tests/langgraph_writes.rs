//! memscope's writes to checkpoint databases LangGraph 1.2.22 wrote itself
//! (`tests/langgraph/build_db.py`), judged by LangGraph's own code (`tests/langgraph/judge.py`)
//! on SqliteSaver and PostgresSaver:
//! - `trim preview` on a thread keeps what LangChain's own `trim_messages` keeps with the trim
//!   LangGraph recommends (`strategy="last", start_on="human", include_system=True`), the cut
//!   `history` shows, its system prompt included;
//! - `trim apply` writes what LangGraph's own `update_state` with the same `RemoveMessage`s
//!   writes (a twin database trimmed by LangGraph is compared, normalised for ids, times and
//!   version suffixes), `get_state` returns exactly the kept messages, and the graph runs its
//!   next turn; `trim undo` gives the state before back;
//! - memscope's msgpack encoder gives back the bytes of every value LangGraph stored;
//! - `checkpoints prune` keeps `get_state`, leaves `--keep-last` checkpoints in
//!   `get_state_history`, survives an abort before its commit unchanged, and its archive
//!   restores every row byte for byte; on PostgreSQL `--keep-last 1` leaves exactly the rows
//!   PostgresSaver's own `prune` leaves.
//!
//! Without `MEMSCOPE_LANGGRAPH_PYTHON` the tests pass and say they were skipped; with
//! `MEMSCOPE_LANGGRAPH_WRITES_MARKER_DIR` set, each test that ran leaves a marker there.

mod langgraph_writes_prune;
#[path = "support/postgres_database.rs"]
mod postgres_database;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use memscope::sources::langgraph::decode::decode_typed;
use memscope::sources::langgraph::decode::encode::encode;
use postgres_database::PostgresDatabase;
use serde_json::{Value, json};

const PYTHON_VAR: &str = "MEMSCOPE_LANGGRAPH_PYTHON";
const MARKER_VAR: &str = "MEMSCOPE_LANGGRAPH_WRITES_MARKER_DIR";
const AES_KEY: &str = "memscope-test-key-0123456789abcd";
const THREAD: &str = "agent";

fn python() -> Option<String> {
    std::env::var(PYTHON_VAR).ok().filter(|p| !p.is_empty())
}

fn mark(name: &str) {
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(name), "ran").unwrap();
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/langgraph")
        .join(name)
}

/// A database as memscope (`url`) and LangGraph's scripts (`--sqlite FILE`, `--postgres URL`)
/// name it.
#[derive(Clone)]
struct Target {
    url: String,
    python_args: [String; 2],
}

fn run_python(python: &str, args: &[&str]) -> Value {
    let output = Command::new(python)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

fn build(python: &str, target: &Target, dir: &Path) {
    let oracle = dir.join("oracle.json");
    let build = script("build_db.py");
    run_python(
        python,
        &[
            build.to_str().unwrap(),
            &target.python_args[0],
            &target.python_args[1],
            "--out",
            oracle.to_str().unwrap(),
            "--aes-key",
            AES_KEY,
        ],
    );
}

/// What LangGraph reads of `thread`, after `extra` (`--remove IDS`, `--invoke TEXT`,
/// `--langgraph-prune`).
fn judge(python: &str, target: &Target, thread: &str, extra: &[&str]) -> Value {
    let judge = script("judge.py");
    let mut args = vec![
        judge.to_str().unwrap(),
        &target.python_args[0],
        &target.python_args[1],
        "--thread",
        thread,
    ];
    args.extend_from_slice(extra);
    run_python(python, &args)
}

fn memscope(home: &Path, url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memscope"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("LANGGRAPH_AES_KEY", AES_KEY)
        .env_remove("MEMSCOPE_FAULT_POINT")
        .args(["--json", "--db", url])
        .args(args)
        .output()
        .expect("memscope runs")
}

fn ok_json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "memscope failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn exit_code(output: &Output) -> Option<i32> {
    output.status.code()
}

fn message_ids(snapshot: &Value) -> Vec<String> {
    snapshot["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `get_state`'s checkpoint and messages, and how many checkpoints `get_state_history` lists.
fn seen(judged: &Value) -> Value {
    json!({
        "checkpoint_id": judged["state"]["checkpoint_id"],
        "messages": judged["state"]["messages"],
        "next": judged["state"]["next"],
        "history": judged["history"].as_array().unwrap().len(),
    })
}

/// Each message counts one (`token_counter=len`): six of the thread's ten fit.
const MAX_MESSAGES: &str = "6";

const TRIM: &[&str] = &[
    "--conversation",
    THREAD,
    "--strategy",
    "last",
    "--counter",
    "messages",
    "--max-tokens",
    MAX_MESSAGES,
];

fn trim_args(verb: &str, extra: &[&str]) -> Vec<String> {
    ["trim", verb]
        .iter()
        .chain(TRIM)
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect()
}

fn run(home: &Path, url: &str, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    memscope(home, url, &args)
}

/// Trim, compare with LangGraph's own update on `twin` (the same database before the trim),
/// undo, trim again and run one more turn.
fn trim_round(python: &str, main: &Target, twin: &Target, home: &Path) {
    let before = judge(python, main, THREAD, &[]);
    let url = main.url.as_str();

    let preview = ok_json(&run(home, url, &trim_args("preview", &[])));
    let removed_at: Vec<usize> = preview["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["step"] == "remove")
        .map(|s| s["index"].as_u64().unwrap() as usize)
        .collect();
    assert!(!removed_at.is_empty());
    let before_ids = message_ids(&before["state"]);
    let expected_removed: Vec<String> = removed_at.iter().map(|i| before_ids[*i].clone()).collect();
    // LangChain's own trim_messages with the trim history shows keeps the same messages.
    let by_langchain = judge(python, main, THREAD, &["--trim-messages", MAX_MESSAGES]);
    let kept_by_langchain: Vec<String> =
        serde_json::from_value(by_langchain["trimmed"].clone()).unwrap();
    let kept_by_preview: Vec<String> = before_ids
        .iter()
        .filter(|id| !expected_removed.contains(id))
        .cloned()
        .collect();
    assert_eq!(kept_by_preview, kept_by_langchain, "{preview:#}");
    assert_eq!(
        kept_by_preview.first(),
        before_ids.first(),
        "the system prompt stays"
    );
    assert_eq!(before["state"]["messages"][0]["type"], "system");
    assert_eq!(preview["messages_after"], kept_by_langchain.len());
    assert!(preview.get("removed_system").is_none(), "{preview:#}");

    // Read-only without --write, and nothing without --yes: the thread is as before.
    let refused = run(home, url, &trim_args("apply", &["--yes"]));
    assert_ne!(exit_code(&refused), Some(0));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--write"));
    let mut unconfirmed = vec!["--write".to_owned()];
    unconfirmed.extend(trim_args("apply", &[]));
    assert_eq!(exit_code(&run(home, url, &unconfirmed)), Some(2));
    assert_eq!(seen(&judge(python, main, THREAD, &[])), seen(&before));

    let mut apply = vec!["--write".to_owned()];
    apply.extend(trim_args("apply", &["--yes"]));
    let applied = ok_json(&run(home, url, &apply));
    let checkpoint = &applied["checkpoint"];
    let removed: Vec<String> = serde_json::from_value(checkpoint["removed"].clone()).unwrap();
    assert_eq!(
        removed, expected_removed,
        "apply removes what the preview removes"
    );

    let trimmed = judge(python, main, THREAD, &[]);
    let by_langgraph = judge(python, twin, THREAD, &["--remove", &removed.join(",")]);
    assert_eq!(
        trimmed["latest"], by_langgraph["latest"],
        "the rows LangGraph's update_state writes"
    );
    assert_eq!(
        trimmed["state"]["messages"],
        by_langgraph["state"]["messages"]
    );
    assert_eq!(trimmed["state"]["next"], by_langgraph["state"]["next"]);
    let kept: Vec<String> = before_ids
        .iter()
        .filter(|id| !removed.contains(id))
        .cloned()
        .collect();
    assert_eq!(message_ids(&trimmed["state"]), kept);
    assert_eq!(
        trimmed["state"]["checkpoint_id"],
        checkpoint["checkpoint_id"]
    );
    assert_eq!(
        trimmed["state"]["parent_checkpoint_id"],
        before["state"]["checkpoint_id"]
    );
    assert_eq!(trimmed["state"]["metadata"]["source"], "update");
    assert_eq!(
        trimmed["history"].as_array().unwrap().len(),
        before["history"].as_array().unwrap().len() + 1
    );
    // memscope's own history reads the same messages.
    let history = ok_json(&memscope(home, url, &["history", THREAD]));
    assert_eq!(history["messages"].as_array().unwrap().len(), kept.len());

    let mut undo: Vec<String> = ["--write", "trim", "undo", "--conversation", THREAD, "--yes"]
        .map(str::to_owned)
        .to_vec();
    ok_json(&run(home, url, &undo));
    let undone = judge(python, main, THREAD, &[]);
    assert_eq!(seen(&undone), seen(&before));
    assert_eq!(undone["latest"], before["latest"]);

    let again = ok_json(&run(home, url, &apply));
    let turned = judge(python, main, THREAD, &["--invoke", "One more question?"]);
    let after = &turned["after_invoke"];
    let after_ids = message_ids(after);
    assert_eq!(
        after_ids[..kept.len()],
        kept[..],
        "the next turn starts from the kept messages"
    );
    assert_eq!(
        after_ids.len(),
        kept.len() + 4,
        "a question, a tool call, its result, an answer"
    );
    assert_eq!(after["next"], json!([]));
    assert_ne!(after["checkpoint_id"], again["checkpoint"]["checkpoint_id"]);

    // A run went on from the trim: undo refuses, and the thread stays.
    let refused = run(home, url, &std::mem::take(&mut undo));
    assert_ne!(exit_code(&refused), Some(0));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("nothing to undo"));
}

/// The Python side's arguments and memscope's URL for a database of a test's own.
fn postgres_target(database: &PostgresDatabase) -> Target {
    Target {
        url: database.url.clone(),
        python_args: ["--postgres".to_owned(), database.url.clone()],
    }
}

fn sqlite_target(file: &Path) -> Target {
    Target {
        url: format!("sqlite://{}", file.display()),
        python_args: ["--sqlite".to_owned(), file.to_str().unwrap().to_owned()],
    }
}

fn skipped() -> Option<String> {
    let python = python();
    if python.is_none() {
        eprintln!("LangGraph test skipped ({PYTHON_VAR} is not set; .ci/langgraph sets it up)");
    }
    python
}

fn postgres_admin() -> Option<String> {
    let admin = std::env::var("MEMSCOPE_TEST_PG_URL").ok();
    if admin.is_none() {
        eprintln!("LangGraph test skipped (MEMSCOPE_TEST_PG_URL is not set)");
    }
    admin
}

/// Every msgpack value LangGraph stored (checkpoints and writes), decoded and encoded again
/// by memscope, gives back LangGraph's bytes.
fn encoder_gives_back_langgraphs_bytes(file: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let values: Vec<Vec<u8>> = runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(file)
            .read_only(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        let values = sqlx::query_scalar(
            "SELECT checkpoint FROM checkpoints WHERE type = 'msgpack' \
             UNION ALL SELECT value FROM writes WHERE type = 'msgpack'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        pool.close().await;
        values
    });
    assert!(values.len() > 50);
    for bytes in values {
        let decoded = decode_typed("msgpack", &bytes, None).unwrap();
        assert_eq!(encode(&decoded.value).unwrap(), bytes);
    }
}

#[test]
fn trim_is_langgraphs_update_state_on_sqlite() {
    let Some(python) = skipped() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("checkpoints.sqlite");
    let main = sqlite_target(&file);
    build(&python, &main, dir.path());
    encoder_gives_back_langgraphs_bytes(&file);
    let twin_file = dir.path().join("twin.sqlite");
    std::fs::copy(&file, &twin_file).unwrap();
    trim_round(&python, &main, &sqlite_target(&twin_file), dir.path());
    mark("trim_is_langgraphs_update_state_on_sqlite");
}

#[test]
fn trim_is_langgraphs_update_state_on_postgres() {
    let Some(python) = skipped() else { return };
    let Some(admin) = postgres_admin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let main = PostgresDatabase::create(admin, "lgw");
    build(&python, &postgres_target(&main), dir.path());
    let twin = main.copy("lgw");
    trim_round(
        &python,
        &postgres_target(&main),
        &postgres_target(&twin),
        dir.path(),
    );
    mark("trim_is_langgraphs_update_state_on_postgres");
}
