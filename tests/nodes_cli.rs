//! `nodes` and `node-context` as an operator runs them on the embedded demo: snapshots of both
//! views, the JSON a script reads, and the failures it must tell apart.
//!
//! Snapshots live in `tests/snapshots/`; `UPDATE_SNAPSHOTS=1 cargo test --test nodes_cli`
//! rewrites them after a deliberate change.

mod cli_support;

use std::path::Path;

use assert_cmd::Command;
use cli_support::memscope;
use serde_json::Value;

const RESEARCHER: &str = "1733817600001";
const WRITER: &str = "1733817600002";

fn stdout(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn json(command: &mut Command) -> Value {
    serde_json::from_str(&stdout(command.arg("--json"))).expect("--json prints JSON")
}

fn conversation_id(home: &Path, name: &str) -> String {
    let page = json(memscope(home).args(["conversations", "--search", name]));
    page["conversations"][0]["id"].as_str().unwrap().to_owned()
}

fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    assert_eq!(actual, expected, "snapshot {name} differs");
}

#[test]
fn opening_a_node_context_end_to_end() {
    let home = tempfile::tempdir().unwrap();
    let kyoto = conversation_id(home.path(), "Kyoto food trip");

    assert_snapshot(
        "nodes_pane.txt",
        &stdout(memscope(home.path()).args(["nodes", &kyoto])),
    );
    assert_snapshot(
        "node_context.txt",
        &stdout(memscope(home.path()).args(["node-context", &kyoto, RESEARCHER])),
    );

    let outputs = json(memscope(home.path()).args([
        "node-context",
        &kyoto,
        RESEARCHER,
        "--max-tokens",
        "500",
    ]));
    assert_eq!(outputs["source"], "outputs");
    assert_eq!(outputs["offloaded"], true);
    assert_eq!(outputs["problems"].as_array().unwrap().len(), 0);
    assert_eq!(outputs["messages"].as_array().unwrap().len(), 10);
    assert!(outputs["dropped"].as_u64().unwrap() > 0);
    let flagged: Vec<&Value> = outputs["timeline"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["disagreement"].is_null())
        .collect();
    assert_eq!(flagged.len(), 1);
    assert_eq!(
        flagged[0]["disagreement"]["disagreement"],
        "different_assistant"
    );

    let files = json(memscope(home.path()).args([
        "node-context",
        &kyoto,
        WRITER,
        "--source",
        "files",
        "--counter",
        "zero",
    ]));
    assert_eq!(files["messages"].as_array().unwrap().len(), 8);
    assert_eq!(files["tokens_before"], 0);
    assert!(
        files["warnings"][0]
            .as_str()
            .unwrap()
            .contains("nothing is pruned")
    );

    let prompts =
        json(memscope(home.path()).args(["node-context", &kyoto, WRITER, "--source", "prompts"]));
    assert_eq!(prompts["messages"][0]["role"], "system");
}

#[test]
fn empty_states_and_failures_are_told_apart() {
    let home = tempfile::tempdir().unwrap();
    let chat = conversation_id(home.path(), "Refund policy questions");
    let view = json(memscope(home.path()).args(["node-context", &chat, RESEARCHER]));
    assert_eq!(view["empty"]["empty"], "not_a_chatflow");
    let text = stdout(memscope(home.path()).args(["nodes", &chat]));
    assert!(text.contains("needs a conversation id"), "{text}");

    let kyoto = conversation_id(home.path(), "Kyoto food trip");
    // A node the conversation never ran is refused, with the nodes it has (not an empty view).
    let missing = memscope(home.path())
        .args(["node-context", &kyoto, "no-such-node", "--source", "files"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(3));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no node in this conversation \"no-such-node\"")
            && err.contains(&format!("{RESEARCHER} (Research)")),
        "{err}"
    );

    let unknown = memscope(home.path())
        .args([
            "node-context",
            "00000000-0000-0000-0000-00000000abcd",
            RESEARCHER,
        ])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no conversation"));

    let bad_source = memscope(home.path())
        .args(["node-context", &kyoto, RESEARCHER, "--source", "memory"])
        .output()
        .unwrap();
    assert_eq!(bad_source.status.code(), Some(2));
}

#[test]
fn a_node_context_is_a_trim_source_previewed_never_applied() {
    let home = tempfile::tempdir().unwrap();
    let kyoto = conversation_id(home.path(), "Kyoto food trip");
    let preview = |source: &str| {
        json(memscope(home.path()).args([
            "trim",
            "preview",
            "--conversation",
            &kyoto,
            "--node",
            RESEARCHER,
            "--source",
            source,
            "--max-messages",
            "2",
        ]))
    };
    let outputs = preview("outputs");
    let label = outputs["source"].as_str().unwrap();
    assert!(
        label.contains(&format!("node {RESEARCHER}")) && label.contains("node output context"),
        "{label}"
    );
    assert!(outputs["messages_before"].as_u64().unwrap() > 2);
    assert_eq!(outputs["messages_after"], 2);
    assert_eq!(outputs["mode"], "policy");
    let files = preview("files");
    assert!(
        files["source"]
            .as_str()
            .unwrap()
            .contains("node memory file")
    );
    let refused = memscope(home.path())
        .args([
            "trim",
            "apply",
            "--conversation",
            &kyoto,
            "--node",
            RESEARCHER,
            "--yes",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("a node context is a view computed at read time")
            && stderr.contains("never deleted"),
        "{stderr}"
    );
    let usage = memscope(home.path())
        .args(["trim", "preview", "--node", RESEARCHER])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2), "--node needs --conversation");
}

/// The node memory file of `node` in `conversation`, below the demo's storage root.
fn memory_file(home: &Path, conversation: &str, node: &str) -> std::path::PathBuf {
    let node_memory = home.join("data/memscope/storage/node_memory");
    std::fs::read_dir(&node_memory)
        .unwrap()
        .map(|app| {
            app.unwrap()
                .path()
                .join(conversation)
                .join(format!("{node}.json"))
        })
        .find(|path| path.exists())
        .expect("the demo writes the node's memory file")
}

#[test]
fn a_fifo_as_node_memory_file_is_a_problem_not_a_hang() {
    let home = tempfile::tempdir().unwrap();
    let kyoto = conversation_id(home.path(), "Kyoto food trip");
    let file = memory_file(home.path(), &kyoto, RESEARCHER);
    std::fs::remove_file(&file).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());

    // Opening a FIFO for reading blocks until a writer comes: without the type check the command
    // never returns, and the (generous) limit below fails the test.
    let limit = std::time::Duration::from_secs(120);
    let output = memscope(home.path())
        .args([
            "node-context",
            &kyoto,
            RESEARCHER,
            "--source",
            "files",
            "--json",
        ])
        .timeout(limit)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let view: Value = serde_json::from_slice(&output.stdout).unwrap();
    let shown = view.to_string();
    assert!(
        shown.contains(&*file.to_string_lossy()) && shown.contains("FIFO"),
        "the problem names the path and the reason: {shown}"
    );

    let doctor = memscope(home.path())
        .args(["doctor", "--json", "--max-per-kind", "100000"])
        .timeout(limit)
        .output()
        .unwrap();
    assert_eq!(doctor.status.code(), Some(1), "{doctor:?}");
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let fifo_findings: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.to_string().contains("FIFO"))
        .collect();
    assert_eq!(fifo_findings.len(), 1, "{report}");
    assert!(
        fifo_findings[0]
            .to_string()
            .contains(&*file.to_string_lossy())
    );
}
