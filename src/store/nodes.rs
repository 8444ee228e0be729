//! Node executions of chatflow runs: what the nodes pane lists, what a node context reads
//! (`outputs`, `process_data` and their offloaded copies), and the stream `doctor` checks.
//!
//! Every per-conversation lookup goes through the `(workflow_run_id, node_id)` index; offload
//! links through their unique `(node_execution_id, type)` index and `upload_files`' key.

use chrono::NaiveDateTime;
use sqlx::FromRow;

use super::bad_row::BadRow;
use super::error::StoreError;
use super::handle::Store;
use super::ids::{IN_LIST_LEN, canonical_uuid, canonical_uuids, in_list_query};

/// One execution as the nodes pane lists it: no JSON columns.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct NodeExecutionBrief {
    pub id: String,
    pub workflow_run_id: String,
    pub node_id: String,
    pub node_type: String,
    pub title: String,
    pub status: String,
    pub index: i64,
    pub created_at: NaiveDateTime,
}

/// Where a truncated column's full JSON lives: an upload, and its storage key when the upload
/// row exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offload {
    pub file_id: String,
    pub storage_key: Option<String>,
}

/// One execution with the columns a node context reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeExecutionRecord {
    pub id: String,
    pub workflow_run_id: String,
    pub node_id: String,
    pub node_type: String,
    pub title: String,
    pub status: String,
    pub index: i64,
    pub created_at: NaiveDateTime,
    pub outputs: Option<String>,
    pub process_data: Option<String>,
    /// Set when `outputs` was truncated in the row.
    pub outputs_offload: Option<Offload>,
    pub process_data_offload: Option<Offload>,
}

#[derive(FromRow)]
struct ExecutionRow {
    id: String,
    workflow_run_id: Option<String>,
    node_id: String,
    node_type: String,
    title: String,
    status: String,
    index: i64,
    created_at: NaiveDateTime,
    outputs: Option<String>,
    process_data: Option<String>,
    outputs_file_id: Option<String>,
    outputs_file_key: Option<String>,
    process_data_file_id: Option<String>,
    process_data_file_key: Option<String>,
}

impl From<ExecutionRow> for NodeExecutionRecord {
    fn from(row: ExecutionRow) -> Self {
        let offload = |file_id: Option<String>, storage_key| {
            file_id.map(|file_id| Offload {
                file_id,
                storage_key,
            })
        };
        NodeExecutionRecord {
            id: row.id,
            workflow_run_id: row.workflow_run_id.unwrap_or_default(),
            node_id: row.node_id,
            node_type: row.node_type,
            title: row.title,
            status: row.status,
            index: row.index,
            created_at: row.created_at,
            outputs: row.outputs,
            process_data: row.process_data,
            outputs_offload: offload(row.outputs_file_id, row.outputs_file_key),
            process_data_offload: offload(row.process_data_file_id, row.process_data_file_key),
        }
    }
}

/// The columns and joins of [`NodeExecutionRecord`] (a literal so `concat!` can build queries).
macro_rules! execution_select {
    () => {
        "SELECT e.id::text AS id, e.workflow_run_id::text AS workflow_run_id, e.node_id, \
         e.node_type, e.title, e.status, e.\"index\"::bigint AS \"index\", e.created_at, \
         e.outputs, e.process_data, \
         oo.file_id::text AS outputs_file_id, ou.key AS outputs_file_key, \
         op.file_id::text AS process_data_file_id, pu.key AS process_data_file_key \
         FROM workflow_node_executions e \
         LEFT JOIN workflow_node_execution_offload oo \
           ON oo.node_execution_id = e.id AND oo.type = 'outputs' \
         LEFT JOIN upload_files ou ON ou.id = oo.file_id \
         LEFT JOIN workflow_node_execution_offload op \
           ON op.node_execution_id = e.id AND op.type = 'process_data' \
         LEFT JOIN upload_files pu ON pu.id = op.file_id "
    };
}

