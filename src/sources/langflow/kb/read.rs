//! Knowledge bases of a database Langflow made. Each memory base's `knowledge_base` row names a
//! backend. For Langflow's default one (`sqlite`) the vectors live in
//! `{kb root}/sqlite/{owner id}/{knowledge base id}/{generation}/vectors.sqlite3`, whose
//! `chunks` table Langflow counts for its mismatch check; for its `postgres` (pgvector) backend
//! in one table of the database `PGVECTOR_CONNECTION_STRING` names (`pgvector.rs`).
//! Other backends (Chroma, OpenSearch, …) are named, not read.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};

use super::layout::{POSTGRES_BACKEND, SQLITE_BACKEND, hit, vectors_path};
use super::pgvector;
use crate::kb::rows::{SearchHit, VectorStoreError};
use crate::memory::memory_base::LangflowKb;
use crate::store::memory_bases::LangflowKbRow;
use crate::store::sqlite_read_only::read_only_options;

/// The base's knowledge base as Langflow keeps it: its row, its store and its chunk count.
pub async fn observe(root: &Path, row: Option<&LangflowKbRow>) -> LangflowKb {
    let Some(row) = row else {
        return LangflowKb {
            row_exists: false,
            backend: None,
            path: None,
            chunks: Err("the base has no knowledge-base row".to_owned()),
        };
    };
    if row.backend_type == POSTGRES_BACKEND {
        return observe_postgres(row).await;
    }
    if row.backend_type != SQLITE_BACKEND {
        return LangflowKb {
            row_exists: true,
            backend: Some(row.backend_type.clone()),
            path: None,
            chunks: Err(format!(
                "its vectors are in Langflow's {} backend, which memscope cannot reach; \
                 only the database side is shown",
                row.backend_type
            )),
        };
    }
    let path = vectors_path(root, row);
    let chunks = count_chunks(&path).await;
    LangflowKb {
        row_exists: true,
        backend: Some(row.backend_type.clone()),
        path: Some(path),
        chunks,
    }
}

/// A knowledge base of Langflow's postgres backend: its table's chunks, counted read-only.
async fn observe_postgres(row: &LangflowKbRow) -> LangflowKb {
    let Some(table) = pgvector::table_name(&row.user_id, &row.name) else {
        return LangflowKb {
            row_exists: true,
            backend: Some(row.backend_type.clone()),
            path: None,
            chunks: Err(format!(
                "its owner {} is not a UUID, so Langflow's postgres backend has no table for it",
                row.user_id
            )),
        };
    };
    LangflowKb {
        row_exists: true,
        backend: Some(row.backend_type.clone()),
        path: Some(PathBuf::from(pgvector::describe(&table))),
        chunks: pgvector::count_chunks(&table).await,
    }
}

/// The chunks in a vector store, read without changing it and without leaving files behind.
async fn count_chunks(path: &Path) -> Result<i64, String> {
    let unreadable =
        |e: sqlx::Error| format!("vector store {} cannot be read: {e}", path.display());
    let mut connection = open_read_only(path).await?;
    let counted: Result<i64, sqlx::Error> = sqlx::query_scalar("SELECT count(*) FROM chunks")
        .fetch_one(&mut connection)
        .await;
    let _ = connection.close().await;
    counted.map_err(unreadable)
}

/// A connection to a vector store that cannot change it.
async fn open_read_only(path: &Path) -> Result<SqliteConnection, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("vector store {} cannot be read: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("vector store {} is not a file", path.display()));
    }
    let url = format!("sqlite://{}", path.display());
    let options = SqliteConnectOptions::from_str(&url).map_err(|e| e.to_string())?;
    // As for Langflow's database itself: nothing of the store or beside it changes.
    let options = read_only_options(options, path).map_err(|refused| {
        format!(
            "vector store {} cannot be read without changing it: {} is there without the \
             log's index (-shm) beside it",
            path.display(),
            refused.log.display()
        )
    })?;
    options
        .connect()
        .await
        .map_err(|e| format!("vector store {} cannot be read: {e}", path.display()))
}

/// The `top_k` chunks of the base's knowledge base nearest to `query` (an embedding made with
/// the base's model), of one session or all, ranked as Langflow's own backend ranks them: by
/// distance in the store's metric, then by chunk id. Read-only; a store not made yet holds none.
pub async fn search(
    root: &Path,
    row: &LangflowKbRow,
    query: &[f32],
    top_k: usize,
    session_id: Option<&str>,
) -> Result<Vec<SearchHit>, VectorStoreError> {
    match row.backend_type.as_str() {
        SQLITE_BACKEND => search_sqlite(&vectors_path(root, row), query, top_k, session_id).await,
        POSTGRES_BACKEND => {
            let table = pgvector::table_name(&row.user_id, &row.name).ok_or_else(|| {
                VectorStoreError::LangflowBackend {
                    backend: row.backend_type.clone(),
                    reason: format!("the knowledge base's owner {} is not a UUID", row.user_id),
                }
            })?;
            pgvector::search(&table, query, top_k, session_id).await
        }
        other => Err(VectorStoreError::LangflowBackend {
            backend: other.to_owned(),
            reason: "memscope cannot reach it, so it cannot search it".to_owned(),
        }),
    }
}

