//! Dify's own tables as its migrations leave them at several points of its history, and rows
//! written the way Dify writes them, for tests on a database memscope did not create.
//!
//! Columns follow Dify's models (`api/models/model.py`, `api/models/workflow.py`) with the
//! migrations that added them: `conversations.dialogue_count` (August 2024),
//! `messages.parent_message_id` (September 2024, older rows set to UUID_NIL),
//! `workflow_node_execution_offload` (August 2025), and `conversations.is_deleted`, which Dify
//! dropped in 2026 together with the rows it marked.

use super::TestDb;

/// A point in Dify's schema history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Before `conversations.dialogue_count` (Dify's migration of August 2024), and so before
    /// threads and offload too.
    BeforeDialogueCount,
    /// Before regeneration threads: no `messages.parent_message_id`, no offload table.
    BeforeThreads,
    /// Regeneration threads, no offload table.
    Threads,
    /// Threads and offloaded node outputs.
    Offload,
    /// Offload, and no `conversations.is_deleted` any more.
    NoDeletedFlag,
    /// The newest: `messages.app_mode` (October 2025), `workflow_archive_logs`, the runs
    /// Dify's retention service moved out of the database (January 2026), and Agent V2's
    /// `agent_runtime_sessions` (May 2026).
    Archive,
}

impl Era {
    pub const ALL: [Era; 6] = [
        Era::BeforeDialogueCount,
        Era::BeforeThreads,
        Era::Threads,
        Era::Offload,
        Era::NoDeletedFlag,
        Era::Archive,
    ];

    pub fn has_threads(self) -> bool {
        !matches!(self, Era::BeforeDialogueCount | Era::BeforeThreads)
    }

    pub fn has_dialogue_count(self) -> bool {
        self != Era::BeforeDialogueCount
    }

    pub fn has_offload(self) -> bool {
        matches!(self, Era::Offload | Era::NoDeletedFlag | Era::Archive)
    }

    pub fn has_deleted_flag(self) -> bool {
        !matches!(self, Era::NoDeletedFlag | Era::Archive)
    }

    pub fn has_archive(self) -> bool {
        self == Era::Archive
    }
}

/// `00000000-0000-0000-0000-{n}`: readable ids.
pub fn uid(n: u64) -> String {
    format!("00000000-0000-0000-0000-{n:012}")
}

pub const TENANT: u64 = 1;
pub const ACCOUNT: u64 = 2;

