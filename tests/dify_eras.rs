//! Every read command on Dify databases of six points of its schema history — before
//! dialogue counts, before regeneration threads, with them, with offloaded node outputs, after
//! `is_deleted` was dropped, and with archived workflow runs, human-input pauses and
//! `messages.app_mode` — through the real binary, on SQLite and PostgreSQL: each era
//! opens, is described by `info`, and reads as that Dify version read it; deleted conversations
//! stay hidden unless asked for. On MySQL (MariaDB here) the same rows, in the column types
//! Dify's models give them there, read to the same documents as on PostgreSQL.

#[macro_use]
mod common;
mod cli_support;
mod dify_eras_on_mysql;

use std::path::Path;

use cli_support::{memscope_on, run};
use common::dify::{Era, Message, app, build, conversation, uid};
use serde_json::Value;

const SUPPORT: u64 = 10;
const FLOW: u64 = 11;
const LIVE: u64 = 20;
const DELETED: u64 = 21;
const CHATFLOW: u64 = 22;
const RUN: u64 = 70;
/// A run Dify archived out of the database: an archive log, no `workflow_runs` row.
const ARCHIVED_RUN: u64 = 71;
const EXECUTION: u64 = 80;
const OFFLOADED_UPLOAD: u64 = 90;
const OFFLOAD_KEY: &str = "offload/outputs-80.json";

/// The chatflow's LLM node output as the row keeps it when Dify offloaded the whole: cut short.
const TRUNCATED_OUTPUTS: &str = r#"{"text": "cut"}"#;

fn full_outputs() -> String {
    serde_json::json!({"text": "flow answer", "context": [
        {"role": "user", "content": "flow question"},
        {"role": "assistant", "content": "flow answer"},
    ]})
    .to_string()
}

