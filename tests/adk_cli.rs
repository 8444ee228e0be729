//! The CLI on Google ADK's demo session file, without Python: a trim is previewed over what the
//! continuing agent's model is sent and never applied (ADK rebuilds contents from every event),
//! also of a session id two users share, named with `--app` and `--user`; `thread` shows the
//! transfer and the state as the app sees it, and an agent the session does not know is refused
//! naming those it does.

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

/// `thread --agent` marks what that agent's model is sent (the events `history --agent` reads)
/// and how (another agent's events quoted), not the continuing agent's view; `export --agent` holds that same view, and a flag ADK does not
/// take is refused by `export` as by the others.
#[test]
fn thread_and_export_take_the_agent_whose_view_is_marked() {
    let home = tempfile::tempdir().unwrap();
    let db = adk_demo(home.path());
    let args = |command: &str, agent: Option<&str>| {
        let mut args = vec![command.to_owned(), "escalation".to_owned()];
        if let Some(agent) = agent {
            args.extend(["--agent".to_owned(), agent.to_owned()]);
        }
        args
    };
    let continuing = json(memscope_on(home.path(), &db).args(args("thread", None)));
    let coordinator = json(memscope_on(home.path(), &db).args(args("thread", Some("coordinator"))));
    assert_eq!(coordinator["extra"]["continuing_agent"], "coordinator");
    // Each agent is sent its own events as stored and the other's quoted.
    let sent_as = |tree: &serde_json::Value, author: &str| -> Vec<String> {
        let nodes = tree["nodes"].as_array().unwrap().iter();
        nodes
            .filter(|n| n["extra"]["author"] == author)
            .map(|n| n["extra"]["sent_as"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        sent_as(&coordinator, "specialist")
            .iter()
            .all(|s| s == "quoted")
    );
    assert!(
        sent_as(&coordinator, "coordinator")
            .iter()
            .all(|s| s == "as_stored")
    );
    assert!(
        sent_as(&continuing, "coordinator")
            .iter()
            .all(|s| s == "quoted")
    );
    assert!(!sent_as(&continuing, "specialist").is_empty());
    assert!(
        sent_as(&continuing, "specialist")
            .iter()
            .all(|s| s == "as_stored")
    );
    // Every event the coordinator's history reads is on its marked path.
    let history = json(memscope_on(home.path(), &db).args(args("history", Some("coordinator"))));
    let marked: Vec<&str> = coordinator["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    for message in history["messages"].as_array().unwrap() {
        let id = message["id"].as_str().unwrap();
        assert!(
            marked.contains(&id),
            "{id} is sent but not marked: {marked:?}"
        );
    }
    let (text, _) = run(
        memscope_on(home.path(), &db).args(args("thread", Some("coordinator"))),
        0,
    );
    assert!(text.contains("agent coordinator's model"), "{text}");
    assert!(!text.contains("runner continues with it"), "{text}");

    let bundle = json(memscope_on(home.path(), &db).args(args("export", Some("coordinator"))));
    assert_eq!(bundle["thread"]["thread"], coordinator["thread"]);
    assert_eq!(bundle["history"]["messages"], history["messages"]);
    let (_, stderr) = run(
        memscope_on(home.path(), &db).args(["export", "escalation", "--branch", "main"]),
        2,
    );
    assert!(stderr.contains("--branch"), "{stderr}");
}

/// The demo file with the first `events` events of `session` copied under user `bob`: one id,
/// two sessions of different lengths.
fn share_with_bob(db: &str, session: &str, events: i64) {
    execute(
        db,
        &[
            format!(
                "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) \
                 SELECT app_name, 'bob', id, state, create_time, update_time FROM sessions \
                 WHERE id = '{session}'"
            ),
            format!(
                "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, \
                 timestamp, event_data) SELECT id, app_name, 'bob', session_id, invocation_id, \
                 timestamp, event_data FROM events WHERE session_id = '{session}' \
                 ORDER BY timestamp, rowid LIMIT {events}"
            ),
        ],
    );
}

#[test]
fn a_shared_session_id_is_previewed_once_its_app_and_user_are_named() {
    let home = tempfile::tempdir().unwrap();
    let db = adk_demo(home.path());
    share_with_bob(&db, "support-long", 20);
    let trim = |extra: &[&str]| {
        let mut command = memscope_on(home.path(), &db);
        command.args([
            "trim",
            "preview",
            "--conversation",
            "support-long",
            "--max-tokens",
            "300",
        ]);
        command.args(extra);
        command
    };

    let (_, stderr) = run(&mut trim(&[]), 3);
    assert!(
        stderr.contains("ambiguous")
            && stderr.contains("user operator")
            && stderr.contains("user bob"),
        "the error names both sessions: {stderr}"
    );

    for user in ["operator", "bob"] {
        let scope = ["--app", "memscope-demo", "--user", user];
        let preview = json(&mut trim(&scope));
        let history = json(
            memscope_on(home.path(), &db)
                .args(["history", "support-long"])
                .args(scope),
        );
        assert_eq!(
            preview["messages_before"].as_u64().unwrap() as usize,
            history["messages"].as_array().unwrap().len(),
            "{user}'s session is previewed"
        );
    }
    let operator = json(&mut trim(&["--app", "memscope-demo", "--user", "operator"]));
    let bob = json(&mut trim(&["--app", "memscope-demo", "--user", "bob"]));
    assert!(
        bob["messages_before"].as_u64() < operator["messages_before"].as_u64(),
        "bob's copy holds fewer events"
    );

    let (_, stderr) = run(
        memscope_on(home.path(), &db).args([
            "--write",
            "trim",
            "apply",
            "--conversation",
            "support-long",
            "--app",
            "memscope-demo",
            "--user",
            "bob",
            "--yes",
        ]),
        2,
    );
    assert!(
        stderr.contains("ADK rebuilds what each model is sent from every event"),
        "{stderr}"
    );
}

/// `--app` and `--user` are refused where the source keeps no sessions by app and user, with the
/// message every setting a source does not take gets.
#[test]
fn app_and_user_are_refused_where_the_source_does_not_take_them() {
    let home = tempfile::tempdir().unwrap();
    let db = cli_support::demo(home.path());
    let listed = json(memscope_on(home.path(), &db).args(["conversations", "--limit", "1"]));
    let id = listed["conversations"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, stderr) = run(
        memscope_on(home.path(), &db).args([
            "trim",
            "preview",
            "--conversation",
            &id,
            "--user",
            "bob",
        ]),
        2,
    );
    assert!(stderr.contains("--user is not taken by"), "{stderr}");
}

/// Runs statements on the session file, in order, as another program writing to it would.
fn execute(db: &str, statements: &[String]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = sqlx::SqlitePool::connect(db).await.unwrap();
        for statement in statements {
            sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
                .execute(&pool)
                .await
                .unwrap();
        }
        pool.close().await;
    });
}

