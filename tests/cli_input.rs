//! What the CLI accepts: the short ids lists show (any unique prefix, as git takes commit ids,
//! an ambiguous one named with its candidates), and numbers checked at the edge with a clear
//! message instead of being taken, clamped or wrapped.

mod cli_support;

use cli_support::{demo, json, memscope_on as memscope, run};
use serde_json::Value;

fn ids(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The shortest prefix at least two of `ids` share.
fn shared_prefix(ids: &[String]) -> String {
    (1..8)
        .find_map(|len| {
            ids.iter().find_map(|id| {
                let prefix = &id[..len];
                let count = ids.iter().filter(|i| i.starts_with(prefix)).count();
                (count > 1).then(|| prefix.to_owned())
            })
        })
        .expect("two demo ids share a first character")
}

#[test]
fn short_ids_open_conversations_and_chat_memories() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let list = json(memscope(home.path(), &db).args(["conversations", "--limit", "200"]));
    let conversations = ids(&list, "conversations");
    let full = &conversations[0];
    let short = full.split('-').next().unwrap();
    for command in ["thread", "history", "nodes"] {
        let (stdout, _) = run(memscope(home.path(), &db).args([command, short]), 0);
        assert!(
            stdout.contains(full.as_str()),
            "{command} {short}:\n{stdout}"
        );
    }
    let upper = short.to_uppercase();
    run(
        memscope(home.path(), &db).args(["thread", upper.as_str()]),
        0,
    );

    let memories = json(memscope(home.path(), &db).args(["chat-memory", "list"]));
    let memory = &ids(&memories, "chat_memories")[0];
    let short = &memory[..8];
    let shown = json(memscope(home.path(), &db).args(["chat-memory", "show", short]));
    assert_eq!(shown["id"].as_str(), Some(memory.as_str()), "{shown}");

    let prefix = shared_prefix(&conversations);
    let (_, stderr) = run(memscope(home.path(), &db).args(["thread", &prefix]), 3);
    assert!(stderr.contains("ambiguous"), "{stderr}");
    let candidates: Vec<&String> = conversations
        .iter()
        .filter(|id| id.starts_with(&prefix))
        .collect();
    assert!(stderr.contains(candidates[0].as_str()), "{stderr}");

    let (_, stderr) = run(memscope(home.path(), &db).args(["thread", "zzzz"]), 3);
    assert!(stderr.contains("no conversation zzzz"), "{stderr}");
}

#[test]
fn nonsense_numbers_are_refused_with_a_clear_message() {
    let home = tempfile::tempdir().unwrap();
    let db = "sqlite:///nonexistent/never-opened.db";
    for (args, says) in [
        (
            vec!["history", "x", "--max-tokens", "-5"],
            "-5 is not in 0..",
        ),
        (vec!["conversations", "--limit", "0"], "0 is not in 1.."),
        (
            vec!["chat-memory", "show", "x", "--limit", "0"],
            "0 is not in 1..",
        ),
        (
            vec!["chat-memory", "show", "x", "--offset", "-1"],
            "-1 is not in 0..",
        ),
        (
            vec!["mb", "create", "b", "--flow", "f", "--threshold", "0"],
            "threshold 0 is below 1",
        ),
        (
            vec!["mb", "update", "b", "--threshold", "9999999999"],
            "above the largest, 2147483647",
        ),
        (
            vec!["mb", "update", "b", "--threshold", "-3"],
            "threshold -3 is below 1",
        ),
        (vec!["mb", "search", "b", "q", "--top-k", "0"], "at least 1"),
        (vec!["mb", "jobs", "--limit", "0"], "0 is not in 1.."),
        (vec!["watch", "--interval", "0"], "0 is not in 1.."),
    ] {
        let (_, stderr) = run(memscope(home.path(), db).args(&args), 2);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
