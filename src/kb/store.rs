//! A knowledge base's vector store, behind one interface with two homes: embedded (a SQLite file
//! with sqlite-vec in the KB directory, [`super::sqlite_vec`]) when the memory database is
//! SQLite, and a pgvector table in the memory database itself ([`super::pgvector`]) when it is
//! PostgreSQL. Chunk ids are deterministic, so writing a chunk twice replaces it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::pgvector::PgVectors;
use super::sqlite_vec::SqliteVectors;

pub use super::sqlite_vec::{STORE_FILE, register_sqlite_vec};

#[derive(Debug, thiserror::Error)]
pub enum VectorStoreError {
    #[error("vector store {path}: {source}")]
    Sqlite { path: PathBuf, source: sqlx::Error },
    #[error("pgvector store of KB {kb}: {source}")]
    Postgres { kb: String, source: sqlx::Error },
    #[error(
        "the PostgreSQL server has no pgvector extension (`vector`), which memory-base knowledge \
         bases need on PostgreSQL ({source}). Install pgvector on the server (Debian bookworm: \
         build Debian trixie's pgvector source package against postgresql-server-dev-15 as \
         memscope's .ci/pgvector does; elsewhere the postgresql-NN-pgvector package), then run \
         `CREATE EXTENSION vector;` in this database as a superuser"
    )]
    MissingPgvector { source: sqlx::Error },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("vector store {store} holds {found}-dimensional vectors, not {expected}")]
    Dimension {
        store: String,
        found: usize,
        expected: usize,
    },
    #[error(
        "vector store {path} was written by an older memscope; rebuild it with \
         `memscope mb regenerate`"
    )]
    OldFormat { path: PathBuf },
}

/// Where the vectors of a memory database's knowledge bases live.
#[derive(Debug, Clone)]
pub enum VectorHome {
    /// A sqlite-vec file in each KB directory.
    Embedded,
    /// One pgvector table in the memory database, keyed by KB.
    Postgres(sqlx::PgPool),
}

/// One knowledge base: its directory (which always holds `embedding_metadata.json`), its key in
/// a shared vector table (`{username}/{kb_name}`) and where its vectors live.
#[derive(Debug, Clone)]
pub struct KbLocation {
    pub dir: PathBuf,
    pub key: String,
    pub home: VectorHome,
}

impl KbLocation {
    /// A KB whose vectors live in its own directory (the SQLite home).
    pub fn embedded(dir: impl Into<PathBuf>) -> KbLocation {
        let dir = dir.into();
        KbLocation {
            key: dir.display().to_string(),
            dir,
            home: VectorHome::Embedded,
        }
    }
}

/// One chunk to write.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRecord {
    pub chunk_id: String,
    pub message_id: String,
    pub session_id: String,
    pub job_id: String,
    pub content: String,
    /// The chunk's metadata as JSON (`message_id`, `session_id`, `flow_id`, …).
    pub metadata: serde_json::Value,
    pub embedding: Vec<f32>,
}

impl ChunkRecord {
    pub(super) fn words(&self) -> i64 {
        self.content.split_whitespace().count() as i64
    }

    pub(super) fn characters(&self) -> i64 {
        self.content.chars().count() as i64
    }
}

/// One search result; `distance` is the cosine distance (0 = same direction).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub chunk_id: String,
    pub message_id: String,
    pub session_id: String,
    pub content: String,
    pub metadata: serde_json::Value,
    pub distance: f64,
}

/// A search result row as both stores select it (`metadata` as JSON text).
#[derive(sqlx::FromRow)]
pub(super) struct HitRow {
    chunk_id: String,
    message_id: String,
    session_id: String,
    content: String,
    metadata: String,
    distance: f64,
}

impl From<HitRow> for SearchHit {
    fn from(row: HitRow) -> SearchHit {
        SearchHit {
            metadata: serde_json::from_str(&row.metadata).unwrap_or(serde_json::Value::Null),
            chunk_id: row.chunk_id,
            message_id: row.message_id,
            session_id: row.session_id,
            content: row.content,
            distance: row.distance,
        }
    }
}

/// What the store holds, for `embedding_metadata.json` and mismatch checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub chunks: i64,
    pub messages: i64,
    pub words: i64,
    pub characters: i64,
}

