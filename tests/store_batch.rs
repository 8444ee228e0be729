//! `insert_batch`: every table round-trips, large batches span several statements, and a
//! failing batch leaves nothing behind.

#[macro_use]
mod common;

use common::fixtures::{app, conversation, full_batch, id, message};
use common::{Kind, TestDb, Value};
use memscope::store::rows::Batch;
use memscope::store::{Store, StoreError};

use Kind::{Bool, Int, Text, Time, TimeTz};

/// Reads `sql` and compares it with the expected rows.
async fn assert_rows(db: &TestDb, sql: &str, kinds: &[Kind], expected: Vec<Vec<Value>>) {
    let actual = db.fetch(sql, kinds).await;
    assert_eq!(actual, expected, "{sql}");
}

fn v<T: Into<Value>>(value: T) -> Value {
    value.into()
}

async fn assert_batch_stored(db: &TestDb, b: &Batch) {
    assert_rows(
        db,
        "SELECT id::text, tenant_id::text, name, mode, memory_window::bigint, created_at \
         FROM apps ORDER BY id",
        &[Text, Text, Text, Text, Int, Time],
        b.apps
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.tenant_id),
                    v(&r.name),
                    v(&r.mode),
                    v(&r.memory_window),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, app_id::text, name, mode, model_provider, model_id, status, invoke_from, \
         from_source, dialogue_count::bigint, created_at, updated_at FROM conversations ORDER BY id",
        &[Text, Text, Text, Text, Text, Text, Text, Text, Text, Int, Time, Time],
        b.conversations
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.app_id),
                    v(&r.name),
                    v(&r.mode),
                    v(&r.model_provider),
                    v(&r.model_id),
                    v(&r.status),
                    v(&r.invoke_from),
                    v(&r.from_source),
                    v(r.dialogue_count),
                    v(r.created_at),
                    v(r.updated_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, tenant_id::text, storage_type, key, name, size::bigint, extension, \
         mime_type, created_at FROM upload_files ORDER BY id",
        &[Text, Text, Text, Text, Text, Int, Text, Text, Time],
        b.upload_files
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.tenant_id),
                    v(&r.storage_type),
                    v(&r.key),
                    v(&r.name),
                    v(r.size),
                    v(&r.extension),
                    v(&r.mime_type),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, tenant_id::text, app_id::text, workflow_id::text, type, status, \
         total_tokens, created_at, finished_at FROM workflow_runs ORDER BY id",
        &[Text, Text, Text, Text, Text, Text, Int, Time, Time],
        b.workflow_runs
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.tenant_id),
                    v(&r.app_id),
                    v(&r.workflow_id),
                    v(&r.run_type),
                    v(&r.status),
                    v(r.total_tokens),
                    v(r.created_at),
                    v(&r.finished_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, app_id::text, conversation_id::text, parent_message_id::text, query, \
         answer, message_tokens::bigint, answer_tokens::bigint, status, error, invoke_from, \
         workflow_run_id::text, created_at FROM messages ORDER BY id",
        &[
            Text, Text, Text, Text, Text, Text, Int, Int, Text, Text, Text, Text, Time,
        ],
        b.messages
            .iter()
            .map(|r| {
                let m = &r.message;
                vec![
                    v(&m.id),
                    v(&r.app_id),
                    v(&m.conversation_id),
                    v(&m.parent_message_id),
                    v(&m.query),
                    v(&m.answer),
                    v(m.message_tokens),
                    v(m.answer_tokens),
                    v(&m.status),
                    v(&m.error),
                    v(&m.invoke_from),
                    v(&m.workflow_run_id),
                    v(m.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, message_id::text, type, transfer_method, url, belongs_to, \
         upload_file_id::text, created_at FROM message_files ORDER BY id",
        &[Text, Text, Text, Text, Text, Text, Text, Time],
        b.message_files
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.message_id),
                    v(&r.file_type),
                    v(&r.transfer_method),
                    v(&r.url),
                    v(&r.belongs_to),
                    v(&r.upload_file_id),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, tenant_id::text, app_id::text, workflow_id::text, \
         workflow_run_id::text, \"index\"::bigint, node_id, node_type, title, inputs, \
         process_data, outputs, status, error, execution_metadata, created_at \
         FROM workflow_node_executions ORDER BY id",
        &[
            Text, Text, Text, Text, Text, Int, Text, Text, Text, Text, Text, Text, Text, Text,
            Text, Time,
        ],
        b.node_executions
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.tenant_id),
                    v(&r.app_id),
                    v(&r.workflow_id),
                    v(&r.workflow_run_id),
                    v(r.index),
                    v(&r.node_id),
                    v(&r.node_type),
                    v(&r.title),
                    v(&r.inputs),
                    v(&r.process_data),
                    v(&r.outputs),
                    v(&r.status),
                    v(&r.error),
                    v(&r.execution_metadata),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, tenant_id::text, app_id::text, node_execution_id::text, type, \
         file_id::text, created_at FROM workflow_node_execution_offload ORDER BY id",
        &[Text, Text, Text, Text, Text, Text, Time],
        b.node_execution_offloads
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.tenant_id),
                    v(&r.app_id),
                    v(&r.node_execution_id),
                    v(&r.offload_type),
                    v(&r.file_id),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, memory_node_id, chat_id, label, policy, created_at, updated_at \
         FROM chat_memories ORDER BY id",
        &[Text, Text, Text, Text, Text, Time, Time],
        b.chat_memories
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.memory_node_id),
                    v(&r.chat_id),
                    v(&r.label),
                    v(&r.policy),
                    v(r.created_at),
                    v(r.updated_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, chat_memory_id::text, seq, role, content, tool_calls, tool_call_id, \
         files, workflow_request_id, is_summary, created_at FROM chat_memory_messages ORDER BY id",
        &[
            Text, Text, Int, Text, Text, Text, Text, Text, Text, Bool, Time,
        ],
        b.chat_memory_messages
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.chat_memory_id),
                    v(r.seq),
                    v(&r.role),
                    v(&r.content),
                    v(&r.tool_calls),
                    v(&r.tool_call_id),
                    v(&r.files),
                    v(&r.workflow_request_id),
                    v(r.is_summary),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, username, created_at FROM \"user\" ORDER BY id",
        &[Text, Text, TimeTz],
        b.lf_users
            .iter()
            .map(|r| vec![v(&r.id), v(&r.username), v(r.created_at)])
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, name, user_id::text, updated_at FROM flow ORDER BY id",
        &[Text, Text, Text, TimeTz],
        b.flows
            .iter()
            .map(|r| vec![v(&r.id), v(&r.name), v(&r.user_id), v(r.updated_at)])
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT job_id::text, flow_id::text, status, type, user_id::text, asset_id::text, \
         asset_type, dedupe_key, created_timestamp, finished_timestamp FROM job ORDER BY job_id",
        &[
            Text, Text, Text, Text, Text, Text, Text, Text, TimeTz, TimeTz,
        ],
        b.jobs
            .iter()
            .map(|r| {
                vec![
                    v(&r.job_id),
                    v(&r.flow_id),
                    v(&r.status),
                    v(&r.job_type),
                    v(&r.user_id),
                    v(&r.asset_id),
                    v(&r.asset_type),
                    v(&r.dedupe_key),
                    v(r.created_timestamp),
                    v(&r.finished_timestamp),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, timestamp, sender, sender_name, session_id, text, files::text, error, \
         edit, properties::text, category, content_blocks::text, flow_id::text, run_id::text, \
         is_output FROM message ORDER BY id",
        &[
            Text, TimeTz, Text, Text, Text, Text, Text, Bool, Bool, Text, Text, Text, Text, Text,
            Bool,
        ],
        b.lf_messages
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(r.timestamp),
                    v(&r.sender),
                    v(&r.sender_name),
                    v(&r.session_id),
                    v(&r.text),
                    v(&r.files),
                    v(r.error),
                    v(r.edit),
                    v(&r.properties),
                    v(&r.category),
                    v(&r.content_blocks),
                    v(&r.flow_id),
                    v(&r.run_id),
                    v(r.is_output),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, name, flow_id::text, user_id::text, threshold::bigint, threshold_unit, \
         auto_capture, embedding_provider, embedding_model, kb_name, created_at \
         FROM memory_base ORDER BY id",
        &[
            Text, Text, Text, Text, Int, Text, Bool, Text, Text, Text, TimeTz,
        ],
        b.memory_bases
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.name),
                    v(&r.flow_id),
                    v(&r.user_id),
                    v(r.threshold),
                    v(&r.threshold_unit),
                    v(r.auto_capture),
                    v(&r.embedding_provider),
                    v(&r.embedding_model),
                    v(&r.kb_name),
                    v(r.created_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, memory_base_id::text, session_id, cursor_id::text, \
         total_processed::bigint, last_sync_at FROM memory_base_session ORDER BY id",
        &[Text, Text, Text, Text, Int, TimeTz],
        b.memory_base_sessions
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.memory_base_id),
                    v(&r.session_id),
                    v(&r.cursor_id),
                    v(r.total_processed),
                    v(&r.last_sync_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, memory_base_id::text, session_id, workflow_job_id::text, \
         ingestion_job_id::text, recorded_at FROM memory_base_workflow_run ORDER BY id",
        &[Text, Text, Text, Text, Text, TimeTz],
        b.memory_base_workflow_runs
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.memory_base_id),
                    v(&r.session_id),
                    v(&r.workflow_job_id),
                    v(&r.ingestion_job_id),
                    v(r.recorded_at),
                ]
            })
            .collect(),
    )
    .await;
    assert_rows(
        db,
        "SELECT id::text, message_id::text, memory_base_id::text, job_id::text, session_id, \
         ingested_at FROM message_ingestion_record ORDER BY id",
        &[Text, Text, Text, Text, Text, TimeTz],
        b.ingestion_records
            .iter()
            .map(|r| {
                vec![
                    v(&r.id),
                    v(&r.message_id),
                    v(&r.memory_base_id),
                    v(&r.job_id),
                    v(&r.session_id),
                    v(r.ingested_at),
                ]
            })
            .collect(),
    )
    .await;
}

