//! Memory-base test data: a Langflow user, flow, memory base and session messages.

#![allow(dead_code)]

use chrono::{DateTime, TimeDelta, Utc};
use memscope::memory::memory_base::ThresholdUnit;
use memscope::store::Store;
use memscope::store::memory_bases::MemoryBaseInfo;
use memscope::store::rows::{Batch, FlowRow, JobRow, LfMessageRow, LfUserRow, MemoryBaseRow};

pub const USERNAME: &str = "ada";

pub fn id(n: u128) -> String {
    uuid::Uuid::from_u128(n).hyphenated().to_string()
}

pub fn time(seconds: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(1_750_000_000, 0).expect("valid time")
        + TimeDelta::seconds(seconds)
}

pub const USER: u128 = 0xA0;
pub const FLOW: u128 = 0xF0;

/// A user, a flow and a memory base on it. The base's id is random: PostgreSQL tests share one
/// database, and advisory locks are per database.
pub async fn base(store: &Store, threshold: i64, unit: ThresholdUnit) -> MemoryBaseInfo {
    let batch = Batch {
        lf_users: vec![LfUserRow {
            id: id(USER),
            username: USERNAME.into(),
            created_at: time(0),
        }],
        flows: vec![FlowRow {
            id: id(FLOW),
            name: "Support".into(),
            user_id: id(USER),
            updated_at: time(0),
        }],
        ..Batch::default()
    };
    store.insert_batch(&batch).await.expect("user and flow");
    let base_id = uuid::Uuid::new_v4().to_string();
    store
        .create_memory_base(&MemoryBaseRow {
            id: base_id.clone(),
            name: "Support memory".into(),
            flow_id: id(FLOW),
            user_id: id(USER),
            threshold,
            threshold_unit: unit.as_str().to_owned(),
            auto_capture: true,
            embedding_provider: "memscope".into(),
            embedding_model: "hashing-lexical".into(),
            kb_name: "support_memory_0000beef".into(),
            created_at: time(0),
        })
        .await
        .expect("memory base");
    store
        .find_memory_bases(&base_id)
        .await
        .expect("read base")
        .remove(0)
}

/// A message of the flow; odd numbers are the machine's outputs.
pub fn message(n: u128, session: &str, seconds: i64, text: &str) -> LfMessageRow {
    let machine = n % 2 == 1;
    LfMessageRow {
        id: id(n),
        timestamp: time(seconds),
        sender: if machine { "Machine" } else { "User" }.into(),
        sender_name: if machine { "AI" } else { "User" }.into(),
        session_id: session.into(),
        text: text.into(),
        files: "[]".into(),
        error: false,
        edit: false,
        properties: "{}".into(),
        category: "message".into(),
        content_blocks: "[]".into(),
        flow_id: Some(id(FLOW)),
        run_id: None,
        is_output: machine,
    }
}

/// `count` short messages numbered from `first`, one second apart from `first_second`.
pub async fn messages(store: &Store, session: &str, first: u128, count: u128, first_second: i64) {
    let batch = Batch {
        lf_messages: (0..count)
            .map(|i| {
                message(
                    first + i,
                    session,
                    first_second + i as i64,
                    &format!("message {} about topic {}", first + i, (first + i) % 7),
                )
            })
            .collect(),
        ..Batch::default()
    };
    store.insert_batch(&batch).await.expect("messages");
}

/// A completed workflow run (job) of the flow.
pub fn run_job(n: u128, seconds: i64) -> JobRow {
    JobRow {
        job_id: id(n),
        flow_id: Some(id(FLOW)),
        status: "completed".into(),
        job_type: "workflow".into(),
        user_id: Some(id(USER)),
        asset_id: None,
        asset_type: None,
        dedupe_key: None,
        created_timestamp: time(seconds),
        finished_timestamp: Some(time(seconds)),
    }
}

/// One message inserted with SQL, its timestamp exactly the text `timestamp` (as Python,
/// JavaScript or PostgreSQL write it), so the test sees what another writer leaves in the table.
pub struct RawMessage<'a> {
    pub n: u128,
    pub session: &'a str,
    pub timestamp: &'a str,
    pub text: &'a str,
    pub is_output: bool,
    pub error: bool,
}

/// The SQL inserting `messages` (PostgreSQL syntax: run it with `TestDb::execute`).
pub fn raw_messages_sql(messages: &[RawMessage<'_>]) -> String {
    let flow = id(FLOW);
    messages
        .iter()
        .map(|m| {
            format!(
                "INSERT INTO message (id, timestamp, sender, sender_name, session_id, text, files, \
                 error, edit, properties, category, content_blocks, flow_id, run_id, is_output) \
                 VALUES ('{}', '{}', 'User', 'User', '{}', '{}', '[]', {}, false, '{{}}', '{}', \
                 '[]', '{flow}', NULL, {});\n",
                id(m.n),
                m.timestamp,
                m.session,
                m.text.replace('\'', "''"),
                m.error,
                if m.error { "error" } else { "message" },
                m.is_output,
            )
        })
        .collect()
}
