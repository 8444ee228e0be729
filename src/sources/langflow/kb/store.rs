//! Writing into the vector store of Langflow's `sqlite` knowledge-base backend
//! (`lfx/base/knowledge_bases/backends/sqlite.py`): the current generation's `vectors.sqlite3`,
//! its `store_header` checked as Langflow checks it (schema version 2, owner, KB id, generation,
//! metric, an active lifecycle, one dimension), chunks as float32 little-endian blobs, under the
//! knowledge base's exclusive file lock `{root}/.locks/{kb id}.lock` that Langflow's own writers
//! and its storage fence take.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};

use super::layout::vectors_path;
use crate::kb::store::VectorStoreError;
use crate::store::memory_bases::LangflowKbRow;

/// The store schema Langflow 1.13 writes.
const SCHEMA_VERSION: i64 = 2;

/// A knowledge base's exclusive file lock, held until dropped (closing the file releases it).
pub struct KbFileLock {
    _file: File,
}

/// Takes the knowledge base's exclusive lock, waiting up to `wait`; `None` when Langflow (or
/// another memscope) still holds it then.
pub async fn lock_kb(
    root: &Path,
    kb_id: &str,
    wait: Duration,
) -> Result<Option<KbFileLock>, VectorStoreError> {
    lock_in(&root.join(".locks"), kb_id, wait).await
}

/// Takes the exclusive lock `{dir}/{kb id}.lock` (the directory made private if missing),
/// waiting up to `wait`; `None` when another holder keeps it.
pub async fn lock_in(
    dir: &Path,
    kb_id: &str,
    wait: Duration,
) -> Result<Option<KbFileLock>, VectorStoreError> {
    let dir = dir.to_path_buf();
    let io = |path: &Path, source| VectorStoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| io(&dir, e))?;
    let path = dir.join(format!("{kb_id}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| io(&path, e))?;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match try_flock(&file) {
            Ok(true) => return Ok(Some(KbFileLock { _file: file })),
            Ok(false) => {}
            Err(e) => return Err(io(&path, e)),
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `flock(LOCK_EX | LOCK_NB)`, the call Langflow's `fcntl.flock` makes: `false` when another
/// open file holds the lock.
fn try_flock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor belongs to `file`, which outlives the call.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        return Ok(true);
    }
    let error = std::io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(error)
    }
}

/// One chunk as Langflow's backend stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct LangflowChunk {
    pub id: String,
    pub content: String,
    /// The metadata object, serialized in Langflow's key order.
    pub metadata: String,
    pub job_id: String,
    pub session_id: String,
    pub vector: Vec<f32>,
}

impl LangflowChunk {
    /// The dimension every one of `chunks` has, `None` when there are none; a chunk of another
    /// dimension than the first is an error naming the store (`store`).
    pub fn dimension_of(
        chunks: &[LangflowChunk],
        store: impl FnOnce() -> String,
    ) -> Result<Option<usize>, VectorStoreError> {
        let Some(first) = chunks.first() else {
            return Ok(None);
        };
        let dimension = first.vector.len();
        if let Some(odd) = chunks.iter().find(|c| c.vector.len() != dimension) {
            return Err(VectorStoreError::Dimension {
                store: store(),
                found: odd.vector.len(),
                expected: dimension,
            });
        }
        Ok(Some(dimension))
    }
}

/// What the store holds, for the knowledge-base row's cached figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreFigures {
    pub chunks: i64,
    pub words: i64,
    pub characters: i64,
    pub size_bytes: i64,
}

impl StoreFigures {
    /// The figures of chunks with these contents in a store of `size_bytes`: words split on
    /// whitespace and characters, as Langflow's stats sync counts them.
    pub fn of(contents: &[String], size_bytes: i64) -> StoreFigures {
        StoreFigures {
            chunks: contents.len() as i64,
            words: contents
                .iter()
                .map(|c| c.split_whitespace().count() as i64)
                .sum(),
            characters: contents.iter().map(|c| c.chars().count() as i64).sum(),
            size_bytes,
        }
    }
}

