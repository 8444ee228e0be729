//! The embedded vector store: one SQLite file per KB. A `chunk` table holds each chunk's text,
//! metadata and float32 vector; `code_block` holds the same vectors quantized to int8
//! (normalised, ×127), [`BLOCK`] to a row, contiguous, with the chunk rowid of each slot (0: a
//! free slot).
//!
//! A search reads the blocks (a quarter of the float32 bytes, a few large rows), ranks every
//! slot by its integer dot product with the quantized query (integer sums the compiler
//! vectorizes), and rescores the best [`candidates`] by exact cosine distance on their float32
//! vectors with sqlite-vec's `vec_distance_cosine`. A session-filtered search is exact: the
//! session's chunks are few and indexed. sqlite-vec's own `vec0` scan, which this replaces,
//! computed each distance as one dependent floating-point chain, and its top-k selection costs
//! k passes over every 1,024 rows (154–248 ms for 100,000 chunks under load; see
//! `assets/memory-bases.md`).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Once;
use std::time::Duration;

use sqlx::AssertSqlSafe;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::rows::{ChunkRecord, Column, HitRow, SearchHit, StoreStats, VectorStoreError};

/// The vector store's file inside the KB directory.
pub const STORE_FILE: &str = "vectors.sqlite3";

/// The layout this code writes: 3 = float32 vectors in `chunk`, int8 codes in `code_block`.
/// Version 1 (a float32 `vec0` table, no `format` row) is read as a store to regenerate.
const FORMAT: &str = "3";

/// Slots per `code_block` row.
pub const BLOCK: usize = 1024;

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
/// of 1/127 per component) does not push a true neighbour out; a test checks recall against an
/// exact scan.
pub fn candidates(top_k: usize) -> usize {
    (top_k * 20).max(200)
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
        if info.format.is_none() && info.dimension.is_none() {
            // Created but never set up (its creator was killed first): no store yet, and the
            // next write sets it up.
            store.pool.close().await;
            return Ok(None);
        }
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
                 embedding BLOB NOT NULL,
                 slot INTEGER NOT NULL
             );
             CREATE INDEX chunk_job_id ON chunk (job_id);
             CREATE INDEX chunk_message_id ON chunk (message_id);
             CREATE INDEX chunk_session_id ON chunk (session_id);
             CREATE TABLE code_block (
                 block INTEGER PRIMARY KEY,
                 rowids BLOB NOT NULL,
                 codes BLOB NOT NULL
             );
             INSERT INTO kb_info (key, value) VALUES ('format', '{FORMAT}'), ('dimension', '{}');",
            self.dimension
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
        // IMMEDIATE: the slot count is read and then written; syncs of two sessions of one base
        // may write the same file from two processes, and a deferred reader could not upgrade.
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.failed(e))?;
        let mut blocks = Blocks::new(self.dimension);
        // The slot after the last one written: the last block's end.
        let mut next_slot: i64 = sqlx::query_scalar(
            "SELECT coalesce((SELECT block * ? + length(rowids) / 8 FROM code_block \
             ORDER BY block DESC LIMIT 1), 0)",
        )
        .bind(BLOCK as i64)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| self.failed(e))?;
        for chunk in chunks {
            // A chunk written again keeps its row and slot.
            let (rowid, slot): (i64, i64) = sqlx::query_as(
                "INSERT INTO chunk (chunk_id, message_id, session_id, job_id, content, metadata, \
                 words, characters, embedding, slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (chunk_id) DO UPDATE SET job_id = excluded.job_id, \
                 content = excluded.content, metadata = excluded.metadata, \
                 words = excluded.words, characters = excluded.characters, \
                 embedding = excluded.embedding RETURNING rowid, slot",
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
            .bind(next_slot)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
            if slot == next_slot {
                next_slot += 1;
            }
            blocks
                .set(&mut tx, slot, rowid, &quantize(&chunk.embedding))
                .await
                .map_err(|e| self.failed(e))?;
        }
        blocks.write(&mut tx).await.map_err(|e| self.failed(e))?;
        tx.commit().await.map_err(|e| self.failed(e))
    }

    pub(super) async fn delete_where(
        &self,
        column: Column,
        value: &str,
    ) -> Result<u64, VectorStoreError> {
        let column = column.name();
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        let slots: Vec<i64> = sqlx::query_scalar(AssertSqlSafe(format!(
            "DELETE FROM chunk WHERE {column} = ? RETURNING slot"
        )))
        .bind(value)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| self.failed(e))?;
        // Freed slots stay empty; regenerate compacts.
        let mut blocks = Blocks::new(self.dimension);
        let empty = vec![0u8; self.dimension];
        for &slot in &slots {
            blocks
                .set(&mut tx, slot, 0, &empty)
                .await
                .map_err(|e| self.failed(e))?;
        }
        blocks.write(&mut tx).await.map_err(|e| self.failed(e))?;
        tx.commit().await.map_err(|e| self.failed(e))?;
        Ok(slots.len() as u64)
    }

    pub async fn stats(&self) -> Result<StoreStats, VectorStoreError> {
        sqlx::query_as::<_, (i64, i64, i64, i64)>(
            "SELECT count(*), count(DISTINCT message_id), coalesce(sum(words), 0), \
             coalesce(sum(characters), 0) FROM chunk",
        )
        .fetch_one(&self.pool)
        .await
        .map(StoreStats::from)
        .map_err(|e| self.failed(e))
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
        const COLUMNS: &str = "SELECT chunk_id, message_id, session_id, content, metadata, \
             vec_distance_cosine(embedding, ?1) AS distance FROM chunk";
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<HitRow> = match session_id {
            Some(session) => {
                sqlx::query_as(AssertSqlSafe(format!(
                    "{COLUMNS} WHERE session_id = ?2 ORDER BY distance, chunk_id LIMIT ?3"
                )))
                .bind(as_blob(query))
                .bind(session)
                .bind(top_k as i64)
                .fetch_all(&self.pool)
                .await
            }
            None => {
                let rowids = self.nearest_codes(query, candidates(top_k)).await?;
                sqlx::query_as(AssertSqlSafe(format!(
                    "{COLUMNS} WHERE rowid IN (SELECT value FROM json_each(?2)) \
                     ORDER BY distance, chunk_id LIMIT ?3"
                )))
                .bind(as_blob(query))
                .bind(serde_json::to_string(&rowids).unwrap_or_default())
                .bind(top_k as i64)
                .fetch_all(&self.pool)
                .await
            }
        }
        .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(SearchHit::from).collect())
    }

    /// The rowids of the `count` chunks whose int8 codes have the largest dot product with the
    /// quantized query.
    async fn nearest_codes(
        &self,
        query: &[f32],
        count: usize,
    ) -> Result<Vec<i64>, VectorStoreError> {
        let code: Vec<i8> = quantize(query).into_iter().map(|b| b as i8).collect();
        let dimension = code.len().max(1);
        let mut scored: Vec<(i32, i64)> = Vec::new();
        let mut rows =
            sqlx::query_as::<_, (Vec<u8>, Vec<u8>)>("SELECT rowids, codes FROM code_block")
                .fetch(&self.pool);
        while let Some((rowids, codes)) = futures_util::TryStreamExt::try_next(&mut rows)
            .await
            .map_err(|e| self.failed(e))?
        {
            for (rowid, code_bytes) in rowids.chunks_exact(8).zip(codes.chunks_exact(dimension)) {
                let rowid = i64::from_le_bytes(rowid.try_into().expect("8 bytes"));
                if rowid != 0 {
                    scored.push((dot_i8(&code, code_bytes), rowid));
                }
            }
        }
        if scored.len() > count {
            scored.select_nth_unstable_by(count, |a, b| b.0.cmp(&a.0));
            scored.truncate(count);
        }
        Ok(scored.into_iter().map(|(_, rowid)| rowid).collect())
    }

    pub async fn close(self) {
        self.pool.close().await;
    }
}

