//! What the vector stores read and write, shared by the store interface ([`super::store`]) and
//! both homes ([`super::sqlite_vec`], [`super::pgvector`]): chunks, hits, statistics, errors.

use std::path::PathBuf;

use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum VectorStoreError {
    #[error("vector store {path}: {}", crate::store::error_text(source))]
    Sqlite { path: PathBuf, source: sqlx::Error },
    #[error("pgvector store of KB {kb}: {}", crate::store::error_text(source))]
    Postgres { kb: String, source: sqlx::Error },
    #[error(
        "the PostgreSQL server has no pgvector extension (`vector`), which memory-base knowledge \
         bases need on PostgreSQL ({}). Install pgvector on the server (Debian bookworm: \
         build Debian trixie's pgvector source package against postgresql-server-dev-15 as \
         memscope's .ci/pgvector does; elsewhere the postgresql-NN-pgvector package), then run \
         `CREATE EXTENSION vector;` in this database as a superuser",
        crate::store::error_text(source)
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
    #[error("Langflow's {backend} knowledge-base backend: {reason}")]
    LangflowBackend { backend: String, reason: String },
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
    pub(crate) fn words(&self) -> i64 {
        self.content.split_whitespace().count() as i64
    }

    pub(crate) fn characters(&self) -> i64 {
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
pub(crate) struct HitRow {
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

impl From<(i64, i64, i64, i64)> for StoreStats {
    /// A stats query's row: chunks, distinct messages, words and characters, in that order.
    fn from((chunks, messages, words, characters): (i64, i64, i64, i64)) -> StoreStats {
        StoreStats {
            chunks,
            messages,
            words,
            characters,
        }
    }
}

/// The chunk columns a delete can select by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    JobId,
    SessionId,
}

impl Column {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Column::JobId => "job_id",
            Column::SessionId => "session_id",
        }
    }
}
