//! Rows as real Dify databases hold them, on Dify's own schema (SQLite, PostgreSQL and MySQL): turns
//! written in the same second, an unrelated root between a child and its parent (Dify issue
//! #39031), failed turns, agent turns with their thoughts, and message files of each transfer
//! method. Each test says what Dify does with them and checks that memscope shows the same.

#[macro_use]
mod common;
mod cli_support;

use cli_support::{memscope_on, run};
use common::TestDb;
use common::dify::{ACCOUNT, Era, Message, app, build, conversation, uid};
use memscope::inspect::turn_trees::turn_trees;
use memscope::memory::history::{HistoryOptions, assemble_history};
use memscope::memory::model::{Content, ContentPart};
use memscope::memory::thread::ThreadComparison;
use memscope::memory::thread_view::{ThreadMode, thread_view};
use memscope::store::{Access, Store};

const APP: u64 = 10;
const CHAT: u64 = 20;

/// Dify's current schema with one chat app and one conversation holding `messages`.
async fn dify_with(db: &TestDb, messages: &[Message<'_>], more: &[String]) -> Store {
    let era = Era::Offload;
    let mut rows = vec![
        app(APP, "Support", "chat"),
        conversation(era, CHAT, APP, "Chat", "chat", false),
    ];
    rows.extend(messages.iter().map(|m| m.insert(era)));
    rows.extend_from_slice(more);
    build(db, era, &rows).await;
    Store::open(db.url(), Access::Auto)
        .await
        .expect("open Dify's database")
}

fn turn<'a>(id: u64, parent: Option<u64>, at: &'a str) -> Message<'a> {
    Message::turn(id, CHAT, APP, parent, at)
}

fn ids(messages: &[memscope::memory::model::StoredMessage]) -> Vec<String> {
    messages.iter().map(|m| m.id.clone()).collect()
}