const RUN_NODE_EXECUTIONS_SQL: &str = concat!(
    execution_select!(),
    "WHERE e.workflow_run_id = $1::uuid AND e.node_id = $2 ORDER BY e.created_at, e.\"index\", e.id"
);

const LLM_EXECUTIONS_SQL: &str = concat!(
    execution_select!(),
    "WHERE e.node_type = 'llm' ORDER BY e.created_at, e.id"
);

/// The `IN` list takes `$1`…`$256`; the node id is the next parameter.
static RUNS_NODE_EXECUTIONS_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    in_list_query(
        concat!(execution_select!(), "WHERE e.workflow_run_id IN "),
        &format!(
            " AND e.node_id = ${} ORDER BY e.created_at, e.\"index\", e.id",
            IN_LIST_LEN + 1
        ),
    )
});

static RUN_EXECUTION_BRIEFS_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    in_list_query(
        "SELECT id::text AS id, workflow_run_id::text AS workflow_run_id, node_id, node_type, \
         title, status, \"index\"::bigint AS \"index\", created_at \
         FROM workflow_node_executions WHERE workflow_run_id IN ",
        " ORDER BY created_at, \"index\", id",
    )
});

impl Store {
    /// Every node execution of the given runs, without JSON columns, oldest first.
    pub async fn node_execution_briefs(
        &self,
        run_ids: &[String],
    ) -> Result<Vec<NodeExecutionBrief>, StoreError> {
        let ids = canonical_uuids(run_ids.iter().map(String::as_str));
        let mut briefs: Vec<NodeExecutionBrief> = self
            .rows_for_ids(RUN_EXECUTION_BRIEFS_SQL.as_str(), &ids, None)
            .await?;
        briefs.sort_by(|a, b| (a.created_at, a.index, &a.id).cmp(&(b.created_at, b.index, &b.id)));
        Ok(briefs)
    }

    /// The executions of `node_id` in one run (loops and retries run a node more than once),
    /// oldest first.
    pub async fn node_executions_in_run(
        &self,
        run_id: &str,
        node_id: &str,
    ) -> Result<Vec<NodeExecutionRecord>, StoreError> {
        let Some(run_id) = canonical_uuid(run_id) else {
            return Ok(Vec::new());
        };
        let rows: Vec<ExecutionRow> = on_pool!(self.pool, RUN_NODE_EXECUTIONS_SQL, |pool, sql| {
            sqlx::query_as(sql)
                .bind(&run_id)
                .bind(node_id)
                .fetch_all(pool)
                .await
        })
        .map_err(|e| self.query_failed(e))?;
        Ok(rows.into_iter().map(NodeExecutionRecord::from).collect())
    }

    /// The executions of `node_id` in any of the given runs, oldest first.
    pub async fn node_executions_in_runs(
        &self,
        run_ids: &[String],
        node_id: &str,
    ) -> Result<Vec<NodeExecutionRecord>, StoreError> {
        let ids = canonical_uuids(run_ids.iter().map(String::as_str));
        let rows: Vec<ExecutionRow> = self
            .rows_for_ids(RUNS_NODE_EXECUTIONS_SQL.as_str(), &ids, Some(node_id))
            .await?;
        let mut records: Vec<NodeExecutionRecord> =
            rows.into_iter().map(NodeExecutionRecord::from).collect();
        records.sort_by(|a, b| (a.created_at, a.index, &a.id).cmp(&(b.created_at, b.index, &b.id)));
        Ok(records)
    }

    /// Streams every LLM execution with its JSON columns and offload links, for `doctor`.
    /// Rows that do not read go to `bad_row`, and the stream goes on.
    pub async fn for_each_llm_execution(
        &self,
        mut visit: impl FnMut(NodeExecutionRecord),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        self.scan_rows(
            LLM_EXECUTIONS_SQL,
            "workflow_node_executions",
            |row: ExecutionRow| visit(row.into()),
            bad_row,
        )
        .await
    }
}
