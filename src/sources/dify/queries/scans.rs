//! `doctor`'s whole-database reads: every message streamed a conversation at a time (through
//! the SQLite scan where it can), rows streamed one at a time past the ones that do not read,
//! dangling workflow-run references, node JSON that does not parse, and rows per table.

use futures_util::TryStreamExt;
use sqlx::FromRow;

use super::columns::MessageRecord;
use super::mysql_scan;
use crate::memory::model::StoredMessage;
use crate::store::bad_row::{BadRow, unreadable_row_id};
use crate::store::cancel::CancelFlag;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::pool::{DbPool, on_pool};
use crate::store::sql::dialect_text;
use crate::store::sqlite_scan;

/// A message whose `workflow_run_id` names a run that does not exist and was not archived.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct DanglingRunRef {
    pub message_id: String,
    pub conversation_id: String,
    pub workflow_run_id: String,
}

/// A node execution column that is not valid JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadNodeJson {
    pub node_execution_id: String,
    pub workflow_run_id: Option<String>,
    pub node_id: String,
    /// `inputs`, `process_data` or `outputs`.
    pub column: &'static str,
    /// serde_json's description of the first error.
    pub error: String,
}

#[derive(FromRow)]
struct NodeJsonRecord {
    id: String,
    workflow_run_id: Option<String>,
    node_id: String,
    inputs: Option<String>,
    process_data: Option<String>,
    outputs: Option<String>,
}

impl NodeJsonRecord {
    fn bad_columns(self) -> impl Iterator<Item = BadNodeJson> {
        [
            ("inputs", self.inputs),
            ("process_data", self.process_data),
            ("outputs", self.outputs),
        ]
        .into_iter()
        .filter_map(move |(column, text)| {
            let error = serde_json::from_str::<serde::de::IgnoredAny>(text.as_deref()?).err()?;
            Some(BadNodeJson {
                node_execution_id: self.id.clone(),
                workflow_run_id: self.workflow_run_id.clone(),
                node_id: self.node_id.clone(),
                column,
                error: error.to_string(),
            })
        })
    }
}

impl Store {
    /// Streams every message, calling `visit` once per conversation with all its messages
    /// (oldest first). One ordered query, so memory holds a few conversations at a time. On
    /// SQLite the scan reads SQLite directly on a blocking thread (see `sqlite_scan`); rows
    /// come out exactly as [`Store::for_each_conversation_via_sqlx`] gives them.
    pub async fn for_each_conversation(
        &self,
        visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        self.for_each_conversation_until(&CancelFlag::default(), visit, bad_row)
            .await
    }

    /// [`Store::for_each_conversation`] until `stop` is cancelled: from then on no conversation
    /// is handed over and the scan ends at its next row (on SQLite, the scan thread has stopped
    /// when this returns). Returns `Ok` either way; `stop` says which it was.
    pub async fn for_each_conversation_until(
        &self,
        stop: &CancelFlag,
        mut visit: impl FnMut(Vec<StoredMessage>),
        mut bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        if let DbPool::Sqlite(pool, dialect) = &self.pool {
            let sql = sqlite_scan::ScanSql {
                scan: with_rowid(dialect_text(*dialect, EVERY_MESSAGE_SQL)),
                by_rowid: dialect_text(*dialect, MESSAGE_BY_ROWID_SQL),
                parameter: None,
            };
            let decode = |raw: &sqlx::sqlite::SqliteRow| {
                sqlite_scan::decode_row::<MessageRecord>(raw, "messages")
            };
            let scan = sqlite_scan::for_each_conversation(
                pool,
                sql,
                decode,
                stop,
                &mut visit,
                &mut bad_row,
            );
            match scan.await {
                Ok(()) => return Ok(()),
                // A table without `rowid`: the row-by-row scan reads it.
                Err(sqlite_scan::Unavailable::Prepare) => {}
                Err(sqlite_scan::Unavailable::Sqlx(error)) => return Err(self.query_failed(error)),
            }
        }
        self.conversations_via_sqlx(stop, visit, bad_row).await
    }