/// One conversation with `count` messages, one second apart.
fn conversation_batch(count: u128) -> Batch {
    let app = app(10, "Bot", "chat");
    let conversation = conversation(20, &app, "Long", 0);
    let messages = (0..count)
        .map(|i| message(1_000 + i, &conversation, i as i64))
        .collect();
    Batch {
        apps: vec![app],
        conversations: vec![conversation],
        messages,
        ..Batch::default()
    }
}

async fn count(db: &TestDb, table: &str) -> i64 {
    let rows = db
        .fetch(&format!("SELECT COUNT(*) FROM {table}"), &[Kind::Int])
        .await;
    match rows.as_slice() {
        [row] => match row.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("unexpected count {other:?}"),
        },
        other => panic!("unexpected count rows {other:?}"),
    }
}

db_tests! {
    async fn every_table_round_trips(db) {
        let store = Store::init(db.url()).await.expect("init");
        let batch = full_batch();
        store.insert_batch(&batch).await.expect("insert");
        store.close().await;
        assert_batch_stored(&db, &batch).await;
    }

    async fn large_batch_spans_several_statements(db) {
        // More rows than one statement carries on either backend (13 columns per message:
        // 2520 rows per statement on SQLite, 5041 on PostgreSQL).
        let store = Store::init(db.url()).await.expect("init");
        let batch = conversation_batch(6_000);
        store.insert_batch(&batch).await.expect("insert");
        assert_eq!(count(&db, "messages").await, 6_000);
        let oldest = store.all_messages(&id(20)).await.expect("messages");
        assert_eq!(oldest.len(), 6_000);
        assert_eq!(oldest.first().map(|m| m.id.clone()), Some(id(1_000)));
        assert_eq!(oldest.last().map(|m| m.id.clone()), Some(id(6_999)));
        store.close().await;
    }

    async fn failing_batch_leaves_nothing(db) {
        let store = Store::init(db.url()).await.expect("init");
        let mut batch = full_batch();
        // A duplicate id in the last table fails after every other table was written.
        let duplicate = batch.ingestion_records[0].clone();
        batch.ingestion_records.push(duplicate);
        let error = store.insert_batch(&batch).await.expect_err("duplicate id");
        assert!(matches!(error, StoreError::Query { .. }), "{error}");
        for table in ["apps", "conversations", "messages", "chat_memories", "message", "job"] {
            assert_eq!(count(&db, table).await, 0, "{table}");
        }
        // The store is still usable, and the same rows go in once the batch is valid.
        batch.ingestion_records.pop();
        store.insert_batch(&batch).await.expect("insert");
        assert_eq!(count(&db, "message_ingestion_record").await, 1);
        store.close().await;
    }

    async fn foreign_keys_are_enforced(db) {
        let store = Store::init(db.url()).await.expect("init");
        let orphan = Batch {
            chat_memory_messages: full_batch().chat_memory_messages,
            ..Batch::default()
        };
        let error = store.insert_batch(&orphan).await.expect_err("missing chat memory");
        assert!(matches!(error, StoreError::Query { .. }), "{error}");
        store.close().await;
    }

    async fn deleting_a_memory_base_cascades(db) {
        let store = Store::init(db.url()).await.expect("init");
        store.insert_batch(&full_batch()).await.expect("insert");
        store.close().await;
        db.execute("DELETE FROM job WHERE type = 'ingestion'").await;
        let rows = db
            .fetch(
                "SELECT ingestion_job_id::text FROM memory_base_workflow_run",
                &[Kind::Text],
            )
            .await;
        assert_eq!(rows, vec![vec![Value::Null]], "ON DELETE SET NULL");
        db.execute("DELETE FROM memory_base").await;
        for table in [
            "memory_base_session",
            "memory_base_workflow_run",
            "message_ingestion_record",
        ] {
            assert_eq!(count(&db, table).await, 0, "{table}");
        }
        assert_eq!(count(&db, "message").await, 1);
    }

    async fn empty_parent_is_stored_as_null(db) {
        let store = Store::init(db.url()).await.expect("init");
        let mut batch = conversation_batch(1);
        batch.messages[0].message.parent_message_id = Some(String::new());
        store.insert_batch(&batch).await.expect("insert");
        let stored = store.all_messages(&id(20)).await.expect("messages");
        assert_eq!(stored[0].parent_message_id, None);
        store.close().await;
    }
}
