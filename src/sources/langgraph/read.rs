//! The SQL of the reads, on SqliteSaver's tables (`checkpoints`, `writes`) and PostgresSaver's
//! (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`). Listing threads and drawing a tree
//! read no checkpoint body; one checkpoint is read with its blobs and writes when it is shown.

use serde_json::Value as Json;
use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

use crate::sources::langgraph::decode::tree::{CheckpointRow, TaskRow};

/// A saver's database.
#[derive(Debug, Clone)]
pub enum LangGraphPool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// One thread as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ThreadSummary {
    pub thread_id: String,
    /// Checkpoints of every namespace.
    pub checkpoints: i64,
    /// The greatest id of namespace `''`: the checkpoint `get_state` reads.
    pub latest_checkpoint_id: Option<String>,
}

/// A checkpoint's stored body.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredBody {
    /// SqliteSaver: the whole checkpoint, one serialized value.
    Serialized { type_name: String, bytes: Vec<u8> },
    /// PostgresSaver: JSONB with primitive values inline, and the blobs of the channel versions
    /// it names.
    Json { body: Json, blobs: Vec<StoredBlob> },
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StoredBlob {
    pub channel: String,
    pub version: String,
    /// `empty` when the channel had no value.
    #[sqlx(rename = "type")]
    pub type_name: String,
    #[sqlx(rename = "blob")]
    pub bytes: Option<Vec<u8>>,
}

/// One write a task made, keyed to the checkpoint it started from.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StoredWrite {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    #[sqlx(rename = "type")]
    pub type_name: Option<String>,
    pub value: Option<Vec<u8>>,
}

/// One checkpoint with its writes.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCheckpoint {
    pub checkpoint_id: String,
    pub parent_checkpoint_id: Option<String>,
    pub body: StoredBody,
    pub writes: Vec<StoredWrite>,
}

/// The latest checkpoint is the greatest id of the root namespace, as `get_state` orders them:
/// one seek into the primary key's index a thread, after the count that reads the index once
/// (taking the greatest id in that pass compared every row's namespace and id, twice the time).
const THREADS_SQL: &str = "SELECT g.thread_id, g.checkpoints, \
     (SELECT MAX(c.checkpoint_id) FROM checkpoints c \
      WHERE c.thread_id = g.thread_id AND c.checkpoint_ns = '') AS latest_checkpoint_id \
     FROM (SELECT thread_id, COUNT(*) AS checkpoints FROM checkpoints GROUP BY thread_id) g \
     ORDER BY g.thread_id";

/// `(checkpoint_ns, checkpoint_id, parent_checkpoint_id or task_path)`.
type RowTuple = (String, String, Option<String>);
/// SqliteSaver's metadata is a BLOB of JSON text.
type SqliteCheckpointRow = (String, String, Option<String>, Option<Vec<u8>>);
/// `(parent_checkpoint_id, type, checkpoint)`.
type SqliteBody = (Option<String>, Option<String>, Option<Vec<u8>>);

impl LangGraphPool {
    /// Every thread, by id.
    pub async fn threads(&self) -> sqlx::Result<Vec<ThreadSummary>> {
        match self {
            LangGraphPool::Sqlite(pool) => sqlx::query_as(THREADS_SQL).fetch_all(pool).await,
            LangGraphPool::Postgres(pool) => sqlx::query_as(THREADS_SQL).fetch_all(pool).await,
        }
    }

    /// The greatest checkpoint id of a thread's root namespace, the one `get_state` reads, and
    /// whether the thread has any checkpoint: both from the primary key's index, no row read.
    pub async fn latest_checkpoint_id(
        &self,
        thread_id: &str,
    ) -> sqlx::Result<(Option<String>, bool)> {
        match self {
            LangGraphPool::Sqlite(pool) => {
                sqlx::query_as(
                    "SELECT (SELECT MAX(checkpoint_id) FROM checkpoints \
                     WHERE thread_id = ?1 AND checkpoint_ns = ''), \
                     EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1)",
                )
                .bind(thread_id)
                .fetch_one(pool)
                .await
            }
            LangGraphPool::Postgres(pool) => {
                sqlx::query_as(
                    "SELECT (SELECT MAX(checkpoint_id) FROM checkpoints \
                     WHERE thread_id = $1 AND checkpoint_ns = ''), \
                     EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1)",
                )
                .bind(thread_id)
                .fetch_one(pool)
                .await
            }
        }
    }