/// An open `vectors.sqlite3` of Langflow's sqlite backend.
pub struct LangflowStore {
    path: PathBuf,
    connection: SqliteConnection,
}

impl LangflowStore {
    /// Opens the current generation's store of a knowledge base and checks its header; a
    /// missing store is an error (Langflow creates it with the base).
    pub async fn open(root: &Path, row: &LangflowKbRow) -> Result<LangflowStore, VectorStoreError> {
        let path = vectors_path(root, row);
        if !path.is_file() {
            return Err(VectorStoreError::Io {
                path: path.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "Langflow's vector store of this knowledge base does not exist",
                ),
            });
        }
        let sqlite = |source| VectorStoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(sqlite)?
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let mut connection = options.connect().await.map_err(sqlite)?;
        let header: Option<(i64, String, String, i64, String, String)> = sqlx::query_as(
            "SELECT schema_version, owner_id, kb_id, generation, metric, lifecycle \
             FROM store_header WHERE singleton = 1",
        )
        .fetch_optional(&mut connection)
        .await
        .map_err(sqlite)?;
        let problem = match header {
            None => Some("it has no store header".to_owned()),
            Some((version, ..)) if version != SCHEMA_VERSION => Some(format!(
                "its schema version is {version}, not {SCHEMA_VERSION}"
            )),
            Some((_, owner, kb, generation, _, _))
                if owner != row.user_id || kb != row.id || generation != row.storage_generation =>
            {
                Some("its header names another knowledge base".to_owned())
            }
            Some((.., metric, _)) if metric != "l2" && metric != "cosine" && metric != "ip" => {
                Some(format!("its metric {metric} is unknown"))
            }
            Some((.., lifecycle)) if lifecycle != "active" => {
                Some("its storage generation was deleted".to_owned())
            }
            Some(_) => None,
        };
        if let Some(reason) = problem {
            let _ = connection.close().await;
            return Err(VectorStoreError::Io {
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, reason),
            });
        }
        Ok(LangflowStore { path, connection })
    }

    fn failed(&self, source: sqlx::Error) -> VectorStoreError {
        VectorStoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Writes chunks in one transaction, as Langflow's `_upsert` does: the header's dimension
    /// set by the first write and checked by every later one, a chunk with a known id replaced.
    pub async fn upsert(&mut self, chunks: &[LangflowChunk]) -> Result<(), VectorStoreError> {
        let Some(dimension) =
            LangflowChunk::dimension_of(chunks, || self.path.display().to_string())?
        else {
            return Ok(());
        };
        let result = async {
            let mut tx = self.connection.begin_with("BEGIN IMMEDIATE").await?;
            let stored: Option<i64> =
                sqlx::query_scalar("SELECT dimension FROM store_header WHERE singleton = 1")
                    .fetch_one(&mut *tx)
                    .await?;
            if let Some(stored) = stored.filter(|&d| d != dimension as i64) {
                return Ok(Err(stored));
            }
            sqlx::query("UPDATE store_header SET dimension = ? WHERE singleton = 1")
                .bind(dimension as i64)
                .execute(&mut *tx)
                .await?;
            for chunk in chunks {
                sqlx::query(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE \
                     SET content = excluded.content, metadata = excluded.metadata, \
                     vector = excluded.vector, dimension = excluded.dimension, \
                     job_id = excluded.job_id, session_id = excluded.session_id, \
                     native_distance_safe = excluded.native_distance_safe",
                )
                .bind(&chunk.id)
                .bind(&chunk.content)
                .bind(&chunk.metadata)
                .bind(vector_blob(&chunk.vector))
                .bind(dimension as i64)
                .bind(&chunk.job_id)
                .bind(&chunk.session_id)
                .bind(i64::from(native_distance_safe(&chunk.vector)))
                .execute(&mut *tx)
                .await?;
                // Memory-base chunks carry no `source_metadata`, so they have no filter values.
                sqlx::query("DELETE FROM source_filter_values WHERE document_id = ?")
                    .bind(&chunk.id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(Ok(()))
        }
        .await
        .map_err(|e| self.failed(e))?;
        result.map_err(|found| VectorStoreError::Dimension {
            store: self.path.display().to_string(),
            found: found as usize,
            expected: dimension,
        })
    }

    /// Deletes what one job wrote (Langflow's cleanup of a failed or cancelled job).
    pub async fn delete_job(&mut self, job_id: &str) -> Result<u64, VectorStoreError> {
        sqlx::query("DELETE FROM chunks WHERE job_id = ?")
            .bind(job_id)
            .execute(&mut self.connection)
            .await
            .map(|r| r.rows_affected())
            .map_err(|e| self.failed(e))
    }

    /// The jobs whose chunks of a session the store holds.
    pub async fn session_jobs(
        &mut self,
        session_id: &str,
    ) -> Result<Vec<String>, VectorStoreError> {
        sqlx::query_scalar(
            "SELECT DISTINCT job_id FROM chunks WHERE session_id = ? AND job_id IS NOT NULL",
        )
        .bind(session_id)
        .fetch_all(&mut self.connection)
        .await
        .map_err(|e| self.failed(e))
    }

    /// Empties the store (regenerate re-ingests everything).
    pub async fn delete_all(&mut self) -> Result<u64, VectorStoreError> {
        sqlx::query("DELETE FROM chunks")
            .execute(&mut self.connection)
            .await
            .map(|r| r.rows_affected())
            .map_err(|e| self.failed(e))
    }

    /// Chunks, words (whitespace-separated) and characters of every chunk, and the bytes of
    /// the store with its `-wal` and `-shm` files, as Langflow's stats sync counts them.
    pub async fn figures(&mut self) -> Result<StoreFigures, VectorStoreError> {
        let contents: Vec<String> = sqlx::query_scalar("SELECT content FROM chunks")
            .fetch_all(&mut self.connection)
            .await
            .map_err(|e| self.failed(e))?;
        let size_bytes = ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| {
                let mut name = self.path.clone().into_os_string();
                name.push(suffix);
                std::fs::metadata(name).ok()
            })
            .map(|meta| meta.len() as i64)
            .sum();
        Ok(StoreFigures::of(&contents, size_bytes))
    }

    pub async fn close(self) {
        let _ = self.connection.close().await;
    }
}

/// A vector as Langflow stores it: float32, little-endian.
fn vector_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Langflow's `_native_distance_safe`: every component zero or at least 1e-8 in magnitude, and
/// a squared norm of at most 1e24.
fn native_distance_safe(vector: &[f32]) -> bool {
    vector.iter().all(|&v| v == 0.0 || v.abs() >= 1e-8)
        && vector
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>()
            <= 1e24
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_count_whitespace_words_and_characters() {
        let contents = ["two  words".to_owned(), "é\nx".to_owned()];
        assert_eq!(
            StoreFigures::of(&contents, 4096),
            StoreFigures {
                chunks: 2,
                words: 4,
                characters: 13,
                size_bytes: 4096,
            }
        );
    }

    #[test]
    fn vectors_are_little_endian_float32() {
        assert_eq!(vector_blob(&[1.0, -2.5]), [0, 0, 128, 63, 0, 0, 32, 192]);
        assert!(native_distance_safe(&[0.0, 0.5]));
        assert!(!native_distance_safe(&[1e-12]));
        assert!(!native_distance_safe(&[1e13, 1e13]));
    }

    #[tokio::test]
    async fn the_file_lock_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_kb(dir.path(), "kb", Duration::ZERO).await.unwrap();
        assert!(held.is_some());
        assert!(dir.path().join(".locks/kb.lock").is_file());
        // flock locks belong to the open file: a second open in this process is excluded too.
        assert!(
            lock_kb(dir.path(), "kb", Duration::ZERO)
                .await
                .unwrap()
                .is_none()
        );
        drop(held);
        assert!(
            lock_kb(dir.path(), "kb", Duration::ZERO)
                .await
                .unwrap()
                .is_some()
        );
    }
}
