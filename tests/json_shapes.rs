//! One JSON shape per command whatever the source: `conversations`, `history`, `thread` and
//! `doctor` with `--json` on memscope's own schema, Dify's, Langflow's and LangGraph's databases
//! have the same keys at the top, on every row, message, node and finding. The databases are made without Python: the demo,
//! the demo as Dify's own, the LangGraph demo file, a Langflow message log written here and the
//! OpenAI Agents and Google ADK demo files.

mod cli_support;

use std::collections::BTreeSet;
use std::path::Path;

use cli_support::{demo, json, memscope, memscope_on, run};
use serde_json::Value;

/// The demo database as Dify's own: without memscope's meta row it is someone else's database.
fn difys_own(home: &Path) -> String {
    let url = demo(home);
    sql(&home.join("input.db"), "DELETE FROM memscope_meta");
    url
}

fn langgraph_demo(home: &Path) -> String {
    let file = home.join("checkpoints.sqlite");
    run(memscope(home).arg("demo").arg("--langgraph").arg(&file), 0);
    format!("sqlite://{}", file.display())
}

fn openai_agents_demo(home: &Path) -> String {
    let file = home.join("sessions.db");
    run(
        memscope(home).arg("demo").arg("--openai-agents").arg(&file),
        0,
    );
    format!("sqlite://{}", file.display())
}

fn adk_demo(home: &Path) -> String {
    let file = home.join("session.db");
    run(memscope(home).arg("demo").arg("--adk").arg(&file), 0);
    format!("sqlite://{}", file.display())
}

/// The four kinds of database, the OpenAI Agents SDK's demo file and Google ADK's.
fn databases_with_conversations(home: &Path, dify_home: &Path) -> Vec<(String, &'static str)> {
    let mut databases = four_databases(home, dify_home).to_vec();
    databases.push((openai_agents_demo(home), "openai-agents"));
    databases.push((adk_demo(home), "adk"));
    databases
}

const SALES: &str = "11111111111111111111111111111111";
const SUPPORT: &str = "22222222222222222222222222222222";
const OWNER: &str = "0000000000004000800000000000000a";

/// A Langflow database as Langflow keeps it on SQLite (uuids as 32 hex digits): "New Session 0"
/// is used by two flows, "solo" by one.
fn langflow(home: &Path) -> String {
    let file = home.join("langflow.db");
    let message = |n: u32, at: &str, sender: &str, session: &str, text: &str, flow: &str| {
        format!(
            "INSERT INTO message (id, timestamp, sender, sender_name, session_id, text, files, \
             error, flow_id, category, user_id) VALUES ('{n:08x}111140008000000000000000', \
             '2026-01-05 {at}.000000', '{sender}', '{sender}', '{session}', '{text}', '[]', 0, \
             '{flow}', 'message', '{OWNER}');"
        )
    };
    let statements = [
        "CREATE TABLE \"user\" (id CHAR(32) PRIMARY KEY, username VARCHAR NOT NULL);".to_owned(),
        "CREATE TABLE flow (id CHAR(32) PRIMARY KEY, name VARCHAR NOT NULL, user_id CHAR(32));"
            .to_owned(),
        "CREATE TABLE message (id CHAR(32) PRIMARY KEY, timestamp DATETIME NOT NULL, \
         sender VARCHAR NOT NULL, sender_name VARCHAR NOT NULL, session_id VARCHAR NOT NULL, \
         text TEXT NOT NULL, files JSON, error BOOLEAN NOT NULL, flow_id CHAR(32), \
         category TEXT, context_id VARCHAR, user_id CHAR(32), run_id CHAR(32));"
            .to_owned(),
        format!("INSERT INTO \"user\" VALUES ('{OWNER}', 'ada');"),
        format!("INSERT INTO flow VALUES ('{SALES}', 'Sales Chat', '{OWNER}');"),
        format!("INSERT INTO flow VALUES ('{SUPPORT}', 'Support Chat', '{OWNER}');"),
        message(
            1,
            "09:00:00",
            "User",
            "New Session 0",
            "My order 1182 never arrived.",
            SUPPORT,
        ),
        message(
            2,
            "09:00:07",
            "Machine",
            "New Session 0",
            "Let me check order 1182.",
            SUPPORT,
        ),
        message(
            3,
            "09:01:00",
            "User",
            "New Session 0",
            "Do you have the blue one?",
            SALES,
        ),
        message(4, "10:00:00", "User", "solo", "hello", SALES),
    ];
    sql(&file, &statements.join("\n"));
    format!("sqlite://{}", file.display())
}