dify_db_tests! {
    /// Dify orders the history by `created_at` alone, at one-second precision: two regenerations
    /// of one turn written in the same second come back in whatever order the database picks,
    /// and the walk starts from that one. memscope breaks the tie by id, newest first, on
    /// every backend, so its answer is the same each time: the larger id is the newest.
    async fn rows_of_the_same_second_are_ordered_by_id(db) {
        let same_second = "2024-09-20 10:00:20";
        let store = dify_with(&db, &[
            turn(60, None, "2024-09-20 10:00:10"),
            turn(62, Some(60), same_second),
            // A regeneration written later in the same second, with a smaller id.
            turn(61, Some(60), same_second),
        ], &[]).await;
        let window = turn_trees(&store).unwrap().window(&store, &uid(CHAT), None).await.expect("window");
        assert_eq!(ids(&window.rows_newest_first), [uid(62), uid(61), uid(60)]);
        let history = assemble_history(&window.rows_newest_first, &[], &HistoryOptions::default());
        assert_eq!(history.thread, [uid(60), uid(62)]);

        let conversation = turn_trees(&store).unwrap().conversation(&store, &uid(CHAT), None).await.expect("conversation");
        let tree = conversation.tree();
        let regenerated = tree.find(&uid(62)).expect("in the tree");
        assert_eq!(tree.siblings(regenerated).count(), 1, "61 and 62 are siblings");
        store.close().await;
    }

    /// #39031: the walk stops at the first row without a parent, even when that root belongs
    /// to another branch: a regenerated first turn written between a child and its parent cuts
    /// the thread there. The parent fix and the tree path keep the real chain.
    async fn an_unrelated_root_between_child_and_parent_ends_difys_thread(db) {
        let store = dify_with(&db, &[
            turn(70, None, "2024-09-20 10:00:10"),
            turn(71, Some(70), "2024-09-20 10:00:20"),
            // The first question regenerated: a new root.
            turn(72, None, "2024-09-20 10:00:30"),
            // Back on the first branch, continuing from 71.
            turn(73, Some(71), "2024-09-20 10:00:40"),
        ], &[]).await;
        let conversation = turn_trees(&store).unwrap().conversation(&store, &uid(CHAT), None).await.expect("conversation");
        let tree = conversation.tree();
        let dify = thread_view(&conversation.rows, conversation.info.answered_rows_only, &tree, None, ThreadMode::Dify, 500);
        assert_eq!(dify.thread, [uid(72), uid(73)], "Dify keeps the unrelated root");
        assert!(
            matches!(dify.comparison, ThreadComparison::StoppedAtUnrelatedRoot { .. }),
            "{:?}",
            dify.comparison
        );
        assert_eq!(dify.tree_path, [uid(70), uid(71), uid(73)]);
        let fixed = thread_view(&conversation.rows, conversation.info.answered_rows_only, &tree, None, ThreadMode::Fixed, 500);
        assert_eq!(fixed.thread, [uid(70), uid(71), uid(73)]);
        store.close().await;
    }

    /// A failed turn keeps `status = 'error'` and an empty answer. In the middle of a thread
    /// Dify sends it as an empty assistant message; as the newest row it is taken for the
    /// current request's placeholder (empty answer, no answer tokens) and dropped.
    async fn failed_turns_stay_in_the_thread_and_the_newest_is_popped(db) {
        let failed = |id, parent, at| Message {
            answer: "",
            status: "error",
            error: Some("[openai] Error: Request timed out."),
            ..turn(id, Some(parent), at)
        };
        let store = dify_with(&db, &[
            turn(80, None, "2024-09-20 10:00:10"),
            failed(81, 80, "2024-09-20 10:00:20"),
            turn(82, Some(81), "2024-09-20 10:00:30"),
            failed(83, 82, "2024-09-20 10:00:40"),
        ], &[]).await;
        let window = turn_trees(&store).unwrap().window(&store, &uid(CHAT), None).await.expect("window");
        assert_eq!(window.rows_newest_first[0].status, "error");
        assert_eq!(window.rows_newest_first[0].error.as_deref(), Some("[openai] Error: Request timed out."));
        let history = assemble_history(&window.rows_newest_first, &[], &HistoryOptions::default());
        assert_eq!(history.thread, [uid(80), uid(81), uid(82)]);
        assert_eq!(history.popped, Some(uid(83)));
        let failed_answer = &history.messages[3];
        assert_eq!(failed_answer.source_id, uid(81));
        assert!(failed_answer.message.content.is_empty());
        store.close().await;
    }

    /// Agent turns (`agent_based`) record their reasoning in `message_agent_thoughts`: a
    /// thought with its tool calls and observations per step. Dify's agent runner sends those
    /// steps as the turn's history; memscope's history shows the answer and says how many
    /// thoughts it leaves out.
    async fn agent_turns_are_read_and_their_thoughts_counted(db) {
        let thought = |id: u64, position: u64, tool: &str, observation: &str| format!(
            "INSERT INTO message_agent_thoughts (id, message_id, position, thought, tool,
                tool_input, observation, created_by_role, created_by)
             VALUES ('{}'::uuid, '{}'::uuid, {position}, 'thinking', '{tool}', '{{}}',
                '{observation}', 'account', '{}'::uuid);",
            uid(id), uid(91), uid(ACCOUNT)
        );
        let store = dify_with(&db, &[
            turn(90, None, "2024-09-20 10:00:10"),
            Message {
                query: "weather in Kyoto?",
                answer: "Sunny, 21 °C.",
                agent_based: true,
                ..turn(91, Some(90), "2024-09-20 10:00:20")
            },
        ], &[
            thought(95, 1, "weather", "{\"temp\": 21}"),
            thought(96, 2, "", ""),
        ]).await;
        assert!(store.dify_schema().agent_thoughts);
        let counts = store
            .agent_thought_counts(&[uid(90), uid(91)])
            .await
            .expect("counts");
        assert_eq!(counts, [(uid(91), 2)]);
        let window = turn_trees(&store).unwrap().window(&store, &uid(CHAT), None).await.expect("window");
        let history = assemble_history(&window.rows_newest_first, &[], &HistoryOptions::default());
        assert_eq!(history.messages[3].message.content.text(), "Sunny, 21 °C.");
        store.close().await;

        let home = tempfile::tempdir().unwrap();
        let (out, _) = run(memscope_on(home.path(), db.url()).args(["history", &uid(CHAT), "--json"]), 0);
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let warnings = report["warnings"].to_string();
        assert!(warnings.contains("1 of these turns are agent turns with 2 recorded thoughts"), "{warnings}");
    }

    /// Message files of the three transfer methods: a remote URL, an upload (named by its
    /// `upload_files` row) and a file a tool made (no upload row; its URL names it). User
    /// files go before the query's text, the assistant's before the answer.
    async fn message_files_of_each_transfer_method(db) {
        let file = |id: u64, kind: &str, method: &str, url: Option<&str>, belongs: &str, upload: Option<u64>| format!(
            "INSERT INTO message_files (id, message_id, type, transfer_method, url, belongs_to,
                upload_file_id, created_by_role, created_by, created_at)
             VALUES ('{}'::uuid, '{}'::uuid, '{kind}', '{method}', {}, '{belongs}', {},
                'account', '{}'::uuid, '2024-09-20 10:00:10');",
            uid(id),
            uid(100),
            url.map_or("NULL".to_owned(), |u| format!("'{u}'")),
            upload.map_or("NULL".to_owned(), |u| format!("'{}'::uuid", uid(u))),
            uid(ACCOUNT)
        );
        let tool_url = format!("/files/tools/{}.png", uid(109));
        let store = dify_with(&db, &[turn(100, None, "2024-09-20 10:00:10")], &[
            format!(
                "INSERT INTO upload_files (id, tenant_id, storage_type, key, name, size,
                    extension, created_by, created_at) VALUES ('{}'::uuid, '{}'::uuid, 'local',
                    'upload_files/report.pdf', 'report.pdf', 4, 'pdf', '{}'::uuid,
                    '2024-09-20 10:00:00');",
                uid(108), uid(common::dify::TENANT), uid(ACCOUNT)
            ),
            file(101, "image", "remote_url", Some("https://example.com/cat.png"), "user", None),
            file(102, "document", "local_file", None, "user", Some(108)),
            file(103, "image", "tool_file", Some(&tool_url), "assistant", Some(109)),
        ]).await;
        let window = turn_trees(&store).unwrap().window(&store, &uid(CHAT), None).await.expect("window");
        let methods: Vec<(&str, &str)> = window
            .files
            .iter()
            .map(|f| (f.transfer_method.as_str(), f.label()))
            .collect();
        assert_eq!(methods, [
            ("remote_url", "https://example.com/cat.png"),
            ("local_file", "report.pdf"),
            ("tool_file", tool_url.as_str()),
        ]);
        let history = assemble_history(&window.rows_newest_first, &window.files, &HistoryOptions::default());
        assert_eq!(history.messages[0].message.content, Content::Parts(vec![
            ContentPart::Image { source: "https://example.com/cat.png".into() },
            ContentPart::Document { source: "report.pdf".into() },
            ContentPart::Text { text: "question".into() },
        ]));
        assert_eq!(history.messages[1].message.content, Content::Parts(vec![
            ContentPart::Image { source: tool_url.clone() },
            ContentPart::Text { text: "answer".into() },
        ]));
        store.close().await;
    }
}
