//! End to end through the binary: preview a chat memory's trim, apply it, undo it; previews of
//! any JSON list with LangChain's parameters; the refusals an operator must see.

mod cli_support;

use std::path::Path;

use assert_cmd::Command;
use cli_support::{memscope_on as memscope, run};
use serde_json::Value;

fn json(command: &mut Command) -> Value {
    let (stdout, _) = run(command.arg("--json"), 0);
    serde_json::from_str(&stdout).unwrap()
}

fn demo(home: &Path) -> String {
    let db = format!("sqlite://{}", home.join("trim.db").display());
    run(memscope(home, &db).arg("init"), 0);
    run(memscope(home, &db).arg("demo"), 0);
    db
}

#[test]
fn preview_apply_and_undo_a_chat_memory_trim() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let list = json(memscope(home.path(), &db).args(["chat-memory", "list"]));
    let busy = list["chat_memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["messages"] == 26)
        .expect("the demo's busy support chat");
    let id = busy["id"].as_str().unwrap().to_owned();
    let show = |home: &Path| {
        json(memscope(home, &db).args(["chat-memory", "show", &id, "--limit", "1000"]))
    };
    let before = show(home.path());

    let preview = json(memscope(home.path(), &db).args([
        "trim",
        "preview",
        "--chat-memory",
        &id,
        "--summarize",
    ]));
    assert_eq!(preview["mode"], "policy");
    assert_eq!(preview["messages_before"], 28);
    assert_eq!(preview["messages_after"], 20);
    assert!(
        preview["plan"]["summary"]["text"]
            .as_str()
            .unwrap()
            .contains("user:")
    );
    assert_eq!(show(home.path()), before, "a preview changes nothing");

    let (_, stderr) = run(
        memscope(home.path(), &db).args(["trim", "apply", "--chat-memory", &id]),
        2,
    );
    assert!(stderr.contains("--yes"), "{stderr}");

    let applied = json(memscope(home.path(), &db).args([
        "trim",
        "apply",
        "--chat-memory",
        &id,
        "--summarize",
        "--yes",
    ]));
    assert!(applied["change_id"].is_string());
    let trimmed = show(home.path());
    assert_eq!(trimmed["total"], 18);
    assert_eq!(trimmed["messages"][0]["is_summary"], true);

    let undone =
        json(memscope(home.path(), &db).args(["trim", "undo", "--chat-memory", &id, "--yes"]));
    assert_eq!(undone["change"]["id"], applied["change_id"]);
    assert_eq!(
        show(home.path()),
        before,
        "undo restores the memory exactly"
    );
    let nothing =
        json(memscope(home.path(), &db).args(["trim", "undo", "--chat-memory", &id, "--yes"]));
    assert!(nothing["change"].is_null());
}

#[test]
fn conversation_threads_are_previewed_never_applied() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let list = json(memscope(home.path(), &db).args(["conversations", "--limit", "1"]));
    let id = list["conversations"][0]["id"].as_str().unwrap().to_owned();
    let preview = json(memscope(home.path(), &db).args([
        "trim",
        "preview",
        "--conversation",
        &id,
        "--strategy",
        "drop-middle",
        "--keep-first",
        "1",
        "--max-messages",
        "2",
        "--summarize",
    ]));
    assert_eq!(preview["mode"], "policy");
    assert!(
        preview["source"]
            .as_str()
            .unwrap()
            .contains("thread history")
    );
    assert!(preview["messages_after"].as_u64().unwrap() <= 2);
    let (_, stderr) = run(
        memscope(home.path(), &db).args(["trim", "apply", "--conversation", &id, "--yes"]),
        3,
    );
    assert!(
        stderr.contains("a conversation thread is a view computed at read time"),
        "{stderr}"
    );
}

