//! The embedded vector store: one SQLite file per KB. A plain `chunk` table holds each chunk's
//! text, metadata and float32 vector; a sqlite-vec `vec0` table holds the same vector quantized
//! to int8 (a quarter of the bytes) with the chunk's session as a metadata column.
//!
//! Search is two-step: a brute-force scan of the int8 vectors by L1 distance, which sqlite-vec
//! computes with integer arithmetic the compiler vectorizes, keeps the best candidates
//! ([`candidates`]); their float32 vectors are then rescored by exact cosine distance. The
//! float scan it replaces read four times the bytes and ran one dependent floating-point chain
//! per vector (154 ms for 100,000 chunks under load; see `assets/memory-bases.md`).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Once;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{AssertSqlSafe, Row};

use super::store::{ChunkRecord, Column, HitRow, SearchHit, StoreStats, VectorStoreError};

/// The vector store's file inside the KB directory.
pub const STORE_FILE: &str = "vectors.sqlite3";

/// The layout this code writes: 2 = int8 `vec0` index plus float32 vectors in `chunk`. Version 1
/// (a float32 `vec0` table) is read as a store to regenerate.
const FORMAT: &str = "2";

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

/// How many int8 candidates are rescored for a top-`k` search: enough that quantization (a step
/// of 1/127 per component) cannot push a true neighbour out; `tests` and the bench check recall.
pub fn candidates(top_k: usize) -> usize {
    (top_k * 20).clamp(200, 4096)
}

fn as_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The int8 image of a vector's direction: normalised, then scaled to ±127.
pub fn quantize(vector: &[f32]) -> Vec<u8> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    let scale = if norm > 0.0 { 127.0 / norm } else { 0.0 };
    vector
        .iter()
        .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8 as u8)
        .collect()
}

pub struct SqliteVectors {
    pool: SqlitePool,
    path: PathBuf,
    dimension: usize,
}

impl SqliteVectors {
    pub fn path_in(kb_dir: &Path) -> PathBuf {
        kb_dir.join(STORE_FILE)
    }

    /// Opens the store in `kb_dir` (which exists), creating the tables for `dimension` if needed.
    pub async fn open_or_create(
        kb_dir: &Path,
        dimension: usize,
    ) -> Result<SqliteVectors, VectorStoreError> {
        let store = Self::connect(kb_dir, true, dimension).await?;
        store.create_tables().await?;
        Ok(store)
    }

    /// Opens an existing store; `None` when the file is missing.
    pub async fn open_existing(kb_dir: &Path) -> Result<Option<SqliteVectors>, VectorStoreError> {
        if !Self::path_in(kb_dir).exists() {
            return Ok(None);
        }
        let mut store = Self::connect(kb_dir, false, 0).await?;
        let info = store.info().await?;
        if info.format.as_deref() != Some(FORMAT) {
            store.pool.close().await;
            return Err(VectorStoreError::OldFormat { path: store.path });
        }
        store.dimension = info.dimension.unwrap_or(0);
        Ok(Some(store))
    }