/// Langflow's sqlite backend search (`_search`): an exact scan of the `chunks` table.
async fn search_sqlite(
    path: &Path,
    query: &[f32],
    top_k: usize,
    session_id: Option<&str>,
) -> Result<Vec<SearchHit>, VectorStoreError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let backend = |reason: String| VectorStoreError::LangflowBackend {
        backend: SQLITE_BACKEND.to_owned(),
        reason,
    };
    let mut connection = open_read_only(path).await.map_err(backend)?;
    let sqlite = |source| VectorStoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let read = async {
        let header: (String, Option<i64>) =
            sqlx::query_as("SELECT metric, dimension FROM store_header WHERE singleton = 1")
                .fetch_one(&mut connection)
                .await?;
        let rows: Vec<(String, String, String, Vec<u8>)> = match header.1 {
            Some(_) => {
                sqlx::query_as(
                    "SELECT id, content, metadata, vector FROM chunks \
                     WHERE ?1 IS NULL OR session_id = ?1",
                )
                .bind(session_id)
                .fetch_all(&mut connection)
                .await?
            }
            None => Vec::new(),
        };
        Ok((header, rows))
    }
    .await;
    let _ = connection.close().await;
    let ((metric, dimension), rows) = read.map_err(sqlite)?;
    if let Some(stored) = dimension.filter(|&d| d != query.len() as i64) {
        return Err(VectorStoreError::Dimension {
            store: path.display().to_string(),
            found: stored as usize,
            expected: query.len(),
        });
    }
    let metric =
        Metric::parse(&metric).ok_or_else(|| backend(format!("unknown metric {metric:?}")))?;
    let mut hits = Vec::with_capacity(rows.len());
    for (id, content, metadata, blob) in rows {
        let stored: Vec<f32> = blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let distance = metric
            .distance(&stored, query)
            .ok_or_else(|| backend("cosine distance is undefined for a zero vector".to_owned()))?;
        hits.push(hit(id, content, &metadata, distance));
    }
    hits.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then_with(|| a.chunk_id.cmp(&b.chunk_id))
    });
    hits.truncate(top_k);
    Ok(hits)
}

/// The distance metrics of Langflow's sqlite backend, with the score it reports for each.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Cosine,
    /// Reported squared, as Langflow squares sqlite-vec's L2 distance.
    L2,
    /// Inner product: one minus the dot product.
    Ip,
}

impl Metric {
    fn parse(text: &str) -> Option<Metric> {
        match text {
            "cosine" => Some(Metric::Cosine),
            "l2" => Some(Metric::L2),
            "ip" => Some(Metric::Ip),
            _ => None,
        }
    }