/// The list reads each session's events without building them: its agents are those `thread`
/// names from the built events, and an event ADK cannot load is counted among the session's
/// messages and said to be unreadable, as `doctor` says it.
#[test]
fn the_list_names_the_agents_thread_names_and_counts_what_adk_cannot_load() {
    let home = tempfile::tempdir().unwrap();
    let db = adk_demo(home.path());
    let listed = json(memscope_on(home.path(), &db).args(["conversations"]));
    let rows = listed["conversations"].as_array().unwrap();
    assert!(rows.len() >= 3, "{listed}");
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let thread = json(memscope_on(home.path(), &db).args(["thread", id]));
        let agents: Vec<&str> = thread["extra"]["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(row["extra"]["agents"], agents.join(", "), "{id}");
        assert_eq!(row["extra"]["unreadable"], 0, "{id}");
    }
    let messages = rows.iter().find(|r| r["id"] == "escalation").unwrap()["messages"].clone();

    // Two events become what ADK cannot load: the user's gets an author that is a number, the
    // specialist's last one content that is text; the coordinator's transfer still names it.
    execute(
        &db,
        &[
            "UPDATE events SET event_data = json_set(event_data, '$.author', 5) \
             WHERE rowid = (SELECT MIN(rowid) FROM events WHERE session_id = 'escalation' \
             AND json_extract(event_data, '$.author') = 'user')"
                .to_owned(),
            "UPDATE events SET event_data = json_set(event_data, '$.content', 'hello') \
             WHERE rowid = (SELECT MAX(rowid) FROM events WHERE session_id = 'escalation' \
             AND json_extract(event_data, '$.author') = 'specialist')"
                .to_owned(),
        ],
    );
    let listed = json(memscope_on(home.path(), &db).args(["conversations"]));
    let escalation = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "escalation")
        .unwrap()
        .clone();
    assert_eq!(escalation["messages"], messages, "{escalation}");
    assert_eq!(escalation["extra"]["unreadable"], 2, "{escalation}");
    assert_eq!(escalation["extra"]["agents"], "coordinator, specialist");
    assert_eq!(
        escalation["problem"],
        "2 events not JSON ADK can load: ADK fails to load the session"
    );
}