    /// A thread's checkpoint rows without their bodies, and its writes' task paths: all a tree
    /// needs.
    pub async fn thread_rows(
        &self,
        thread_id: &str,
    ) -> sqlx::Result<(Vec<CheckpointRow>, Vec<TaskRow>)> {
        let (rows, tasks) = match self {
            LangGraphPool::Sqlite(pool) => {
                let rows: Vec<SqliteCheckpointRow> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata \
                     FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let tasks: Vec<RowTuple> = sqlx::query_as(
                    "SELECT DISTINCT checkpoint_ns, checkpoint_id, task_path FROM writes WHERE thread_id = ?1",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let rows = rows
                    .into_iter()
                    .map(|(ns, id, parent, metadata)| {
                        let metadata = metadata
                            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                            .unwrap_or(Json::Null);
                        (ns, id, parent, metadata)
                    })
                    .collect::<Vec<_>>();
                (rows, tasks)
            }
            LangGraphPool::Postgres(pool) => {
                let rows: Vec<(String, String, Option<String>, Json)> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata \
                     FROM checkpoints WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let tasks: Vec<RowTuple> = sqlx::query_as(
                    "SELECT DISTINCT checkpoint_ns, checkpoint_id, task_path FROM checkpoint_writes WHERE thread_id = $1",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                (rows, tasks)
            }
        };
        let rows = rows
            .into_iter()
            .map(
                |(checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata)| CheckpointRow {
                    checkpoint_ns,
                    checkpoint_id,
                    parent_checkpoint_id,
                    metadata,
                },
            )
            .collect();
        let tasks = tasks
            .into_iter()
            .map(|(checkpoint_ns, checkpoint_id, task_path)| TaskRow {
                checkpoint_ns,
                checkpoint_id,
                task_path: task_path.unwrap_or_default(),
            })
            .collect();
        Ok((rows, tasks))
    }

    /// One checkpoint with its body (and, on PostgreSQL, the blobs of its channel versions) and
    /// its writes in LangGraph's order (task path, task id, idx).
    pub async fn checkpoint(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
    ) -> sqlx::Result<Option<StoredCheckpoint>> {
        match self {
            LangGraphPool::Sqlite(pool) => {
                let row: Option<SqliteBody> = sqlx::query_as(
                    "SELECT parent_checkpoint_id, type, checkpoint FROM checkpoints \
                     WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
                )
                .bind(thread_id)
                .bind(checkpoint_ns)
                .bind(checkpoint_id)
                .fetch_optional(pool)
                .await?;
                let Some((parent_checkpoint_id, type_name, bytes)) = row else {
                    return Ok(None);
                };
                let writes = sqlx::query_as(
                    "SELECT task_id, task_path, idx, channel, type, value FROM writes \
                     WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 \
                     ORDER BY task_path, task_id, idx",
                )
                .bind(thread_id)
                .bind(checkpoint_ns)
                .bind(checkpoint_id)
                .fetch_all(pool)
                .await?;
                Ok(Some(StoredCheckpoint {
                    checkpoint_id: checkpoint_id.to_owned(),
                    parent_checkpoint_id,
                    body: StoredBody::Serialized {
                        type_name: type_name.unwrap_or_else(|| "null".to_owned()),
                        bytes: bytes.unwrap_or_default(),
                    },
                    writes,
                }))
            }
            LangGraphPool::Postgres(pool) => {
                let row: Option<(Option<String>, Json)> = sqlx::query_as(
                    "SELECT parent_checkpoint_id, checkpoint FROM checkpoints \
                     WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                )
                .bind(thread_id)
                .bind(checkpoint_ns)
                .bind(checkpoint_id)
                .fetch_optional(pool)
                .await?;
                let Some((parent_checkpoint_id, body)) = row else {
                    return Ok(None);
                };
                // The blobs the checkpoint's channel versions name, as PostgresSaver's own
                // SELECT joins them.
                let blobs = sqlx::query_as(
                    "SELECT bl.channel, bl.version, bl.type, bl.blob \
                     FROM checkpoints c \
                     CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v \
                     JOIN checkpoint_blobs bl ON bl.thread_id = c.thread_id \
                       AND bl.checkpoint_ns = c.checkpoint_ns \
                       AND bl.channel = v.key AND bl.version = v.value \
                     WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3 \
                     ORDER BY bl.channel",
                )
                .bind(thread_id)
                .bind(checkpoint_ns)
                .bind(checkpoint_id)
                .fetch_all(pool)
                .await?;
                let writes = sqlx::query_as(
                    "SELECT task_id, task_path, idx::int8 AS idx, channel, type, blob AS value \
                     FROM checkpoint_writes \
                     WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 \
                     ORDER BY task_path, task_id, idx",
                )
                .bind(thread_id)
                .bind(checkpoint_ns)
                .bind(checkpoint_id)
                .fetch_all(pool)
                .await?;
                Ok(Some(StoredCheckpoint {
                    checkpoint_id: checkpoint_id.to_owned(),
                    parent_checkpoint_id,
                    body: StoredBody::Json { body, blobs },
                    writes,
                }))
            }
        }
    }
}
