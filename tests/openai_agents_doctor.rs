//! `doctor --limit N` on an OpenAI Agents SDK session file (the demo's, written as the SDK
//! writes it): the app's `SessionSettings(limit)` is not in the database, so the operator
//! names it, and doctor finds the sessions whose window starts between a tool call and its
//! output. The setting is the source's: another database refuses it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn memscope(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args(args)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .output()
        .expect("memscope runs")
}

fn demo(home: &Path) -> String {
    let file = home.join("sessions.db");
    let written = memscope(home, &["demo", "--openai-agents", file.to_str().unwrap()]);
    assert!(written.status.success(), "{written:?}");
    format!("sqlite://{}", file.display())
}

/// The kinds and sessions of what `doctor --json ARGS` found.
fn found(home: &Path, url: &str, args: &[&str]) -> Vec<(String, String)> {
    let output = memscope(home, &[&["--json", "--db", url, "doctor"], args].concat());
    assert_eq!(output.status.code(), Some(1), "findings exit 1: {output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_owned(),
                f["conversation"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_limit_finds_the_windows_that_part_a_call_from_its_output() {
    let home = tempfile::tempdir().unwrap();
    let url = demo(home.path());
    let window = |found: &[(String, String)]| -> Vec<String> {
        found
            .iter()
            .filter(|(kind, _)| kind == "window_cuts_call")
            .map(|(_, session)| session.clone())
            .collect()
    };
    // Without the app's limit nothing is windowed.
    assert!(window(&found(home.path(), &url, &[])).is_empty());
    // trip-planner ends on a call, its output and the answer: a window of 2 starts on the
    // output, one of 3 on the call.
    let two = window(&found(home.path(), &url, &["--limit", "2"]));
    assert!(two.contains(&"trip-planner".to_owned()), "{two:?}");
    let three = window(&found(home.path(), &url, &["--limit", "3"]));
    assert!(!three.contains(&"trip-planner".to_owned()), "{three:?}");
}

#[test]
fn another_source_refuses_the_limit_and_names_what_it_takes() {
    let home = tempfile::tempdir().unwrap();
    let refused = memscope(home.path(), &["doctor", "--limit", "2"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--limit is not taken by `doctor` on a memscope database"),
        "{stderr}"
    );
}