/// A live chat whose middle turn failed (empty answer, status `error`), a deleted chat (where
/// the schema can mark one), and a chatflow turn with one LLM node execution, its outputs
/// offloaded where the schema has the offload table.
fn rows(era: Era) -> Vec<String> {
    let mut rows = vec![
        app(SUPPORT, "Support", "chat"),
        app(FLOW, "Flow", "advanced-chat"),
        conversation(era, LIVE, SUPPORT, "Live chat", "chat", false),
        conversation(era, CHATFLOW, FLOW, "Flow chat", "advanced-chat", false),
        // Answered, as its message records, by the app in agent mode: marked in the thread.
        Message {
            app_mode: Some("agent-chat"),
            ..Message::turn(50, LIVE, SUPPORT, None, "2024-08-02 00:00:10")
        }
        .insert(era),
        Message {
            answer: "",
            status: "error",
            error: Some("[openai] Rate Limit Error"),
            ..Message::turn(51, LIVE, SUPPORT, Some(50), "2024-08-02 00:00:20")
        }
        .insert(era),
        Message::turn(52, LIVE, SUPPORT, Some(51), "2024-08-02 00:00:30").insert(era),
        Message {
            query: "flow question",
            answer: "flow answer",
            workflow_run: Some(RUN),
            ..Message::turn(
                54,
                CHATFLOW,
                FLOW,
                era.has_archive().then_some(55),
                "2024-08-02 00:00:40",
            )
        }
        .insert(era),
        format!(
            "INSERT INTO workflow_runs (id, tenant_id, app_id, sequence_number, workflow_id, type,
                triggered_from, version, status, created_by_role, created_by, created_at)
             VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid, 1, '{}'::uuid, 'chat', 'app-run',
                '2024-08-01', 'succeeded', 'account', '{}'::uuid, '2024-08-02 00:00:40');",
            uid(RUN),
            uid(common::dify::TENANT),
            uid(FLOW),
            uid(99),
            uid(common::dify::ACCOUNT)
        ),
        format!(
            "INSERT INTO workflow_node_executions (id, tenant_id, app_id, workflow_id,
                triggered_from, workflow_run_id, \"index\", node_id, node_type, title,
                process_data, outputs, status, created_at, created_by_role, created_by)
             VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid, '{}'::uuid, 'workflow-run', '{}'::uuid,
                2, 'llm1', 'llm', 'LLM', '{}', '{}', 'succeeded', '2024-08-02 00:00:41',
                'account', '{}'::uuid);",
            uid(EXECUTION),
            uid(common::dify::TENANT),
            uid(FLOW),
            uid(99),
            uid(RUN),
            r#"{"prompts": [{"role": "user", "text": "flow question"}]}"#,
            if era.has_offload() {
                TRUNCATED_OUTPUTS.to_owned()
            } else {
                full_outputs()
            },
            uid(common::dify::ACCOUNT)
        ),
    ];
    if era.has_deleted_flag() {
        rows.push(conversation(
            era,
            DELETED,
            SUPPORT,
            "Deleted chat",
            "chat",
            true,
        ));
        rows.push(Message::turn(53, DELETED, SUPPORT, None, "2024-08-02 00:00:35").insert(era));
    }
    if era.has_archive() {
        // The chatflow's first turn, its run archived; the live chat's newest row a human-input
        // pause with nothing answered yet.
        rows.push(
            Message {
                workflow_run: Some(ARCHIVED_RUN),
                app_mode: Some("advanced-chat"),
                ..Message::turn(55, CHATFLOW, FLOW, None, "2024-08-02 00:00:38")
            }
            .insert(era),
        );
        rows.push(
            Message {
                answer: "",
                status: "paused",
                app_mode: Some("chat"),
                ..Message::turn(56, LIVE, SUPPORT, Some(52), "2024-08-02 00:00:50")
            }
            .insert(era),
        );
        // Agent V2's sessions: the live chat's own, its snapshot as the Agent backend's
        // compositor writes it; and one of an agent node of the chatflow's run, retired, its
        // snapshot cut short.
        let session =
            |id: u64,
             owner: &str,
             conversation: Option<u64>,
             node: Option<&str>,
             status: &str,
             snapshot: &str| {
                format!(
                "INSERT INTO agent_runtime_sessions (id, tenant_id, app_id, owner_type, agent_id,
                    backend_run_id, session_snapshot, workflow_run_id, node_id,
                    composition_layer_specs, conversation_id, status, cleaned_at, created_at,
                    updated_at) VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid, '{owner}',
                    '{}'::uuid, 'backend-{id}', '{snapshot}', {}, {}, '[]', {}, '{status}', {},
                    '2024-08-02 00:00:5{}', '2024-08-02 00:00:5{}');",
                uid(id),
                uid(common::dify::TENANT),
                uid(if conversation.is_some() { SUPPORT } else { FLOW }),
                uid(66),
                node.map_or("NULL".to_owned(), |_| format!("'{}'::uuid", uid(RUN))),
                node.map_or("NULL".to_owned(), |node| format!("'{node}'")),
                conversation.map_or("NULL".to_owned(), |c| format!("'{}'::uuid", uid(c))),
                if status == "cleaned" { "'2024-08-02 00:00:59'" } else { "NULL" },
                id % 10,
                id % 10 + 1,
            )
            };
        rows.push(session(
            60,
            "conversation",
            Some(LIVE),
            None,
            "active",
            r#"{"schema_version": 1, "layers": [{"name": "history", "lifecycle_state": "suspended", "runtime_state": {"messages": [], "turns": 2}}, {"name": "workspace", "lifecycle_state": "closed", "runtime_state": {}}]}"#,
        ));
        rows.push(session(
            62,
            "workflow_run",
            None,
            Some("agent1"),
            "cleaned",
            r#"{"schema_version": 1, "layers": [{"name": "hist"#,
        ));
        rows.push(format!(
            "INSERT INTO workflow_archive_logs (id, tenant_id, app_id, workflow_id,
                workflow_run_id, created_by_role, created_by, run_version, run_status,
                run_triggered_from, run_created_at) VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid,
                '{}'::uuid, '{}'::uuid, 'account', '{}'::uuid, '2024-08-01', 'succeeded',
                'app-run', '2024-08-02 00:00:38');",
            uid(72),
            uid(common::dify::TENANT),
            uid(FLOW),
            uid(99),
            uid(ARCHIVED_RUN),
            uid(common::dify::ACCOUNT)
        ));
    }
    if era.has_offload() {
        rows.push(format!(
            "INSERT INTO upload_files (id, tenant_id, storage_type, key, name, size, extension,
                created_by, created_at) VALUES ('{}'::uuid, '{}'::uuid, 'local', '{OFFLOAD_KEY}',
                'outputs.json', 100, 'json', '{}'::uuid, '2024-08-02 00:00:41');
             INSERT INTO workflow_node_execution_offload (id, tenant_id, app_id,
                node_execution_id, type, file_id) VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid,
                '{}'::uuid, 'outputs', '{}'::uuid);",
            uid(OFFLOADED_UPLOAD),
            uid(common::dify::TENANT),
            uid(common::dify::ACCOUNT),
            uid(91),
            uid(common::dify::TENANT),
            uid(FLOW),
            uid(EXECUTION),
            uid(OFFLOADED_UPLOAD),
        ));
    }
    rows
}

