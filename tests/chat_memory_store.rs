//! Chat memories on both backends: changes applied in one transaction and undone byte for
//! byte, seed 004's add (with its policy) and delete, and the apply/undo property.

#[macro_use]
mod common;

use chrono::NaiveDateTime;
use common::{Kind, TestDb, Value};
use memscope::inspect::trim::{
    NewMemory, NewMessage, TrimCounter, TrimInspectError, add_message, apply_policy,
    delete_messages, load_memory,
};
use memscope::memory::model::Role;
use memscope::memory::trim::ChatMemoryPolicy;
use memscope::store::rows::{Batch, ChatMemoryMessageRow, ChatMemoryRow};
use memscope::store::{DeleteScope, Store};
use memscope::summarize::Summarizer;
use proptest::prelude::*;

fn at(seconds: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp(1_770_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

fn id(n: u128) -> String {
    uuid::Uuid::from_u128(0x7000_0000_0000_4000_8000_0000_0000_0000 | n).to_string()
}

/// A memory of `turns` exchanges, one request each; every third turn calls a tool and every
/// fourth user message carries an image.
fn memory(turns: usize, policy: &str) -> Batch {
    let memory_id = id(1);
    let mut batch = Batch::default();
    batch.chat_memories.push(ChatMemoryRow {
        id: memory_id.clone(),
        memory_node_id: "node-1".into(),
        chat_id: "chat-1".into(),
        label: "Support".into(),
        policy: policy.into(),
        created_at: at(0),
        updated_at: at(0),
    });
    let mut push = |role: &str,
                    content: String,
                    extras: (Option<String>, Option<String>, Option<String>),
                    request: usize| {
        let seq = batch.chat_memory_messages.len() as i64;
        batch.chat_memory_messages.push(ChatMemoryMessageRow {
            id: id(1000 + seq as u128),
            chat_memory_id: memory_id.clone(),
            seq,
            role: role.into(),
            content,
            tool_calls: extras.0,
            tool_call_id: extras.1,
            files: extras.2,
            workflow_request_id: Some(format!("request-{request}")),
            is_summary: false,
            created_at: at(seq * 7),
        });
    };
    for turn in 0..turns {
        let image = (turn % 4 == 0).then(|| {
            format!(
                r#"[{{"url":"https://files.example.com/u/shot-{turn}.png","metadata":{{}},"file_name":"shot-{turn}.png","file_size":1200,"content_type":"image/png"}}]"#
            )
        });
        push(
            "user",
            format!("\"Turn {turn}: why is invoice {turn} late?\""),
            (None, None, image),
            turn,
        );
        if turn % 3 == 0 {
            let call = format!(
                r#"[{{"id":"call-{turn}","name":"lookup","arguments":"{{\"invoice\":{turn}}}"}}]"#
            );
            push("assistant", "\"\"".into(), (Some(call), None, None), turn);
            push(
                "tool",
                format!("\"{{\\\"invoice\\\":{turn},\\\"status\\\":\\\"late\\\"}}\""),
                (None, Some(format!("call-{turn}")), None),
                turn,
            );
        }
        push(
            "assistant",
            format!("\"Invoice {turn} ships on Monday.\""),
            (None, None, None),
            turn,
        );
    }
    batch
}

const ROW_SQL: &str = "SELECT id::text, seq, role, content, tool_calls, tool_call_id, files, \
    workflow_request_id, is_summary, created_at FROM chat_memory_messages ORDER BY seq";
const ROW_KINDS: [Kind; 10] = [
    Kind::Text,
    Kind::Int,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Text,
    Kind::Bool,
    Kind::Time,
];

async fn rows(db: &TestDb) -> Vec<Vec<Value>> {
    db.fetch(ROW_SQL, &ROW_KINDS).await
}

async fn filled(db: &TestDb, turns: usize, policy: &str) -> Store {
    let store = Store::init(db.url()).await.unwrap();
    store.insert_batch(&memory(turns, policy)).await.unwrap();
    store
}

const BUSY_POLICY: &str = r#"{"limit_type":"messages","max_messages":12,"strategy":"drop_middle",
    "keep_first":2,"clear_tool_results":true,"max_images":1,"summarization":{"enabled":true}}"#;

db_tests! {
    async fn apply_then_undo_restores_every_byte(db) {
        let store = filled(&db, 20, BUSY_POLICY).await;
        let before = rows(&db).await;
        let loaded = load_memory(&store, &id(1)).await.unwrap();
        let applied = apply_policy(
            &store, &loaded, &loaded.policy, TrimCounter::Messages, &Summarizer::Extractive, "trim",
        )
        .await
        .unwrap();
        assert!(applied.change_id.is_some());
        let after = rows(&db).await;
        assert_eq!(after.len(), 12);
        // keep_first 2 reaches into a tool group, so the whole group is kept; the older image is
        // stubbed; the summary takes the removed slice's place.
        let ids = |rows: &[Vec<Value>]| rows[..3].iter().map(|r| r[0].clone()).collect::<Vec<_>>();
        assert_eq!(ids(&after), ids(&before));
        assert!(matches!(&after[0][3], Value::Text(t) if t.contains("[image removed: shot-0.png]")));
        assert_eq!(after[3][8], Value::Bool(true));
        let reloaded = load_memory(&store, &id(1)).await.unwrap();
        assert!(reloaded.rows.iter().filter(|r| r.role == "tool").all(|r| r.content == "\"\""));

        let undone = store.undo_chat_memory_change(&id(1)).await.unwrap().unwrap();
        assert_eq!(undone.action, "trim");
        assert_eq!(rows(&db).await, before);
        assert!(store.undo_chat_memory_change(&id(1)).await.unwrap().is_none());
        let changes = store.chat_memory_changes(&id(1)).await.unwrap();
        assert_eq!(changes.len(), 1);
        assert!(changes[0].undone_at.is_some());
        assert!(changes[0].policy.contains("drop_middle"));
    }

    async fn a_second_apply_changes_nothing(db) {
        let store = filled(&db, 20, BUSY_POLICY).await;
        let loaded = load_memory(&store, &id(1)).await.unwrap();
        let run = |loaded| {
            let store = store.clone();
            async move {
                apply_policy(&store, &loaded, &loaded.policy.clone(), TrimCounter::Messages, &Summarizer::Extractive, "trim")
                    .await
                    .unwrap()
            }
        };
        assert!(run(loaded).await.change_id.is_some());
        let once = rows(&db).await;
        let again = run(load_memory(&store, &id(1)).await.unwrap()).await;
        assert!(again.change_id.is_none(), "{:?}", again.plan.steps);
        assert_eq!(rows(&db).await, once);
    }

    async fn adding_applies_the_policy_and_creates_memories(db) {
        let store = filled(&db, 5, r#"{"max_messages":10,"max_images":5}"#).await;
        let before = rows(&db).await;
        let new = NewMessage {
            memory_node_id: "node-1",
            chat_id: "chat-1",
            role: Role::User,
            content: "One more question.",
            files: Some(serde_json::json!({"files": [{"url": "https://f.example/a.pdf", "file_name": "a.pdf", "content_type": "application/pdf"}]})),
            workflow_request_id: Some("request-new"),
            create: None,
        };
        let added = add_message(&store, &new, TrimCounter::Messages, &Summarizer::Extractive).await.unwrap();
        assert!(!added.created);
        assert_eq!(added.seq, before.len() as i64);
        let after = rows(&db).await;
        assert_eq!(after.len(), 10);
        assert_eq!(after.last().unwrap()[6], Value::Text(r#"[{"content_type":"application/pdf","file_name":"a.pdf","url":"https://f.example/a.pdf"}]"#.into()));
        // The message and the policy's trim are one change: one undo takes the message out and
        // brings the oldest back, exactly as the memory was before the add.
        store.undo_chat_memory_change(&id(1)).await.unwrap().unwrap();
        assert_eq!(rows(&db).await, before);

        // A chat without a memory gets one only when asked to: nothing is written otherwise.
        let unasked = NewMessage { chat_id: "chat-2", ..new };
        let refused = add_message(&store, &unasked, TrimCounter::Messages, &Summarizer::Extractive).await;
        assert!(matches!(refused, Err(TrimInspectError::NoMemory { .. })), "{refused:?}");
        assert!(store.find_chat_memory("node-1", "chat-2").await.unwrap().is_none());
        let fresh = NewMessage {
            create: Some(NewMemory { label: "New chat", policy: "{}" }),
            ..unasked
        };
        let created = add_message(&store, &fresh, TrimCounter::Messages, &Summarizer::Extractive).await.unwrap();
        assert!(created.created);
        let memory = store.find_chat_memory("node-1", "chat-2").await.unwrap().unwrap();
        assert_eq!(memory.label, "New chat");
        assert_eq!(store.chat_memory_messages(&memory.id, None, 0).await.unwrap().len(), 1);
    }

    async fn deleting_the_latest_request_by_role(db) {
        let store = filled(&db, 5, "{}").await;
        let before = rows(&db).await;
        let loaded = load_memory(&store, &id(1)).await.unwrap();
        let (_, deleted) = delete_messages(&store, &loaded, DeleteScope::LatestRequest, &[Role::Assistant])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(deleted, 1);
        let after = rows(&db).await;
        assert_eq!(after.len(), before.len() - 1);
        assert_eq!(after.last().unwrap()[2], Value::Text("user".into()));
        store.undo_chat_memory_change(&id(1)).await.unwrap().unwrap();
        assert_eq!(rows(&db).await, before);

        let loaded = load_memory(&store, &id(1)).await.unwrap();
        let (_, all) = delete_messages(&store, &loaded, DeleteScope::All, &[Role::User, Role::Assistant])
            .await
            .unwrap()
            .unwrap();
        // Tool results stay: only the roles asked for go.
        assert_eq!(all, before.len() - 2);
        let page = store.chat_memory_messages(&id(1), Some(50), 0).await.unwrap();
        assert!(page.iter().all(|r| r.role == "tool"));
    }

    async fn only_an_empty_memory_is_deleted(db) {
        let store = filled(&db, 3, "{}").await;
        let before = rows(&db).await;
        assert_eq!(store.delete_empty_chat_memory(&id(1)).await.unwrap(), before.len() as i64);
        assert_eq!(rows(&db).await, before, "a memory with messages is kept whole");
        assert!(store.chat_memory(&id(1)).await.unwrap().is_some());

        let loaded = load_memory(&store, &id(1)).await.unwrap();
        let roles = [Role::User, Role::Assistant, Role::Tool];
        delete_messages(&store, &loaded, DeleteScope::All, &roles).await.unwrap().unwrap();
        assert_eq!(store.chat_memory_changes(&id(1)).await.unwrap().len(), 1);
        assert_eq!(store.delete_empty_chat_memory(&id(1)).await.unwrap(), 0);
        assert!(store.chat_memory(&id(1)).await.unwrap().is_none());
        assert!(store.list_chat_memories().await.unwrap().is_empty());
        // Its undo history went with it.
        assert!(store.chat_memory_changes(&id(1)).await.unwrap().is_empty());
        let archived = db.fetch("SELECT count(*) FROM chat_memory_trim_archive", &[Kind::Int]).await;
        assert_eq!(archived[0][0], Value::Int(0));
    }

    async fn pages_and_lists(db) {
        let store = filled(&db, 6, "{}").await;
        let page = store.chat_memory_messages(&id(1), Some(3), 2).await.unwrap();
        assert_eq!(page.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![2, 3, 4]);
        let list = store.list_chat_memories().await.unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].message_count, 16);
        assert!(store.chat_memory("not-a-uuid").await.unwrap().is_none());
        assert!(store.chat_memory_messages("not-a-uuid", None, 0).await.unwrap().is_empty());
    }
}

fn policy_json() -> impl Strategy<Value = String> {
    (
        1u64..30,
        any::<bool>(),
        0u64..4,
        any::<bool>(),
        0u64..3,
        any::<bool>(),
    )
        .prop_map(|(max, middle, keep_first, clear, images, summarize)| {
            serde_json::json!({
                "max_messages": max,
                "strategy": if middle { "drop_middle" } else { "drop_oldest" },
                "keep_first": keep_first,
                "clear_tool_results": clear,
                "max_images": images,
                "summarization": {"enabled": summarize},
            })
            .to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Apply followed by undo restores the memory byte for byte (SQLite).
    #[test]
    fn apply_then_undo_is_the_identity(turns in 1usize..25, policy in policy_json()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(common::run_sqlite(move |db: TestDb| async move {
            let store = filled(&db, turns, &policy).await;
            let before = rows(&db).await;
            let loaded = load_memory(&store, &id(1)).await.unwrap();
            let parsed = ChatMemoryPolicy::from_json(&policy).unwrap();
            let applied = apply_policy(&store, &loaded, &parsed, TrimCounter::Messages, &Summarizer::Extractive, "trim")
                .await
                .unwrap();
            if applied.change_id.is_some() {
                store.undo_chat_memory_change(&id(1)).await.unwrap().unwrap();
            }
            assert_eq!(rows(&db).await, before);
        }));
    }
}
