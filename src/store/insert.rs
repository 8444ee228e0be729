//! Writing a [`Batch`]: one transaction, multi-row INSERTs as large as the backend's bind
//! parameter limit allows, tables in dependency order.

use sqlx::query::Query;
use sqlx::{AssertSqlSafe, Database, Executor, IntoArguments, Transaction};

use super::rows::Batch;
use super::{Backend, Store, StoreError};

/// A table as `insert_batch` writes it.
struct Table {
    name: &'static str,
    /// Columns in bind order. A `::type` suffix is the PostgreSQL cast the bound text needs
    /// (`uuid`, `json`); SQLite stores those columns as TEXT and gets no cast.
    columns: &'static [&'static str],
}

impl Backend {
    /// Bind parameters one statement may carry.
    fn max_bind_params(self) -> usize {
        match self {
            // SQLITE_MAX_VARIABLE_NUMBER since SQLite 3.32.
            Backend::Sqlite => 32_766,
            // The wire protocol counts parameters in an i16... read as unsigned.
            Backend::Postgres => 65_535,
        }
    }
}

/// `INSERT INTO table (…) VALUES ($1, $2::uuid, …), (…)` for `rows` rows (SQLite: `?`).
fn insert_sql(table: &Table, rows: usize, backend: Backend) -> String {
    let names: Vec<&str> = table
        .columns
        .iter()
        .map(|c| c.split_once("::").map_or(*c, |(name, _)| name))
        .collect();
    let mut sql = format!("INSERT INTO {} ({}) VALUES ", table.name, names.join(", "));
    let mut param = 0;
    for row in 0..rows {
        sql.push_str(if row == 0 { "(" } else { ", (" });
        for (i, column) in table.columns.iter().enumerate() {
            param += 1;
            if i > 0 {
                sql.push_str(", ");
            }
            match backend {
                // SQLite looks each `$NNN` name up in a list of the names seen so far, which is
                // quadratic in a statement with thousands of parameters; `?` is not.
                Backend::Sqlite => sql.push('?'),
                Backend::Postgres => {
                    sql.push('$');
                    sql.push_str(&param.to_string());
                    if let Some((_, cast)) = column.split_once("::") {
                        sql.push_str("::");
                        sql.push_str(cast);
                    }
                }
            }
        }
        sql.push(')');
    }
    sql
}

