//! Writes the story into a new SQLite file as SqliteSaver does: its `setup()` script (WAL
//! mode, `checkpoints` and `writes` exactly as it creates them), then every row in one
//! transaction, as its `put` and `put_writes` insert them.

use std::path::{Path, PathBuf};

use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use super::steps::Rows;

/// `SqliteSaver.setup()` of langgraph-checkpoint-sqlite 3.1.
const SETUP: &str = "
            PRAGMA journal_mode=WAL;
            CREATE TABLE IF NOT EXISTS checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                type TEXT,
                checkpoint BLOB,
                metadata BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            );
            CREATE TABLE IF NOT EXISTS writes (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                task_path TEXT NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT NOT NULL,
                type TEXT,
                value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            );
            ";

#[derive(Debug, thiserror::Error)]
pub enum LangGraphDemoError {
    #[error("{0} exists; the LangGraph demo goes into a new file")]
    Exists(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: sqlx::Error },
}

/// Writes `rows` into a new file at `path`; an existing file is left alone.
pub(super) async fn write_rows(path: &Path, rows: &Rows) -> Result<(), LangGraphDemoError> {
    if path.exists() {
        return Err(LangGraphDemoError::Exists(path.to_owned()));
    }
    let failed = |source| LangGraphDemoError::Write {
        path: path.to_owned(),
        source,
    };
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(failed)?;
    sqlx::raw_sql(SETUP)
        .execute(&mut conn)
        .await
        .map_err(failed)?;
    let mut tx = conn.begin().await.map_err(failed)?;
    for c in &rows.checkpoints {
        sqlx::query(
            "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&c.thread_id)
        .bind(&c.checkpoint_ns)
        .bind(&c.checkpoint_id)
        .bind(&c.parent_checkpoint_id)
        .bind("msgpack")
        .bind(&c.checkpoint)
        .bind(&c.metadata)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    }
    for w in &rows.writes {
        sqlx::query(
            "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
             task_path, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&w.thread_id)
        .bind(&w.checkpoint_ns)
        .bind(&w.checkpoint_id)
        .bind(&w.task_id)
        .bind(&w.task_path)
        .bind(w.idx)
        .bind(&w.channel)
        .bind(w.type_name)
        .bind(&w.value)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    }
    tx.commit().await.map_err(failed)?;
    // Closing the last connection folds the WAL back into the file.
    conn.close().await.map_err(failed)?;
    Ok(())
}