/// The tables of `era`, in PostgreSQL syntax (the harness strips casts for SQLite).
pub fn schema(era: Era) -> String {
    let parent = if era.has_threads() {
        "parent_message_id uuid,"
    } else {
        ""
    };
    let deleted = if era.has_deleted_flag() {
        ", is_deleted boolean NOT NULL DEFAULT false"
    } else {
        ""
    };
    let dialogue_count = if era.has_dialogue_count() {
        "dialogue_count int NOT NULL DEFAULT 0,"
    } else {
        ""
    };
    let (app_mode, archive) = if era.has_archive() {
        (
            "app_mode varchar(255),",
            "CREATE TABLE workflow_archive_logs (id uuid PRIMARY KEY, log_id uuid,
                tenant_id uuid NOT NULL, app_id uuid NOT NULL, workflow_id uuid NOT NULL,
                workflow_run_id uuid NOT NULL, created_by_role varchar(255) NOT NULL,
                created_by uuid NOT NULL, log_created_at timestamp,
                log_created_from varchar(255), run_version varchar(255) NOT NULL,
                run_status varchar(255) NOT NULL, run_triggered_from varchar(255) NOT NULL,
                run_error text, run_elapsed_time float NOT NULL DEFAULT 0,
                run_total_tokens bigint NOT NULL DEFAULT 0, run_total_steps int DEFAULT 0,
                run_created_at timestamp NOT NULL, run_finished_at timestamp,
                run_exceptions_count int DEFAULT 0, trigger_metadata text,
                archived_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);
            CREATE TABLE agent_runtime_sessions (id uuid PRIMARY KEY, tenant_id uuid NOT NULL,
                app_id uuid NOT NULL, owner_type varchar(32) NOT NULL, agent_id uuid NOT NULL,
                backend_run_id varchar(255), session_snapshot text NOT NULL, workflow_id uuid,
                workflow_run_id uuid, node_id varchar(255), node_execution_id varchar(255),
                binding_id uuid, agent_config_snapshot_id uuid,
                composition_layer_specs text NOT NULL, conversation_id uuid,
                status varchar(32) NOT NULL DEFAULT 'active', cleaned_at timestamp,
                created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
                updated_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);",
        )
    } else {
        ("", "")
    };
    let offload = if era.has_offload() {
        "CREATE TABLE workflow_node_execution_offload (id uuid PRIMARY KEY,
            created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, tenant_id uuid NOT NULL,
            app_id uuid NOT NULL, node_execution_id uuid, type varchar(20) NOT NULL,
            file_id uuid NOT NULL, UNIQUE (node_execution_id, type));"
    } else {
        ""
    };
    format!(
        "CREATE TABLE apps (id uuid PRIMARY KEY, tenant_id uuid NOT NULL,
            name varchar(255) NOT NULL, description text NOT NULL DEFAULT '',
            mode varchar(255) NOT NULL, icon varchar(255), app_model_config_id uuid,
            workflow_id uuid, status varchar(255) NOT NULL DEFAULT 'normal',
            enable_site boolean NOT NULL, enable_api boolean NOT NULL,
            created_at timestamp NOT NULL, updated_at timestamp NOT NULL);
        CREATE TABLE conversations (id uuid PRIMARY KEY, app_id uuid NOT NULL,
            app_model_config_id uuid, model_provider varchar(255), override_model_configs text,
            model_id varchar(255), mode varchar(255) NOT NULL, name varchar(255) NOT NULL,
            summary text, inputs json, introduction text, system_instruction text,
            system_instruction_tokens int NOT NULL DEFAULT 0, status varchar(255) NOT NULL,
            invoke_from varchar(255), from_source varchar(255) NOT NULL, from_end_user_id uuid,
            from_account_id uuid, read_at timestamp, read_account_id uuid,
            {dialogue_count} created_at timestamp NOT NULL,
            updated_at timestamp NOT NULL{deleted});
        CREATE TABLE messages (id uuid PRIMARY KEY, app_id uuid NOT NULL,
            model_provider varchar(255), model_id varchar(255), override_model_configs text,
            conversation_id uuid NOT NULL REFERENCES conversations (id), inputs json,
            query text NOT NULL, message json NOT NULL, message_tokens int NOT NULL DEFAULT 0,
            message_unit_price numeric(10, 4) NOT NULL,
            message_price_unit numeric(10, 7) NOT NULL DEFAULT 0.001, answer text NOT NULL,
            answer_tokens int NOT NULL DEFAULT 0, answer_unit_price numeric(10, 4) NOT NULL,
            answer_price_unit numeric(10, 7) NOT NULL DEFAULT 0.001, {parent}
            provider_response_latency float NOT NULL DEFAULT 0, total_price numeric(10, 7),
            currency varchar(255) NOT NULL, status varchar(255) NOT NULL DEFAULT 'normal',
            error text, message_metadata text, invoke_from varchar(255), {app_mode}
            from_source varchar(255) NOT NULL, from_end_user_id uuid, from_account_id uuid,
            created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
            updated_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
            agent_based boolean NOT NULL DEFAULT false, workflow_run_id uuid);
        CREATE INDEX message_conversation_id_idx ON messages (conversation_id);
        CREATE TABLE message_agent_thoughts (id uuid PRIMARY KEY, message_id uuid NOT NULL,
            message_chain_id uuid, position int NOT NULL, thought text, tool text,
            tool_labels_str text NOT NULL DEFAULT '{{}}', tool_meta_str text NOT NULL DEFAULT '{{}}',
            tool_input text, observation text, tool_process_data text, message text,
            message_token int, message_unit_price numeric, message_files text, answer text,
            answer_token int, answer_unit_price numeric, tokens int, total_price numeric,
            currency varchar(255), latency float, created_by_role varchar(255) NOT NULL,
            created_by uuid NOT NULL, created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);
        CREATE TABLE upload_files (id uuid PRIMARY KEY, tenant_id uuid NOT NULL,
            storage_type varchar(255) NOT NULL, key varchar(255) NOT NULL,
            name varchar(255) NOT NULL, size int NOT NULL, extension varchar(255) NOT NULL,
            mime_type varchar(255), created_by_role varchar(255) NOT NULL DEFAULT 'account',
            created_by uuid NOT NULL, created_at timestamp NOT NULL,
            used boolean NOT NULL DEFAULT false, used_by uuid, used_at timestamp,
            hash varchar(255), source_url text NOT NULL DEFAULT '');
        CREATE TABLE message_files (id uuid PRIMARY KEY, message_id uuid NOT NULL,
            type varchar(255) NOT NULL, transfer_method varchar(255) NOT NULL, url text,
            belongs_to varchar(255), upload_file_id uuid, created_by_role varchar(255) NOT NULL,
            created_by uuid NOT NULL, created_at timestamp NOT NULL);
        CREATE TABLE workflow_runs (id uuid PRIMARY KEY, tenant_id uuid NOT NULL,
            app_id uuid NOT NULL, sequence_number int NOT NULL, workflow_id uuid NOT NULL,
            type varchar(255) NOT NULL, triggered_from varchar(255) NOT NULL,
            version varchar(255) NOT NULL, graph text, inputs text, status varchar(255) NOT NULL,
            outputs text, error text, elapsed_time float NOT NULL DEFAULT 0,
            total_tokens bigint NOT NULL DEFAULT 0, total_steps int DEFAULT 0,
            created_by_role varchar(255) NOT NULL, created_by uuid NOT NULL,
            created_at timestamp NOT NULL, finished_at timestamp);
        CREATE TABLE workflow_node_executions (id uuid PRIMARY KEY, tenant_id uuid NOT NULL,
            app_id uuid NOT NULL, workflow_id uuid NOT NULL, triggered_from varchar(255) NOT NULL,
            workflow_run_id uuid, \"index\" int NOT NULL, predecessor_node_id varchar(255),
            node_execution_id varchar(255), node_id varchar(255) NOT NULL,
            node_type varchar(255) NOT NULL, title varchar(255) NOT NULL, inputs text,
            process_data text, outputs text, status varchar(255) NOT NULL, error text,
            elapsed_time float NOT NULL DEFAULT 0, execution_metadata text,
            created_at timestamp NOT NULL, created_by_role varchar(255) NOT NULL,
            created_by uuid NOT NULL, finished_at timestamp);
        {offload}
        {archive}"
    )
}