    /// `None` for a cosine with a zero vector, which Langflow refuses too.
    fn distance(self, stored: &[f32], query: &[f32]) -> Option<f64> {
        let pairs = stored
            .iter()
            .zip(query)
            .map(|(&a, &b)| (f64::from(a), f64::from(b)));
        match self {
            Metric::L2 => Some(pairs.map(|(a, b)| (a - b) * (a - b)).sum()),
            Metric::Ip => Some(1.0 - pairs.map(|(a, b)| a * b).sum::<f64>()),
            Metric::Cosine => {
                let (dot, stored_norm, query_norm) = pairs
                    .fold((0.0, 0.0, 0.0), |(d, s, q), (a, b)| {
                        (d + a * b, s + a * a, q + b * b)
                    });
                if stored_norm == 0.0 || query_norm == 0.0 {
                    return None;
                }
                let cosine = dot / (stored_norm.sqrt() * query_norm.sqrt());
                Some(1.0 - cosine.clamp(-1.0, 1.0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: &str) -> LangflowKbRow {
        LangflowKbRow {
            id: "8b4069b2-0720-41c4-9f3e-3a7f596faea8".into(),
            user_id: "e7305111-5d44-4bd0-a3c6-0d7b4a4ff1a5".into(),
            name: "notes_0123abcd".into(),
            backend_type: backend.into(),
            storage_generation: 2,
            storage_state: "ready".into(),
        }
    }

    #[test]
    fn the_store_path_follows_langflows_layout() {
        assert_eq!(
            vectors_path(Path::new("/kb"), &row("sqlite")),
            Path::new(
                "/kb/sqlite/e7305111-5d44-4bd0-a3c6-0d7b4a4ff1a5/\
                 8b4069b2-0720-41c4-9f3e-3a7f596faea8/2/vectors.sqlite3"
            )
        );
    }

    #[tokio::test]
    async fn other_backends_are_named_not_read() {
        let kb = observe(Path::new("/nonexistent"), Some(&row("opensearch"))).await;
        assert!(kb.row_exists);
        assert!(kb.chunks.unwrap_err().contains("opensearch"));
    }

    #[tokio::test]
    async fn a_pgvector_kb_of_an_owner_without_uuid_has_no_table() {
        let mut odd = row("postgres");
        odd.user_id = "admin".into();
        let kb = observe(Path::new("/nonexistent"), Some(&odd)).await;
        assert!(kb.chunks.unwrap_err().contains("not a UUID"));
    }

    #[tokio::test]
    async fn a_missing_store_is_reported_with_its_path() {
        let kb = observe(Path::new("/nonexistent"), Some(&row("sqlite"))).await;
        assert!(kb.chunks.unwrap_err().contains("/nonexistent/sqlite/"));
    }

    /// A WAL-mode vector store in a fresh directory, made by `statements`.
    async fn new_store(statements: &[&'static str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.sqlite3");
        let mut setup = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .unwrap()
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .connect()
            .await
            .unwrap();
        for &statement in statements {
            sqlx::query(statement).execute(&mut setup).await.unwrap();
        }
        setup.close().await.unwrap();
        (dir, path)
    }

    #[tokio::test]
    async fn chunks_are_counted_and_no_file_is_left_behind() {
        let (dir, path) = new_store(&[
            "CREATE TABLE chunks (id TEXT PRIMARY KEY)",
            "INSERT INTO chunks VALUES ('a'), ('b')",
        ])
        .await;
        let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(count_chunks(&path).await, Ok(2));
        let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(before.len(), after.len());
    }

    #[test]
    fn distances_follow_langflows_metrics() {
        let x = [1.0_f32, 0.0];
        let y = [0.0_f32, 2.0];
        assert_eq!(Metric::Cosine.distance(&x, &x), Some(0.0));
        assert_eq!(Metric::Cosine.distance(&x, &y), Some(1.0));
        assert_eq!(Metric::Cosine.distance(&x, &[-3.0, 0.0]), Some(2.0));
        assert_eq!(Metric::Cosine.distance(&x, &[0.0, 0.0]), None);
        // Squared, as Langflow reports sqlite-vec's L2 distance.
        assert_eq!(Metric::L2.distance(&x, &y), Some(5.0));
        assert_eq!(Metric::Ip.distance(&[0.5, 0.5], &[1.0, 1.0]), Some(0.0));
        assert_eq!(Metric::parse("dot"), None);
    }

    #[tokio::test]
    async fn search_ranks_by_distance_then_id_within_a_session() {
        let (dir, path) = new_store(&[
            "CREATE TABLE store_header (singleton INTEGER, metric TEXT, dimension INTEGER)",
            "INSERT INTO store_header VALUES (1, 'cosine', 2)",
            "CREATE TABLE chunks (id TEXT, content TEXT, metadata TEXT, vector BLOB, \
             session_id TEXT)",
        ])
        .await;
        let mut setup = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let blob = |v: [f32; 2]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        for (id, vector, session) in [
            ("c", [0.0, 1.0], "s1"),
            ("b", [1.0, 0.0], "s1"),
            ("a", [2.0, 0.0], "s1"),
            ("d", [1.0, 0.0], "s2"),
        ] {
            sqlx::query("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)")
                .bind(id)
                .bind(format!("text {id}"))
                .bind(format!(
                    r#"{{"message_id": "m-{id}", "session_id": "{session}"}}"#
                ))
                .bind(blob(vector))
                .bind(session)
                .execute(&mut setup)
                .await
                .unwrap();
        }
        setup.close().await.unwrap();
        let hits = search_sqlite(&path, &[3.0, 0.0], 2, Some("s1"))
            .await
            .unwrap();
        let ids: Vec<_> = hits.iter().map(|h| h.chunk_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(hits[0].message_id, "m-a");
        assert_eq!(hits[0].session_id, "s1");
        let all = search_sqlite(&path, &[3.0, 0.0], 10, None).await.unwrap();
        assert_eq!(all.len(), 4);
        assert!(matches!(
            search_sqlite(&path, &[1.0, 0.0, 0.0], 1, None).await,
            Err(VectorStoreError::Dimension {
                found: 2,
                expected: 3,
                ..
            })
        ));
        assert!(
            search_sqlite(&dir.path().join("none"), &[1.0, 0.0], 1, None)
                .await
                .unwrap()
                .is_empty()
        );
    }
}