/// The integer dot product of two int8 vectors (the blob side as stored bytes).
fn dot_i8(query: &[i8], code: &[u8]) -> i32 {
    query
        .iter()
        .zip(code)
        .map(|(&q, &c)| i32::from(q) * i32::from(c as i8))
        .sum()
}

/// The `code_block` rows a write touches, read once and written back once.
struct Blocks {
    dimension: usize,
    loaded: std::collections::BTreeMap<i64, (Vec<u8>, Vec<u8>)>,
}

impl Blocks {
    fn new(dimension: usize) -> Blocks {
        Blocks {
            dimension,
            loaded: std::collections::BTreeMap::new(),
        }
    }

    /// Puts `rowid` (0: free) and its code into `slot`.
    async fn set(
        &mut self,
        tx: &mut sqlx::SqliteConnection,
        slot: i64,
        rowid: i64,
        code: &[u8],
    ) -> Result<(), sqlx::Error> {
        let (block, index) = (slot / BLOCK as i64, (slot % BLOCK as i64) as usize);
        let (rowids, codes) = match self.loaded.entry(block) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => {
                let found: Option<(Vec<u8>, Vec<u8>)> =
                    sqlx::query_as("SELECT rowids, codes FROM code_block WHERE block = ?")
                        .bind(block)
                        .fetch_optional(&mut *tx)
                        .await?;
                entry.insert(found.unwrap_or_default())
            }
        };
        let dimension = self.dimension;
        if rowids.len() < (index + 1) * 8 {
            rowids.resize((index + 1) * 8, 0);
            codes.resize((index + 1) * dimension, 0);
        }
        rowids[index * 8..(index + 1) * 8].copy_from_slice(&rowid.to_le_bytes());
        codes[index * dimension..(index + 1) * dimension].copy_from_slice(code);
        Ok(())
    }

    async fn write(self, tx: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
        for (block, (rowids, codes)) in self.loaded {
            sqlx::query(
                "INSERT OR REPLACE INTO code_block (block, rowids, codes) VALUES (?, ?, ?)",
            )
            .bind(block)
            .bind(rowids)
            .bind(codes)
            .execute(&mut *tx)
            .await?;
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct Info {
    format: Option<String>,
    dimension: Option<usize>,
}

#[cfg(test)]
#[path = "sqlite_vec_tests.rs"]
mod tests;