/// An open vector store of one knowledge base.
pub enum VectorStore {
    Sqlite(SqliteVectors),
    Postgres(PgVectors),
}

/// Calls the same method on whichever store this is.
macro_rules! dispatch {
    ($self:expr, $store:ident => $body:expr) => {
        match $self {
            VectorStore::Sqlite($store) => $body,
            VectorStore::Postgres($store) => $body,
        }
    };
}

impl VectorStore {
    /// Opens a KB's store, creating its directory and tables for `dimension` if needed. Fails
    /// when the store holds vectors of another dimension.
    pub async fn open_or_create(
        kb: &KbLocation,
        dimension: usize,
    ) -> Result<VectorStore, VectorStoreError> {
        create_dir(&kb.dir)?;
        Ok(match &kb.home {
            VectorHome::Embedded => {
                VectorStore::Sqlite(SqliteVectors::open_or_create(&kb.dir, dimension).await?)
            }
            VectorHome::Postgres(pool) => {
                VectorStore::Postgres(PgVectors::open_or_create(pool, &kb.key, dimension).await?)
            }
        })
    }

    /// Opens a KB's existing store; `None` when it has none.
    pub async fn open_existing(kb: &KbLocation) -> Result<Option<VectorStore>, VectorStoreError> {
        Ok(match &kb.home {
            VectorHome::Embedded => SqliteVectors::open_existing(&kb.dir)
                .await?
                .map(VectorStore::Sqlite),
            VectorHome::Postgres(pool) => PgVectors::open_existing(pool, &kb.key)
                .await?
                .map(VectorStore::Postgres),
        })
    }

    /// Deletes a KB's vectors wherever they live (the directory is the caller's).
    pub async fn drop_kb(kb: &KbLocation) -> Result<(), VectorStoreError> {
        match &kb.home {
            // The vectors are a file in the directory the caller removes.
            VectorHome::Embedded => Ok(()),
            VectorHome::Postgres(pool) => PgVectors::drop_kb(pool, &kb.key).await,
        }
    }

    pub fn dimension(&self) -> usize {
        dispatch!(self, store => store.dimension())
    }

    /// Writes the chunks in one transaction: all or none. A chunk id already present is replaced.
    pub async fn upsert(&self, chunks: &[ChunkRecord]) -> Result<(), VectorStoreError> {
        dispatch!(self, store => store.upsert(chunks).await)
    }

    /// Removes every chunk a job wrote (its rollback); returns how many.
    pub async fn delete_job(&self, job_id: &str) -> Result<u64, VectorStoreError> {
        dispatch!(self, store => store.delete_where(Column::JobId, job_id).await)
    }

    /// Removes a session's chunks (when the session is purged).
    pub async fn delete_session(&self, session_id: &str) -> Result<u64, VectorStoreError> {
        dispatch!(self, store => store.delete_where(Column::SessionId, session_id).await)
    }

    pub async fn stats(&self) -> Result<StoreStats, VectorStoreError> {
        dispatch!(self, store => store.stats().await)
    }

    /// How many chunks each message has, for tests and audits.
    pub async fn chunks_per_message(&self) -> Result<Vec<(String, i64)>, VectorStoreError> {
        dispatch!(self, store => store.chunks_per_message().await)
    }

    /// The `top_k` nearest chunks by cosine distance, optionally within one session.
    pub async fn search(
        &self,
        query: &[f32],
        top_k: usize,
        session_id: Option<&str>,
    ) -> Result<Vec<SearchHit>, VectorStoreError> {
        dispatch!(self, store => store.search(query, top_k, session_id).await)
    }

    pub async fn close(self) {
        dispatch!(self, store => store.close().await)
    }
}

/// The chunk columns a delete can select by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Column {
    JobId,
    SessionId,
}

impl Column {
    pub(super) fn name(self) -> &'static str {
        match self {
            Column::JobId => "job_id",
            Column::SessionId => "session_id",
        }
    }
}

fn create_dir(dir: &Path) -> Result<(), VectorStoreError> {
    std::fs::create_dir_all(dir).map_err(|source| VectorStoreError::Io {
        path: dir.to_path_buf(),
        source,
    })
}
