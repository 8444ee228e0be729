//! The vector store of a Langflow knowledge base, whichever of the backends memscope writes
//! holds it: `sqlite` (the current generation's `vectors.sqlite3`) or `postgres` (its pgvector
//! table). The sync drives one [`LangflowVectors`] and one [`LangflowKbLock`] and never asks
//! which backend is behind them.
//!
//! The lock is Langflow's exclusive storage lease on the knowledge base
//! (`knowledge_base_storage/runtime.py`, `operation`): for the local `sqlite` backend the file
//! lock `{kb root}/.locks/{kb id}.lock`; for a remote backend, on a PostgreSQL Langflow
//! database the transaction-level advisory lock keyed by the first 8 bytes of SHA-256 of the
//! KB's UUID, and on a SQLite Langflow database the file lock
//! `{database directory}/.kb-storage-locks/{kb id}.lock`.

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::postgres::PgConnection;
use sqlx::{ConnectOptions, Connection};

use super::layout::{POSTGRES_BACKEND, SQLITE_BACKEND};
use super::pgvector::LangflowPgStore;
use super::store::{KbFileLock, LangflowChunk, LangflowStore, StoreFigures, lock_in, lock_kb};
use crate::kb::rows::VectorStoreError;
use crate::store::Store;
use crate::store::memory_bases::LangflowKbRow;

/// Whether memscope writes knowledge bases of this backend.
pub fn writable(backend: &str) -> bool {
    backend == SQLITE_BACKEND || backend == POSTGRES_BACKEND
}

/// Langflow's exclusive storage lease on one knowledge base, held until dropped.
pub enum LangflowKbLock {
    File(KbFileLock),
    /// A connection of its own with an open transaction holding `pg_try_advisory_xact_lock`;
    /// dropping the connection ends the transaction, and the lock with it.
    Advisory(PgConnection),
}

/// Langflow's advisory-lock key of a knowledge base:
/// `int.from_bytes(sha256(kb_id.bytes).digest()[:8], "big", signed=True)`.
fn advisory_key(kb_id: &uuid::Uuid) -> i64 {
    let digest = Sha256::digest(kb_id.as_bytes());
    i64::from_be_bytes(digest[..8].try_into().expect("SHA-256 has 32 bytes"))
}

fn kb_uuid(row: &LangflowKbRow) -> Result<uuid::Uuid, VectorStoreError> {
    uuid::Uuid::parse_str(&row.id).map_err(|_| VectorStoreError::LangflowBackend {
        backend: row.backend_type.clone(),
        reason: format!("the knowledge base id {} is not a UUID", row.id),
    })
}