    async fn connect(
        kb_dir: &Path,
        create: bool,
        dimension: usize,
    ) -> Result<SqliteVectors, VectorStoreError> {
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
        Ok(SqliteVectors {
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

    /// The `kb_info` rows: the layout version and the dimension (absent in a new file).
    async fn info(&self) -> Result<Info, VectorStoreError> {
        let exists: bool = sqlx::query_scalar(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'kb_info'",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.failed(e))?;
        if !exists {
            return Ok(Info::default());
        }
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM kb_info")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        let value = |key: &str| rows.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        Ok(Info {
            format: value("format"),
            dimension: value("dimension").and_then(|d| d.parse().ok()),
        })
    }

    async fn create_tables(&self) -> Result<(), VectorStoreError> {
        let info = self.info().await?;
        match info.dimension {
            Some(_) if info.format.as_deref() != Some(FORMAT) => {
                return Err(VectorStoreError::OldFormat {
                    path: self.path.clone(),
                });
            }
            Some(found) if found != self.dimension => {
                return Err(VectorStoreError::Dimension {
                    store: self.path.display().to_string(),
                    found,
                    expected: self.dimension,
                });
            }
            Some(_) => return Ok(()),
            None => {}
        }
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS kb_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE chunk (
                 rowid INTEGER PRIMARY KEY,
                 chunk_id TEXT NOT NULL UNIQUE,
                 message_id TEXT NOT NULL,
                 session_id TEXT NOT NULL,
                 job_id TEXT NOT NULL,
                 content TEXT NOT NULL,
                 metadata TEXT NOT NULL,
                 words INTEGER NOT NULL,
                 characters INTEGER NOT NULL,
                 embedding BLOB NOT NULL
             );
             CREATE INDEX chunk_job_id ON chunk (job_id);
             CREATE INDEX chunk_message_id ON chunk (message_id);
             CREATE INDEX chunk_session_id ON chunk (session_id);
             CREATE VIRTUAL TABLE chunk_vec USING vec0(\
                 embedding int8[{}] distance_metric=cosine, session_id text);
             INSERT INTO kb_info (key, value) VALUES ('format', '{FORMAT}'), ('dimension', '{}');",
            self.dimension, self.dimension
        );
        sqlx::raw_sql(AssertSqlSafe(ddl))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub async fn upsert(&self, chunks: &[ChunkRecord]) -> Result<(), VectorStoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        for chunk in chunks {
            let rowid: i64 = sqlx::query_scalar(
                "INSERT INTO chunk (chunk_id, message_id, session_id, job_id, content, metadata, \
                 words, characters, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (chunk_id) DO UPDATE SET job_id = excluded.job_id, \
                 content = excluded.content, metadata = excluded.metadata, \
                 words = excluded.words, characters = excluded.characters, \
                 embedding = excluded.embedding RETURNING rowid",
            )
            .bind(&chunk.chunk_id)
            .bind(&chunk.message_id)
            .bind(&chunk.session_id)
            .bind(&chunk.job_id)
            .bind(&chunk.content)
            .bind(chunk.metadata.to_string())
            .bind(chunk.words())
            .bind(chunk.characters())
            .bind(as_blob(&chunk.embedding))
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
            // vec0 has no upsert.
            sqlx::query("DELETE FROM chunk_vec WHERE rowid = ?")
                .bind(rowid)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.failed(e))?;
            sqlx::query(
                "INSERT INTO chunk_vec (rowid, embedding, session_id) VALUES (?, vec_int8(?), ?)",
            )
            .bind(rowid)
            .bind(quantize(&chunk.embedding))
            .bind(&chunk.session_id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        }
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub(super) async fn delete_where(
        &self,
        column: Column,
        value: &str,
    ) -> Result<u64, VectorStoreError> {
        let column = column.name();
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

    pub async fn chunks_per_message(&self) -> Result<Vec<(String, i64)>, VectorStoreError> {
        sqlx::query_as(
            "SELECT message_id, count(*) FROM chunk GROUP BY message_id ORDER BY message_id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.failed(e))
    }

    pub async fn search(
        &self,
        query: &[f32],
        top_k: usize,
        session_id: Option<&str>,
    ) -> Result<Vec<SearchHit>, VectorStoreError> {
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let session_filter = if session_id.is_some() {
            " AND session_id = ?3"
        } else {
            ""
        };
        let sql = format!(
            "WITH coarse AS (SELECT rowid FROM chunk_vec \
             WHERE embedding MATCH vec_int8(?1) AND k = ?2{session_filter}) \
             SELECT c.chunk_id, c.message_id, c.session_id, c.content, c.metadata, \
             vec_distance_cosine(c.embedding, ?4) AS distance \
             FROM coarse JOIN chunk c ON c.rowid = coarse.rowid \
             ORDER BY distance, c.chunk_id LIMIT ?5"
        );
        let rows: Vec<HitRow> = sqlx::query_as(AssertSqlSafe(sql))
            .bind(quantize(query))
            .bind(candidates(top_k) as i64)
            .bind(session_id)
            .bind(as_blob(query))
            .bind(top_k as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(SearchHit::from).collect())
    }

    pub async fn close(self) {
        self.pool.close().await;
    }
}

#[derive(Debug, Default)]
struct Info {
    format: Option<String>,
    dimension: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::embedder::HashingEmbedder;
    use crate::kb::store::{KbLocation, VectorStore};

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
        let kb = KbLocation::embedded(dir.path());
        let store = VectorStore::open_or_create(&kb, 3).await.unwrap();
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

        let reopened = VectorStore::open_existing(&kb).await.unwrap().unwrap();
        assert_eq!(reopened.dimension(), 3);
        reopened.close().await;
        assert!(VectorStore::open_or_create(&kb, 4).await.is_err());
    }

    #[tokio::test]
    async fn a_missing_store_is_none_and_an_old_one_asks_for_regenerate() {
        let dir = tempfile::tempdir().unwrap();
        let kb = KbLocation::embedded(dir.path());
        assert!(VectorStore::open_existing(&kb).await.unwrap().is_none());
        // Format 1: a float32 vec0 table and no format row.
        register_sqlite_vec();
        let old = SqliteVectors::connect(dir.path(), true, 3).await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE kb_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO kb_info VALUES ('dimension', '3');",
        )
        .execute(&old.pool)
        .await
        .unwrap();
        old.close().await;
        let error = VectorStore::open_existing(&kb).await.err().unwrap();
        assert!(error.to_string().contains("mb regenerate"), "{error}");
        assert!(VectorStore::open_or_create(&kb, 3).await.is_err());
    }

    #[test]
    fn quantization_keeps_direction_in_int8() {
        let q = quantize(&[3.0, -4.0, 0.0]);
        assert_eq!(
            q.iter().map(|&b| b as i8).collect::<Vec<_>>(),
            [76, -102, 0]
        );
        assert_eq!(quantize(&[0.0, 0.0]), [0, 0]);
        assert_eq!(candidates(5), 200);
        assert_eq!(candidates(1000), 4096);
    }

    /// The exact `top_k` cosine distances, computed in f64 over every vector.
    fn exact_distances(vectors: &[Vec<f32>], query: &[f32], top_k: usize) -> Vec<f64> {
        let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        let mut all: Vec<f64> = vectors
            .iter()
            .map(|v| {
                let dot: f64 = v.iter().zip(query).map(|(a, b)| f64::from(a * b)).sum();
                1.0 - dot / (norm(v) * norm(query))
            })
            .collect();
        all.sort_by(f64::total_cmp);
        all.truncate(top_k);
        all
    }

    #[tokio::test]
    async fn quantized_search_with_rescoring_finds_the_exact_neighbours() {
        // Texts of 3 to 120 words over a small vocabulary: short and long chunks compete, which
        // is where a coarse distance ranks differently from cosine.
        const WORDS: [&str; 24] = [
            "refund", "parcel", "invoice", "login", "password", "deploy", "pipeline", "order",
            "delayed", "account", "support", "billing", "shipping", "address", "reset", "token",
            "cluster", "error", "timeout", "retry", "payment", "card", "email", "verify",
        ];
        let text = |n: usize| -> String {
            let length = 3 + (n * 37) % 118;
            (0..length)
                .map(|i| WORDS[(n * 13 + i * i * 7 + i * (n % 5)) % WORDS.len()])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let embedder = HashingEmbedder::default();
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open_or_create(&KbLocation::embedded(dir.path()), 384)
            .await
            .unwrap();
        let vectors: Vec<Vec<f32>> = (0..4000).map(|n| embedder.embed_one(&text(n))).collect();
        let chunks: Vec<ChunkRecord> = vectors
            .iter()
            .enumerate()
            .map(|(n, v)| chunk(&n.to_string(), &n.to_string(), "s", "j", v.clone()))
            .collect();
        store.upsert(&chunks).await.unwrap();
        for query in [
            "refund for a delayed parcel",
            "reset my password",
            "deploy pipeline timeout error retry",
            "card payment",
            "verify email address for billing account",
        ] {
            let vector = embedder.embed_one(query);
            let found: Vec<f64> = store
                .search(&vector, 5, None)
                .await
                .unwrap()
                .iter()
                .map(|hit| hit.distance)
                .collect();
            let exact = exact_distances(&vectors, &vector, 5);
            assert_eq!(found.len(), 5);
            for (f, e) in found.iter().zip(&exact) {
                assert!(
                    (f - e).abs() < 1e-5,
                    "{query}: {found:?} vs exact {exact:?}"
                );
            }
        }
        store.close().await;
    }
}
