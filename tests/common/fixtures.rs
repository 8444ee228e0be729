//! Rows for tests: deterministic ids and times, and a batch touching every table.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use memscope::memory::model::StoredMessage;
use memscope::store::rows::*;

/// The UUID with this number, as the store writes ids.
pub fn id(n: u128) -> String {
    uuid::Uuid::from_u128(n).hyphenated().to_string()
}

/// A naive time `seconds` after 2025-01-01 00:00:00.
pub fn at(seconds: i64) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2025, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("valid date")
        + TimeDelta::seconds(seconds)
}

pub fn at_utc(seconds: i64) -> DateTime<Utc> {
    at(seconds).and_utc()
}

pub fn app(n: u128, name: &str, mode: &str) -> AppRow {
    AppRow {
        id: id(n),
        tenant_id: id(1),
        name: name.to_owned(),
        mode: mode.to_owned(),
        memory_window: Some(10),
        created_at: at(0),
    }
}

pub fn conversation(n: u128, app: &AppRow, name: &str, updated: i64) -> ConversationRow {
    ConversationRow {
        id: id(n),
        app_id: app.id.clone(),
        name: name.to_owned(),
        mode: app.mode.clone(),
        model_provider: Some("openai".to_owned()),
        model_id: Some("gpt-4o".to_owned()),
        status: "normal".to_owned(),
        invoke_from: Some("web-app".to_owned()),
        from_source: "api".to_owned(),
        dialogue_count: 0,
        created_at: at(0),
        updated_at: at(updated),
    }
}

pub fn message(n: u128, conversation: &ConversationRow, created: i64) -> MessageRow {
    MessageRow {
        app_id: conversation.app_id.clone(),
        message: StoredMessage {
            id: id(n),
            conversation_id: conversation.id.clone(),
            parent_message_id: None,
            query: format!("question {n}"),
            answer: format!("answer {n}"),
            message_tokens: 12,
            answer_tokens: 34,
            status: "normal".to_owned(),
            error: None,
            invoke_from: Some("web-app".to_owned()),
            workflow_run_id: None,
            created_at: at(created),
            app_mode: None,
        },
    }
}

pub fn upload_file(n: u128, name: &str) -> UploadFileRow {
    UploadFileRow {
        id: id(n),
        tenant_id: id(1),
        storage_type: "local".to_owned(),
        key: format!("upload_files/{n}/{name}"),
        name: name.to_owned(),
        size: 1024,
        extension: "png".to_owned(),
        mime_type: Some("image/png".to_owned()),
        created_at: at(0),
    }
}

pub fn message_file(
    n: u128,
    message: &MessageRow,
    upload: Option<&UploadFileRow>,
) -> MessageFileRow {
    MessageFileRow {
        id: id(n),
        message_id: message.message.id.clone(),
        file_type: "image".to_owned(),
        transfer_method: if upload.is_some() {
            "local_file"
        } else {
            "remote_url"
        }
        .to_owned(),
        url: upload
            .is_none()
            .then(|| format!("https://example.com/{n}.png")),
        belongs_to: Some("user".to_owned()),
        upload_file_id: upload.map(|u| u.id.clone()),
        created_at: message.message.created_at,
    }
}

pub fn workflow_run(n: u128, app: &AppRow) -> WorkflowRunRow {
    WorkflowRunRow {
        id: id(n),
        tenant_id: app.tenant_id.clone(),
        app_id: app.id.clone(),
        workflow_id: id(2),
        run_type: "chat".to_owned(),
        status: "succeeded".to_owned(),
        total_tokens: 120,
        created_at: at(0),
        finished_at: Some(at(3)),
    }
}

pub fn node_execution(n: u128, run: &WorkflowRunRow, outputs: &str) -> NodeExecutionRow {
    NodeExecutionRow {
        id: id(n),
        tenant_id: run.tenant_id.clone(),
        app_id: run.app_id.clone(),
        workflow_id: run.workflow_id.clone(),
        workflow_run_id: Some(run.id.clone()),
        index: 1,
        node_id: "llm".to_owned(),
        node_type: "llm".to_owned(),
        title: "LLM".to_owned(),
        inputs: Some("{\"query\": \"hi\"}".to_owned()),
        process_data: None,
        outputs: Some(outputs.to_owned()),
        status: "succeeded".to_owned(),
        error: None,
        execution_metadata: Some("{\"total_tokens\": 120}".to_owned()),
        created_at: at(n as i64),
    }
}