/// An app row.
pub fn app(id: u64, name: &str, mode: &str) -> String {
    format!(
        "INSERT INTO apps (id, tenant_id, name, mode, enable_site, enable_api, created_at,
            updated_at) VALUES ('{}'::uuid, '{}'::uuid, '{name}', '{mode}', true, true,
            '2024-08-01 00:00:00', '2024-08-01 00:00:00');",
        uid(id),
        uid(TENANT)
    )
}

/// A conversation row, `deleted` as Dify's delete marks it (ignored where the column is gone).
pub fn conversation(era: Era, id: u64, app: u64, name: &str, mode: &str, deleted: bool) -> String {
    let (column, value) = if era.has_deleted_flag() {
        (", is_deleted", if deleted { ", true" } else { ", false" })
    } else {
        ("", "")
    };
    let (count_column, count_value) = if era.has_dialogue_count() {
        (" dialogue_count,", " 0,")
    } else {
        ("", "")
    };
    format!(
        "INSERT INTO conversations (id, app_id, mode, name, inputs, status, from_source,
            from_account_id,{count_column} created_at, updated_at{column})
         VALUES ('{}'::uuid, '{}'::uuid, '{mode}', '{name}', '{{}}', 'normal', 'console',
            '{}'::uuid,{count_value} '2024-08-02 00:00:00', '2024-08-02 01:00:00'{value});",
        uid(id),
        uid(app),
        uid(ACCOUNT)
    )
}

