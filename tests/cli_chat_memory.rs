//! `chat-memory` on the demo database, as an operator types it: a node named as lists show it
//! (a prefix of its id, or its title), a memory made only when asked for, the node shown with
//! each memory, and an empty memory deleted while one with messages is refused.

mod cli_support;

use std::path::Path;

use assert_cmd::Command;
use cli_support::{demo, json, memscope_on as memscope, run};
use serde_json::Value;

fn memories(home: &Path, db: &str) -> Vec<Value> {
    let list = json(memscope(home, db).args(["chat-memory", "list"]));
    list["chat_memories"].as_array().unwrap().clone()
}

/// The demo's memory of the chat `chat`.
fn memory_of(home: &Path, db: &str, chat: &str) -> Value {
    memories(home, db)
        .into_iter()
        .find(|m| m["chat_id"] == chat)
        .unwrap()
}

fn add(home: &Path, db: &str, node: &str, chat: &str, extra: &[&str]) -> Command {
    let mut command = memscope(home, db);
    command.args([
        "chat-memory",
        "add",
        "--node",
        node,
        "--chat",
        chat,
        "--role",
        "user",
        "--content",
        "Is my refund through?",
    ]);
    command.args(extra);
    command
}

const CHAT: &str = "user-1042-session-7";

#[test]
fn a_node_as_the_tui_shows_it_adds_to_its_memory_and_a_typo_creates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let memory = memory_of(home.path(), &db, CHAT);
    let node = memory["memory_node_id"].as_str().unwrap().to_owned();
    let count = memories(home.path(), &db).len();

    // The first block of the node's id, as the TUI shows it, and its title in any case.
    for named in [&node[..8], "support chat history"] {
        let added = json(&mut add(home.path(), &db, named, CHAT, &[]));
        assert_eq!(added["chat_memory_id"], memory["id"], "{named}: {added}");
        assert_eq!(added["created"], false, "{named}: {added}");
    }
    let (stdout, _) = run(&mut add(home.path(), &db, &node[..8], CHAT, &[]), 0);
    assert!(
        stdout.contains(&format!("on memory node {node} (Support Chat History)")),
        "{stdout}"
    );
    assert_eq!(memories(home.path(), &db).len(), count);

    // A typo'd node is refused with the node meant, and nothing is created.
    let last = if node.as_bytes()[7] == b'0' { "1" } else { "0" };
    let typo = format!("{}{last}", &node[..7]);
    let (_, stderr) = run(&mut add(home.path(), &db, &typo, CHAT, &[]), 3);
    assert!(
        stderr.contains(&format!(
            "no memory node \"{typo}\"; valid, nearest first: {node}"
        )),
        "{stderr}"
    );
    // A chat the node has not is refused with the chat meant, and names --create.
    let (_, stderr) = run(
        &mut add(home.path(), &db, &node[..8], "user-1042-session-8", &[]),
        3,
    );
    assert!(
        stderr.contains(&format!("nearest first: {CHAT}"))
            && stderr.contains("pass --create to start a chat memory for a new chat on this node"),
        "{stderr}"
    );
    assert_eq!(memories(home.path(), &db).len(), count);

    // Asked for, a new chat's memory takes the node's title and policy.
    let created = json(&mut add(
        home.path(),
        &db,
        &node[..8],
        "user-1042-session-8",
        &["--create"],
    ));
    assert_eq!(created["created"], true, "{created}");
    let fresh = memory_of(home.path(), &db, "user-1042-session-8");
    assert_eq!(fresh["memory_node_id"].as_str(), Some(node.as_str()));
    assert_eq!(fresh["label"], "Support Chat History");
    assert_eq!(fresh["policy"], memory["policy"]);

    // Two new nodes whose ids start alike: their shared prefix is ambiguous.
    for new_node in ["edge-node-1", "edge-node-2"] {
        run(&mut add(home.path(), &db, new_node, "c", &["--create"]), 0);
    }
    let (_, stderr) = run(&mut add(home.path(), &db, "edge-node", "c", &[]), 3);
    assert!(stderr.contains("ambiguous"), "{stderr}");
    assert!(
        stderr.contains("edge-node-1 (Chat Memory)") && stderr.contains("edge-node-2"),
        "{stderr}"
    );
    let (_, stderr) = run(
        &mut add(home.path(), &db, &node[..8], CHAT, &["--label", "x"]),
        2,
    );
    assert!(stderr.contains("--create"), "{stderr}");
}

#[test]
fn list_and_show_name_each_memorys_node() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let memory = memory_of(home.path(), &db, CHAT);
    let node = memory["memory_node_id"].as_str().unwrap();
    assert_eq!(memory["node"]["id"].as_str(), Some(node), "{memory}");
    assert_eq!(memory["node"]["title"], "Support Chat History", "{memory}");

    let (list, _) = run(memscope(home.path(), &db).args(["chat-memory", "list"]), 0);
    let header = list.lines().next().unwrap();
    assert!(
        header.contains("node") && header.contains("title"),
        "{list}"
    );
    let line = list.lines().find(|l| l.contains(CHAT)).unwrap();
    assert!(
        line.contains(node) && line.contains("Support Chat History"),
        "{list}"
    );

    let id = memory["id"].as_str().unwrap();
    let shown = json(memscope(home.path(), &db).args(["chat-memory", "show", id]));
    assert_eq!(shown["node"]["id"].as_str(), Some(node), "{shown}");
    assert_eq!(shown["node"]["title"], "Support Chat History", "{shown}");
    let (text, _) = run(
        memscope(home.path(), &db).args(["chat-memory", "show", id]),
        0,
    );
    assert!(
        text.contains(&format!("node {node} (Support Chat History)")),
        "{text}"
    );
}

#[test]
fn only_an_empty_memory_is_dropped() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let count = memories(home.path(), &db).len();
    let busy = memory_of(home.path(), &db, CHAT);
    let busy_id = busy["id"].as_str().unwrap();
    let (_, stderr) = run(
        memscope(home.path(), &db).args(["chat-memory", "drop", busy_id, "--yes"]),
        3,
    );
    assert!(stderr.contains("holds 26 messages"), "{stderr}");
    assert!(stderr.contains("--scope all"), "{stderr}");
    assert_eq!(memories(home.path(), &db).len(), count);

    let node = busy["memory_node_id"].as_str().unwrap();
    let made = json(&mut add(home.path(), &db, node, "mistake", &["--create"]));
    let id = made["chat_memory_id"].as_str().unwrap();
    run(
        memscope(home.path(), &db).args(["chat-memory", "delete", id, "--scope", "all", "--yes"]),
        0,
    );
    let (_, stderr) = run(
        memscope(home.path(), &db).args(["chat-memory", "drop", id]),
        2,
    );
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(memories(home.path(), &db).len(), count + 1);
    run(
        memscope(home.path(), &db).args(["chat-memory", "drop", &id[..8], "--yes"]),
        0,
    );
    assert_eq!(memories(home.path(), &db).len(), count);
    assert!(!memories(home.path(), &db).iter().any(|m| m["id"] == id));
}
