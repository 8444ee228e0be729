//! Writing a [`Batch`]: one transaction, tables in dependency order, each table in as few
//! statements as the backend allows. SQLite gets multi-row `VALUES` lists up to its bind
//! parameter limit; PostgreSQL gets one array parameter per column, expanded with `UNNEST`,
//! which it parses and plans far faster than thousands of `VALUES` rows.

use chrono::{DateTime, NaiveDateTime, Utc};
use sqlx::{AssertSqlSafe, Postgres, Sqlite, Transaction};

use super::error::StoreError;
use super::handle::Store;
use super::pool::DbPool;
use super::rows::*;

/// How to read one column's value from a row. The variant fixes the bound type.
pub(super) enum Column<R> {
    Text(for<'r> fn(&'r R) -> Option<&'r str>),
    Int(fn(&R) -> Option<i64>),
    Bool(fn(&R) -> bool),
    /// `timestamp` (naive, Dify).
    Time(fn(&R) -> Option<NaiveDateTime>),
    /// `timestamptz` (Langflow).
    TimeTz(fn(&R) -> Option<DateTime<Utc>>),
}

/// A table as `insert_batch` writes it.
pub(super) struct Table<R: 'static> {
    name: &'static str,
    /// Column names in bind order. A `::type` suffix is the PostgreSQL cast the bound text
    /// needs (`uuid`, `json`); SQLite stores those columns as TEXT and gets no cast.
    columns: &'static [(&'static str, Column<R>)],
}

impl<R> Table<R> {
    fn column_names(&self) -> String {
        let names: Vec<&str> = self
            .columns
            .iter()
            .map(|(spec, _)| spec.split_once("::").map_or(*spec, |(name, _)| name))
            .collect();
        names.join(", ")
    }

    /// `INSERT INTO t (…) VALUES (?, ?), (?, ?)` for `rows` rows. Plain `?`: SQLite looks each
    /// `$NNN` name up in the list of names seen so far, quadratic with thousands of them.
    fn sqlite_sql(&self, rows: usize) -> String {
        let row = format!("({})", vec!["?"; self.columns.len()].join(", "));
        format!(
            "INSERT INTO {} ({}) VALUES {}",
            self.name,
            self.column_names(),
            vec![row; rows].join(", ")
        )
    }

    /// `INSERT INTO t (…) SELECT * FROM UNNEST($1::uuid[], $2, …)`: one array per column.
    fn postgres_sql(&self) -> String {
        let arrays: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (spec, _))| match spec.split_once("::") {
                Some((_, cast)) => format!("${}::{cast}[]", i + 1),
                None => format!("${}", i + 1),
            })
            .collect();
        format!(
            "INSERT INTO {} ({}) SELECT * FROM UNNEST({})",
            self.name,
            self.column_names(),
            arrays.join(", ")
        )
    }
}

/// SQLITE_MAX_VARIABLE_NUMBER since SQLite 3.32.
const SQLITE_MAX_BIND_PARAMS: usize = 32_766;
/// Bounds the arrays of one PostgreSQL statement (the bind limit does not apply to them).
const POSTGRES_ROWS_PER_STATEMENT: usize = 10_000;