/// Takes Langflow's exclusive lease on the base's knowledge base, waiting up to `wait`; `None`
/// when Langflow (or another memscope) holds it then. Refuses a knowledge base whose storage
/// Langflow is migrating or deleting, as Langflow's own operations do.
pub async fn lock(
    kb_root: &Path,
    store: &Store,
    row: &LangflowKbRow,
    wait: Duration,
) -> Result<Option<LangflowKbLock>, VectorStoreError> {
    if row.storage_state != "ready" {
        return Err(VectorStoreError::LangflowBackend {
            backend: row.backend_type.clone(),
            reason: format!(
                "its storage is {}, not ready; Langflow refuses to write it too",
                row.storage_state
            ),
        });
    }
    let id = kb_uuid(row)?.hyphenated().to_string();
    if row.backend_type == SQLITE_BACKEND {
        return Ok(lock_kb(kb_root, &id, wait).await?.map(LangflowKbLock::File));
    }
    if let Some(pool) = store.postgres_pool() {
        let key = advisory_key(&kb_uuid(row)?);
        let failed = |source| VectorStoreError::Postgres {
            kb: format!("storage lock of knowledge base {id}"),
            source,
        };
        // A connection of its own, as Langflow's coordination engine: the pool may be taken
        // by the session locks of every session of the base.
        let mut connection = pool.connect_options().connect().await.map_err(failed)?;
        sqlx::query("BEGIN")
            .execute(&mut connection)
            .await
            .map_err(failed)?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
                .bind(key)
                .fetch_one(&mut connection)
                .await
                .map_err(failed)?;
            if locked {
                return Ok(Some(LangflowKbLock::Advisory(connection)));
            }
            if tokio::time::Instant::now() >= deadline {
                let _ = connection.close().await;
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let database = crate::store::sqlite_path(store.url()).ok_or_else(|| {
        VectorStoreError::LangflowBackend {
            backend: row.backend_type.clone(),
            reason: "the Langflow database has no file to keep its storage locks beside".to_owned(),
        }
    })?;
    let dir = Path::new(database)
        .parent()
        .unwrap_or(Path::new("."))
        .join(".kb-storage-locks");
    Ok(lock_in(&dir, &id, wait).await?.map(LangflowKbLock::File))
}

/// An open vector store of a Langflow knowledge base.
pub enum LangflowVectors {
    Sqlite(LangflowStore),
    Postgres(LangflowPgStore),
}

impl LangflowVectors {
    /// Opens the knowledge base's store where its backend keeps it.
    pub async fn open(kb_root: &Path, row: &LangflowKbRow) -> Result<Self, VectorStoreError> {
        match row.backend_type.as_str() {
            SQLITE_BACKEND => Ok(Self::Sqlite(LangflowStore::open(kb_root, row).await?)),
            POSTGRES_BACKEND => Ok(Self::Postgres(
                LangflowPgStore::open(&row.user_id, &row.name).await?,
            )),
            other => Err(VectorStoreError::LangflowBackend {
                backend: other.to_owned(),
                reason: "memscope cannot write it".to_owned(),
            }),
        }
    }

    pub async fn upsert(&mut self, chunks: &[LangflowChunk]) -> Result<(), VectorStoreError> {
        match self {
            Self::Sqlite(store) => store.upsert(chunks).await,
            Self::Postgres(store) => store.upsert(chunks).await,
        }
    }

    /// Deletes what one job wrote (the rollback of a failed or cancelled job).
    pub async fn delete_job(&mut self, job_id: &str) -> Result<u64, VectorStoreError> {
        match self {
            Self::Sqlite(store) => store.delete_job(job_id).await,
            Self::Postgres(store) => store.delete_job(job_id).await,
        }
    }

    /// The jobs whose chunks of a session the store holds.
    pub async fn session_jobs(
        &mut self,
        session_id: &str,
    ) -> Result<Vec<String>, VectorStoreError> {
        match self {
            Self::Sqlite(store) => store.session_jobs(session_id).await,
            Self::Postgres(store) => store.session_jobs(session_id).await,
        }
    }

    pub async fn delete_all(&mut self) -> Result<u64, VectorStoreError> {
        match self {
            Self::Sqlite(store) => store.delete_all().await,
            Self::Postgres(store) => store.delete_all().await,
        }
    }

    /// The figures Langflow caches in the knowledge-base row.
    pub async fn figures(&mut self) -> Result<StoreFigures, VectorStoreError> {
        match self {
            Self::Sqlite(store) => store.figures().await,
            Self::Postgres(store) => store.figures().await,
        }
    }

    pub async fn close(self) {
        match self {
            Self::Sqlite(store) => store.close().await,
            Self::Postgres(store) => store.close().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advisory_key_is_langflows() {
        // Python: int.from_bytes(hashlib.sha256(UUID(…).bytes).digest()[:8], "big", signed=True)
        let id = uuid::Uuid::parse_str("8b4069b2-0720-41c4-9f3e-3a7f596faea8").unwrap();
        assert_eq!(advisory_key(&id), -1_911_221_423_272_563_891);
    }

    #[test]
    fn memscope_writes_the_sqlite_and_postgres_backends_only() {
        assert!(writable("sqlite") && writable("postgres"));
        assert!(!writable("opensearch") && !writable("chroma"));
    }
}
