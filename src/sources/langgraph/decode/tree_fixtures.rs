//! Checkpoint rows for the tests of the tree and of what is built on it (`inspect/`).

use serde_json::json;

use super::tree::{CheckpointRow, TaskRow};

pub fn row(ns: &str, id: &str, parent: Option<&str>, source: &str, step: i64) -> CheckpointRow {
    CheckpointRow {
        checkpoint_ns: ns.to_owned(),
        checkpoint_id: id.to_owned(),
        parent_checkpoint_id: parent.map(str::to_owned),
        metadata: json!({"source": source, "step": step, "parents": {}}),
    }
}

pub fn task(ns: &str, id: &str, path: &str) -> TaskRow {
    TaskRow {
        checkpoint_ns: ns.to_owned(),
        checkpoint_id: id.to_owned(),
        task_path: path.to_owned(),
    }
}

/// The shape of the oracle's `agent` thread: a turn, a time-travel branch from its end, and an
/// operator's update on the newest branch. Ids sort chronologically, as LangGraph's do.
pub fn agent_rows() -> Vec<CheckpointRow> {
    vec![
        row("", "1-a", None, "input", -1),
        row("", "1-b", Some("1-a"), "loop", 0),
        row("", "1-c", Some("1-b"), "loop", 1),
        row("", "1-d", Some("1-c"), "input", 2),
        row("", "1-e", Some("1-d"), "loop", 3),
        row("", "1-f", Some("1-c"), "input", 2),
        row("", "1-g", Some("1-f"), "loop", 3),
        row("", "1-h", Some("1-g"), "update", 4),
    ]
}

/// [`agent_rows`] with a subgraph (`worker:abc`) run by a task that started from `1-c`.
pub fn agent_rows_with_subgraph() -> Vec<CheckpointRow> {
    let mut rows = agent_rows();
    for (id, parent, step) in [("1-c1", None, -1), ("1-c2", Some("1-c1"), 0)] {
        let mut sub = row(
            "worker:abc",
            id,
            parent,
            if step < 0 { "input" } else { "loop" },
            step,
        );
        sub.metadata["parents"] = json!({"": "1-c"});
        rows.push(sub);
    }
    rows
}