fn json(home: &Path, db: &str, args: &[&str], code: i32) -> Value {
    let (stdout, _) = run(memscope_on(home, db).args(args).arg("--json"), code);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}\n{stdout}"))
}

fn text(home: &Path, db: &str, args: &[&str], code: i32) -> String {
    run(memscope_on(home, db).args(args), code).0
}

fn ids(values: &Value) -> Vec<String> {
    values
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {values}"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| v["id"].as_str().unwrap())
                .to_owned()
        })
        .collect()
}

async fn check_era(db: common::TestDb, era: Era) {
    build(&db, era, &rows(era)).await;
    let home = tempfile::tempdir().unwrap();
    let (home, url) = (home.path(), db.url());

    // info: what the schema has and which Dify behaviour follows.
    let info = json(home, url, &["info"], 0);
    let schema = &info["database"]["conversation_schema"];
    assert_eq!(schema["regeneration_threads"], era.has_threads(), "{info}");
    assert_eq!(schema["offloaded_outputs"], era.has_offload(), "{info}");
    assert_eq!(schema["dialogue_count"], era.has_dialogue_count(), "{info}");
    assert_eq!(
        schema["deleted_conversations"],
        era.has_deleted_flag(),
        "{info}"
    );
    assert_eq!(schema["archived_runs"], era.has_archive(), "{info}");
    assert_eq!(schema["message_app_mode"], era.has_archive(), "{info}");
    assert_eq!(schema["agent_sessions"], era.has_archive(), "{info}");
    assert_eq!(
        schema["deleted_count"],
        u8::from(era.has_deleted_flag()),
        "{info}"
    );
    let described = text(home, url, &["info"], 0);
    assert!(described.contains("Dify schema with "), "{described}");
    let threads_line = if era.has_threads() {
        "threads: Dify's extract_thread_messages walk"
    } else {
        "threads: none (no parent_message_id)"
    };
    assert!(described.contains(threads_line), "{described}");
    if era.has_offload() {
        let root = Path::new(info["storage_settings"]["root"].as_str().unwrap());
        let file = root.join(OFFLOAD_KEY);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, full_outputs()).unwrap();
    }

    // conversations: the deleted one hidden, listed and marked on request.
    let listed = json(home, url, &["conversations"], 0);
    assert_eq!(ids(&listed["conversations"]), [uid(CHATFLOW), uid(LIVE)]);
    let all = json(home, url, &["conversations", "--include-deleted"], 0);
    let deleted: Vec<(String, bool)> = all["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["deleted"].as_bool().unwrap(),
            )
        })
        .collect();
    let mut expected = vec![(uid(CHATFLOW), false)];
    if era.has_deleted_flag() {
        expected.push((uid(DELETED), true));
        let page = text(home, url, &["conversations", "--include-deleted"], 0);
        assert!(page.contains("[deleted] Deleted chat"), "{page}");
        // Opened by id it says so, and still shows it.
        let thread = json(home, url, &["thread", &uid(DELETED)], 0);
        assert_eq!(thread["extra"]["deleted"], true);
        assert_eq!(ids(&thread["thread"]), [uid(53)]);
        let shown = text(home, url, &["history", &uid(DELETED)], 0);
        assert!(shown.starts_with("deleted in Dify: "), "{shown}");
    }
    expected.push((uid(LIVE), false));
    assert_eq!(deleted, expected);

    // thread: one line before regeneration threads (UUID_NIL parents), of the answered rows
    // Dify's query read then; the walk over the parents after. A pause is a row of the thread.
    let thread = json(home, url, &["thread", &uid(LIVE)], 0);
    let mut read: Vec<String> = if era.has_threads() {
        vec![uid(50), uid(51), uid(52)]
    } else {
        vec![uid(50), uid(52)]
    };
    let mut tree_path = vec![uid(50), uid(51), uid(52)];
    if era.has_archive() {
        tree_path.push(uid(56));
        assert_eq!(ids(&thread["thread"]), tree_path, "{thread}");
    } else {
        assert_eq!(ids(&thread["thread"]), read, "{thread}");
    }
    assert_eq!(ids(&thread["extra"]["tree_path"]), tree_path, "{thread}");
    assert_eq!(thread["extra"]["deleted"], false);
    // Each message's recorded app mode where the column exists; a pause marked in the tree.
    let modes: Vec<&Value> = thread["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| &node["extra"]["app_mode"])
        .collect();
    let shown = text(home, url, &["thread", &uid(LIVE)], 0);
    if era.has_archive() {
        assert_eq!(
            modes,
            [
                &Value::from("agent-chat"),
                &Value::Null,
                &Value::Null,
                &Value::from("chat")
            ],
            "{thread}"
        );
        assert!(shown.contains("[answered as agent-chat]"), "{shown}");
        assert_eq!(shown.matches("[answered as").count(), 1, "{shown}");
        assert!(
            shown.contains("A: (paused for human input, nothing answered yet)"),
            "{shown}"
        );
    } else {
        assert!(modes.iter().all(|mode| mode.is_null()), "{thread}");
        assert!(!shown.contains("paused"), "{shown}");
    }
    assert_eq!(thread["extra"]["comparison"]["kind"], "same", "{thread}");

    // history: before threads Dify's query skipped unanswered rows, the failed turn with them.
    // The pause, newest and unanswered, is the placeholder Dify's memory pops.
    let history = json(home, url, &["history", &uid(LIVE)], 0);
    let sources: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    let expected_sources: Vec<&str> = read
        .iter()
        .flat_map(|id| [id.as_str(), id.as_str()])
        .collect();
    assert_eq!(sources, expected_sources, "{history}");
    if era.has_archive() {
        assert_eq!(history["extra"]["popped"], uid(56), "{history}");
        assert_eq!(
            history["extra"]["paused"],
            serde_json::json!([{"message_id": uid(56), "effect": "pending"}]),
            "{history}"
        );
        let said = text(home, url, &["history", &uid(LIVE)], 0);
        assert!(
            said.contains(&format!(
                "warning: message {} is paused for human input with nothing answered yet",
                uid(56)
            )),
            "{said}"
        );
        read.push(uid(56));
    } else {
        assert_eq!(
            history["extra"]["paused"],
            serde_json::json!([]),
            "{history}"
        );
    }
    assert_eq!(history["extra"]["rows_loaded"], read.len(), "{history}");

    // agent-sessions: the conversation's own, and those of its runs' agent nodes; none where
    // the schema has no such table.
    let live_sessions = json(home, url, &["agent-sessions", &uid(LIVE)], 0);
    let flow_sessions = json(home, url, &["agent-sessions", &uid(CHATFLOW)], 0);
    assert_eq!(live_sessions["has_sessions_table"], era.has_archive());
    if era.has_archive() {
        assert_eq!(
            ids(&live_sessions["sessions"]),
            [uid(60)],
            "{live_sessions}"
        );
        let snapshot = &live_sessions["sessions"][0]["snapshot"];
        assert_eq!(snapshot["kind"], "layers", "{snapshot}");
        assert_eq!(
            snapshot["layers"][0],
            serde_json::json!({"name": "history", "lifecycle_state": "suspended",
                "runtime_state": ["messages", "turns"]})
        );
        assert_eq!(
            ids(&flow_sessions["sessions"]),
            [uid(62)],
            "{flow_sessions}"
        );
        let retired = &flow_sessions["sessions"][0];
        assert_eq!(retired["status"], "cleaned");
        assert_eq!(retired["node_id"], "agent1");
        assert_eq!(retired["snapshot"]["kind"], "unreadable", "{retired}");
        let said = text(home, url, &["agent-sessions", &uid(LIVE)], 0);
        assert!(
            said.contains(
                "snapshot schema 1, 2 layers: history (suspended: messages, turns); \
                 workspace (closed: no runtime state)"
            ),
            "{said}"
        );
    } else {
        assert_eq!(live_sessions["sessions"], serde_json::json!([]));
        let said = text(home, url, &["agent-sessions", &uid(LIVE)], 0);
        assert!(said.contains("no agent runtime sessions"), "{said}");
    }

    // doctor: the deleted conversation is neither scanned nor counted; an archived run is said
    // to be archived, not found missing.
    let (doctor_out, _) = run(memscope_on(home, url).args(["doctor", "--json"]), 0);
    let doctor: Value = serde_json::from_str(&doctor_out).unwrap();
    assert_eq!(doctor["conversations"], 2, "{doctor}");
    let newer_rows = if era.has_archive() { 2 } else { 0 };
    assert_eq!(doctor["messages"], 4 + newer_rows, "{doctor}");
    assert_eq!(doctor["deleted_skipped"], u8::from(era.has_deleted_flag()));
    if era.has_archive() {
        assert_eq!(doctor["archived_runs"], 1, "{doctor}");
        let said = text(home, url, &["doctor"], 0);
        assert!(
            said.contains("1 message points to a workflow run Dify archived"),
            "{said}"
        );
    } else {
        assert_eq!(doctor["archived_runs"], 0, "{doctor}");
    }

    // nodes and node-context: outputs from the offloaded upload where Dify offloads them.
    let nodes = json(home, url, &["nodes", &uid(CHATFLOW)], 0);
    assert_eq!(nodes["nodes"][0]["node_id"], "llm1", "{nodes}");
    if era.has_archive() {
        let said = text(home, url, &["nodes", &uid(CHATFLOW)], 0);
        assert!(
            said.contains("1 thread turn whose run Dify archived"),
            "{said}"
        );
        assert_eq!(nodes["archived_turns"], 1, "{nodes}");
        let said = text(home, url, &["node-context", &uid(CHATFLOW), "llm1"], 0);
        assert!(
            said.contains(&format!("run {} archived by Dify", uid(ARCHIVED_RUN))),
            "{said}"
        );
        assert!(!said.contains("does not exist"), "{said}");
    } else {
        assert!(nodes.get("archived_turns").is_none(), "{nodes}");
    }
    let context = json(home, url, &["node-context", &uid(CHATFLOW), "llm1"], 0);
    assert_eq!(context["offloaded"], era.has_offload(), "{context}");
    assert_eq!(
        context["messages"].as_array().unwrap().len(),
        2,
        "{context}"
    );
}

dify_db_tests! {
    async fn before_dialogue_counts(db) {
        check_era(db, Era::BeforeDialogueCount).await;
    }

    async fn before_regeneration_threads(db) {
        check_era(db, Era::BeforeThreads).await;
    }

    async fn with_regeneration_threads(db) {
        check_era(db, Era::Threads).await;
    }

    async fn with_offloaded_outputs(db) {
        check_era(db, Era::Offload).await;
    }

    async fn after_the_deleted_flag_was_dropped(db) {
        check_era(db, Era::NoDeletedFlag).await;
    }

    async fn with_archived_runs_pauses_and_message_app_modes(db) {
        check_era(db, Era::Archive).await;
    }
}