/// One or more rows in every table, consistent with every foreign key.
pub fn full_batch() -> Batch {
    let app = app(10, "Support bot", "advanced-chat");
    let conversation = conversation(20, &app, "Refund question", 100);
    let upload = upload_file(30, "receipt.png");
    let run = workflow_run(40, &app);
    let mut first = message(50, &conversation, 10);
    first.message.workflow_run_id = Some(run.id.clone());
    let mut second = message(51, &conversation, 20);
    second.message.parent_message_id = Some(first.message.id.clone());
    second.message.status = "error".to_owned();
    second.message.error = Some("quota exceeded".to_owned());
    second.message.answer = String::new();
    let file = message_file(60, &first, Some(&upload));
    let node = node_execution(70, &run, "{\"text\": \"hello\", \"context\": []}");
    let offload = NodeExecutionOffloadRow {
        id: id(80),
        tenant_id: app.tenant_id.clone(),
        app_id: app.id.clone(),
        node_execution_id: node.id.clone(),
        offload_type: "outputs".to_owned(),
        file_id: upload.id.clone(),
        created_at: at(4),
    };
    let chat_memory = ChatMemoryRow {
        id: id(90),
        memory_node_id: "memory_1".to_owned(),
        chat_id: "user-7-session-3".to_owned(),
        label: "Support memory".to_owned(),
        policy: "{\"limit\": {\"messages\": 20}}".to_owned(),
        created_at: at(0),
        updated_at: at(5),
    };
    let chat_message = ChatMemoryMessageRow {
        id: id(91),
        chat_memory_id: chat_memory.id.clone(),
        seq: 1,
        role: "assistant".to_owned(),
        content: "[{\"type\": \"text\", \"text\": \"café ☕\"}]".to_owned(),
        tool_calls: Some(
            "[{\"id\": \"c1\", \"name\": \"lookup\", \"arguments\": \"{}\"}]".to_owned(),
        ),
        tool_call_id: None,
        files: None,
        workflow_request_id: Some("req-1".to_owned()),
        is_summary: true,
        created_at: at(6),
    };
    let user = LfUserRow {
        id: id(100),
        username: "langflow".to_owned(),
        created_at: at_utc(0),
    };
    let flow = FlowRow {
        id: id(101),
        name: "Memory chatbot".to_owned(),
        user_id: user.id.clone(),
        updated_at: at_utc(1),
    };
    let workflow_job = JobRow {
        job_id: id(102),
        flow_id: Some(flow.id.clone()),
        status: "completed".to_owned(),
        job_type: "workflow".to_owned(),
        user_id: Some(user.id.clone()),
        asset_id: None,
        asset_type: None,
        dedupe_key: None,
        created_timestamp: at_utc(2),
        finished_timestamp: Some(at_utc(3)),
    };
    let lf_message = LfMessageRow {
        id: id(103),
        timestamp: at_utc(2),
        sender: "User".to_owned(),
        sender_name: "User".to_owned(),
        session_id: "session-1".to_owned(),
        text: "hello".to_owned(),
        files: "[]".to_owned(),
        error: false,
        edit: true,
        properties: "{\"source\": {\"id\": null}}".to_owned(),
        category: "message".to_owned(),
        content_blocks: "[]".to_owned(),
        flow_id: Some(flow.id.clone()),
        run_id: Some(id(104)),
        is_output: true,
    };
    let memory_base = MemoryBaseRow {
        id: id(105),
        name: "Support memories".to_owned(),
        flow_id: flow.id.clone(),
        user_id: user.id.clone(),
        threshold: 5,
        threshold_unit: "messages".to_owned(),
        auto_capture: false,
        embedding_provider: "OpenAI".to_owned(),
        embedding_model: "text-embedding-3-small".to_owned(),
        kb_name: "support_memories_1a2b3c4d".to_owned(),
        created_at: at_utc(4),
    };
    let ingestion_job = JobRow {
        job_id: id(106),
        flow_id: None,
        status: "completed".to_owned(),
        job_type: "ingestion".to_owned(),
        user_id: Some(user.id.clone()),
        asset_id: Some(memory_base.id.clone()),
        asset_type: Some("memory_base".to_owned()),
        dedupe_key: Some(format!(
            "ingestion:{}:session-1:{}",
            memory_base.id, workflow_job.job_id
        )),
        created_timestamp: at_utc(5),
        finished_timestamp: None,
    };
    let session = MemoryBaseSessionRow {
        id: id(107),
        memory_base_id: memory_base.id.clone(),
        session_id: "session-1".to_owned(),
        cursor_id: Some(lf_message.id.clone()),
        total_processed: 1,
        last_sync_at: Some(at_utc(6)),
    };
    let stride = MemoryBaseWorkflowRunRow {
        id: id(108),
        memory_base_id: memory_base.id.clone(),
        session_id: "session-1".to_owned(),
        workflow_job_id: Some(workflow_job.job_id.clone()),
        ingestion_job_id: Some(ingestion_job.job_id.clone()),
        recorded_at: at_utc(3),
    };
    let record = IngestionRecordRow {
        id: id(109),
        message_id: lf_message.id.clone(),
        memory_base_id: memory_base.id.clone(),
        job_id: Some(ingestion_job.job_id.clone()),
        session_id: "session-1".to_owned(),
        ingested_at: at_utc(6),
    };
    Batch {
        apps: vec![app],
        conversations: vec![conversation],
        upload_files: vec![upload],
        workflow_runs: vec![run],
        messages: vec![first, second],
        message_files: vec![file],
        node_executions: vec![node],
        node_execution_offloads: vec![offload],
        chat_memories: vec![chat_memory],
        chat_memory_messages: vec![chat_message],
        lf_users: vec![user],
        flows: vec![flow],
        jobs: vec![workflow_job, ingestion_job],
        lf_messages: vec![lf_message],
        memory_bases: vec![memory_base],
        memory_base_sessions: vec![session],
        memory_base_workflow_runs: vec![stride],
        ingestion_records: vec![record],
    }
}
