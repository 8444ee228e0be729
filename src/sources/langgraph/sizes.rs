//! A thread's rows measured without reading a value: each checkpoint's links, stored type and
//! size, its writes counted per (checkpoint, type), and on PostgreSQL its blobs and the channel
//! versions that name them. `doctor` reads these one thread at a time.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::read::LangGraphPool;
use crate::sources::langgraph::decode::footprint::{BlobSize, SizedCheckpoint, WriteGroup};
use crate::sources::langgraph::decode::tree::CheckpointRow;

/// A thread's rows as [`ThreadFootprint::measure`] takes them.
///
/// [`ThreadFootprint::measure`]: crate::sources::langgraph::decode::footprint::ThreadFootprint::measure
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadSizes {
    pub checkpoints: Vec<SizedCheckpoint>,
    pub writes: Vec<WriteGroup>,
    pub blobs: Vec<BlobSize>,
}

/// `(ns, id, parent, type, metadata, bytes)`; SQLite's metadata is a BLOB of JSON text.
type SqliteSized = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<Vec<u8>>,
    i64,
);
/// `(ns, id, parent, metadata, bytes, channel_versions)`.
type PostgresSized = (String, String, Option<String>, Json, i64, Option<Json>);
/// `(ns, id, type, writes, bytes)`.
type WriteRow = (String, String, Option<String>, i64, i64);

impl LangGraphPool {
    pub async fn thread_sizes(&self, thread_id: &str) -> sqlx::Result<ThreadSizes> {
        match self {
            LangGraphPool::Sqlite(pool) => {
                // `length()` of a BLOB reads its size, not its pages.
                let rows: Vec<SqliteSized> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, metadata, \
                     COALESCE(LENGTH(checkpoint), 0) + COALESCE(LENGTH(metadata), 0) \
                     FROM checkpoints WHERE thread_id = ?1",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let writes: Vec<WriteRow> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, type, COUNT(*), \
                     COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?1 \
                     GROUP BY checkpoint_ns, checkpoint_id, type",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let checkpoints = rows
                    .into_iter()
                    .map(|(ns, id, parent, type_name, metadata, bytes)| {
                        let metadata = metadata
                            .and_then(|m| serde_json::from_slice(&m).ok())
                            .unwrap_or(Json::Null);
                        sized(ns, id, parent, metadata, type_name, bytes, None)
                    })
                    .collect();
                Ok(ThreadSizes {
                    checkpoints,
                    writes: writes.into_iter().map(write_group).collect(),
                    blobs: Vec::new(),
                })
            }
            LangGraphPool::Postgres(pool) => {
                let rows: Vec<PostgresSized> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata, \
                     (pg_column_size(checkpoint) + COALESCE(pg_column_size(metadata), 0))::int8, \
                     checkpoint -> 'channel_versions' \
                     FROM checkpoints WHERE thread_id = $1",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let writes: Vec<WriteRow> = sqlx::query_as(
                    "SELECT checkpoint_ns, checkpoint_id, type, COUNT(*)::int8, \
                     COALESCE(SUM(octet_length(blob)), 0)::int8 FROM checkpoint_writes \
                     WHERE thread_id = $1 GROUP BY checkpoint_ns, checkpoint_id, type",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let blobs: Vec<(String, String, String, String, i64)> = sqlx::query_as(
                    "SELECT checkpoint_ns, channel, version, type, \
                     COALESCE(octet_length(blob), 0)::int8 FROM checkpoint_blobs \
                     WHERE thread_id = $1",
                )
                .bind(thread_id)
                .fetch_all(pool)
                .await?;
                let checkpoints = rows
                    .into_iter()
                    .map(|(ns, id, parent, metadata, bytes, versions)| {
                        sized(ns, id, parent, metadata, None, bytes, versions)
                    })
                    .collect();
                Ok(ThreadSizes {
                    checkpoints,
                    writes: writes.into_iter().map(write_group).collect(),
                    blobs: blobs
                        .into_iter()
                        .map(
                            |(checkpoint_ns, channel, version, type_name, bytes)| BlobSize {
                                checkpoint_ns,
                                channel,
                                version,
                                type_name,
                                bytes,
                            },
                        )
                        .collect(),
                })
            }
        }
    }

    /// Checkpoints of every thread: what a scan of them all reads.
    pub async fn checkpoint_count(&self) -> sqlx::Result<i64> {
        let sql = "SELECT COUNT(*) FROM checkpoints";
        match self {
            LangGraphPool::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
            LangGraphPool::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        }
    }
}

fn sized(
    checkpoint_ns: String,
    checkpoint_id: String,
    parent_checkpoint_id: Option<String>,
    metadata: Json,
    type_name: Option<String>,
    bytes: i64,
    channel_versions: Option<Json>,
) -> SizedCheckpoint {
    // Versions as LangGraph prints them, as the blobs' `version` column holds them.
    let channel_versions: BTreeMap<String, String> = match channel_versions {
        Some(Json::Object(map)) => map
            .into_iter()
            .map(|(channel, version)| {
                let version = match version {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                (channel, version)
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    SizedCheckpoint {
        row: CheckpointRow {
            checkpoint_ns,
            checkpoint_id,
            parent_checkpoint_id,
            metadata,
        },
        type_name,
        bytes,
        channel_versions,
    }
}

fn write_group((checkpoint_ns, checkpoint_id, type_name, writes, bytes): WriteRow) -> WriteGroup {
    WriteGroup {
        checkpoint_ns,
        checkpoint_id,
        type_name,
        writes,
        bytes,
    }
}
