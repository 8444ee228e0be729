//! memscope's `history` of OpenAI Agents SDK sessions compared with what the SDK itself sends
//! the model: `tests/openai_agents/build_sessions.py` builds sessions with openai-agents
//! 0.24.0's own Runner and scripted model (SQLiteSession, AdvancedSQLiteSession with a branch,
//! SQLAlchemySession on PostgreSQL) and records, for several `SessionSettings(limit=N)` (windows
//! that start inside a tool call among them) and each branch, the exact input of the next
//! model call. `history --json --limit N [--branch B]` must list exactly those items, in that
//! order, each `raw` the item as sent.
//!
//! The tests need the SDK's Python environment: `.ci/openai-agents` installs it and prints its
//! interpreter, which `MEMSCOPE_OPENAI_AGENTS_PYTHON` names. Without the variable the tests pass
//! and say they were skipped; with `MEMSCOPE_OPENAI_AGENTS_MARKER_DIR` set, each test that
//! really ran leaves a marker there, so CI can prove they ran. The PostgreSQL test also needs
//! `MEMSCOPE_TEST_PG_URL`; it creates its own database and drops it.

use std::path::Path;
use std::process::{Command, Output};

#[path = "support/postgres_database.rs"]
mod postgres_database;
use postgres_database::PostgresDatabase;

use serde_json::Value;

#[path = "openai_agents/trim.rs"]
mod trim;

const PYTHON_VAR: &str = "MEMSCOPE_OPENAI_AGENTS_PYTHON";
const MARKER_VAR: &str = "MEMSCOPE_OPENAI_AGENTS_MARKER_DIR";
/// The master key of the encrypted session `build_sessions.py` writes.
const ENCRYPTION_KEY: &str = "memscope-test-master-key";

fn python() -> Option<String> {
    std::env::var(PYTHON_VAR).ok().filter(|p| !p.is_empty())
}

fn mark(name: &str) {
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(name), "ran").unwrap();
    }
}

