//! Rows as they are written to the memory database: the shape `demo`, `capture` and the chat
//! memory commands insert. Ids are lowercase hyphenated UUID strings (stored as `uuid` on
//! PostgreSQL, text on SQLite). JSON columns hold JSON text, as in Dify and Langflow.

use chrono::{DateTime, NaiveDateTime, Utc};

/// Dify `apps`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppRow {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    /// `chat`, `agent-chat`, `advanced-chat`, `completion` or `workflow`.
    pub mode: String,
    /// The memory window the app's LLM uses (`MemoryConfig.window.size`), when enabled.
    /// A memscope column: Dify keeps it inside the app or workflow config.
    pub memory_window: Option<i64>,
    pub created_at: NaiveDateTime,
}

/// Dify `conversations`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRow {
    pub id: String,
    pub app_id: String,
    pub name: String,
    pub mode: String,
    pub model_provider: Option<String>,
    pub model_id: Option<String>,
    pub status: String,
    pub invoke_from: Option<String>,
    /// `api` or `console`.
    pub from_source: String,
    pub dialogue_count: i64,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

/// Dify `messages`: the fields of [`crate::memory::model::StoredMessage`] plus `app_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub app_id: String,
    pub message: crate::memory::model::StoredMessage,
}

/// Dify `message_files`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageFileRow {
    pub id: String,
    pub message_id: String,
    pub file_type: String,
    pub transfer_method: String,
    pub url: Option<String>,
    pub belongs_to: Option<String>,
    pub upload_file_id: Option<String>,
    pub created_at: NaiveDateTime,
}

/// Dify `upload_files`: `key` is a path under the storage root.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadFileRow {
    pub id: String,
    pub tenant_id: String,
    pub storage_type: String,
    pub key: String,
    pub name: String,
    pub size: i64,
    pub extension: String,
    pub mime_type: Option<String>,
    pub created_at: NaiveDateTime,
}

/// Dify `workflow_runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowRunRow {
    pub id: String,
    pub tenant_id: String,
    pub app_id: String,
    pub workflow_id: String,
    /// `workflow` or `chat`.
    pub run_type: String,
    /// `running`, `succeeded`, `failed`, `stopped` or `partial-succeeded`.
    pub status: String,
    pub total_tokens: i64,
    pub created_at: NaiveDateTime,
    pub finished_at: Option<NaiveDateTime>,
}

/// Dify `workflow_node_executions`. `inputs`, `process_data` and `outputs` are JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeExecutionRow {
    pub id: String,
    pub tenant_id: String,
    pub app_id: String,
    pub workflow_id: String,
    pub workflow_run_id: Option<String>,
    pub index: i64,
    pub node_id: String,
    pub node_type: String,
    pub title: String,
    pub inputs: Option<String>,
    pub process_data: Option<String>,
    pub outputs: Option<String>,
    /// `running`, `succeeded`, `failed`, `exception`, `retry`.
    pub status: String,
    pub error: Option<String>,
    pub execution_metadata: Option<String>,
    pub created_at: NaiveDateTime,
}

/// Dify `workflow_node_execution_offload`: the full JSON of a truncated column lives in the
/// upload `file_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeExecutionOffloadRow {
    pub id: String,
    pub tenant_id: String,
    pub app_id: String,
    pub node_execution_id: String,
    /// `inputs`, `outputs` or `process_data`.
    pub offload_type: String,
    pub file_id: String,
    pub created_at: NaiveDateTime,
}

/// A chat memory (seed 004): keyed by (memory node, chat id), with its trim policy as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMemoryRow {
    pub id: String,
    pub memory_node_id: String,
    pub chat_id: String,
    pub label: String,
    pub policy: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

/// One message of a chat memory. `seq` orders the list; `content`, `tool_calls` and `files` are
/// JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMemoryMessageRow {
    pub id: String,
    pub chat_memory_id: String,
    pub seq: i64,
    pub role: String,
    pub content: String,
    pub tool_calls: Option<String>,
    pub tool_call_id: Option<String>,
    pub files: Option<String>,
    pub workflow_request_id: Option<String>,
    pub is_summary: bool,
    pub created_at: NaiveDateTime,
}

/// Langflow `user`.
#[derive(Debug, Clone, PartialEq)]
pub struct LfUserRow {
    pub id: String,
    pub username: String,
    pub created_at: DateTime<Utc>,
}

