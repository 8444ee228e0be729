-- memscope memory database, SQLite dialect: the PostgreSQL migration with TEXT for uuid, time,
-- varchar and json columns, INTEGER for int and boolean. Keep both files in step; memscope's own
-- tables and columns are marked.

-- memscope: who created this database and at which schema version.
CREATE TABLE memscope_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO memscope_meta (key, value) VALUES ('created_by', 'memscope'), ('schema_version', '1');

-- Dify ------------------------------------------------------------------------------------------

CREATE TABLE apps (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    mode TEXT NOT NULL,
    memory_window INTEGER NULL, -- memscope: Dify keeps the window inside the app config
    created_at TEXT NOT NULL
);
CREATE INDEX app_tenant_id_idx ON apps (tenant_id);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL,
    name TEXT NOT NULL,
    mode TEXT NOT NULL,
    model_provider TEXT NULL,
    model_id TEXT NULL,
    status TEXT NOT NULL,
    invoke_from TEXT NULL,
    from_source TEXT NOT NULL,
    dialogue_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX conversation_updated_at_id_idx ON conversations (updated_at, id);
CREATE INDEX conversation_app_updated_at_idx ON conversations (app_id, updated_at);

CREATE TABLE upload_files (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    storage_type TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    extension TEXT NOT NULL,
    mime_type TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX upload_file_tenant_idx ON upload_files (tenant_id);

CREATE TABLE workflow_runs (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    app_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    finished_at TEXT NULL
);
CREATE INDEX workflow_run_created_at_id_idx ON workflow_runs (created_at, id);

-- Dify declares the conversation FK; workflow_run_id has none and may dangle after run cleanup.
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    parent_message_id TEXT NULL,
    query TEXT NOT NULL,
    answer TEXT NOT NULL,
    message_tokens INTEGER NOT NULL DEFAULT 0,
    answer_tokens INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'normal',
    error TEXT NULL,
    invoke_from TEXT NULL,
    workflow_run_id TEXT NULL,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX message_conversation_created_at_idx ON messages (conversation_id, created_at);
CREATE INDEX message_parent_message_id_idx ON messages (parent_message_id);
CREATE INDEX message_workflow_run_id_idx ON messages (workflow_run_id);

-- Dify declares no FK on message_id.
CREATE TABLE message_files (
    id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL,
    transfer_method TEXT NOT NULL,
    url TEXT NULL,
    belongs_to TEXT NULL,
    upload_file_id TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX message_file_message_idx ON message_files (message_id);

CREATE TABLE workflow_node_executions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    app_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    workflow_run_id TEXT NULL,
    "index" INTEGER NOT NULL,
    node_id TEXT NOT NULL,
    node_type TEXT NOT NULL,
    title TEXT NOT NULL,
    inputs TEXT NULL,
    process_data TEXT NULL,
    outputs TEXT NULL,
    status TEXT NOT NULL,
    error TEXT NULL,
    execution_metadata TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX workflow_node_execution_run_node_idx
    ON workflow_node_executions (workflow_run_id, node_id);

CREATE TABLE workflow_node_execution_offload (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    app_id TEXT NOT NULL,
    node_execution_id TEXT NULL,
    type TEXT NOT NULL,
    file_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (node_execution_id, type)
);

-- memscope chat memories (seed 004) -------------------------------------------------------------

CREATE TABLE chat_memories (
    id TEXT PRIMARY KEY,
    memory_node_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    label TEXT NOT NULL,
    policy TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (memory_node_id, chat_id)
);

-- The unique (chat_memory_id, seq) index also serves reading a memory in order.
CREATE TABLE chat_memory_messages (
    id TEXT PRIMARY KEY,
    chat_memory_id TEXT NOT NULL REFERENCES chat_memories (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NULL,
    tool_call_id TEXT NULL,
    files TEXT NULL,
    workflow_request_id TEXT NULL,
    is_summary INTEGER NOT NULL DEFAULT false,
    created_at TEXT NOT NULL,
    UNIQUE (chat_memory_id, seq)
);

-- One trim (or clear, or summarization) applied to a chat memory; `undone_at` is set by undo.
CREATE TABLE chat_memory_trims (
    id TEXT PRIMARY KEY,
    chat_memory_id TEXT NOT NULL REFERENCES chat_memories (id) ON DELETE CASCADE,
    action TEXT NOT NULL,
    policy TEXT NOT NULL,
    created_at TEXT NOT NULL,
    undone_at TEXT NULL
);
CREATE INDEX chat_memory_trim_memory_idx ON chat_memory_trims (chat_memory_id, created_at);

-- What a trim changed, one row per message: `removed` and `modified` rows keep the original
-- columns and seq so undo restores them byte for byte; `added` rows (a summary) are deleted by undo.
CREATE TABLE chat_memory_trim_archive (
    trim_id TEXT NOT NULL REFERENCES chat_memory_trims (id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    change TEXT NOT NULL CHECK (change IN ('removed', 'modified', 'added')),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NULL,
    tool_call_id TEXT NULL,
    files TEXT NULL,
    workflow_request_id TEXT NULL,
    is_summary INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (trim_id, message_id)
);

-- Langflow --------------------------------------------------------------------------------------

CREATE TABLE "user" (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE flow (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    user_id TEXT NULL REFERENCES "user" (id),
    updated_at TEXT NOT NULL
);
CREATE INDEX ix_flow_user_id ON flow (user_id);

CREATE TABLE job (
    job_id TEXT PRIMARY KEY,
    flow_id TEXT NULL,
    status TEXT NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT NULL,
    asset_id TEXT NULL,
    asset_type TEXT NULL,
    dedupe_key TEXT NULL,
    created_timestamp TEXT NOT NULL,
    finished_timestamp TEXT NULL
);
CREATE INDEX ix_job_flow_id ON job (flow_id);
CREATE INDEX ix_job_asset_id ON job (asset_id);
CREATE INDEX ix_job_dedupe_key ON job (dedupe_key);

-- The newest Langflow model declares no FK on message.flow_id.
CREATE TABLE message (
    id TEXT PRIMARY KEY,
    timestamp TEXT NOT NULL,
    sender TEXT NOT NULL,
    sender_name TEXT NOT NULL,
    session_id TEXT NOT NULL,
    text TEXT NOT NULL,
    files TEXT NOT NULL,
    error INTEGER NOT NULL DEFAULT false,
    edit INTEGER NOT NULL DEFAULT false,
    properties TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'message',
    content_blocks TEXT NOT NULL,
    flow_id TEXT NULL,
    run_id TEXT NULL,
    is_output INTEGER NOT NULL DEFAULT false
);
CREATE INDEX ix_message_flow_session_timestamp ON message (flow_id, session_id, timestamp, id);
CREATE INDEX ix_message_run_id ON message (run_id);

CREATE TABLE memory_base (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    flow_id TEXT NOT NULL REFERENCES flow (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
    threshold INTEGER NOT NULL DEFAULT 50,
    threshold_unit TEXT NOT NULL DEFAULT 'runs', -- memscope: `runs` or `messages`
    auto_capture INTEGER NOT NULL DEFAULT true,
    embedding_provider TEXT NOT NULL,
    embedding_model TEXT NOT NULL DEFAULT '',
    kb_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT uq_memory_base_user_name UNIQUE (user_id, name)
);
CREATE INDEX ix_memory_base_flow_id ON memory_base (flow_id);

CREATE TABLE memory_base_session (
    id TEXT PRIMARY KEY,
    memory_base_id TEXT NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    cursor_id TEXT NULL,
    total_processed INTEGER NOT NULL DEFAULT 0,
    last_sync_at TEXT NULL,
    CONSTRAINT uq_memory_base_session UNIQUE (memory_base_id, session_id)
);
CREATE INDEX ix_memory_base_session_session_id ON memory_base_session (session_id);

CREATE TABLE memory_base_workflow_run (
    id TEXT PRIMARY KEY,
    memory_base_id TEXT NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    workflow_job_id TEXT NULL REFERENCES job (job_id) ON DELETE SET NULL,
    ingestion_job_id TEXT NULL REFERENCES job (job_id) ON DELETE SET NULL,
    recorded_at TEXT NOT NULL,
    CONSTRAINT uq_memory_base_workflow_run UNIQUE (memory_base_id, session_id, workflow_job_id)
);

CREATE TABLE message_ingestion_record (
    id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES message (id) ON DELETE CASCADE,
    memory_base_id TEXT NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    job_id TEXT NULL REFERENCES job (job_id) ON DELETE SET NULL,
    session_id TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    CONSTRAINT uq_message_ingestion_record UNIQUE (message_id, session_id, memory_base_id)
);
CREATE INDEX ix_message_ingestion_record_mb_session
    ON message_ingestion_record (memory_base_id, session_id);
