//! A knowledge base's embedded vector store: one SQLite file per KB with a sqlite-vec `vec0`
//! table (cosine distance) beside a plain table of chunk texts and metadata. Chunk ids are
//! deterministic, so writing a chunk twice replaces it.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Once;
use std::time::Duration;

use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{AssertSqlSafe, Row};

/// The vector store's file inside the KB directory.
pub const STORE_FILE: &str = "vectors.sqlite3";

#[derive(Debug, thiserror::Error)]
pub enum VectorStoreError {
    #[error("vector store {path}: {source}")]
    Sqlite { path: PathBuf, source: sqlx::Error },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("vector store {path} holds {found}-dimensional vectors, not {expected}")]
    Dimension {
        path: PathBuf,
        found: usize,
        expected: usize,
    },
}

/// Makes sqlite-vec part of every SQLite connection this process opens (sqlx's included).
pub fn register_sqlite_vec() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `sqlite3_vec_init` has the signature SQLite expects of an extension entry
        // point; the transmute only erases it to the `xEntryPoint` type sqlite3_auto_extension
        // takes, which SQLite calls with the right arguments.
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut libsqlite3_sys::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const libsqlite3_sys::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let entry: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            libsqlite3_sys::sqlite3_auto_extension(Some(entry));
        }
    });
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

/// What the store holds, for `embedding_metadata.json` and mismatch checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub chunks: i64,
    pub messages: i64,
    pub words: i64,
    pub characters: i64,
}

pub struct VectorStore {
    pool: SqlitePool,
    path: PathBuf,
    dimension: usize,
}

