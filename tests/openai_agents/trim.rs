//! `trim preview|apply|undo --conversation SESSION` judged by the SDK: after an apply, the
//! session's `get_items` is exactly the items the preview kept, and the Runner sends no tool
//! output without its call; after the undo, `get_items` is the session as it was.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::{PostgresDatabase, build, json_of, mark, memscope, python, snapshot};

/// `trim ARGS` on `url`, with memscope's data (its archives) in `data`.
fn trim(url: &str, data: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "--write", "--db", url, "trim"])
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env("XDG_CONFIG_HOME", data.join("config"))
        .output()
        .expect("memscope runs")
}

/// The items a trim document keeps, as stored.
fn kept(document: &Value) -> Vec<Value> {
    document["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kept"] == true)
        .map(|m| m["raw"].clone())
        .collect()
}

/// The session's items as the SDK's `get_items` returns them, and what its Runner sends.
fn sdk_view(oracle: &Value, session: &str) -> (Vec<Value>, Vec<Value>) {
    let recorded = &oracle["inputs"][session];
    let unlimited = recorded["limits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| case["limit"].is_null())
        .unwrap();
    (
        recorded["items"].as_array().unwrap().clone(),
        unlimited["input"].as_array().unwrap().clone(),
    )
}

/// Every tool output the Runner sends follows its call.
fn outputs_follow_their_calls(sent: &[Value]) {
    for (index, item) in sent.iter().enumerate() {
        if item["type"] == "function_call_output" {
            assert!(
                sent[..index]
                    .iter()
                    .any(|c| c["type"] == "function_call" && c["call_id"] == item["call_id"]),
                "output {} is sent without its call",
                item["call_id"]
            );
        }
    }
}

/// How many newest items to keep so that the oldest kept would be a tool output.
fn keep_starting_on_an_output(items: &[Value]) -> usize {
    let at = items
        .iter()
        .rposition(|item| item["type"] == "function_call_output")
        .expect("the session ran a tool");
    items.len() - at
}

/// Previews, applies and undoes a trim of `session` that the limit alone would start on a tool
/// output, each step read back through the SDK with `read` (build_sessions.py's arguments).
fn trim_judged_by_the_sdk(python: &str, url: &str, read: &[&str], session: &str, dir: &Path) {
    let data = dir.join("data");
    let before = build(python, read, dir);
    let (items_before, _) = sdk_view(&before, session);
    let keep = keep_starting_on_an_output(&items_before).to_string();

    let preview = json_of(&trim(
        url,
        &data,
        &["preview", "--conversation", session, "--keep-last", &keep],
    ));
    assert_eq!(preview["source"], "openai-agents");
    assert_eq!(preview["moved"], 1, "the cut moves past the output");
    let planned = kept(&preview);
    assert_eq!(planned.len() + 1, keep.parse::<usize>().unwrap());
    let unchanged = build(python, read, dir);
    assert_eq!(
        sdk_view(&unchanged, session).0,
        items_before,
        "a preview wrote"
    );

    let refused = trim(
        url,
        &data,
        &["apply", "--conversation", session, "--keep-last", &keep],
    );
    assert!(!refused.status.success(), "apply without --yes");
    assert_eq!(sdk_view(&build(python, read, dir), session).0, items_before);

    let applied = json_of(&trim(
        url,
        &data,
        &[
            "apply",
            "--conversation",
            session,
            "--keep-last",
            &keep,
            "--yes",
        ],
    ));
    assert!(applied["archive"].is_string());
    let after = build(python, read, dir);
    let (items_after, sent_after) = sdk_view(&after, session);
    assert_eq!(items_after, planned, "get_items is what the trim kept");
    assert_eq!(
        items_after,
        items_before[items_before.len() - planned.len()..]
    );
    outputs_follow_their_calls(&sent_after);

    let undone = json_of(&trim(
        url,
        &data,
        &["undo", "--conversation", session, "--yes"],
    ));
    assert_eq!(
        undone["rows_restored"].as_u64().unwrap() as usize,
        applied["rows_deleted"].as_u64().unwrap() as usize
    );
    let restored = build(python, read, dir);
    assert_eq!(
        sdk_view(&restored, session).0,
        items_before,
        "undo restores"
    );
    let again = trim(url, &data, &["undo", "--conversation", session, "--yes"]);
    assert_eq!(again.status.code(), Some(3), "nothing left to undo");
}

#[test]
fn a_sqlite_session_trim_is_what_get_items_then_returns() {
    let Some(python) = python() else {
        eprintln!("OpenAI Agents test skipped (MEMSCOPE_OPENAI_AGENTS_PYTHON is not set)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sessions.db");
    let advanced = dir.path().join("advanced.db");
    let path = file.to_str().unwrap();
    build(
        &python,
        &["--sqlite", path, "--advanced", advanced.to_str().unwrap()],
        dir.path(),
    );
    let url = format!("sqlite://{path}");
    trim_judged_by_the_sdk(&python, &url, &["--read", path], "long", dir.path());

    // Branches share their items, and an encrypted session's are sealed: refused, unwritten.
    let data = dir.path().join("data");
    for (file, session) in [(&advanced, "branched"), (&file, "secret")] {
        let before = snapshot(file);
        let url = format!("sqlite://{}", file.display());
        let refused = trim(
            &url,
            &data,
            &[
                "apply",
                "--conversation",
                session,
                "--keep-last",
                "2",
                "--yes",
            ],
        );
        assert_eq!(refused.status.code(), Some(2), "{session}");
        assert_eq!(snapshot(file), before, "{session} was written");
    }
    mark("a_sqlite_session_trim_is_what_get_items_then_returns");
}

#[test]
fn a_postgres_session_trim_is_what_get_items_then_returns() {
    let Some(python) = python() else {
        eprintln!("OpenAI Agents test skipped (MEMSCOPE_OPENAI_AGENTS_PYTHON is not set)");
        return;
    };
    let Ok(admin) = std::env::var("MEMSCOPE_TEST_PG_URL") else {
        eprintln!("OpenAI Agents test skipped (MEMSCOPE_TEST_PG_URL is not set)");
        return;
    };
    let database = PostgresDatabase::create(admin, "oa_trim");
    let dir = tempfile::tempdir().unwrap();
    build(&python, &["--postgres", &database.url], dir.path());
    let read = ["--read-postgres", database.url.as_str()];
    trim_judged_by_the_sdk(&python, &database.url, &read, "long", dir.path());
    mark("a_postgres_session_trim_is_what_get_items_then_returns");
}

/// Without `--write`, the database opens read-only and nothing is written.
#[test]
fn a_trim_without_write_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.db");
    let written = std::process::Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(["--json", "demo", "--openai-agents"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(written.status.success());
    let before = snapshot(&file);
    let url = format!("sqlite://{}", file.display());
    let listed = json_of(&memscope(&url, &["conversations"]));
    let session = listed["conversations"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = memscope(
        &url,
        &[
            "trim",
            "apply",
            "--conversation",
            &session,
            "--keep-last",
            "1",
            "--yes",
        ],
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--write"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(snapshot(&file), before);
    mark("a_trim_without_write_changes_nothing");
}