/// Langflow `flow`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRow {
    pub id: String,
    pub name: String,
    pub user_id: String,
    pub updated_at: DateTime<Utc>,
}

/// Langflow `message`. `files`, `properties` and `content_blocks` are JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct LfMessageRow {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    /// `User` or `Machine`.
    pub sender: String,
    pub sender_name: String,
    pub session_id: String,
    pub text: String,
    pub files: String,
    pub error: bool,
    pub edit: bool,
    pub properties: String,
    pub category: String,
    pub content_blocks: String,
    pub flow_id: Option<String>,
    pub run_id: Option<String>,
    pub is_output: bool,
}

/// Langflow `job`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub job_id: String,
    pub flow_id: Option<String>,
    /// `queued`, `in_progress`, `completed`, `failed`, `cancelled`, `timed_out`.
    pub status: String,
    /// `workflow` or `ingestion`.
    pub job_type: String,
    pub user_id: Option<String>,
    /// The memory base an ingestion job works for.
    pub asset_id: Option<String>,
    pub asset_type: Option<String>,
    pub dedupe_key: Option<String>,
    pub created_timestamp: DateTime<Utc>,
    pub finished_timestamp: Option<DateTime<Utc>>,
}

/// Langflow `memory_base`.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryBaseRow {
    pub id: String,
    pub name: String,
    pub flow_id: String,
    pub user_id: String,
    pub threshold: i64,
    /// `runs` (Langflow as shipped) or `messages` (the seed). A memscope column.
    pub threshold_unit: String,
    pub auto_capture: bool,
    pub embedding_provider: String,
    pub embedding_model: String,
    pub kb_name: String,
    pub created_at: DateTime<Utc>,
}

/// Langflow `memory_base_session`.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryBaseSessionRow {
    pub id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub cursor_id: Option<String>,
    pub total_processed: i64,
    pub last_sync_at: Option<DateTime<Utc>>,
}

/// Langflow `memory_base_workflow_run`: one completed flow run ("stride") of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryBaseWorkflowRunRow {
    pub id: String,
    pub memory_base_id: String,
    pub session_id: String,
    pub workflow_job_id: Option<String>,
    /// `None` while the run is not ingested yet.
    pub ingestion_job_id: Option<String>,
    pub recorded_at: DateTime<Utc>,
}

/// Langflow `message_ingestion_record`.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestionRecordRow {
    pub id: String,
    pub message_id: String,
    pub memory_base_id: String,
    pub job_id: Option<String>,
    pub session_id: String,
    pub ingested_at: DateTime<Utc>,
}

/// Everything a writer inserts in one transaction, in dependency order. `demo` fills these in
/// batches; the store writes them with multi-row inserts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub apps: Vec<AppRow>,
    pub conversations: Vec<ConversationRow>,
    pub upload_files: Vec<UploadFileRow>,
    pub workflow_runs: Vec<WorkflowRunRow>,
    pub messages: Vec<MessageRow>,
    pub message_files: Vec<MessageFileRow>,
    pub node_executions: Vec<NodeExecutionRow>,
    pub node_execution_offloads: Vec<NodeExecutionOffloadRow>,
    pub chat_memories: Vec<ChatMemoryRow>,
    pub chat_memory_messages: Vec<ChatMemoryMessageRow>,
    pub lf_users: Vec<LfUserRow>,
    pub flows: Vec<FlowRow>,
    pub jobs: Vec<JobRow>,
    pub lf_messages: Vec<LfMessageRow>,
    pub memory_bases: Vec<MemoryBaseRow>,
    pub memory_base_sessions: Vec<MemoryBaseSessionRow>,
    pub memory_base_workflow_runs: Vec<MemoryBaseWorkflowRunRow>,
    pub ingestion_records: Vec<IngestionRecordRow>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows in the batch, all tables together.
    pub fn len(&self) -> usize {
        self.apps.len()
            + self.conversations.len()
            + self.upload_files.len()
            + self.workflow_runs.len()
            + self.messages.len()
            + self.message_files.len()
            + self.node_executions.len()
            + self.node_execution_offloads.len()
            + self.chat_memories.len()
            + self.chat_memory_messages.len()
            + self.lf_users.len()
            + self.flows.len()
            + self.jobs.len()
            + self.lf_messages.len()
            + self.memory_bases.len()
            + self.memory_base_sessions.len()
            + self.memory_base_workflow_runs.len()
            + self.ingestion_records.len()
    }
}