/// One `messages` row as Dify writes it.
pub struct Message<'a> {
    pub id: u64,
    pub conversation: u64,
    pub app: u64,
    /// `None`: a first turn (NULL); ignored before regeneration threads.
    pub parent: Option<u64>,
    pub query: &'a str,
    pub answer: &'a str,
    pub status: &'a str,
    pub error: Option<&'a str>,
    pub agent_based: bool,
    pub workflow_run: Option<u64>,
    /// `messages.app_mode`, written where the era has the column.
    pub app_mode: Option<&'a str>,
    /// `YYYY-MM-DD HH:MM:SS`: Dify's one-second precision.
    pub created_at: &'a str,
}

impl<'a> Message<'a> {
    /// An answered turn of `conversation` in app `app`.
    pub fn turn(
        id: u64,
        conversation: u64,
        app: u64,
        parent: Option<u64>,
        created_at: &'a str,
    ) -> Self {
        Message {
            id,
            conversation,
            app,
            parent,
            query: "question",
            answer: "answer",
            status: "normal",
            error: None,
            agent_based: false,
            workflow_run: None,
            app_mode: None,
            created_at,
        }
    }

    pub fn insert(&self, era: Era) -> String {
        let (parent_column, parent_value) = if era.has_threads() {
            (
                ", parent_message_id",
                format!(
                    ", {}",
                    text_or_null(self.parent.map(uid).as_deref(), "::uuid")
                ),
            )
        } else {
            ("", String::new())
        };
        let (mode_column, mode_value) = if era.has_archive() {
            (
                ", app_mode",
                format!(", {}", text_or_null(self.app_mode, "")),
            )
        } else {
            ("", String::new())
        };
        format!(
            "INSERT INTO messages (id, app_id, conversation_id, inputs, query, message,
                message_tokens, message_unit_price, answer, answer_tokens, answer_unit_price,
                currency, status, error, invoke_from, from_source, from_account_id, created_at,
                updated_at, agent_based, workflow_run_id{parent_column}{mode_column})
             VALUES ('{}'::uuid, '{}'::uuid, '{}'::uuid, '{{}}', '{}', '[]', 10, 0.001, '{}',
                {}, 0.002, 'USD', '{}', {}, 'explore', 'console', '{}'::uuid, '{}', '{}', {},
                {}{parent_value}{mode_value});",
            uid(self.id),
            uid(self.app),
            uid(self.conversation),
            self.query.replace('\'', "''"),
            self.answer.replace('\'', "''"),
            if self.answer.is_empty() { 0 } else { 5 },
            self.status,
            text_or_null(self.error, ""),
            uid(ACCOUNT),
            self.created_at,
            self.created_at,
            self.agent_based,
            text_or_null(self.workflow_run.map(uid).as_deref(), "::uuid"),
        )
    }
}

/// `'text'` with `cast` appended, or NULL.
fn text_or_null(text: Option<&str>, cast: &str) -> String {
    text.map_or("NULL".to_owned(), |t| {
        format!("'{}'{cast}", t.replace('\'', "''"))
    })
}

/// Builds `era`'s tables in the test database and runs `rows` (statements as the helpers above
/// write them).
pub async fn build(db: &TestDb, era: Era, rows: &[String]) {
    db.execute(&schema(era)).await;
    db.execute(&rows.concat()).await;
}