/// Inserts `rows` with as few statements as the bind limit allows; `bind` binds one row's
/// values in the order of `table.columns`.
async fn insert_rows<DB, R>(
    tx: &mut Transaction<'_, DB>,
    backend: Backend,
    table: &Table,
    rows: &[R],
    bind: impl Fn(Query<'static, DB, DB::Arguments>, &R) -> Query<'static, DB, DB::Arguments>,
) -> Result<(), sqlx::Error>
where
    DB: Database,
    DB::Arguments: IntoArguments<DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    let rows_per_statement = backend.max_bind_params() / table.columns.len();
    for chunk in rows.chunks(rows_per_statement) {
        let sql = insert_sql(table, chunk.len(), backend);
        let query = chunk
            .iter()
            .fold(sqlx::query(AssertSqlSafe(sql)), |query, row| {
                bind(query, row)
            });
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

const APPS: Table = Table {
    name: "apps",
    columns: &[
        "id::uuid",
        "tenant_id::uuid",
        "name",
        "mode",
        "memory_window",
        "created_at",
    ],
};

const CONVERSATIONS: Table = Table {
    name: "conversations",
    columns: &[
        "id::uuid",
        "app_id::uuid",
        "name",
        "mode",
        "model_provider",
        "model_id",
        "status",
        "invoke_from",
        "from_source",
        "dialogue_count",
        "created_at",
        "updated_at",
    ],
};

const UPLOAD_FILES: Table = Table {
    name: "upload_files",
    columns: &[
        "id::uuid",
        "tenant_id::uuid",
        "storage_type",
        "key",
        "name",
        "size",
        "extension",
        "mime_type",
        "created_at",
    ],
};

const WORKFLOW_RUNS: Table = Table {
    name: "workflow_runs",
    columns: &[
        "id::uuid",
        "tenant_id::uuid",
        "app_id::uuid",
        "workflow_id::uuid",
        "type",
        "status",
        "total_tokens",
        "created_at",
        "finished_at",
    ],
};

const MESSAGES: Table = Table {
    name: "messages",
    columns: &[
        "id::uuid",
        "app_id::uuid",
        "conversation_id::uuid",
        "parent_message_id::uuid",
        "query",
        "answer",
        "message_tokens",
        "answer_tokens",
        "status",
        "error",
        "invoke_from",
        "workflow_run_id::uuid",
        "created_at",
    ],
};

const MESSAGE_FILES: Table = Table {
    name: "message_files",
    columns: &[
        "id::uuid",
        "message_id::uuid",
        "type",
        "transfer_method",
        "url",
        "belongs_to",
        "upload_file_id::uuid",
        "created_at",
    ],
};

const NODE_EXECUTIONS: Table = Table {
    name: "workflow_node_executions",
    columns: &[
        "id::uuid",
        "tenant_id::uuid",
        "app_id::uuid",
        "workflow_id::uuid",
        "workflow_run_id::uuid",
        "\"index\"",
        "node_id",
        "node_type",
        "title",
        "inputs",
        "process_data",
        "outputs",
        "status",
        "error",
        "execution_metadata",
        "created_at",
    ],
};

const NODE_EXECUTION_OFFLOADS: Table = Table {
    name: "workflow_node_execution_offload",
    columns: &[
        "id::uuid",
        "tenant_id::uuid",
        "app_id::uuid",
        "node_execution_id::uuid",
        "type",
        "file_id::uuid",
        "created_at",
    ],
};

const CHAT_MEMORIES: Table = Table {
    name: "chat_memories",
    columns: &[
        "id::uuid",
        "memory_node_id",
        "chat_id",
        "label",
        "policy",
        "created_at",
        "updated_at",
    ],
};

const CHAT_MEMORY_MESSAGES: Table = Table {
    name: "chat_memory_messages",
    columns: &[
        "id::uuid",
        "chat_memory_id::uuid",
        "seq",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "files",
        "workflow_request_id",
        "is_summary",
        "created_at",
    ],
};

const LF_USERS: Table = Table {
    name: "\"user\"",
    columns: &["id::uuid", "username", "created_at"],
};

const FLOWS: Table = Table {
    name: "flow",
    columns: &["id::uuid", "name", "user_id::uuid", "updated_at"],
};

const JOBS: Table = Table {
    name: "job",
    columns: &[
        "job_id::uuid",
        "flow_id::uuid",
        "status",
        "type",
        "user_id::uuid",
        "asset_id::uuid",
        "asset_type",
        "dedupe_key",
        "created_timestamp",
        "finished_timestamp",
    ],
};

const LF_MESSAGES: Table = Table {
    name: "message",
    columns: &[
        "id::uuid",
        "timestamp",
        "sender",
        "sender_name",
        "session_id",
        "text",
        "files::json",
        "error",
        "edit",
        "properties::json",
        "category",
        "content_blocks::json",
        "flow_id::uuid",
        "run_id::uuid",
        "is_output",
    ],
};

const MEMORY_BASES: Table = Table {
    name: "memory_base",
    columns: &[
        "id::uuid",
        "name",
        "flow_id::uuid",
        "user_id::uuid",
        "threshold",
        "threshold_unit",
        "auto_capture",
        "embedding_provider",
        "embedding_model",
        "kb_name",
        "created_at",
    ],
};

const MEMORY_BASE_SESSIONS: Table = Table {
    name: "memory_base_session",
    columns: &[
        "id::uuid",
        "memory_base_id::uuid",
        "session_id",
        "cursor_id::uuid",
        "total_processed",
        "last_sync_at",
    ],
};

const MEMORY_BASE_WORKFLOW_RUNS: Table = Table {
    name: "memory_base_workflow_run",
    columns: &[
        "id::uuid",
        "memory_base_id::uuid",
        "session_id",
        "workflow_job_id::uuid",
        "ingestion_job_id::uuid",
        "recorded_at",
    ],
};

const INGESTION_RECORDS: Table = Table {
    name: "message_ingestion_record",
    columns: &[
        "id::uuid",
        "message_id::uuid",
        "memory_base_id::uuid",
        "job_id::uuid",
        "session_id",
        "ingested_at",
    ],
};

impl Store {
    /// Writes every row of `batch` in one transaction: all of it, or on error nothing.
    pub async fn insert_batch(&self, batch: &Batch) -> Result<(), StoreError> {
        self.ensure_writable()?;
        if batch.is_empty() {
            return Ok(());
        }
        let backend = self.backend();
        on_pool!(self.pool, |pool| {
            let mut tx = pool.begin().await.map_err(|e| self.query_failed(e))?;
            let result: Result<(), sqlx::Error> = async {
                insert_rows(&mut tx, backend, &APPS, &batch.apps, |q, r| {
                    q.bind(&r.id)
                        .bind(&r.tenant_id)
                        .bind(&r.name)
                        .bind(&r.mode)
                        .bind(r.memory_window)
                        .bind(r.created_at)
                })
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &CONVERSATIONS,
                    &batch.conversations,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.app_id)
                            .bind(&r.name)
                            .bind(&r.mode)
                            .bind(&r.model_provider)
                            .bind(&r.model_id)
                            .bind(&r.status)
                            .bind(&r.invoke_from)
                            .bind(&r.from_source)
                            .bind(r.dialogue_count)
                            .bind(r.created_at)
                            .bind(r.updated_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &UPLOAD_FILES,
                    &batch.upload_files,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.tenant_id)
                            .bind(&r.storage_type)
                            .bind(&r.key)
                            .bind(&r.name)
                            .bind(r.size)
                            .bind(&r.extension)
                            .bind(&r.mime_type)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &WORKFLOW_RUNS,
                    &batch.workflow_runs,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.tenant_id)
                            .bind(&r.app_id)
                            .bind(&r.workflow_id)
                            .bind(&r.run_type)
                            .bind(&r.status)
                            .bind(r.total_tokens)
                            .bind(r.created_at)
                            .bind(r.finished_at)
                    },
                )
                .await?;
                insert_rows(&mut tx, backend, &MESSAGES, &batch.messages, |q, r| {
                    let m = &r.message;
                    q.bind(&m.id)
                        .bind(&r.app_id)
                        .bind(&m.conversation_id)
                        // Dify stores "no parent" as NULL; an empty string is not a uuid.
                        .bind(m.parent_message_id.as_deref().filter(|p| !p.is_empty()))
                        .bind(&m.query)
                        .bind(&m.answer)
                        .bind(m.message_tokens)
                        .bind(m.answer_tokens)
                        .bind(&m.status)
                        .bind(&m.error)
                        .bind(&m.invoke_from)
                        .bind(&m.workflow_run_id)
                        .bind(m.created_at)
                })
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &MESSAGE_FILES,
                    &batch.message_files,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.message_id)
                            .bind(&r.file_type)
                            .bind(&r.transfer_method)
                            .bind(&r.url)
                            .bind(&r.belongs_to)
                            .bind(&r.upload_file_id)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &NODE_EXECUTIONS,
                    &batch.node_executions,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.tenant_id)
                            .bind(&r.app_id)
                            .bind(&r.workflow_id)
                            .bind(&r.workflow_run_id)
                            .bind(r.index)
                            .bind(&r.node_id)
                            .bind(&r.node_type)
                            .bind(&r.title)
                            .bind(&r.inputs)
                            .bind(&r.process_data)
                            .bind(&r.outputs)
                            .bind(&r.status)
                            .bind(&r.error)
                            .bind(&r.execution_metadata)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &NODE_EXECUTION_OFFLOADS,
                    &batch.node_execution_offloads,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.tenant_id)
                            .bind(&r.app_id)
                            .bind(&r.node_execution_id)
                            .bind(&r.offload_type)
                            .bind(&r.file_id)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &CHAT_MEMORIES,
                    &batch.chat_memories,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.memory_node_id)
                            .bind(&r.chat_id)
                            .bind(&r.label)
                            .bind(&r.policy)
                            .bind(r.created_at)
                            .bind(r.updated_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &CHAT_MEMORY_MESSAGES,
                    &batch.chat_memory_messages,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.chat_memory_id)
                            .bind(r.seq)
                            .bind(&r.role)
                            .bind(&r.content)
                            .bind(&r.tool_calls)
                            .bind(&r.tool_call_id)
                            .bind(&r.files)
                            .bind(&r.workflow_request_id)
                            .bind(r.is_summary)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(&mut tx, backend, &LF_USERS, &batch.lf_users, |q, r| {
                    q.bind(&r.id).bind(&r.username).bind(r.created_at)
                })
                .await?;
                insert_rows(&mut tx, backend, &FLOWS, &batch.flows, |q, r| {
                    q.bind(&r.id)
                        .bind(&r.name)
                        .bind(&r.user_id)
                        .bind(r.updated_at)
                })
                .await?;
                insert_rows(&mut tx, backend, &JOBS, &batch.jobs, |q, r| {
                    q.bind(&r.job_id)
                        .bind(&r.flow_id)
                        .bind(&r.status)
                        .bind(&r.job_type)
                        .bind(&r.user_id)
                        .bind(&r.asset_id)
                        .bind(&r.asset_type)
                        .bind(&r.dedupe_key)
                        .bind(r.created_timestamp)
                        .bind(r.finished_timestamp)
                })
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &LF_MESSAGES,
                    &batch.lf_messages,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(r.timestamp)
                            .bind(&r.sender)
                            .bind(&r.sender_name)
                            .bind(&r.session_id)
                            .bind(&r.text)
                            .bind(&r.files)
                            .bind(r.error)
                            .bind(r.edit)
                            .bind(&r.properties)
                            .bind(&r.category)
                            .bind(&r.content_blocks)
                            .bind(&r.flow_id)
                            .bind(&r.run_id)
                            .bind(r.is_output)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &MEMORY_BASES,
                    &batch.memory_bases,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.name)
                            .bind(&r.flow_id)
                            .bind(&r.user_id)
                            .bind(r.threshold)
                            .bind(&r.threshold_unit)
                            .bind(r.auto_capture)
                            .bind(&r.embedding_provider)
                            .bind(&r.embedding_model)
                            .bind(&r.kb_name)
                            .bind(r.created_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &MEMORY_BASE_SESSIONS,
                    &batch.memory_base_sessions,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.memory_base_id)
                            .bind(&r.session_id)
                            .bind(&r.cursor_id)
                            .bind(r.total_processed)
                            .bind(r.last_sync_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &MEMORY_BASE_WORKFLOW_RUNS,
                    &batch.memory_base_workflow_runs,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.memory_base_id)
                            .bind(&r.session_id)
                            .bind(&r.workflow_job_id)
                            .bind(&r.ingestion_job_id)
                            .bind(r.recorded_at)
                    },
                )
                .await?;
                insert_rows(
                    &mut tx,
                    backend,
                    &INGESTION_RECORDS,
                    &batch.ingestion_records,
                    |q, r| {
                        q.bind(&r.id)
                            .bind(&r.message_id)
                            .bind(&r.memory_base_id)
                            .bind(&r.job_id)
                            .bind(&r.session_id)
                            .bind(r.ingested_at)
                    },
                )
                .await
            }
            .await;
            // Dropping `tx` on error rolls the whole batch back.
            result.map_err(|e| self.query_failed(e))?;
            tx.commit().await.map_err(|e| self.query_failed(e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: Table = Table {
        name: "t",
        columns: &["id::uuid", "body"],
    };

    #[test]
    fn postgres_placeholders_carry_casts() {
        assert_eq!(
            insert_sql(&PAIR, 2, Backend::Postgres),
            "INSERT INTO t (id, body) VALUES ($1::uuid, $2), ($3::uuid, $4)"
        );
    }

    #[test]
    fn sqlite_placeholders_are_plain() {
        assert_eq!(
            insert_sql(&PAIR, 1, Backend::Sqlite),
            "INSERT INTO t (id, body) VALUES (?, ?)"
        );
    }
}
