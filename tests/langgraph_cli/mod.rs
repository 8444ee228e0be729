//! The `memscope` binary on a database LangGraph wrote: `conversations`, `thread` and
//! `history` compared with LangGraph's `get_state` and `get_state_history` of each thread;
//! `doctor`, `export` and the list without the key in their own files, and the demo file
//! LangGraph reads back.

pub mod demo;
pub mod doctor;
pub mod export;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

pub fn memscope(url: &str, key: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
    command.args(["--json", "--db", url]).args(args);
    match key {
        Some(key) => command.env("LANGGRAPH_AES_KEY", key),
        None => command.env_remove("LANGGRAPH_AES_KEY"),
    };
    command.output().expect("memscope runs")
}

pub fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "memscope failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// LangChain messages by their type, id, content and tool call: LangGraph's own, or the
/// message each message of `history --json` hands the model (its `raw`).
pub fn ids(messages: &Value) -> Vec<Value> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| if m.get("raw").is_some() { &m["raw"] } else { m })
        .map(|m| serde_json::json!([m["type"], m["id"], m["content"], m["tool_call_id"]]))
        .collect()
}

/// Every thread of the oracle, read through the CLI with `key`; without the key an encrypted
/// thread's history fails with exit 3 naming the variable, and the list still lists it.
pub fn compare_cli(url: &str, oracle: &Value, key: &str, encrypted_thread: Option<&str>) {
    let threads = oracle["threads"].as_object().unwrap();
    let listed = json_of(&memscope(url, Some(key), &["conversations"]));
    let rows = listed["conversations"].as_array().unwrap();
    assert_eq!(rows.len(), threads.len());
    for (thread_id, expected) in threads {
        let row = rows.iter().find(|r| r["id"] == *thread_id).unwrap();
        let state = &expected["state"];
        assert_eq!(
            row["extra"]["latest_checkpoint"], state["checkpoint_id"],
            "{thread_id}"
        );
        assert_eq!(
            row["messages"],
            state["messages"].as_array().unwrap().len(),
            "{thread_id}"
        );
        assert_eq!(
            row["extra"]["checkpoints"],
            expected["checkpoints"].as_array().unwrap().len(),
            "{thread_id}"
        );

        let tree = json_of(&memscope(url, Some(key), &["thread", thread_id]));
        let history = expected["history"].as_array().unwrap();
        // The root graph's checkpoints; a subgraph's are drawn under its heading after the
        // checkpoint that ran it.
        let nodes: Vec<&Value> = tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["extra"]["namespace"] == "")
            .collect();
        assert_eq!(nodes.len(), history.len(), "{thread_id}");
        for snapshot in history {
            let node = nodes
                .iter()
                .find(|n| n["id"] == snapshot["checkpoint_id"])
                .unwrap();
            assert_eq!(node["parent"], snapshot["parent_checkpoint_id"]);
            assert_eq!(node["extra"]["source"], snapshot["metadata"]["source"]);
            assert_eq!(node["extra"]["step"], snapshot["metadata"]["step"]);
        }
        // get_state_history lists newest first, down the path from the latest checkpoint.
        assert_eq!(
            tree["thread"].as_array().unwrap().last(),
            Some(&state["checkpoint_id"])
        );
        assert_eq!(tree["extra"]["latest"], state["checkpoint_id"]);

        let read = json_of(&memscope(url, Some(key), &["history", thread_id]));
        assert_eq!(read["extra"]["checkpoint_id"], state["checkpoint_id"]);
        assert_eq!(
            ids(&read["messages"]),
            ids(&state["messages"]),
            "{thread_id}"
        );
        for snapshot in history {
            let leaf = snapshot["checkpoint_id"].as_str().unwrap();
            let read = json_of(&memscope(
                url,
                Some(key),
                &["history", thread_id, "--leaf", leaf],
            ));
            assert_eq!(
                ids(&read["messages"]),
                ids(&snapshot["messages"]),
                "{thread_id} at {leaf}"
            );
        }

        // A search finds a thread by the text of its latest state's messages.
        let last_text = state["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find_map(|m| m["content"].as_str().filter(|text| !text.is_empty()));
        if let Some(text) = last_text {
            let found = json_of(&memscope(
                url,
                Some(key),
                &["conversations", "--search", &text.to_uppercase()],
            ));
            let found = found["conversations"].as_array().unwrap();
            assert!(
                found.iter().any(|r| r["id"] == *thread_id),
                "{thread_id}: {text}"
            );
        }
    }
    let unknown = memscope(url, Some(key), &["history", "no-such-thread"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no thread no-such-thread"));

    let Some(encrypted_thread) = encrypted_thread else {
        return;
    };
    let refused = memscope(url, None, &["history", encrypted_thread]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("LANGGRAPH_AES_KEY"));

    // The list without the key: every thread, the encrypted one's messages unreadable and why.
    let listed = json_of(&memscope(url, None, &["conversations"]));
    let rows = listed["conversations"].as_array().unwrap();
    assert_eq!(rows.len(), threads.len());
    for row in rows {
        if row["id"] == encrypted_thread {
            assert_eq!(row["messages"], Value::Null);
            assert!(
                row["problem"]
                    .as_str()
                    .unwrap()
                    .contains("LANGGRAPH_AES_KEY"),
                "{row}"
            );
        } else {
            assert!(row["messages"].is_u64(), "{row}");
        }
    }
    let text = memscope_text(url, None, &["conversations"]);
    assert!(
        text.contains(&format!("unreadable: {encrypted_thread}: "))
            && text.contains("LANGGRAPH_AES_KEY"),
        "{text}"
    );

    // A search prints its matches as it finds them: thread ids and message text, any case;
    // the encrypted thread matches by its id only.
    let found = memscope_text(url, None, &["conversations", "--search", "ANSWER IS"]);
    let expected: Vec<&String> = threads
        .iter()
        .filter(|(id, t)| {
            *id != encrypted_thread
                && t["state"]["messages"].as_array().unwrap().iter().any(|m| {
                    m["content"]
                        .as_str()
                        .is_some_and(|c| c.to_lowercase().contains("answer is"))
                })
        })
        .map(|(id, _)| id)
        .collect();
    assert!(!expected.is_empty());
    let listed_ids: Vec<&str> = found
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| threads.contains_key(*id))
        .collect();
    assert_eq!(listed_ids.len(), expected.len(), "{found}");
    let by_id = memscope_text(url, None, &["conversations", "--search", encrypted_thread]);
    assert!(by_id.contains("unreadable"), "{by_id}");
    let json = json_of(&memscope(
        url,
        None,
        &["conversations", "--search", "answer is"],
    ));
    assert_eq!(
        json["conversations"].as_array().unwrap().len(),
        expected.len()
    );
}

/// The text a command prints, which must succeed.
pub fn memscope_text(url: &str, key: Option<&str>, args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
    command.args(["--db", url]).args(args);
    match key {
        Some(key) => command.env("LANGGRAPH_AES_KEY", key),
        None => command.env_remove("LANGGRAPH_AES_KEY"),
    };
    let output = command.output().expect("memscope runs");
    assert!(
        output.status.success(),
        "memscope failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The files of a directory, by name.
pub fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