    /// One conversation's messages by `postgres_sql` (ordered, its one parameter the id) through
    /// the SQLite scan's reader: a 50,000-message conversation spent most of its opening in
    /// sqlx's hand-over of each row. `None` where the scan does not apply (another backend, a
    /// table without `rowid`) or met a row sqlx cannot read: the caller then reads through
    /// sqlx, which reports it as before.
    pub(super) async fn scan_one_conversation(
        &self,
        postgres_sql: &'static str,
        id: &str,
    ) -> Result<Option<Vec<StoredMessage>>, StoreError> {
        let DbPool::Sqlite(pool, dialect) = &self.pool else {
            return Ok(None);
        };
        let sql = sqlite_scan::ScanSql {
            scan: with_rowid(dialect_text(*dialect, postgres_sql)),
            by_rowid: dialect_text(*dialect, MESSAGE_BY_ROWID_SQL),
            parameter: Some(id.to_owned()),
        };
        let decode = |raw: &sqlx::sqlite::SqliteRow| {
            sqlite_scan::decode_row::<MessageRecord>(raw, "messages")
        };
        let mut messages = Vec::new();
        let mut unreadable = false;
        let scan = sqlite_scan::for_each_conversation(
            pool,
            sql,
            decode,
            &CancelFlag::default(),
            &mut |conversation: Vec<StoredMessage>| messages.extend(conversation),
            &mut |_| unreadable = true,
        )
        .await;
        match scan {
            Ok(()) if !unreadable => Ok(Some(messages)),
            Ok(()) | Err(sqlite_scan::Unavailable::Prepare) => Ok(None),
            Err(sqlite_scan::Unavailable::Sqlx(error)) => Err(self.query_failed(error)),
        }
    }

    /// [`Store::for_each_conversation`] through sqlx's row streams on every backend: what
    /// PostgreSQL and MySQL use (rows arrive as the server sends them, one conversation held at
    /// a time; MySQL's sorted in parts at once and merged), and the reference the SQLite scan is
    /// tested against.
    pub async fn for_each_conversation_via_sqlx(
        &self,
        visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        self.conversations_via_sqlx(&CancelFlag::default(), visit, bad_row)
            .await
    }

    async fn conversations_via_sqlx(
        &self,
        stop: &CancelFlag,
        mut visit: impl FnMut(Vec<StoredMessage>),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        let mut current: Vec<StoredMessage> = Vec::new();
        let mut on_message = |message: StoredMessage| {
            if current
                .last()
                .is_some_and(|m| m.conversation_id != message.conversation_id)
            {
                visit(std::mem::take(&mut current));
            }
            current.push(message);
        };
        match &self.pool {
            DbPool::Mysql(pool, dialect) => {
                mysql_scan::for_each_message(pool, *dialect, stop, &mut on_message, bad_row)
                    .await
                    .map_err(|e| self.query_failed(e))?;
            }
            _ => {
                let on_record = |record: MessageRecord| on_message(record.into());
                self.scan_rows_until(stop, EVERY_MESSAGE_SQL, "messages", on_record, bad_row)
                    .await?;
            }
        }
        if !current.is_empty() && !stop.is_cancelled() {
            visit(current);
        }
        Ok(())
    }

    /// Streams the rows of `postgres_sql` decoded as `R`, one at a time. A row that does not
    /// decode goes to `bad_row` with its id (the `id` column) and the scan goes on: one bad row
    /// never hides the rest of a table. `table` names the rows in reports.
    pub(crate) async fn scan_rows<R: ScannedRow>(
        &self,
        postgres_sql: &'static str,
        table: &'static str,
        row: impl FnMut(R),
        bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        let never = CancelFlag::default();
        self.scan_rows_until(&never, postgres_sql, table, row, bad_row)
            .await
    }

    /// [`Store::scan_rows`] until `stop` is cancelled: the stream is dropped at the next row.
    async fn scan_rows_until<R: ScannedRow>(
        &self,
        stop: &CancelFlag,
        postgres_sql: &'static str,
        table: &'static str,
        mut row: impl FnMut(R),
        mut bad_row: impl FnMut(BadRow),
    ) -> Result<(), StoreError> {
        on_pool!(self.pool, postgres_sql, |pool, sql| {
            let mut rows = sqlx::query(sql).fetch(pool);
            while let Some(raw) = rows.try_next().await.map_err(|e| self.query_failed(e))? {
                if stop.is_cancelled() {
                    break;
                }
                match R::from_row(&raw) {
                    Ok(record) => row(record),
                    Err(error) => bad_row(BadRow {
                        table,
                        id: unreadable_row_id(&raw),
                        error: error.to_string(),
                    }),
                }
            }
        });
        Ok(())
    }

    /// Messages whose `workflow_run_id` points to no `workflow_runs` row (Dify declares no FK,
    /// and run cleanup leaves them behind) and to no `workflow_archive_logs` row either: a run
    /// Dify archived is gone on purpose. Rows that do not read go to `bad_row`.
    pub async fn dangling_workflow_runs(
        &self,
        bad_row: impl FnMut(BadRow),
    ) -> Result<Vec<DanglingRunRef>, StoreError> {
        let mut dangling = Vec::new();
        self.scan_rows(DANGLING_RUNS_SQL, "messages", |r| dangling.push(r), bad_row)
            .await?;
        Ok(dangling)
    }