fn as_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl VectorStore {
    pub fn path_in(kb_dir: &Path) -> PathBuf {
        kb_dir.join(STORE_FILE)
    }

    /// Opens the store in `kb_dir`, creating the directory and tables for `dimension` if needed.
    pub async fn open_or_create(
        kb_dir: &Path,
        dimension: usize,
    ) -> Result<VectorStore, VectorStoreError> {
        std::fs::create_dir_all(kb_dir).map_err(|source| VectorStoreError::Io {
            path: kb_dir.to_path_buf(),
            source,
        })?;
        let store = Self::connect(kb_dir, true, dimension).await?;
        store.create_tables().await?;
        Ok(store)
    }

    /// Opens an existing store; `None` when the file is missing.
    pub async fn open_existing(kb_dir: &Path) -> Result<Option<VectorStore>, VectorStoreError> {
        if !Self::path_in(kb_dir).exists() {
            return Ok(None);
        }
        let mut store = Self::connect(kb_dir, false, 0).await?;
        let dimension: Option<String> =
            sqlx::query_scalar("SELECT value FROM kb_info WHERE key = 'dimension'")
                .fetch_optional(&store.pool)
                .await
                .map_err(|e| store.failed(e))?;
        store.dimension = dimension.and_then(|d| d.parse().ok()).unwrap_or(0);
        Ok(Some(store))
    }

    async fn connect(
        kb_dir: &Path,
        create: bool,
        dimension: usize,
    ) -> Result<VectorStore, VectorStoreError> {
        register_sqlite_vec();
        let path = Self::path_in(kb_dir);
        let failed = |source| VectorStoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(failed)?
            .create_if_missing(create)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(options)
            .await
            .map_err(failed)?;
        Ok(VectorStore {
            pool,
            path,
            dimension,
        })
    }

    fn failed(&self, source: sqlx::Error) -> VectorStoreError {
        VectorStoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    async fn create_tables(&self) -> Result<(), VectorStoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS kb_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS chunk (
                 rowid INTEGER PRIMARY KEY,
                 chunk_id TEXT NOT NULL UNIQUE,
                 message_id TEXT NOT NULL,
                 session_id TEXT NOT NULL,
                 job_id TEXT NOT NULL,
                 content TEXT NOT NULL,
                 metadata TEXT NOT NULL,
                 words INTEGER NOT NULL,
                 characters INTEGER NOT NULL
             );
             CREATE INDEX IF NOT EXISTS chunk_job_id ON chunk (job_id);
             CREATE INDEX IF NOT EXISTS chunk_message_id ON chunk (message_id);",
        )
        .execute(&mut *tx)
        .await
        .map_err(|e| self.failed(e))?;
        let found: Option<String> =
            sqlx::query_scalar("SELECT value FROM kb_info WHERE key = 'dimension'")
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
        match found.and_then(|d| d.parse::<usize>().ok()) {
            Some(found) if found != self.dimension => {
                return Err(VectorStoreError::Dimension {
                    path: self.path.clone(),
                    found,
                    expected: self.dimension,
                });
            }
            Some(_) => {}
            None => {
                let ddl = format!(
                    "CREATE VIRTUAL TABLE chunk_vec USING vec0(\
                     embedding float[{}] distance_metric=cosine, session_id text)",
                    self.dimension
                );
                sqlx::query(AssertSqlSafe(ddl))
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.failed(e))?;
                sqlx::query("INSERT INTO kb_info (key, value) VALUES ('dimension', ?)")
                    .bind(self.dimension.to_string())
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.failed(e))?;
            }
        }
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// Writes the chunks in one transaction: all or none. A chunk id already present is replaced.
    pub async fn upsert(&self, chunks: &[ChunkRecord]) -> Result<(), VectorStoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        for chunk in chunks {
            let rowid: i64 = sqlx::query_scalar(
                "INSERT INTO chunk (chunk_id, message_id, session_id, job_id, content, metadata, \
                 words, characters) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (chunk_id) DO UPDATE SET job_id = excluded.job_id, \
                 content = excluded.content, metadata = excluded.metadata, \
                 words = excluded.words, characters = excluded.characters \
                 RETURNING rowid",
            )
            .bind(&chunk.chunk_id)
            .bind(&chunk.message_id)
            .bind(&chunk.session_id)
            .bind(&chunk.job_id)
            .bind(&chunk.content)
            .bind(chunk.metadata.to_string())
            .bind(chunk.content.split_whitespace().count() as i64)
            .bind(chunk.content.chars().count() as i64)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
            // vec0 has no upsert.
            sqlx::query("DELETE FROM chunk_vec WHERE rowid = ?")
                .bind(rowid)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
            sqlx::query("INSERT INTO chunk_vec (rowid, embedding, session_id) VALUES (?, ?, ?)")
                .bind(rowid)
                .bind(as_blob(&chunk.embedding))
                .bind(&chunk.session_id)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
        }
        tx.commit().await.map_err(|e| self.failed(e))
    }

    /// Removes every chunk a job wrote (its rollback); returns how many.
    pub async fn delete_job(&self, job_id: &str) -> Result<u64, VectorStoreError> {
        self.delete_where("job_id", job_id).await
    }

    /// Removes a session's chunks (when the session is purged).
    pub async fn delete_session(&self, session_id: &str) -> Result<u64, VectorStoreError> {
        self.delete_where("session_id", session_id).await
    }

    async fn delete_where(&self, column: &str, value: &str) -> Result<u64, VectorStoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        let rowids: Vec<i64> = sqlx::query_scalar(AssertSqlSafe(format!(
            "SELECT rowid FROM chunk WHERE {column} = ?"
        )))
        .bind(value)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| self.failed(e))?;
        for rowid in &rowids {
            for table in ["chunk_vec", "chunk"] {
                sqlx::query(AssertSqlSafe(format!(
                    "DELETE FROM {table} WHERE rowid = ?"
                )))
                .bind(rowid)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
            }
        }
        tx.commit().await.map_err(|e| self.failed(e))?;
        Ok(rowids.len() as u64)
    }

    pub async fn stats(&self) -> Result<StoreStats, VectorStoreError> {
        let row = sqlx::query(
            "SELECT count(*), count(DISTINCT message_id), coalesce(sum(words), 0), \
             coalesce(sum(characters), 0) FROM chunk",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.failed(e))?;
        Ok(StoreStats {
            chunks: row.get(0),
            messages: row.get(1),
            words: row.get(2),
            characters: row.get(3),
        })
    }

    /// How many chunks each message has, for tests and audits.
    pub async fn chunks_per_message(&self) -> Result<Vec<(String, i64)>, VectorStoreError> {
        sqlx::query_as(
            "SELECT message_id, count(*) FROM chunk GROUP BY message_id ORDER BY message_id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.failed(e))
    }

    /// The `top_k` nearest chunks, optionally within one session.
    pub async fn search(
        &self,
        query: &[f32],
        top_k: usize,
        session_id: Option<&str>,
    ) -> Result<Vec<SearchHit>, VectorStoreError> {
        let session_filter = if session_id.is_some() {
            " AND session_id = ?"
        } else {
            ""
        };
        let sql = format!(
            "WITH knn AS (SELECT rowid, distance FROM chunk_vec \
             WHERE embedding MATCH ? AND k = ?{session_filter}) \
             SELECT c.chunk_id, c.message_id, c.session_id, c.content, c.metadata, knn.distance \
             FROM knn JOIN chunk c ON c.rowid = knn.rowid ORDER BY knn.distance, c.chunk_id"
        );
        let mut q = sqlx::query(AssertSqlSafe(sql))
            .bind(as_blob(query))
            .bind(top_k as i64);
        if let Some(session) = session_id {
            q = q.bind(session);
        }
        let rows = q.fetch_all(&self.pool).await.map_err(|e| self.failed(e))?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let metadata: String = row.get(4);
                SearchHit {
                    chunk_id: row.get(0),
                    message_id: row.get(1),
                    session_id: row.get(2),
                    content: row.get(3),
                    metadata: serde_json::from_str(&metadata).unwrap_or(serde_json::Value::Null),
                    distance: row.get(5),
                }
            })
            .collect())
    }

    pub async fn close(self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(
        id: &str,
        message: &str,
        session: &str,
        job: &str,
        embedding: Vec<f32>,
    ) -> ChunkRecord {
        ChunkRecord {
            chunk_id: id.into(),
            message_id: message.into(),
            session_id: session.into(),
            job_id: job.into(),
            content: format!("content of {id}"),
            metadata: serde_json::json!({ "message_id": message }),
            embedding,
        }
    }

    #[tokio::test]
    async fn upsert_search_and_rollback() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open_or_create(dir.path(), 3).await.unwrap();
        store
            .upsert(&[
                chunk("a", "m1", "s1", "j1", vec![1.0, 0.0, 0.0]),
                chunk("b", "m2", "s2", "j1", vec![0.0, 1.0, 0.0]),
                chunk("c", "m3", "s1", "j2", vec![0.7, 0.7, 0.0]),
            ])
            .await
            .unwrap();
        // The same id again replaces, it does not duplicate.
        store
            .upsert(&[chunk("a", "m1", "s1", "j2", vec![1.0, 0.0, 0.0])])
            .await
            .unwrap();
        let stats = store.stats().await.unwrap();
        assert_eq!((stats.chunks, stats.messages), (3, 3));

        let hits = store.search(&[1.0, 0.0, 0.0], 2, None).await.unwrap();
        assert_eq!(hits[0].chunk_id, "a");
        assert!(hits[0].distance < 1e-6);
        assert_eq!(hits[1].chunk_id, "c");
        let hits = store.search(&[0.0, 1.0, 0.0], 5, Some("s1")).await.unwrap();
        assert!(hits.iter().all(|h| h.session_id == "s1"));
        assert_eq!(hits.len(), 2);

        assert_eq!(store.delete_job("j2").await.unwrap(), 2);
        assert_eq!(store.stats().await.unwrap().chunks, 1);
        assert_eq!(
            store.search(&[1.0, 0.0, 0.0], 5, None).await.unwrap().len(),
            1
        );
        store.close().await;

        let reopened = VectorStore::open_existing(dir.path())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(reopened.dimension(), 3);
        assert!(VectorStore::open_or_create(dir.path(), 4).await.is_err());
    }

    #[tokio::test]
    async fn a_missing_store_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            VectorStore::open_existing(dir.path())
                .await
                .unwrap()
                .is_none()
        );
    }
}
