//! Knowledge bases of a database Langflow made. Each memory base's `knowledge_base` row names a
//! backend. For Langflow's default one (`sqlite`) the vectors live in
//! `{kb root}/sqlite/{owner id}/{knowledge base id}/{generation}/vectors.sqlite3`, whose
//! `chunks` table Langflow counts for its mismatch check; for its `postgres` (pgvector) backend
//! in one table of the database `PGVECTOR_CONNECTION_STRING` names (`langflow_pgvector`).
//! Other backends (Chroma, OpenSearch, …) are named, not read.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use super::langflow_pgvector;
use crate::memory::memory_base::LangflowKb;
use crate::store::memory_bases::LangflowKbRow;

/// Langflow's default knowledge-base backend.
pub const SQLITE_BACKEND: &str = "sqlite";
/// Langflow's pgvector knowledge-base backend.
pub const POSTGRES_BACKEND: &str = "postgres";

/// Where Langflow's sqlite backend keeps a knowledge base's vectors.
pub fn vectors_path(root: &Path, row: &LangflowKbRow) -> PathBuf {
    root.join(SQLITE_BACKEND)
        .join(&row.user_id)
        .join(&row.id)
        .join(row.storage_generation.to_string())
        .join("vectors.sqlite3")
}

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
    let Some(table) = langflow_pgvector::table_name(&row.user_id, &row.name) else {
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
        path: Some(PathBuf::from(langflow_pgvector::describe(&table))),
        chunks: langflow_pgvector::count_chunks(&table).await,
    }
}

/// The chunks in a vector store, read without changing it and without leaving files behind.
async fn count_chunks(path: &Path) -> Result<i64, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("vector store {} cannot be read: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("vector store {} is not a file", path.display()));
    }
    let url = format!("sqlite://{}", path.display());
    let options = SqliteConnectOptions::from_str(&url).map_err(|e| e.to_string())?;
    // Read-write with `query_only`, as for Langflow's database itself: SQLite then removes the
    // `-wal`/`-shm` files of this WAL-mode store when the connection closes.
    let options = if meta.permissions().readonly() {
        options.read_only(true)
    } else {
        options.pragma("query_only", "ON")
    };
    let unreadable =
        |e: sqlx::Error| format!("vector store {} cannot be read: {e}", path.display());
    let mut connection = options.connect().await.map_err(unreadable)?;
    let counted: Result<i64, sqlx::Error> = sqlx::query_scalar("SELECT count(*) FROM chunks")
        .fetch_one(&mut connection)
        .await;
    let _ = connection.close().await;
    counted.map_err(unreadable)
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

    #[tokio::test]
    async fn chunks_are_counted_and_no_file_is_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.sqlite3");
        let url = format!("sqlite://{}", path.display());
        let mut setup = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .connect()
            .await
            .unwrap();
        sqlx::query("CREATE TABLE chunks (id TEXT PRIMARY KEY)")
            .execute(&mut setup)
            .await
            .unwrap();
        sqlx::query("INSERT INTO chunks VALUES ('a'), ('b')")
            .execute(&mut setup)
            .await
            .unwrap();
        setup.close().await.unwrap();
        let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(count_chunks(&path).await, Ok(2));
        let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(before.len(), after.len());
    }
}
