//! Every story the demo names is true of a fresh demo database: each is checked through the
//! command an operator would use to see it, and a story without a check fails the test.

mod cli_support;

#[macro_use]
mod common;

use std::path::Path;

use cli_support::memscope_on as memscope;
use serde_json::Value;

/// Runs with `--json`; `code` is the expected exit code.
fn json(home: &Path, db: &str, args: &[&str], code: i32) -> Value {
    let output = memscope(home, db)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn len(value: &Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

/// The findings of `kind` in a doctor report.
fn findings<'a>(doctor: &'a Value, kind: &str) -> Vec<&'a Value> {
    doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

/// A base's sessions by id: (id, pending, due, total processed).
fn sessions(home: &Path, db: &str, base: &str) -> Vec<(String, i64, bool, i64)> {
    let mut sessions: Vec<(String, i64, bool, i64)> = json(home, db, &["mb", "sessions", base], 0)
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap().to_owned(),
                s["pending"].as_i64().unwrap(),
                s["due"].as_bool().unwrap(),
                s["total_processed"].as_i64().unwrap(),
            )
        })
        .collect();
    sessions.sort();
    sessions
}

const KYOTO_RESEARCH: &str = "1733817600001";

db_tests! {
    async fn every_named_story_holds_on_a_fresh_demo(db) {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let url = db.url().to_owned();
        let db = url.as_str();
        let demo = json(home, db, &["demo"], 0);
        let doctor = json(home, db, &["doctor", "--max-per-kind", "100000"], 1);
        let check = json(home, db, &["mb", "check"], 1);
        let checked = |id: &str| -> usize {
            let report = check
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["memory_base_id"] == id)
                .unwrap_or_else(|| panic!("mb check reports base {id}: {check:#}"));
            len(&report["mismatches"])
        };
        let chatflow_conversation = demo["stories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["title"] == "Chatflow node memory")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let research_context = json(home, db, &["node-context", &chatflow_conversation, KYOTO_RESEARCH], 0);

        let stories = demo["stories"].as_array().unwrap();
        assert!(stories.len() >= 19, "{demo:#}");
        for story in stories {
            let title = story["title"].as_str().unwrap();
            let id = story["id"].as_str().unwrap();
            match title {
                "README regeneration example" => {
                    let thread = json(home, db, &["thread", id], 0);
                    assert_eq!((len(&thread["thread"]), len(&thread["nodes"])), (2, 4), "{title}");
                }
                "Deep regeneration tree" => {
                    let tree = json(home, db, &["thread", id, "--mode", "tree"], 0);
                    assert_eq!(len(&tree["nodes"]), 72, "{title}");
                    assert!(len(&tree["thread"]) < 72, "{title}: siblings are skipped");
                }
                "Legacy conversation" | "Service-API conversation" => {
                    let thread = json(home, db, &["thread", id], 0);
                    assert_eq!(len(&thread["thread"]), len(&thread["nodes"]), "{title}: the whole conversation");
                    assert_eq!(thread["extra"]["comparison"]["kind"], "same", "{title}");
                }
                "Issue #39031" => {
                    let thread = json(home, db, &["thread", id], 0);
                    assert_eq!(thread["extra"]["comparison"]["kind"], "stopped_at_unrelated_root", "{title}");
                    assert!(findings(&doctor, "thread_divergence").iter().any(|f| f["conversation"] == id), "{title}");
                }
                "Interrupted answers" => {
                    let history = json(home, db, &["history", id], 0);
                    assert!(history["extra"]["popped"].is_string(), "{title}: the placeholder is popped");
                }
                "Files on both sides" => {
                    let history = json(home, db, &["history", id], 0);
                    let images = history.to_string().matches("\"type\":\"image\"").count();
                    assert!(images >= 3, "{title}: user, tool and remote images");
                }
                "History over budget" => {
                    assert!(findings(&doctor, "over_budget").iter().any(|f| f["conversation"] == id), "{title}");
                }
                "Chatflow node memory" => {
                    let nodes = json(home, db, &["nodes", id], 0);
                    let llm = nodes["nodes"].as_array().unwrap().iter().filter(|n| n["node_type"] == "llm").count();
                    assert_eq!(llm, 2, "{title}");
                }
                "Node memory disagreement" => {
                    let turn = research_context["timeline"]["turns"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|t| t["execution_id"] == id)
                        .unwrap_or_else(|| panic!("{title}: its turn is on the timeline"));
                    assert!(turn["disagreement"].is_object(), "{title}: {turn}");
                }
                "Invalid outputs JSON" => {
                    assert!(findings(&doctor, "unreadable_json").iter().any(|f| f["extra"]["node_execution_id"] == id), "{title}");
                }
                "Offloaded node outputs" => {
                    assert_eq!(research_context["execution_id"], id, "{title}");
                    assert_eq!(research_context["offloaded"], true, "{title}");
                }
                "Orphaned workflow run" => {
                    assert!(findings(&doctor, "dangling_workflow_run").iter().any(|f| f["extra"]["message_id"] == id), "{title}");
                }
                "Chat memory over its message limit" => {
                    let memory = json(home, db, &["chat-memory", "show", id, "--limit", "1000"], 0);
                    assert_eq!(memory["total"], 26, "{title}");
                    let preview = json(home, db, &["trim", "preview", "--chat-memory", id], 0);
                    assert!(preview["messages_after"].as_u64().unwrap() < preview["messages_before"].as_u64().unwrap(), "{title}: over its limit, a trim removes messages");
                }
                "Agent memory with tools and a summary" => {
                    let memory = json(home, db, &["chat-memory", "show", id, "--limit", "1000"], 0);
                    let text = memory.to_string();
                    assert!(text.contains("\"is_summary\":true") && text.contains("\"tool\""), "{title}: {text}");
                }
                "Threshold memory near its trigger" => {
                    let memory = json(home, db, &["chat-memory", "show", id, "--limit", "1"], 0);
                    assert_eq!(memory["total"], 480, "{title}: below its trigger of 500");
                }
                "Synced memory base" => {
                    assert_eq!(checked(id), 0, "{title}: consistent");
                    let sessions = sessions(home, db, id);
                    assert_eq!(sessions.len(), 2, "{title}");
                    assert_eq!((sessions[0].1, sessions[0].2, sessions[0].3), (2, false, 20), "{title}: {sessions:?}");
                    assert_eq!((sessions[1].1, sessions[1].2, sessions[1].3), (7, true, 0), "{title}: {sessions:?}");
                }
                "Memory base above its message threshold" => {
                    assert_eq!(checked(id), 0, "{title}: consistent");
                    let due: Vec<bool> = sessions(home, db, id).iter().map(|s| s.2).collect();
                    assert_eq!(due, [true, false], "{title}: one session above, one below");
                }
                "Memory base mismatch" => {
                    assert!(checked(id) > 0, "{title}: mb check reports the mismatch");
                }
                other => panic!("the demo names a story this test does not check: {other:?}"),
            }
        }
    }
}
