//! A knowledge base's vector store, behind one interface with two homes: embedded (a SQLite file
//! with sqlite-vec in the KB directory, [`super::sqlite_vec`]) when the memory database is
//! SQLite, and a pgvector table in the memory database itself ([`super::pgvector`]) when it is
//! PostgreSQL. Chunk ids are deterministic, so writing a chunk twice replaces it.

use std::path::{Path, PathBuf};

use super::pgvector::PgVectors;
use super::sqlite_vec::SqliteVectors;

use super::rows::Column;
pub use super::rows::{ChunkRecord, SearchHit, StoreStats, VectorStoreError};

pub use super::sqlite_vec::{STORE_FILE, register_sqlite_vec};

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

fn create_dir(dir: &Path) -> Result<(), VectorStoreError> {
    std::fs::create_dir_all(dir).map_err(|source| VectorStoreError::Io {
        path: dir.to_path_buf(),
        source,
    })
}