fn sql(file: &Path, statements: &str) {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use sqlx::{ConnectOptions, Executor};
        let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(file)
            .create_if_missing(true)
            .connect()
            .await
            .unwrap();
        connection
            .execute(sqlx::raw_sql(sqlx::AssertSqlSafe(statements.to_owned())))
            .await
            .unwrap();
    });
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// The four kinds of database, each with its source's name: memscope's demo, the demo as
/// Dify's own (in a home of its own, as its file is the demo's), LangGraph's demo file and a
/// Langflow message log.
fn four_databases(home: &Path, dify_home: &Path) -> [(String, &'static str); 4] {
    [
        (demo(home), "memscope"),
        (difys_own(dify_home), "dify"),
        (langgraph_demo(home), "langgraph"),
        (langflow(home), "langflow"),
    ]
}

/// The first conversation `conversations` lists.
fn first_conversation(home: &Path, db: &str) -> String {
    let listed = json(memscope_on(home, db).arg("conversations"));
    listed["conversations"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no conversation on {db}: {listed}"))
        .to_owned()
}

/// Every node names a parent among the nodes (or none), and the thread runs over nodes marked
/// on it.
fn assert_a_tree(document: &Value) {
    let nodes = document["nodes"].as_array().unwrap();
    let ids: BTreeSet<&str> = nodes.iter().map(|n| n["id"].as_str().unwrap()).collect();
    for node in nodes {
        assert!(
            node["parent"].is_null() || ids.contains(node["parent"].as_str().unwrap()),
            "{node}"
        );
    }
    let thread = document["thread"].as_array().unwrap();
    assert!(!thread.is_empty(), "{document}");
    for id in thread {
        let node = nodes.iter().find(|n| &n["id"] == id).unwrap();
        assert_eq!(node["on_thread"], true, "{node}");
    }
}

#[test]
fn list_and_history_documents_have_one_shape_on_every_source() {
    let home = tempfile::tempdir().unwrap();
    let dify_home = tempfile::tempdir().unwrap();
    for (db, source) in databases_with_conversations(home.path(), dify_home.path()) {
        let home = home.path();
        let db = &db;
        let flags: &[&str] = match source {
            "langflow" => &["--flow", "Support Chat"],
            _ => &[],
        };
        let listed = json(memscope_on(home, db).arg("conversations"));
        assert_eq!(
            keys(&listed),
            set(&["version", "source", "noun", "conversations", "next"]),
            "{listed}"
        );
        assert_eq!(listed["source"], source);
        let rows = listed["conversations"].as_array().unwrap();
        assert!(!rows.is_empty(), "{listed}");
        for row in rows {
            assert_eq!(
                keys(row),
                set(&[
                    "id",
                    "title",
                    "messages",
                    "last_activity",
                    "deleted",
                    "problem",
                    "extra"
                ]),
                "{row}"
            );
            let at = row["last_activity"].as_str().unwrap();
            assert!(
                at.ends_with('Z') && at.contains('T'),
                "RFC 3339 in UTC: {at}"
            );
        }
        // The Langflow session used by two flows is named with its flow.
        let id = match source {
            "langflow" => "New Session 0".to_owned(),
            _ => rows[0]["id"].as_str().unwrap().to_owned(),
        };
        let history = json(memscope_on(home, db).arg("history").arg(&id).args(flags));
        assert_eq!(history["source"], source);
        for key in [
            "version", "id", "title", "rule", "dropped", "kept", "left_out",
        ] {
            assert!(history.get(key).is_some(), "{source}: no {key}: {history}");
        }
        assert_eq!(history["id"], id.as_str());
        let messages = history["messages"].as_array().unwrap();
        assert!(!messages.is_empty(), "{source}: {history}");
        for message in messages {
            assert_eq!(
                keys(message),
                set(&[
                    "index",
                    "id",
                    "role",
                    "kind",
                    "text",
                    "content",
                    "tokens",
                    "tokens_from_here",
                    "kept",
                    "at",
                    "raw",
                    "extra"
                ]),
                "{message}"
            );
            assert!(
                !message["raw"].is_null(),
                "{source}: the source's own form: {message}"
            );
        }
    }
}

#[test]
fn thread_documents_have_one_shape_on_every_source() {
    let home = tempfile::tempdir().unwrap();
    let dify_home = tempfile::tempdir().unwrap();
    let documents = databases_with_conversations(home.path(), dify_home.path())
        .into_iter()
        .map(|(db, source)| {
            // A Langflow session used by two flows is named with its flow.
            let args = match source {
                "langflow" => vec!["New Session 0".into(), "--flow".into(), "Sales Chat".into()],
                _ => vec![first_conversation(home.path(), &db)],
            };
            let document = json(memscope_on(home.path(), &db).arg("thread").args(&args));
            assert_eq!(document["source"], source, "{document}");
            document
        })
        .collect::<Vec<_>>();
    for document in &documents {
        assert_eq!(
            keys(document),
            set(&[
                "version", "source", "id", "title", "nodes", "thread", "extra"
            ]),
            "{document}"
        );
        assert_eq!(document["version"], 1);
        for node in document["nodes"].as_array().unwrap() {
            assert_eq!(
                keys(node),
                set(&[
                    "id",
                    "parent",
                    "depth",
                    "on_thread",
                    "text",
                    "group",
                    "extra"
                ]),
                "{node}"
            );
        }
        assert_a_tree(document);
    }
}

#[test]
fn a_langflow_session_is_one_path_of_its_log() {
    let home = tempfile::tempdir().unwrap();
    let db = langflow(home.path());
    let document = json(memscope_on(home.path(), &db).args([
        "thread",
        "New Session 0",
        "--flow",
        "Support Chat",
    ]));
    let nodes = document["nodes"].as_array().unwrap();
    let texts: Vec<&str> = nodes.iter().map(|n| n["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        [
            "User: My order 1182 never arrived.",
            "Machine: Let me check order 1182."
        ]
    );
    assert_eq!(nodes[0]["parent"], Value::Null);
    assert_eq!(nodes[1]["parent"], nodes[0]["id"]);
    assert_eq!(
        document["thread"],
        serde_json::json!([nodes[0]["id"], nodes[1]["id"]])
    );
    assert_eq!(document["title"], "Support Chat");
    assert_eq!(nodes[0]["extra"]["timestamp"], "2026-01-05T09:00:00Z");

    let (text, _) = run(
        memscope_on(home.path(), &db).args(["thread", "New Session 0", "--flow", "Support Chat"]),
        0,
    );
    assert!(
        text.contains("● User: My order 1182 never arrived.\n● Machine: Let me check order 1182."),
        "{text}"
    );
    // A session of two flows needs one named; a flow it is not in names the ones it is in.
    let (_, err) = run(
        memscope_on(home.path(), &db).args(["thread", "New Session 0"]),
        3,
    );
    assert!(
        err.contains("Sales Chat") && err.contains("--flow"),
        "{err}"
    );
    let (_, err) = run(
        memscope_on(home.path(), &db).args(["thread", "solo", "--flow", "Support Chat"]),
        3,
    );
    assert!(err.contains("Sales Chat"), "{err}");
    // Dify's settings are refused with the ones a Langflow thread takes.
    let (_, err) = run(
        memscope_on(home.path(), &db).args(["thread", "solo", "--mode", "tree"]),
        2,
    );
    assert!(err.contains("--mode") && err.contains("--flow"), "{err}");
}

#[test]
fn doctor_documents_have_one_shape_on_every_source() {
    let home = tempfile::tempdir().unwrap();
    let dify_home = tempfile::tempdir().unwrap();
    let mut tops = Vec::new();
    for (db, source) in databases_with_conversations(home.path(), dify_home.path()) {
        let db = &db;
        // Exit 1: every one of these databases has findings.
        let (stdout, _) = run(memscope_on(home.path(), db).args(["doctor", "--json"]), 1);
        let report: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["source"], source, "{report}");
        assert_eq!(report["version"], 1, "{report}");
        let findings = report["findings"].as_array().unwrap();
        assert!(!findings.is_empty(), "{report}");
        for finding in findings {
            assert_eq!(
                keys(finding),
                set(&["kind", "conversation", "description", "extra"]),
                "{finding}"
            );
            assert!(
                finding["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty())
            );
            assert!(finding["extra"].is_object(), "{finding}");
        }
        tops.push((source, keys(&report)));
    }
    for (source, top) in &tops {
        assert_eq!(top, &tops[0].1, "{source} against {}", tops[0].0);
    }
}

#[test]
fn a_finding_names_its_conversation_and_says_what_the_text_says() {
    let home = tempfile::tempdir().unwrap();
    let db = langgraph_demo(home.path());
    let (stdout, _) = run(memscope_on(home.path(), &db).args(["doctor", "--json"]), 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let (text, _) = run(memscope_on(home.path(), &db).arg("doctor"), 1);
    let growth = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "thread_growth")
        .unwrap();
    assert_eq!(growth["conversation"], "long-chat", "{growth}");
    assert!(growth["extra"].get("thread_id").is_none(), "{growth}");
    assert!(growth["extra"]["keep_last"].is_number(), "{growth}");
    let description = growth["description"].as_str().unwrap();
    assert!(text.contains(description), "{text}");
}

#[test]
fn an_openai_agents_sessions_unanswered_call_is_found_and_leads_to_its_session() {
    let home = tempfile::tempdir().unwrap();
    let db = openai_agents_demo(home.path());
    let (stdout, _) = run(memscope_on(home.path(), &db).args(["doctor", "--json"]), 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["source"], "openai-agents", "{report}");
    let findings = report["findings"].as_array().unwrap();
    let unanswered = findings
        .iter()
        .find(|f| f["kind"] == "call_without_output")
        .unwrap_or_else(|| panic!("the crashed run is found: {report}"));
    let session = unanswered["conversation"].as_str().unwrap();
    assert!(unanswered["extra"]["call_ids"].is_array(), "{unanswered}");
    // What the finding names is what history takes, and history leaves the call out.
    let (history, _) = run(
        memscope_on(home.path(), &db).args(["history", session, "--json"]),
        0,
    );
    let history: Value = serde_json::from_str(&history).unwrap();
    let left_out = history["left_out"].as_array().unwrap();
    assert!(
        left_out
            .iter()
            .any(|l| l["reason"] == "call_without_output"),
        "{history}"
    );
    let (text, _) = run(memscope_on(home.path(), &db).arg("doctor"), 1);
    assert!(
        text.contains(unanswered["description"].as_str().unwrap()),
        "{text}"
    );
}