pub(super) async fn insert_sqlite<R: Sync>(
    tx: &mut Transaction<'_, Sqlite>,
    table: &Table<R>,
    rows: &[R],
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(SQLITE_MAX_BIND_PARAMS / table.columns.len()) {
        let mut query = sqlx::query(AssertSqlSafe(table.sqlite_sql(chunk.len())));
        for row in chunk {
            for (_, column) in table.columns {
                query = match column {
                    Column::Text(get) => query.bind(get(row)),
                    Column::Int(get) => query.bind(get(row)),
                    Column::Bool(get) => query.bind(get(row)),
                    Column::Time(get) => query.bind(get(row)),
                    Column::TimeTz(get) => query.bind(get(row)),
                };
            }
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

pub(super) async fn insert_postgres<R: Sync>(
    tx: &mut Transaction<'_, Postgres>,
    table: &Table<R>,
    rows: &[R],
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(POSTGRES_ROWS_PER_STATEMENT) {
        let mut query = sqlx::query(AssertSqlSafe(table.postgres_sql()));
        for (_, column) in table.columns {
            query = match column {
                Column::Text(get) => query.bind(chunk.iter().map(get).collect::<Vec<_>>()),
                Column::Int(get) => query.bind(chunk.iter().map(get).collect::<Vec<_>>()),
                Column::Bool(get) => query.bind(chunk.iter().map(get).collect::<Vec<_>>()),
                Column::Time(get) => query.bind(chunk.iter().map(get).collect::<Vec<_>>()),
                Column::TimeTz(get) => query.bind(chunk.iter().map(get).collect::<Vec<_>>()),
            };
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Inserts every table of `$batch` in dependency order with `$insert` (`insert_sqlite` or
/// `insert_postgres`): the list is written once for both backends.
macro_rules! insert_all {
    ($insert:ident, $tx:expr, $batch:expr) => {{
        let (tx, batch) = ($tx, $batch);
        $insert(tx, &APPS, &batch.apps).await?;
        $insert(tx, &CONVERSATIONS, &batch.conversations).await?;
        $insert(tx, &UPLOAD_FILES, &batch.upload_files).await?;
        $insert(tx, &WORKFLOW_RUNS, &batch.workflow_runs).await?;
        $insert(tx, &MESSAGES, &batch.messages).await?;
        $insert(tx, &MESSAGE_FILES, &batch.message_files).await?;
        $insert(tx, &NODE_EXECUTIONS, &batch.node_executions).await?;
        $insert(tx, &NODE_EXECUTION_OFFLOADS, &batch.node_execution_offloads).await?;
        $insert(tx, &CHAT_MEMORIES, &batch.chat_memories).await?;
        $insert(tx, &CHAT_MEMORY_MESSAGES, &batch.chat_memory_messages).await?;
        $insert(tx, &LF_USERS, &batch.lf_users).await?;
        $insert(tx, &FLOWS, &batch.flows).await?;
        $insert(tx, &JOBS, &batch.jobs).await?;
        $insert(tx, &LF_MESSAGES, &batch.lf_messages).await?;
        $insert(tx, &MEMORY_BASES, &batch.memory_bases).await?;
        $insert(tx, &MEMORY_BASE_SESSIONS, &batch.memory_base_sessions).await?;
        $insert(
            tx,
            &MEMORY_BASE_WORKFLOW_RUNS,
            &batch.memory_base_workflow_runs,
        )
        .await?;
        $insert(tx, &INGESTION_RECORDS, &batch.ingestion_records).await?;
        Ok::<(), sqlx::Error>(())
    }};
}

impl Store {
    /// Writes every row of `batch` in one transaction: all of it, or on error nothing.
    pub async fn insert_batch(&self, batch: &Batch) -> Result<(), StoreError> {
        self.ensure_writable()?;
        if batch.is_empty() {
            return Ok(());
        }
        let failed = |e| self.query_failed(e);
        // Dropping the transaction on error rolls the whole batch back.
        match &self.pool {
            DbPool::Sqlite(pool, _) => {
                let mut tx = pool.begin().await.map_err(failed)?;
                async { insert_all!(insert_sqlite, &mut tx, batch) }
                    .await
                    .map_err(failed)?;
                tx.commit().await.map_err(failed)
            }
            DbPool::Postgres(pool, _) => {
                let mut tx = pool.begin().await.map_err(failed)?;
                async { insert_all!(insert_postgres, &mut tx, batch) }
                    .await
                    .map_err(failed)?;
                tx.commit().await.map_err(failed)
            }
            // A MySQL pool is read-only: memscope's own tables are never written there.
            DbPool::Mysql(..) => Err(StoreError::ReadOnly {
                url: self.url.clone(),
            }),
        }
    }
}

use Column::{Bool, Int, Text, Time, TimeTz};

const APPS: Table<AppRow> = Table {
    name: "apps",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("tenant_id::uuid", Text(|r| Some(&r.tenant_id))),
        ("name", Text(|r| Some(&r.name))),
        ("mode", Text(|r| Some(&r.mode))),
        ("memory_window", Int(|r| r.memory_window)),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const CONVERSATIONS: Table<ConversationRow> = Table {
    name: "conversations",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("app_id::uuid", Text(|r| Some(&r.app_id))),
        ("name", Text(|r| Some(&r.name))),
        ("mode", Text(|r| Some(&r.mode))),
        ("model_provider", Text(|r| r.model_provider.as_deref())),
        ("model_id", Text(|r| r.model_id.as_deref())),
        ("status", Text(|r| Some(&r.status))),
        ("invoke_from", Text(|r| r.invoke_from.as_deref())),
        ("from_source", Text(|r| Some(&r.from_source))),
        ("dialogue_count", Int(|r| Some(r.dialogue_count))),
        ("created_at", Time(|r| Some(r.created_at))),
        ("updated_at", Time(|r| Some(r.updated_at))),
    ],
};

const UPLOAD_FILES: Table<UploadFileRow> = Table {
    name: "upload_files",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("tenant_id::uuid", Text(|r| Some(&r.tenant_id))),
        ("storage_type", Text(|r| Some(&r.storage_type))),
        ("key", Text(|r| Some(&r.key))),
        ("name", Text(|r| Some(&r.name))),
        ("size", Int(|r| Some(r.size))),
        ("extension", Text(|r| Some(&r.extension))),
        ("mime_type", Text(|r| r.mime_type.as_deref())),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const WORKFLOW_RUNS: Table<WorkflowRunRow> = Table {
    name: "workflow_runs",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("tenant_id::uuid", Text(|r| Some(&r.tenant_id))),
        ("app_id::uuid", Text(|r| Some(&r.app_id))),
        ("workflow_id::uuid", Text(|r| Some(&r.workflow_id))),
        ("type", Text(|r| Some(&r.run_type))),
        ("status", Text(|r| Some(&r.status))),
        ("total_tokens", Int(|r| Some(r.total_tokens))),
        ("created_at", Time(|r| Some(r.created_at))),
        ("finished_at", Time(|r| r.finished_at)),
    ],
};

const MESSAGES: Table<MessageRow> = Table {
    name: "messages",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.message.id))),
        ("app_id::uuid", Text(|r| Some(&r.app_id))),
        (
            "conversation_id::uuid",
            Text(|r| Some(&r.message.conversation_id)),
        ),
        // Dify stores "no parent" as NULL; an empty string is not a uuid.
        ("parent_message_id::uuid", Text(|r| r.message.parent())),
        ("query", Text(|r| Some(&r.message.query))),
        ("answer", Text(|r| Some(&r.message.answer))),
        ("message_tokens", Int(|r| Some(r.message.message_tokens))),
        ("answer_tokens", Int(|r| Some(r.message.answer_tokens))),
        ("status", Text(|r| Some(&r.message.status))),
        ("error", Text(|r| r.message.error.as_deref())),
        ("invoke_from", Text(|r| r.message.invoke_from.as_deref())),
        (
            "workflow_run_id::uuid",
            Text(|r| r.message.workflow_run_id.as_deref()),
        ),
        ("created_at", Time(|r| Some(r.message.created_at))),
    ],
};

const MESSAGE_FILES: Table<MessageFileRow> = Table {
    name: "message_files",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("message_id::uuid", Text(|r| Some(&r.message_id))),
        ("type", Text(|r| Some(&r.file_type))),
        ("transfer_method", Text(|r| Some(&r.transfer_method))),
        ("url", Text(|r| r.url.as_deref())),
        ("belongs_to", Text(|r| r.belongs_to.as_deref())),
        (
            "upload_file_id::uuid",
            Text(|r| r.upload_file_id.as_deref()),
        ),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const NODE_EXECUTIONS: Table<NodeExecutionRow> = Table {
    name: "workflow_node_executions",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("tenant_id::uuid", Text(|r| Some(&r.tenant_id))),
        ("app_id::uuid", Text(|r| Some(&r.app_id))),
        ("workflow_id::uuid", Text(|r| Some(&r.workflow_id))),
        (
            "workflow_run_id::uuid",
            Text(|r| r.workflow_run_id.as_deref()),
        ),
        ("\"index\"", Int(|r| Some(r.index))),
        ("node_id", Text(|r| Some(&r.node_id))),
        ("node_type", Text(|r| Some(&r.node_type))),
        ("title", Text(|r| Some(&r.title))),
        ("inputs", Text(|r| r.inputs.as_deref())),
        ("process_data", Text(|r| r.process_data.as_deref())),
        ("outputs", Text(|r| r.outputs.as_deref())),
        ("status", Text(|r| Some(&r.status))),
        ("error", Text(|r| r.error.as_deref())),
        (
            "execution_metadata",
            Text(|r| r.execution_metadata.as_deref()),
        ),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const NODE_EXECUTION_OFFLOADS: Table<NodeExecutionOffloadRow> = Table {
    name: "workflow_node_execution_offload",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("tenant_id::uuid", Text(|r| Some(&r.tenant_id))),
        ("app_id::uuid", Text(|r| Some(&r.app_id))),
        (
            "node_execution_id::uuid",
            Text(|r| Some(&r.node_execution_id)),
        ),
        ("type", Text(|r| Some(&r.offload_type))),
        ("file_id::uuid", Text(|r| Some(&r.file_id))),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const CHAT_MEMORIES: Table<ChatMemoryRow> = Table {
    name: "chat_memories",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("memory_node_id", Text(|r| Some(&r.memory_node_id))),
        ("chat_id", Text(|r| Some(&r.chat_id))),
        ("label", Text(|r| Some(&r.label))),
        ("policy", Text(|r| Some(&r.policy))),
        ("created_at", Time(|r| Some(r.created_at))),
        ("updated_at", Time(|r| Some(r.updated_at))),
    ],
};

pub(super) const CHAT_MEMORY_MESSAGES: Table<ChatMemoryMessageRow> = Table {
    name: "chat_memory_messages",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("chat_memory_id::uuid", Text(|r| Some(&r.chat_memory_id))),
        ("seq", Int(|r| Some(r.seq))),
        ("role", Text(|r| Some(&r.role))),
        ("content", Text(|r| Some(&r.content))),
        ("tool_calls", Text(|r| r.tool_calls.as_deref())),
        ("tool_call_id", Text(|r| r.tool_call_id.as_deref())),
        ("files", Text(|r| r.files.as_deref())),
        (
            "workflow_request_id",
            Text(|r| r.workflow_request_id.as_deref()),
        ),
        ("is_summary", Bool(|r| r.is_summary)),
        ("created_at", Time(|r| Some(r.created_at))),
    ],
};

const LF_USERS: Table<LfUserRow> = Table {
    name: "\"user\"",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("username", Text(|r| Some(&r.username))),
        ("created_at", TimeTz(|r| Some(r.created_at))),
    ],
};

const FLOWS: Table<FlowRow> = Table {
    name: "flow",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("name", Text(|r| Some(&r.name))),
        ("user_id::uuid", Text(|r| Some(&r.user_id))),
        ("updated_at", TimeTz(|r| Some(r.updated_at))),
    ],
};

const JOBS: Table<JobRow> = Table {
    name: "job",
    columns: &[
        ("job_id::uuid", Text(|r| Some(&r.job_id))),
        ("flow_id::uuid", Text(|r| r.flow_id.as_deref())),
        ("status", Text(|r| Some(&r.status))),
        ("type", Text(|r| Some(&r.job_type))),
        ("user_id::uuid", Text(|r| r.user_id.as_deref())),
        ("asset_id::uuid", Text(|r| r.asset_id.as_deref())),
        ("asset_type", Text(|r| r.asset_type.as_deref())),
        ("dedupe_key", Text(|r| r.dedupe_key.as_deref())),
        ("created_timestamp", TimeTz(|r| Some(r.created_timestamp))),
        ("finished_timestamp", TimeTz(|r| r.finished_timestamp)),
    ],
};

const LF_MESSAGES: Table<LfMessageRow> = Table {
    name: "message",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("timestamp", TimeTz(|r| Some(r.timestamp))),
        ("sender", Text(|r| Some(&r.sender))),
        ("sender_name", Text(|r| Some(&r.sender_name))),
        ("session_id", Text(|r| Some(&r.session_id))),
        ("text", Text(|r| Some(&r.text))),
        ("files::json", Text(|r| Some(&r.files))),
        ("error", Bool(|r| r.error)),
        ("edit", Bool(|r| r.edit)),
        ("properties::json", Text(|r| Some(&r.properties))),
        ("category", Text(|r| Some(&r.category))),
        ("content_blocks::json", Text(|r| Some(&r.content_blocks))),
        ("flow_id::uuid", Text(|r| r.flow_id.as_deref())),
        ("run_id::uuid", Text(|r| r.run_id.as_deref())),
        ("is_output", Bool(|r| r.is_output)),
    ],
};

const MEMORY_BASES: Table<MemoryBaseRow> = Table {
    name: "memory_base",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("name", Text(|r| Some(&r.name))),
        ("flow_id::uuid", Text(|r| Some(&r.flow_id))),
        ("user_id::uuid", Text(|r| Some(&r.user_id))),
        ("threshold", Int(|r| Some(r.threshold))),
        ("threshold_unit", Text(|r| Some(&r.threshold_unit))),
        ("auto_capture", Bool(|r| r.auto_capture)),
        ("embedding_provider", Text(|r| Some(&r.embedding_provider))),
        ("embedding_model", Text(|r| Some(&r.embedding_model))),
        ("kb_name", Text(|r| Some(&r.kb_name))),
        ("created_at", TimeTz(|r| Some(r.created_at))),
    ],
};

