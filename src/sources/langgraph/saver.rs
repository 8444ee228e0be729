//! Opening a LangGraph database: which saver wrote it, the layouts memscope refuses, the key for
//! encrypted values, and the figures `info` shows.

use serde::Serialize;

use super::read::LangGraphPool;
use super::read::{StoredCheckpoint, StoredWrite};
use super::stored::CheckpointError;
use crate::sources::langgraph::decode::checkpoint::Checkpoint;
use crate::sources::langgraph::decode::glance::Glance;
use crate::sources::langgraph::decode::{AesKey, DecodeError, Decoded, KEY_VARIABLE, Warning};
use crate::store::handle::Store;

/// The saver whose tables these are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Saver {
    SqliteSaver,
    PostgresSaver,
}

impl Saver {
    /// The saver's class name, as a plan and a restore name it: "SqliteSaver".
    pub fn name(self) -> &'static str {
        match self {
            Saver::SqliteSaver => "SqliteSaver",
            Saver::PostgresSaver => "PostgresSaver",
        }
    }
}

/// Why a LangGraph database cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LangGraphError {
    /// The key in `LANGGRAPH_AES_KEY` is unusable; the text names the variable.
    #[error("{0}")]
    BadKey(String),
    #[error("no thread {0} in this database")]
    UnknownThread(String),
    #[error("thread {thread}: {error}")]
    UnknownCheckpoint {
        thread: String,
        error: crate::sources::langgraph::decode::tree::UnknownCheckpoint,
    },
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("{url}: {}", crate::store::error_text(source))]
    Query { url: String, source: sqlx::Error },
}

/// A LangGraph database opened for reading.
#[derive(Debug, Clone)]
pub struct LangGraphDb {
    pub pool: LangGraphPool,
    key: Option<AesKey>,
    url: String,
}

/// What `info` says of a LangGraph database (`figures.rs` words it).
#[derive(Debug, Clone)]
pub struct CheckpointStats {
    pub saver: Saver,
    pub migration: Option<i64>,
    pub threads: i64,
    pub checkpoints: i64,
    pub writes: i64,
    /// Bytes of the stored values: checkpoints with their metadata, blobs and writes.
    pub bytes: i64,
}

impl LangGraphDb {
    /// The saver's tables in an opened store, with the key from `LANGGRAPH_AES_KEY` when it is
    /// set.
    pub fn open(store: &Store) -> Result<LangGraphDb, LangGraphError> {
        let url = store.url().to_owned();
        let key = match std::env::var_os(KEY_VARIABLE) {
            Some(text) => {
                Some(AesKey::new(text.as_encoded_bytes()).map_err(LangGraphError::BadKey)?)
            }
            None => None,
        };
        Ok(LangGraphDb {
            pool: LangGraphPool::of(store),
            key,
            url,
        })
    }

    /// The database's URL, password redacted.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A failed query, naming the database.
    pub fn failed(&self, source: sqlx::Error) -> LangGraphError {
        LangGraphError::Query {
            url: self.url.clone(),
            source,
        }
    }

    /// Whether `LANGGRAPH_AES_KEY` gave a key.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// A stored checkpoint decoded with the key, if any.
    pub fn decode(
        &self,
        stored: &StoredCheckpoint,
    ) -> Result<(Checkpoint, Vec<Warning>), LangGraphError> {
        Ok(stored.decode(self.key.as_ref())?)
    }

    /// A stored checkpoint's `ts` and message count, as a list shows them, worked out on a
    /// blocking thread: a long thread's checkpoint is megabytes of msgpack, and a list reads
    /// several at once.
    pub async fn glance(&self, stored: StoredCheckpoint) -> Result<Glance, LangGraphError> {
        let key = self.key.clone();
        match tokio::task::spawn_blocking(move || stored.glance(key.as_ref())).await {
            Ok(glance) => Ok(glance?),
            Err(failed) => std::panic::resume_unwind(failed.into_panic()),
        }
    }

    /// A task's stored write decoded with the key, if any.
    pub fn decode_write(&self, write: &StoredWrite) -> Result<Decoded, DecodeError> {
        write.decode(self.key.as_ref())
    }
}

impl LangGraphPool {
    /// The saver's tables in a store LangGraph's source recognised (on SQLite or PostgreSQL).
    pub fn of(store: &Store) -> LangGraphPool {
        match store.sqlite_pool() {
            Some(pool) => LangGraphPool::Sqlite(pool.clone()),
            None => LangGraphPool::Postgres(
                store
                    .postgres_pool()
                    .expect("LangGraph's savers are recognised on SQLite and PostgreSQL only")
                    .clone(),
            ),
        }
    }

    pub fn saver(&self) -> Saver {
        match self {
            LangGraphPool::Sqlite(_) => Saver::SqliteSaver,
            LangGraphPool::Postgres(_) => Saver::PostgresSaver,
        }
    }

    /// Threads, checkpoints, writes and bytes: a scan of every table.
    pub async fn stats(&self, migration: Option<i64>) -> sqlx::Result<CheckpointStats> {
        let (threads, checkpoints, writes, bytes): (i64, i64, i64, i64) = match self {
            LangGraphPool::Sqlite(pool) => {
                sqlx::query_as(
                    "SELECT (SELECT COUNT(DISTINCT thread_id) FROM checkpoints), \
                 (SELECT COUNT(*) FROM checkpoints), (SELECT COUNT(*) FROM writes), \
                 (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints) \
                 + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)",
                )
                .fetch_one(pool)
                .await
            }
            LangGraphPool::Postgres(pool) => {
                sqlx::query_as(
                    "SELECT (SELECT COUNT(DISTINCT thread_id) FROM checkpoints), \
                 (SELECT COUNT(*) FROM checkpoints), (SELECT COUNT(*) FROM checkpoint_writes), \
                 ((SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) \
                   FROM checkpoints) \
                 + (SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_blobs) \
                 + (SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_writes))::int8",
                )
                .fetch_one(pool)
                .await
            }
        }?;
        Ok(CheckpointStats {
            saver: self.saver(),
            migration,
            threads,
            checkpoints,
            writes,
            bytes,
        })
    }
}
