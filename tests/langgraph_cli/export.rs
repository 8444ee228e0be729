//! `memscope export THREAD` on a database LangGraph wrote: one bundle holding what `thread` and
//! `history` print with --json (at the latest checkpoint, or `--leaf`), with the credential a
//! user pasted removed, the database named, and an unknown thread refused without a file.

use serde_json::Value;

use super::{ids, json_of, memscope};

pub fn check(url: &str, oracle: &Value, key: &str) {
    let threads = oracle["threads"].as_object().unwrap();
    let output = memscope(url, Some(key), &["export", "pruned"]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let bundle = json_of(&output);
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("postgres://ops:[redacted]@db.internal/app"),
        "{text}"
    );
    assert!(bundle["secrets_redacted"].as_u64().unwrap() >= 1);
    assert_eq!(bundle["database"]["source"], "LangGraph checkpoint");
    let backend = if url.starts_with("sqlite") {
        "sqlite"
    } else {
        "postgres"
    };
    assert_eq!(bundle["database"]["backend"], backend);
    assert_eq!(bundle["conversation"], "pruned");

    // The parts are what the commands print.
    let thread = json_of(&memscope(url, Some(key), &["thread", "pruned"]));
    assert_eq!(bundle["thread"], thread);
    let state = &threads["pruned"]["state"];
    assert_eq!(
        bundle["history"]["extra"]["checkpoint_id"],
        state["checkpoint_id"]
    );
    let kinds = |messages: &Value| -> Vec<Value> {
        ids(messages)
            .into_iter()
            .map(|m| Value::Array(vec![m[0].clone(), m[1].clone()]))
            .collect()
    };
    assert_eq!(
        kinds(&bundle["history"]["messages"]),
        kinds(&state["messages"])
    );
    let history = json_of(&memscope(url, Some(key), &["history", "pruned"]));
    assert_eq!(bundle["history"]["tokens_before"], history["tokens_before"]);

    // --leaf: the path and the messages at a past checkpoint of the time-travel thread.
    let past = threads["agent"]["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    let leaf = past["checkpoint_id"].as_str().unwrap();
    let at_leaf = json_of(&memscope(
        url,
        Some(key),
        &["export", "agent", "--leaf", leaf],
    ));
    assert_eq!(at_leaf["thread"]["extra"]["leaf"], leaf);
    assert_eq!(at_leaf["history"]["extra"]["checkpoint_id"], leaf);
    assert_eq!(ids(&at_leaf["history"]["messages"]), ids(&past["messages"]));

    // An unknown thread writes nothing and fails as `thread` does.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let refused = memscope(
        url,
        Some(key),
        &[
            "export",
            "no-such-thread",
            "--out",
            missing.to_str().unwrap(),
        ],
    );
    assert_eq!(refused.status.code(), Some(3));
    assert!(!missing.exists());
}