const MEMORY_BASE_SESSIONS: Table<MemoryBaseSessionRow> = Table {
    name: "memory_base_session",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("memory_base_id::uuid", Text(|r| Some(&r.memory_base_id))),
        ("session_id", Text(|r| Some(&r.session_id))),
        ("cursor_id::uuid", Text(|r| r.cursor_id.as_deref())),
        ("total_processed", Int(|r| Some(r.total_processed))),
        ("last_sync_at", TimeTz(|r| r.last_sync_at)),
    ],
};

const MEMORY_BASE_WORKFLOW_RUNS: Table<MemoryBaseWorkflowRunRow> = Table {
    name: "memory_base_workflow_run",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("memory_base_id::uuid", Text(|r| Some(&r.memory_base_id))),
        ("session_id", Text(|r| Some(&r.session_id))),
        (
            "workflow_job_id::uuid",
            Text(|r| r.workflow_job_id.as_deref()),
        ),
        (
            "ingestion_job_id::uuid",
            Text(|r| r.ingestion_job_id.as_deref()),
        ),
        ("recorded_at", TimeTz(|r| Some(r.recorded_at))),
    ],
};

const INGESTION_RECORDS: Table<IngestionRecordRow> = Table {
    name: "message_ingestion_record",
    columns: &[
        ("id::uuid", Text(|r| Some(&r.id))),
        ("message_id::uuid", Text(|r| Some(&r.message_id))),
        ("memory_base_id::uuid", Text(|r| Some(&r.memory_base_id))),
        ("job_id::uuid", Text(|r| r.job_id.as_deref())),
        ("session_id", Text(|r| Some(&r.session_id))),
        ("ingested_at", TimeTz(|r| Some(r.ingested_at))),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair {
        id: String,
        body: Option<String>,
    }

    const PAIRS: Table<Pair> = Table {
        name: "t",
        columns: &[
            ("id::uuid", Text(|r| Some(&r.id))),
            ("body", Text(|r| r.body.as_deref())),
        ],
    };

    #[test]
    fn postgres_binds_one_array_per_column_with_casts() {
        assert_eq!(
            PAIRS.postgres_sql(),
            "INSERT INTO t (id, body) SELECT * FROM UNNEST($1::uuid[], $2)"
        );
    }

    #[test]
    fn sqlite_binds_plain_placeholders_per_row() {
        assert_eq!(
            PAIRS.sqlite_sql(2),
            "INSERT INTO t (id, body) VALUES (?, ?), (?, ?)"
        );
    }

    #[test]
    fn columns_read_their_row() {
        let pair = Pair {
            id: "a".to_owned(),
            body: None,
        };
        let values: Vec<Option<&str>> = PAIRS
            .columns
            .iter()
            .map(|(_, column)| match column {
                Text(get) => get(&pair),
                _ => panic!("text columns only"),
            })
            .collect();
        assert_eq!(values, [Some("a"), None]);
    }
}