#[test]
fn adding_and_deleting_through_the_cli() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let added = json(memscope(home.path(), &db).args([
        "chat-memory",
        "add",
        "--node",
        "node-x",
        "--chat",
        "chat-x",
        "--role",
        "user",
        "--content",
        "Hello there.",
        "--request",
        "r1",
        "--create",
        "--policy",
        r#"{"max_messages":1}"#,
    ]));
    assert_eq!(added["created"], true);
    let id = added["chat_memory_id"].as_str().unwrap().to_owned();
    let second = json(memscope(home.path(), &db).args([
        "chat-memory",
        "add",
        "--node",
        "node-x",
        "--chat",
        "chat-x",
        "--role",
        "assistant",
        "--content",
        "Hi!",
        "--request",
        "r1",
    ]));
    assert_eq!(second["created"], false);
    assert!(
        second["trim"]["change_id"].is_string(),
        "the 1-message policy trimmed"
    );
    let shown = json(memscope(home.path(), &db).args(["chat-memory", "show", &id]));
    assert_eq!(shown["total"], 1);
    assert_eq!(shown["messages"][0]["message"]["content"], "Hi!");

    run(
        memscope(home.path(), &db).args(["chat-memory", "delete", &id, "--scope", "all"]),
        2,
    );
    let deleted = json(memscope(home.path(), &db).args([
        "chat-memory",
        "delete",
        &id,
        "--scope",
        "latest",
        "--roles",
        "assistant",
        "--yes",
    ]));
    assert_eq!(deleted["deleted"], 1);
    let (stdout, _) = run(
        memscope(home.path(), &db).args(["chat-memory", "show", &id]),
        0,
    );
    assert!(stdout.contains("(0 messages"), "{stdout}");
}

#[test]
fn previews_of_any_json_list_take_every_trim_messages_flag() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("messages.json");
    std::fs::write(
        &file,
        serde_json::json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "line one\nline two"},
        ])
        .to_string(),
    )
    .unwrap();
    let input = file.to_str().unwrap();
    let db = format!("sqlite://{}", home.path().join("unused.db").display());
    let preview = |args: &[&str]| {
        let mut command = memscope(home.path(), &db);
        command
            .args(["trim", "preview", "--input", input])
            .args(args);
        json(&mut command)
    };
    let last = preview(&[
        "--strategy",
        "last",
        "--counter",
        "messages",
        "--max-tokens",
        "3",
        "--include-system",
        "--start-on",
        "human",
    ]);
    assert_eq!(last["mode"], "trim_messages");
    let roles: Vec<&str> = last["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "assistant"]);

    let first = preview(&[
        "--strategy",
        "first",
        "--counter",
        "messages",
        "--max-tokens",
        "4",
        "--end-on",
        "ai",
    ]);
    assert_eq!(first["messages_after"], 3);

    let partial = preview(&[
        "--strategy",
        "last",
        "--counter",
        "raw",
        "--max-tokens",
        "2",
        "--allow-partial",
    ]);
    assert_eq!(partial["result"][0]["content"], "line two");
    assert_eq!(partial["plan"]["steps"][4]["reason"], "partial_content");

    let mut bad = memscope(home.path(), &db);
    bad.args([
        "trim",
        "preview",
        "--input",
        input,
        "--strategy",
        "first",
        "--include-system",
        "--max-tokens",
        "3",
    ]);
    let (_, stderr) = run(&mut bad, 3);
    assert!(
        stderr.contains("include_system parameter is only valid with strategy='last'"),
        "{stderr}"
    );

    let mut refused = memscope(home.path(), &db);
    refused.args(["trim", "apply", "--input", input, "--yes"]);
    let (_, stderr) = run(&mut refused, 3);
    assert!(stderr.contains("chat memories only"), "{stderr}");
}