/// Runs the build script with `args` and returns the oracle it wrote.
fn build(python: &str, args: &[&str], dir: &Path) -> Value {
    let oracle = dir.join("oracle.json");
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_agents/build_sessions.py"))
        .args(args)
        .arg("--out")
        .arg(&oracle)
        .env_remove("OPENAI_API_KEY")
        .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
        .output()
        .expect("the SDK's python runs");
    assert!(
        output.status.success(),
        "build_sessions.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(oracle).unwrap()).unwrap()
}

fn memscope(url: &str, args: &[&str]) -> Output {
    memscope_with_key(url, Some(ENCRYPTION_KEY), args)
}

fn memscope_with_key(url: &str, key: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
    command.args(["--json", "--db", url]).args(args);
    match key {
        Some(key) => command.env("SESSION_ENCRYPTION_KEY", key),
        None => command.env_remove("SESSION_ENCRYPTION_KEY"),
    };
    command.output().expect("memscope runs")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "memscope failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every recorded input of the oracle against `history --json` of the same session, limit and
/// branch; a budget large enough that nothing is cut, and one that cuts, must list the same
/// items (past the cut with `kept: false`).
fn compare_histories(url: &str, oracle: &Value) {
    for (key, recorded) in oracle["inputs"].as_object().unwrap() {
        let session = recorded["session"].as_str().unwrap();
        for case in recorded["limits"].as_array().unwrap() {
            let mut args = vec!["history".to_owned(), session.to_owned()];
            if let Some(limit) = case["limit"].as_i64() {
                args.extend(["--limit".to_owned(), limit.to_string()]);
            }
            if let Some(branch) = recorded["branch"].as_str() {
                args.extend(["--branch".to_owned(), branch.to_owned()]);
            }
            if let Some(ttl) = recorded["ttl"].as_i64() {
                args.extend(["--ttl".to_owned(), ttl.to_string()]);
            }
            for budget in ["1000000", "40"] {
                let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
                args.extend(["--max-tokens", budget]);
                let history = json_of(&memscope(url, &args));
                let sent: Vec<&Value> = history["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| &m["raw"])
                    .collect();
                let expected: Vec<&Value> = case["input"].as_array().unwrap().iter().collect();
                assert_eq!(sent, expected, "{key} with limit {}", case["limit"]);
                if budget == "1000000" {
                    assert!(
                        history["messages"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .all(|m| m["kept"] == true)
                    );
                }
            }
        }
    }
}

/// `conversations` lists each session with the items `get_items()` returns, its rows that are
/// not JSON apart; an unknown session exits 3 pointing at the list.
fn compare_list(url: &str, oracle: &Value) {
    let listed = json_of(&memscope(url, &["conversations"]));
    let rows = listed["conversations"].as_array().unwrap();
    for recorded in oracle["inputs"].as_object().unwrap().values() {
        if !recorded["branch"].is_null() && recorded["branch"] != "main" {
            continue;
        }
        let session = recorded["session"].as_str().unwrap();
        let row = rows.iter().find(|r| r["id"] == session).unwrap();
        // An encrypted session's rows are all JSON envelopes; only the key tells which open.
        let json_rows = recorded.get("json_rows").unwrap_or(&recorded["stored"]);
        assert_eq!(row["messages"], *json_rows, "{session}");
        let unreadable = oracle["unreadable"][session].as_u64().unwrap_or(0);
        assert_eq!(row["extra"]["unreadable"], unreadable, "{session}");
    }
    let unknown = memscope(url, &["history", "no-such-session"]);
    assert_eq!(unknown.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("memscope conversations"), "{stderr}");
}

/// The advanced session's branches, their fork and their usage, as the SDK reports them.
fn compare_branches(url: &str, oracle: &Value) {
    let thread = json_of(&memscope(url, &["thread", "branched"]));
    let branches = thread["extra"]["branches"].as_array().unwrap();
    for expected in oracle["branches"].as_array().unwrap() {
        let id = &expected["branch_id"];
        let branch = branches.iter().find(|b| b["branch_id"] == *id).unwrap();
        assert_eq!(branch["message_count"], expected["message_count"], "{id}");
        assert_eq!(branch["user_turns"], expected["user_turns"], "{id}");
        let usage = &oracle["usage"]["branches"][id.as_str().unwrap()];
        assert_eq!(&branch["usage"], usage, "{id}");
    }
    let retry = branches.iter().find(|b| b["branch_id"] == "retry").unwrap();
    assert_eq!(retry["forked_from"], "main");
    assert_eq!(retry["after_turn"], 1);
    let unknown = memscope(url, &["history", "branched", "--branch", "nope"]);
    assert_eq!(unknown.status.code(), Some(3));
}

/// Without the key an encrypted session exits 3 naming the variable; with another key too;
/// without `--ttl` every item that opens is shown, with its age.
fn compare_keys(url: &str) {
    let without = memscope_with_key(url, None, &["history", "secret"]);
    assert_eq!(without.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&without.stderr).contains("SESSION_ENCRYPTION_KEY"));
    let wrong = memscope_with_key(url, Some("another key"), &["history", "secret"]);
    assert_eq!(wrong.status.code(), Some(3));
    assert!(wrong.stdout.is_empty());
    let all = json_of(&memscope(url, &["history", "secret"]));
    let messages = all["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["raw"]["content"],
        "sealed an hour ago"
    );
    assert!(
        messages
            .iter()
            .all(|m| m["extra"]["age_seconds"].as_i64().is_some())
    );
    let thread = json_of(&memscope(url, &["thread", "secret"]));
    assert_eq!(
        thread["thread"].as_array().unwrap().len(),
        3,
        "two turns and the old question; the plaintext item is skipped as the SDK skips it"
    );
    let with_ttl = json_of(&memscope(url, &["history", "secret", "--ttl", "600"]));
    let left_out = with_ttl["left_out"].as_array().unwrap();
    assert!(
        left_out
            .iter()
            .any(|l| l["reason"] == "expired" && l["messages"] == 1)
    );
    assert!(
        left_out
            .iter()
            .any(|l| l["reason"] == "not_encrypted" && l["messages"] == 1)
    );
}

/// The file and its side files, byte for byte, and which side files exist.
fn snapshot(file: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let path = format!("{}{suffix}", file.display());
            (path.clone(), std::fs::read(&path).ok())
        })
        .collect()
}

#[test]
fn sqlite_sessions_read_as_the_runner_sends_them() {
    let Some(python) = python() else {
        eprintln!(
            "OpenAI Agents test skipped ({PYTHON_VAR} is not set; .ci/openai-agents sets it up)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("sessions.db");
    let advanced = dir.path().join("advanced.db");
    let oracle = build(
        &python,
        &[
            "--sqlite",
            plain.to_str().unwrap(),
            "--advanced",
            advanced.to_str().unwrap(),
        ],
        dir.path(),
    );
    for file in [&plain, &advanced] {
        let before = snapshot(file);
        let url = format!("sqlite://{}", file.display());
        compare_histories(&url, &oracle_of(&oracle, file == &advanced));
        compare_list(&url, &oracle_of(&oracle, file == &advanced));
        if file == &advanced {
            compare_branches(&url, &oracle);
        } else {
            compare_keys(&url);
        }
        assert_eq!(snapshot(file), before, "a read changed {}", file.display());
    }
    mark("sqlite_sessions_read_as_the_runner_sends_them");
}

/// `demo --openai-agents` writes a file the SDK reads: every session's history, under every
/// limit and on each branch, is what the SDK's Runner would send of it.
#[test]
fn the_demo_file_is_read_by_the_sdk_as_memscope_reads_it() {
    let Some(python) = python() else {
        eprintln!(
            "OpenAI Agents test skipped ({PYTHON_VAR} is not set; .ci/openai-agents sets it up)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.db");
    let written = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "demo", "--openai-agents"])
        .arg(&file)
        .output()
        .expect("memscope runs");
    let report = json_of(&written);
    assert_eq!(report["sessions"], 4);
    let oracle = build(&python, &["--read", file.to_str().unwrap()], dir.path());
    assert_eq!(
        oracle["inputs"].as_object().unwrap().len(),
        5,
        "four sessions, one with two branches"
    );
    let url = format!("sqlite://{}", file.display());
    compare_histories(&url, &oracle);
    compare_list(&url, &oracle);
    mark("the_demo_file_is_read_by_the_sdk_as_memscope_reads_it");
}

/// The part of the oracle about one file: the advanced session's, or the others.
fn oracle_of(oracle: &Value, advanced: bool) -> Value {
    let mut part = oracle.clone();
    part["inputs"]
        .as_object_mut()
        .unwrap()
        .retain(|_, recorded| (recorded["session"] == "branched") == advanced);
    part
}

#[test]
fn postgres_sessions_read_as_the_runner_sends_them() {
    let Some(python) = python() else {
        eprintln!(
            "OpenAI Agents test skipped ({PYTHON_VAR} is not set; .ci/openai-agents sets it up)"
        );
        return;
    };
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        eprintln!("OpenAI Agents test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    };
    let database = PostgresDatabase::create(admin, "oa");
    let dir = tempfile::tempdir().unwrap();
    let oracle = build(&python, &["--postgres", &database.url], dir.path());
    compare_histories(&database.url, &oracle);
    compare_list(&database.url, &oracle);
    mark("postgres_sessions_read_as_the_runner_sends_them");
}
