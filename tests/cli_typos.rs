//! The operator's first hour on the real binary: a typo never writes, unknown names fail (exit 3)
//! listing the valid ones, a node is found by its title, and the small failures read clearly.

mod cli_support;

use std::path::Path;

use cli_support::{memscope_on, run};
use serde_json::Value;

/// A demo database of its own in `home`.
fn demo(home: &Path) -> String {
    let db = format!("sqlite://{}", home.join("m.db").display());
    run(memscope_on(home, &db).arg("demo"), 0);
    db
}

fn sessions(home: &Path, db: &str) -> Vec<String> {
    let (out, _) = run(
        memscope_on(home, db).args(["mb", "sessions", "Support memory", "--json"]),
        0,
    );
    let rows: Value = serde_json::from_str(&out).unwrap();
    let mut ids: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// The JSON error a failing `--json` command prints on standard error.
fn json_error(stderr: &str) -> Value {
    serde_json::from_str::<Value>(stderr.trim()).unwrap()["error"].clone()
}

#[test]
fn a_sync_of_an_unknown_session_is_refused_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let before = sessions(home.path(), &db);

    let (_, err) = run(
        memscope_on(home.path(), &db).args(["mb", "sync", "Support memory", "--session", "nope"]),
        3,
    );
    assert!(
        err.contains("no session in memory base Support memory \"nope\"")
            && err.contains("support-ada-0001"),
        "the valid sessions are listed: {err}"
    );
    // A trailing space is refused with the session it looks like.
    let (_, err) = run(
        memscope_on(home.path(), &db).args([
            "mb",
            "sync",
            "Support memory",
            "--session",
            "support-ada-0001 ",
        ]),
        3,
    );
    assert!(
        err.contains("\"support-ada-0001\" differs from it only by spaces"),
        "{err}"
    );
    assert_eq!(
        sessions(home.path(), &db),
        before,
        "no session row was added"
    );

    // A real session still syncs.
    run(
        memscope_on(home.path(), &db).args([
            "mb",
            "sync",
            "Support memory",
            "--session",
            "support-ada-0002",
        ]),
        0,
    );
}

#[test]
fn unknown_sessions_bases_and_jobs_fail_with_exit_3_listing_the_valid_ones() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());

    let (_, err) = run(
        memscope_on(home.path(), &db).args([
            "mb",
            "search",
            "Support memory",
            "refund",
            "--session",
            "typo",
            "--json",
        ]),
        3,
    );
    let error = json_error(&err);
    assert_eq!(error["kind"], "not-found", "{error}");
    assert!(
        error.get("hint").is_none_or(|h| h.is_string()),
        "no null hint: {error}"
    );

    let (_, err) = run(
        memscope_on(home.path(), &db).args(["mb", "show", "Suport memory"]),
        3,
    );
    assert!(
        err.contains("no memory base \"Suport memory\"; valid, nearest first: Support memory"),
        "{err}"
    );

    let (_, err) = run(
        memscope_on(home.path(), &db).args(["mb", "cancel", "deadbeef"]),
        3,
    );
    assert!(
        err.contains("no ingestion job \"deadbeef\"") && !err.contains("not queued or running"),
        "{err}"
    );
}

#[test]
fn a_node_is_found_by_its_title_with_the_output_its_id_gives() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let (page, _) = run(
        memscope_on(home.path(), &db).args([
            "conversations",
            "--search",
            "Kyoto food trip",
            "--json",
        ]),
        0,
    );
    let page: Value = serde_json::from_str(&page).unwrap();
    let kyoto = page["conversations"][0]["id"].as_str().unwrap().to_owned();

    let (by_id, _) = run(
        memscope_on(home.path(), &db).args(["node-context", &kyoto, "1733817600001"]),
        0,
    );
    let (by_title, _) = run(
        memscope_on(home.path(), &db).args(["node-context", &kyoto, "Research"]),
        0,
    );
    assert_eq!(by_title, by_id);
    assert!(by_id.contains("node 1733817600001 \"Research\""), "{by_id}");

    let (_, err) = run(
        memscope_on(home.path(), &db).args(["node-context", &kyoto, "Reserch"]),
        3,
    );
    assert!(
        err.contains("no node in this conversation \"Reserch\"; valid, nearest first: 1733817600001 (Research)"),
        "{err}"
    );
}

#[test]
fn small_failures_read_clearly() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());

    // A bad flag value is a usage error.
    let (_, err) = run(
        memscope_on(home.path(), &db).args(["tokens", "--counter", "foo", "--input", "-"]),
        2,
    );
    assert!(
        err.contains("openai"),
        "the valid counters are named: {err}"
    );

    let (_, err) = run(memscope_on(home.path(), &db).args(["thread", ""]), 3);
    // The message has no double space; the way out follows on its own indented line.
    let message = err.lines().next().unwrap_or_default();
    assert!(!message.contains("  "), "no double space: {err:?}");
    assert!(err.contains("no conversation \"\""), "{err}");

    let text = home.path().join("notes.txt");
    std::fs::write(&text, "these are my notes, not a database\n").unwrap();
    let (_, err) = run(
        memscope_on(home.path(), text.to_str().unwrap()).args(["conversations"]),
        3,
    );
    assert!(
        err.contains("is not a SQLite database") && !err.contains("code: 26"),
        "{err}"
    );
}

#[test]
fn json_gives_the_counter_encoding_and_model_as_fields() {
    let home = tempfile::tempdir().unwrap();
    let input = home.path().join("messages.json");
    std::fs::write(&input, r#"[{"role":"user","content":"hello there"}]"#).unwrap();
    let (out, _) = run(
        cli_support::memscope(home.path()).args([
            "tokens",
            "--input",
            input.to_str().unwrap(),
            "--counter",
            "raw",
            "--model",
            "gpt-4o",
            "--json",
        ]),
        0,
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["counter_kind"], "raw", "{report}");
    assert_eq!(report["encoding"], "o200k_base", "{report}");
    assert_eq!(report["encoding_is_fallback"], false, "{report}");
    assert_eq!(report["model"], "gpt-4o", "{report}");
    assert!(
        report["counter"].as_str().unwrap().starts_with("raw: "),
        "the sentence stays"
    );
}