    /// How many messages (of conversations not deleted) point to a run Dify archived out of
    /// the database: the turns doctor leaves out of its missing-run findings.
    pub async fn archived_run_messages(&self) -> Result<i64, StoreError> {
        on_pool!(self.pool, ARCHIVED_RUN_MESSAGES_SQL, |pool, sql| {
            sqlx::query_scalar(sql).fetch_one(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// Node execution `inputs`, `process_data` and `outputs` values that are not valid JSON.
    /// The columns are streamed and parsed here, so any database size fits in memory. Rows that
    /// do not read at all go to `bad_row`.
    pub async fn bad_node_json(
        &self,
        bad_row: impl FnMut(BadRow),
    ) -> Result<Vec<BadNodeJson>, StoreError> {
        let mut bad = Vec::new();
        self.scan_rows(
            NODE_JSON_SQL,
            "workflow_node_executions",
            |record: NodeJsonRecord| bad.extend(record.bad_columns()),
            bad_row,
        )
        .await?;
        Ok(bad)
    }
}

/// `sql` (a SQLite `SELECT`) with `rowid` as its first column.
fn with_rowid(sql: &str) -> String {
    let columns = sql.strip_prefix("SELECT ").unwrap_or(sql);
    format!("SELECT m.rowid, {columns}")
}

/// Messages (`m`) of conversations Dify has not deleted. The subquery is uncorrelated, so it
/// runs once per scan (and finds nothing where the schema cannot mark a deletion).
/// The message's run has an archive log: Dify's retention service moved it out.
macro_rules! archived {
    () => {
        "EXISTS (SELECT 1 FROM workflow_archive_logs a WHERE a.workflow_run_id = m.workflow_run_id)"
    };
}

macro_rules! not_deleted {
    () => {
        "m.conversation_id NOT IN (SELECT c.id FROM conversations c WHERE c.is_deleted)"
    };
}

const EVERY_MESSAGE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE ",
    not_deleted!(),
    " ORDER BY m.conversation_id, m.created_at, m.id"
);

/// One message by SQLite `rowid`, for the rows the SQLite scan leaves to sqlx.
const MESSAGE_BY_ROWID_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages m WHERE m.rowid = $1"
);

const DANGLING_RUNS_SQL: &str = concat!(
    "SELECT m.id::text AS id, m.id::text AS message_id, \
     m.conversation_id::text AS conversation_id, m.workflow_run_id::text AS workflow_run_id \
     FROM messages m LEFT JOIN workflow_runs r ON r.id = m.workflow_run_id \
     WHERE m.workflow_run_id IS NOT NULL AND r.id IS NULL AND NOT ",
    archived!(),
    " AND ",
    not_deleted!(),
    " ORDER BY m.conversation_id, m.created_at, m.id"
);

const ARCHIVED_RUN_MESSAGES_SQL: &str = concat!(
    "SELECT COUNT(*)::bigint FROM messages m LEFT JOIN workflow_runs r \
     ON r.id = m.workflow_run_id WHERE m.workflow_run_id IS NOT NULL AND r.id IS NULL AND ",
    archived!(),
    " AND ",
    not_deleted!()
);

const NODE_JSON_SQL: &str = "\
SELECT id::text AS id, workflow_run_id::text AS workflow_run_id, node_id, inputs, process_data, \
       outputs \
FROM workflow_node_executions ORDER BY created_at, id";

/// A row type [`Store::scan_rows`] decodes from either pool.
pub(crate) trait ScannedRow:
    for<'r> FromRow<'r, sqlx::sqlite::SqliteRow>
    + for<'r> FromRow<'r, sqlx::postgres::PgRow>
    + for<'r> FromRow<'r, sqlx::mysql::MySqlRow>
    + Send
    + Unpin
{
}

impl<R> ScannedRow for R where
    R: for<'r> FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> FromRow<'r, sqlx::postgres::PgRow>
        + for<'r> FromRow<'r, sqlx::mysql::MySqlRow>
        + Send
        + Unpin
{
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_json_columns_are_reported_by_name() {
        let record = NodeJsonRecord {
            id: "n1".into(),
            workflow_run_id: Some("r1".into()),
            node_id: "llm".into(),
            inputs: Some("{\"a\": 1}".into()),
            process_data: Some("{truncated".into()),
            outputs: None,
        };
        let bad: Vec<BadNodeJson> = record.bad_columns().collect();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].column, "process_data");
        assert_eq!(bad[0].node_execution_id, "n1");
        assert!(!bad[0].error.is_empty());
    }
}
