-- memscope memory database, PostgreSQL dialect. Column names and types follow Dify (naive
-- `timestamp`, `uuid` ids, JSON in `text`) and Langflow (`timestamptz`); memscope's own tables
-- and columns are marked. The SQLite migration mirrors this file with TEXT for uuid and time.

-- memscope: who created this database and at which schema version.
CREATE TABLE memscope_meta (
    key varchar(255) PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO memscope_meta (key, value) VALUES ('created_by', 'memscope'), ('schema_version', '1');

-- Dify ------------------------------------------------------------------------------------------

CREATE TABLE apps (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    name varchar(255) NOT NULL,
    mode varchar(255) NOT NULL,
    memory_window int NULL, -- memscope: Dify keeps the window inside the app config
    created_at timestamp NOT NULL
);
CREATE INDEX app_tenant_id_idx ON apps (tenant_id);

CREATE TABLE conversations (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL,
    name varchar(255) NOT NULL,
    mode varchar(255) NOT NULL,
    model_provider varchar(255) NULL,
    model_id varchar(255) NULL,
    status varchar(255) NOT NULL,
    invoke_from varchar(255) NULL,
    from_source varchar(255) NOT NULL,
    dialogue_count int NOT NULL DEFAULT 0,
    created_at timestamp NOT NULL,
    updated_at timestamp NOT NULL
);
CREATE INDEX conversation_updated_at_id_idx ON conversations (updated_at, id);
CREATE INDEX conversation_app_updated_at_idx ON conversations (app_id, updated_at);

CREATE TABLE upload_files (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    storage_type varchar(255) NOT NULL,
    key varchar(255) NOT NULL,
    name varchar(255) NOT NULL,
    size int NOT NULL,
    extension varchar(255) NOT NULL,
    mime_type varchar(255) NULL,
    created_at timestamp NOT NULL
);
CREATE INDEX upload_file_tenant_idx ON upload_files (tenant_id);

CREATE TABLE workflow_runs (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    workflow_id uuid NOT NULL,
    type varchar(255) NOT NULL,
    status varchar(255) NOT NULL,
    total_tokens bigint NOT NULL DEFAULT 0,
    created_at timestamp NOT NULL,
    finished_at timestamp NULL
);
CREATE INDEX workflow_run_created_at_id_idx ON workflow_runs (created_at, id);

-- Dify declares the conversation FK; workflow_run_id has none and may dangle after run cleanup.
CREATE TABLE messages (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    parent_message_id uuid NULL,
    query text NOT NULL,
    answer text NOT NULL,
    message_tokens int NOT NULL DEFAULT 0,
    answer_tokens int NOT NULL DEFAULT 0,
    status varchar(255) NOT NULL DEFAULT 'normal',
    error text NULL,
    invoke_from varchar(255) NULL,
    workflow_run_id uuid NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP(0)
);
CREATE INDEX message_conversation_created_at_idx ON messages (conversation_id, created_at);
CREATE INDEX message_parent_message_id_idx ON messages (parent_message_id);
CREATE INDEX message_workflow_run_id_idx ON messages (workflow_run_id);

-- Dify declares no FK on message_id.
CREATE TABLE message_files (
    id uuid PRIMARY KEY,
    message_id uuid NOT NULL,
    type varchar(255) NOT NULL,
    transfer_method varchar(255) NOT NULL,
    url text NULL,
    belongs_to varchar(255) NULL,
    upload_file_id uuid NULL,
    created_at timestamp NOT NULL
);
CREATE INDEX message_file_message_idx ON message_files (message_id);

CREATE TABLE workflow_node_executions (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    workflow_id uuid NOT NULL,
    workflow_run_id uuid NULL,
    "index" int NOT NULL,
    node_id varchar(255) NOT NULL,
    node_type varchar(255) NOT NULL,
    title varchar(255) NOT NULL,
    inputs text NULL,
    process_data text NULL,
    outputs text NULL,
    status varchar(255) NOT NULL,
    error text NULL,
    execution_metadata text NULL,
    created_at timestamp NOT NULL
);
CREATE INDEX workflow_node_execution_run_node_idx
    ON workflow_node_executions (workflow_run_id, node_id);

CREATE TABLE workflow_node_execution_offload (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    app_id uuid NOT NULL,
    node_execution_id uuid NULL,
    type varchar(255) NOT NULL,
    file_id uuid NOT NULL,
    created_at timestamp NOT NULL,
    UNIQUE (node_execution_id, type)
);

-- memscope chat memories (seed 004) -------------------------------------------------------------

CREATE TABLE chat_memories (
    id uuid PRIMARY KEY,
    memory_node_id varchar(255) NOT NULL,
    chat_id varchar(255) NOT NULL,
    label varchar(255) NOT NULL,
    policy text NOT NULL,
    created_at timestamp NOT NULL,
    updated_at timestamp NOT NULL,
    UNIQUE (memory_node_id, chat_id)
);

-- The unique (chat_memory_id, seq) index also serves reading a memory in order.
CREATE TABLE chat_memory_messages (
    id uuid PRIMARY KEY,
    chat_memory_id uuid NOT NULL REFERENCES chat_memories (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    role varchar(32) NOT NULL,
    content text NOT NULL,
    tool_calls text NULL,
    tool_call_id varchar(255) NULL,
    files text NULL,
    workflow_request_id varchar(255) NULL,
    is_summary boolean NOT NULL DEFAULT false,
    created_at timestamp NOT NULL,
    UNIQUE (chat_memory_id, seq)
);

-- One trim (or clear, or summarization) applied to a chat memory; `undone_at` is set by undo.
CREATE TABLE chat_memory_trims (
    id uuid PRIMARY KEY,
    chat_memory_id uuid NOT NULL REFERENCES chat_memories (id) ON DELETE CASCADE,
    action varchar(64) NOT NULL,
    policy text NOT NULL,
    created_at timestamp NOT NULL,
    undone_at timestamp NULL
);
CREATE INDEX chat_memory_trim_memory_idx ON chat_memory_trims (chat_memory_id, created_at);

-- What a trim changed, one row per message: `removed` and `modified` rows keep the original
-- columns and seq so undo restores them byte for byte; `added` rows (a summary) are deleted by undo.
CREATE TABLE chat_memory_trim_archive (
    trim_id uuid NOT NULL REFERENCES chat_memory_trims (id) ON DELETE CASCADE,
    message_id uuid NOT NULL,
    change varchar(16) NOT NULL CHECK (change IN ('removed', 'modified', 'added')),
    seq bigint NOT NULL,
    role varchar(32) NOT NULL,
    content text NOT NULL,
    tool_calls text NULL,
    tool_call_id varchar(255) NULL,
    files text NULL,
    workflow_request_id varchar(255) NULL,
    is_summary boolean NOT NULL,
    created_at timestamp NOT NULL,
    PRIMARY KEY (trim_id, message_id)
);

-- Langflow --------------------------------------------------------------------------------------

CREATE TABLE "user" (
    id uuid PRIMARY KEY,
    username varchar NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
);

CREATE TABLE flow (
    id uuid PRIMARY KEY,
    name varchar NOT NULL,
    user_id uuid NULL REFERENCES "user" (id),
    updated_at timestamptz NOT NULL
);
CREATE INDEX ix_flow_user_id ON flow (user_id);

CREATE TABLE job (
    job_id uuid PRIMARY KEY,
    flow_id uuid NULL,
    status varchar NOT NULL,
    type varchar NOT NULL,
    user_id uuid NULL,
    asset_id uuid NULL,
    asset_type varchar NULL,
    dedupe_key varchar NULL,
    created_timestamp timestamptz NOT NULL,
    finished_timestamp timestamptz NULL
);
CREATE INDEX ix_job_flow_id ON job (flow_id);
CREATE INDEX ix_job_asset_id ON job (asset_id);
CREATE INDEX ix_job_dedupe_key ON job (dedupe_key);

-- The newest Langflow model declares no FK on message.flow_id.
CREATE TABLE message (
    id uuid PRIMARY KEY,
    timestamp timestamptz NOT NULL,
    sender varchar NOT NULL,
    sender_name varchar NOT NULL,
    session_id varchar NOT NULL,
    text text NOT NULL,
    files json NOT NULL,
    error boolean NOT NULL DEFAULT false,
    edit boolean NOT NULL DEFAULT false,
    properties json NOT NULL,
    category text NOT NULL DEFAULT 'message',
    content_blocks json NOT NULL,
    flow_id uuid NULL,
    run_id uuid NULL,
    is_output boolean NOT NULL DEFAULT false
);
CREATE INDEX ix_message_flow_session_timestamp ON message (flow_id, session_id, timestamp, id);
CREATE INDEX ix_message_run_id ON message (run_id);

CREATE TABLE memory_base (
    id uuid PRIMARY KEY,
    name varchar NOT NULL,
    flow_id uuid NOT NULL REFERENCES flow (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
    threshold int NOT NULL DEFAULT 50,
    threshold_unit varchar NOT NULL DEFAULT 'runs', -- memscope: `runs` or `messages`
    auto_capture boolean NOT NULL DEFAULT true,
    embedding_provider varchar NOT NULL,
    embedding_model varchar NOT NULL DEFAULT '',
    kb_name varchar NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT uq_memory_base_user_name UNIQUE (user_id, name)
);
CREATE INDEX ix_memory_base_flow_id ON memory_base (flow_id);

CREATE TABLE memory_base_session (
    id uuid PRIMARY KEY,
    memory_base_id uuid NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    session_id varchar NOT NULL,
    cursor_id uuid NULL,
    total_processed int NOT NULL DEFAULT 0,
    last_sync_at timestamptz NULL,
    CONSTRAINT uq_memory_base_session UNIQUE (memory_base_id, session_id)
);
CREATE INDEX ix_memory_base_session_session_id ON memory_base_session (session_id);

CREATE TABLE memory_base_workflow_run (
    id uuid PRIMARY KEY,
    memory_base_id uuid NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    session_id varchar NOT NULL,
    workflow_job_id uuid NULL REFERENCES job (job_id) ON DELETE SET NULL,
    ingestion_job_id uuid NULL REFERENCES job (job_id) ON DELETE SET NULL,
    recorded_at timestamptz NOT NULL,
    CONSTRAINT uq_memory_base_workflow_run UNIQUE (memory_base_id, session_id, workflow_job_id)
);

CREATE TABLE message_ingestion_record (
    id uuid PRIMARY KEY,
    message_id uuid NOT NULL REFERENCES message (id) ON DELETE CASCADE,
    memory_base_id uuid NOT NULL REFERENCES memory_base (id) ON DELETE CASCADE,
    job_id uuid NULL REFERENCES job (job_id) ON DELETE SET NULL,
    session_id varchar NOT NULL,
    ingested_at timestamptz NOT NULL,
    CONSTRAINT uq_message_ingestion_record UNIQUE (message_id, session_id, memory_base_id)
);
CREATE INDEX ix_message_ingestion_record_mb_session
    ON message_ingestion_record (memory_base_id, session_id);
