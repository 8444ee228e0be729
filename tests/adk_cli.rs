//! The CLI on Google ADK's demo session file, without Python: a trim is previewed over what the
//! continuing agent's model is sent and never applied (ADK rebuilds contents from every event),
//! `thread` shows the transfer and the state as the app sees it, and an agent the session does
//! not know is refused naming those it does.

mod cli_support;

use std::path::Path;

use cli_support::{json, memscope, memscope_on, run};

fn adk_demo(home: &Path) -> String {
    let file = home.join("session.db");
    run(memscope(home).arg("demo").arg("--adk").arg(&file), 0);
    format!("sqlite://{}", file.display())
}

#[test]
fn a_trim_is_previewed_over_what_the_model_is_sent_and_never_applied() {
    let home = tempfile::tempdir().unwrap();
    let db = adk_demo(home.path());
    let preview = json(memscope_on(home.path(), &db).args([
        "trim",
        "preview",
        "--conversation",
        "support-long",
        "--max-tokens",
        "300",
    ]));
    let before = preview["messages_before"].as_u64().unwrap();
    let history = json(memscope_on(home.path(), &db).args(["history", "support-long"]));
    assert_eq!(
        before as usize,
        history["messages"].as_array().unwrap().len()
    );
    assert!(preview["messages_after"].as_u64().unwrap() < before);
    let (_, stderr) = run(
        memscope_on(home.path(), &db).args([
            "--write",
            "trim",
            "apply",
            "--conversation",
            "support-long",
            "--yes",
        ]),
        2,
    );
    assert!(
        stderr.contains("only previews trims of an ADK session"),
        "{stderr}"
    );
    assert!(stderr.contains("invocations"), "{stderr}");
}

#[test]
fn thread_shows_the_transfer_and_the_state_and_history_names_the_agents() {
    let home = tempfile::tempdir().unwrap();
    let db = adk_demo(home.path());
    let thread = json(memscope_on(home.path(), &db).args(["thread", "escalation"]));
    assert_eq!(thread["extra"]["transfers"][0]["to"], "specialist");
    assert_eq!(thread["extra"]["continuing_agent"], "specialist");
    assert_eq!(thread["extra"]["state"]["app:region"], "eu");
    assert_eq!(thread["extra"]["state"]["topic"], "escalation");
    let (text, _) = run(
        memscope_on(home.path(), &db).args(["thread", "escalation"]),
        0,
    );
    assert!(text.contains("transfer to specialist"), "{text}");
    assert!(text.contains("app:region"), "{text}");

    let coordinator = json(memscope_on(home.path(), &db).args([
        "history",
        "escalation",
        "--agent",
        "coordinator",
    ]));
    // The coordinator sees its own transfer as stored and the specialist's work quoted.
    let raws: Vec<&serde_json::Value> = coordinator["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["raw"])
        .collect();
    assert!(raws[1]["parts"][0]["function_call"]["name"] == "transfer_to_agent");
    assert!(
        raws.last().unwrap()["parts"][1]["text"]
            .as_str()
            .unwrap()
            .starts_with("[specialist] said:")
    );
    let (_, stderr) = run(
        memscope_on(home.path(), &db).args(["history", "escalation", "--agent", "nobody"]),
        2,
    );
    assert!(stderr.contains("coordinator, specialist"), "{stderr}");
    let (_, stderr) = run(
        memscope_on(home.path(), &db).args(["history", "escalation", "--branch", "main"]),
        2,
    );
    assert!(stderr.contains("--app, --user, --agent"), "{stderr}");
}