#[test]
fn the_summarizer_section_of_the_config_is_used_and_flags_override_it() {
    let home = tempfile::tempdir().unwrap();
    let db = demo(home.path());
    let list = json(memscope(home.path(), &db).args(["chat-memory", "list"]));
    let id = list["chat_memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["messages"] == 26)
        .expect("the demo's busy support chat")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let config = home.path().join("config/memscope");
    std::fs::create_dir_all(&config).unwrap();
    // Port 9 (discard) refuses connections: the configured endpoint is what is tried.
    std::fs::write(
        config.join("config.toml"),
        "[summarizer]\nkind = \"chat-completions\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         timeout_seconds = 2\nsummarize_prompt = \"Keep order numbers.\"\n",
    )
    .unwrap();
    let preview = || {
        let mut command = memscope(home.path(), &db);
        command
            .env_remove("MEMSCOPE_SUMMARIZER_URL")
            .env_remove("MEMSCOPE_SUMMARIZER_MODEL")
            .args(["trim", "preview", "--chat-memory", &id, "--summarize"]);
        command
    };
    let (_, stderr) = run(&mut preview(), 3);
    assert!(
        stderr.contains("http://127.0.0.1:9/v1/chat/completions"),
        "{stderr}"
    );
    let offline = json(preview().args(["--summarizer", "extractive"]));
    let slot = &offline["plan"]["summary"];
    assert_eq!(slot["summarizer"], "extractive (offline)");
    assert!(
        slot["prompt"]
            .as_str()
            .unwrap()
            .contains("Keep order numbers."),
        "the configured rules are the prompt's: {slot}"
    );
}

/// The kept flags of a trim plan, message by message.
fn kept_by_plan(report: &Value) -> Vec<bool> {
    report["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["step"] != "remove")
        .collect()
}

/// On a LangGraph thread a trim starts from the cut `history` shows (trim_messages with
/// strategy last, start_on human and include_system, the same counter and budget): the preview,
/// with `--strategy last` or none, keeps what `history` keeps, the system prompt first, and
/// apply writes that; a plan that removes the system prompt says so and why.
#[test]
fn a_langgraph_thread_trim_starts_from_the_cut_history_shows() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("checkpoints.sqlite");
    run(
        cli_support::memscope(home.path())
            .args(["demo", "--langgraph"])
            .arg(&file),
        0,
    );
    let db = format!("sqlite://{}", file.display());
    let history = |extra: &[&str]| {
        json(
            memscope(home.path(), &db)
                .args(["history", "long-chat"])
                .args(extra),
        )
    };
    let preview = |extra: &[&str]| {
        json(
            memscope(home.path(), &db)
                .args(["trim", "preview", "--conversation", "long-chat"])
                .args(extra),
        )
    };
    let kept_by_history = |report: &Value| -> Vec<bool> {
        report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kept"].as_bool().unwrap())
            .collect()
    };

    let cut = kept_by_history(&history(&["--max-tokens", "500"]));
    assert!(cut[0], "history keeps the system prompt");
    assert!(cut.iter().any(|kept| !kept), "the budget drops some");
    let last = preview(&["--strategy", "last", "--max-tokens", "500"]);
    assert_eq!(last["mode"], "trim_messages");
    assert_eq!(last["options"]["include_system"], true);
    assert_eq!(last["options"]["start_on"], serde_json::json!(["user"]));
    assert_eq!(kept_by_plan(&last), cut, "{last:#}");
    assert!(last.get("removed_system").is_none());
    assert_eq!(
        kept_by_plan(&preview(&["--max-tokens", "500"])),
        cut,
        "without --strategy too"
    );
    // Without --max-tokens both cut under the configured budget.
    assert_eq!(kept_by_plan(&preview(&[])), kept_by_history(&history(&[])));

    // Turning include_system off drops the system prompt, and the plan says so and why.
    let bare = [
        "--strategy",
        "last",
        "--max-tokens",
        "500",
        "--include-system",
        "false",
    ];
    let without = preview(&bare);
    assert!(!kept_by_plan(&without)[0]);
    assert_eq!(without["removed_system"][0]["index"], 0);
    assert_eq!(without["removed_system"][0]["reason"], "over_limit");
    let why = without["removed_system"][0]["why"].as_str().unwrap();
    assert!(why.contains("include_system is off"), "{why}");
    let (text, _) = run(
        memscope(home.path(), &db)
            .args(["trim", "preview", "--conversation", "long-chat"])
            .args(bare),
        0,
    );
    assert!(
        text.contains("! removes system message #0 (over the limit): include_system is off"),
        "{text}"
    );

    // apply writes the cut history showed: the thread keeps its system prompt and the rest.
    let applied = json(memscope(home.path(), &db).args([
        "--write",
        "trim",
        "apply",
        "--conversation",
        "long-chat",
        "--strategy",
        "last",
        "--max-tokens",
        "500",
        "--yes",
    ]));
    assert_eq!(kept_by_plan(&applied), cut);
    let after = history(&[]);
    let messages = after["messages"].as_array().unwrap();
    assert_eq!(messages.len(), cut.iter().filter(|k| **k).count());
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(
        messages[0]["raw"]["type"], "system",
        "LangChain's own message"
    );
}
