//! A session trim written and undone. The rows a trim deletes are read again inside its
//! transaction, written to an archive (JSON lines under memscope's data directory: written
//! under a temporary name, flushed and renamed, so it exists whole or not at all), and only
//! then deleted; a failure before the commit removes the archive and changes nothing. Undo puts
//! the newest archive of the session back, each row with its id, and marks the archive undone.
//! A SQLite row keeps its text as stored; a PostgreSQL row is archived as `row_to_json` and put
//! back through `json_populate_record`, so every column comes back as it was.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::read::Row;
use crate::sources::conversation::SourceError;
use crate::sources::stored_trim::UndoneTrim;
use crate::store::pool::DbPool;
use crate::store::{Store, absolute_url};

const FORMAT: &str = "memscope session trim archive";
const VERSION: u32 = 1;
const ARCHIVE_EXTENSION: &str = ".jsonl";
const UNDONE_EXTENSION: &str = ".undone.jsonl";

/// The archive's first line: what it holds and where it came from.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    /// The database's URL, password redacted, a SQLite file's path absolute.
    database: String,
    session: String,
    rows: usize,
}

/// One deleted row, as its backend gives it back.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ArchivedRow {
    Sqlite {
        id: i64,
        message_data: String,
        created_at: Option<String>,
    },
    Postgres {
        id: i64,
        row_json: String,
    },
}

impl ArchivedRow {
    fn id(&self) -> i64 {
        match self {
            ArchivedRow::Sqlite { id, .. } | ArchivedRow::Postgres { id, .. } => *id,
        }
    }
}

fn io_failure(path: &Path, error: std::io::Error) -> SourceError {
    SourceError::failure(format!("{}: {error}", path.display()))
}

fn changed(session: &str) -> SourceError {
    SourceError::failure(format!(
        "session {session} changed while memscope planned the trim (rows it would delete are \
         gone): nothing was written; run it again"
    ))
}

/// Deletes the planned rows of `session`, archived first; `None` when there is nothing to
/// delete.
pub(super) async fn delete(
    store: &Store,
    session: &str,
    planned: &[Row],
    archives: &Path,
) -> Result<Option<PathBuf>, SourceError> {
    if planned.is_empty() {
        return Ok(None);
    }
    let ids: Vec<i64> = planned.iter().map(|(id, ..)| *id).collect();
    let ids_json = serde_json::to_string(&ids).expect("ids are JSON");
    let header = Header {
        format: FORMAT.to_owned(),
        version: VERSION,
        database: absolute_url(store.url()),
        session: session.to_owned(),
        rows: ids.len(),
    };
    let query_failed = |e| SourceError::from(store.query_failed(e));
    match &store.pool {
        DbPool::Sqlite(pool, _) => {
            let mut tx = pool
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(query_failed)?;
            let rows: Vec<(i64, String, Option<String>)> = sqlx::query_as(
                "SELECT id, message_data, created_at FROM agent_messages WHERE session_id = ?1 \
                 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id",
            )
            .bind(session)
            .bind(&ids_json)
            .fetch_all(&mut *tx)
            .await
            .map_err(query_failed)?;
            if rows.len() != ids.len() {
                return Err(changed(session));
            }
            let archived =
                rows.into_iter()
                    .map(|(id, message_data, created_at)| ArchivedRow::Sqlite {
                        id,
                        message_data,
                        created_at,
                    });
            let path = write_archive(archives, &header, archived)?;
            let deleted = sqlx::query(
                "DELETE FROM agent_messages WHERE session_id = ?1 \
                 AND id IN (SELECT value FROM json_each(?2))",
            )
            .bind(session)
            .bind(&ids_json)
            .execute(&mut *tx)
            .await;
            finish(deleted.map(|_| ()), tx.commit(), &path, store).await?;
            Ok(Some(path))
        }
        DbPool::Postgres(pool, _) => {
            let mut tx = pool.begin().await.map_err(query_failed)?;
            // The SDK updates the session's row with every item it adds: holding it keeps a
            // run from adding items while the trim deletes.
            sqlx::query("SELECT 1 FROM agent_sessions WHERE session_id = $1 FOR UPDATE")
                .bind(session)
                .fetch_optional(&mut *tx)
                .await
                .map_err(query_failed)?;
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT m.id::bigint, row_to_json(m)::text FROM agent_messages m \
                 WHERE m.session_id = $1 AND m.id = ANY($2::bigint[]) ORDER BY m.id",
            )
            .bind(session)
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await
            .map_err(query_failed)?;
            if rows.len() != ids.len() {
                return Err(changed(session));
            }
            let archived = rows
                .into_iter()
                .map(|(id, row_json)| ArchivedRow::Postgres { id, row_json });
            let path = write_archive(archives, &header, archived)?;
            let deleted = sqlx::query(
                "DELETE FROM agent_messages WHERE session_id = $1 AND id = ANY($2::bigint[])",
            )
            .bind(session)
            .bind(&ids)
            .execute(&mut *tx)
            .await;
            finish(deleted.map(|_| ()), tx.commit(), &path, store).await?;
            Ok(Some(path))
        }
        DbPool::Mysql(..) => Err(SourceError::failure(
            "memscope trims sessions on SQLite and PostgreSQL only",
        )),
    }
}

/// Commits after `written` succeeded; on any failure the archive goes, as nothing was deleted.
async fn finish(
    written: Result<(), sqlx::Error>,
    commit: impl std::future::Future<Output = Result<(), sqlx::Error>>,
    archive: &Path,
    store: &Store,
) -> Result<(), SourceError> {
    let committed = match written {
        Ok(()) => commit.await,
        Err(error) => Err(error),
    };
    committed.map_err(|error| {
        // Best effort: an archive left behind is refused by undo, as its rows are still here.
        let _ = std::fs::remove_file(archive);
        SourceError::from(store.query_failed(error))
    })
}

/// Writes `rows` under `header` to a new archive in `dir`, whole or not at all.
fn write_archive(
    dir: &Path,
    header: &Header,
    rows: impl Iterator<Item = ArchivedRow>,
) -> Result<PathBuf, SourceError> {
    std::fs::create_dir_all(dir).map_err(|e| io_failure(dir, e))?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ");
    let path = dir.join(format!("trim-{stamp}{ARCHIVE_EXTENSION}"));
    let partial = dir.join(format!(".trim-{stamp}.partial"));
    let written = (|| -> std::io::Result<()> {
        let mut out = BufWriter::new(File::create_new(&partial)?);
        serde_json::to_writer(&mut out, header)?;
        out.write_all(b"\n")?;
        for row in rows {
            serde_json::to_writer(&mut out, &row)?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&partial, &path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        io_failure(&path, e)
    })?;
    Ok(path)
}

/// The archive's header, or `None` for a file that is not a session trim archive.
fn read_header(path: &Path) -> Option<Header> {
    let mut line = String::new();
    BufReader::new(File::open(path).ok()?)
        .read_line(&mut line)
        .ok()?;
    serde_json::from_str::<Header>(&line)
        .ok()
        .filter(|h| h.format == FORMAT && h.version == VERSION)
}

fn read_rows(path: &Path) -> Result<Vec<ArchivedRow>, SourceError> {
    let file = File::open(path).map_err(|e| io_failure(path, e))?;
    BufReader::new(file)
        .lines()
        .skip(1)
        .enumerate()
        .map(|(index, line)| {
            let line = line.map_err(|e| io_failure(path, e))?;
            serde_json::from_str(&line).map_err(|e| {
                SourceError::failure(format!(
                    "{}: line {} is not a row of a session trim archive: {e}",
                    path.display(),
                    index + 2
                ))
            })
        })
        .collect()
}

/// The newest archive in `dir` of `session` in the database `origin` that is not undone yet.
fn newest_archive(dir: &Path, origin: &str, session: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("trim-")
                && name.ends_with(ARCHIVE_EXTENSION)
                && !name.ends_with(UNDONE_EXTENSION)
        })
        .filter(|path| {
            read_header(path).is_some_and(|h| h.database == origin && h.session == session)
        })
        .collect();
    // The names carry the time they were written at, so the last in order is the newest.
    found.sort();
    found.pop()
}

/// Puts back the rows of the newest trim of `session` in this database.
pub(super) async fn restore(
    store: &Store,
    session: &str,
    archives: &Path,
) -> Result<UndoneTrim, SourceError> {
    let origin = absolute_url(store.url());
    let Some(path) = newest_archive(archives, &origin, session) else {
        return Err(SourceError::not_found(format!(
            "no trim of session {session} in this database to undo: memscope keeps what a \
             trim deleted in {}",
            archives.display()
        )));
    };
    let rows = read_rows(&path)?;
    let ids: Vec<i64> = rows.iter().map(ArchivedRow::id).collect();
    let ids_json = serde_json::to_string(&ids).expect("ids are JSON");
    let already = || {
        SourceError::failure(format!(
            "the rows of {} are in the database already: nothing was written",
            path.display()
        ))
    };
    let query_failed = |e| SourceError::from(store.query_failed(e));
    match &store.pool {
        DbPool::Sqlite(pool, _) => {
            let mut tx = pool
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(query_failed)?;
            let present: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM agent_messages WHERE id IN (SELECT value FROM json_each(?1))",
            )
            .bind(&ids_json)
            .fetch_one(&mut *tx)
            .await
            .map_err(query_failed)?;
            if present > 0 {
                return Err(already());
            }
            sqlx::query("INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?1)")
                .bind(session)
                .execute(&mut *tx)
                .await
                .map_err(query_failed)?;
            for row in &rows {
                let ArchivedRow::Sqlite {
                    id,
                    message_data,
                    created_at,
                } = row
                else {
                    return Err(other_backend(&path));
                };
                sqlx::query(
                    "INSERT INTO agent_messages (id, session_id, message_data, created_at) \
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .bind(id)
                .bind(session)
                .bind(message_data)
                .bind(created_at)
                .execute(&mut *tx)
                .await
                .map_err(query_failed)?;
            }
            tx.commit().await.map_err(query_failed)?;
        }
        DbPool::Postgres(pool, _) => {
            let mut tx = pool.begin().await.map_err(query_failed)?;
            sqlx::query(
                "INSERT INTO agent_sessions (session_id) VALUES ($1) \
                 ON CONFLICT (session_id) DO NOTHING",
            )
            .bind(session)
            .execute(&mut *tx)
            .await
            .map_err(query_failed)?;
            sqlx::query("SELECT 1 FROM agent_sessions WHERE session_id = $1 FOR UPDATE")
                .bind(session)
                .fetch_optional(&mut *tx)
                .await
                .map_err(query_failed)?;
            let present: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM agent_messages WHERE id = ANY($1::bigint[])",
            )
            .bind(&ids)
            .fetch_one(&mut *tx)
            .await
            .map_err(query_failed)?;
            if present > 0 {
                return Err(already());
            }
            for row in &rows {
                let ArchivedRow::Postgres { row_json, .. } = row else {
                    return Err(other_backend(&path));
                };
                sqlx::query(
                    "INSERT INTO agent_messages \
                     SELECT * FROM json_populate_record(NULL::agent_messages, $1::json)",
                )
                .bind(row_json)
                .execute(&mut *tx)
                .await
                .map_err(query_failed)?;
            }
            tx.commit().await.map_err(query_failed)?;
        }
        DbPool::Mysql(..) => return Err(other_backend(&path)),
    }
    let undone = path.with_file_name(
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .replace(ARCHIVE_EXTENSION, UNDONE_EXTENSION),
    );
    std::fs::rename(&path, &undone).map_err(|e| io_failure(&path, e))?;
    Ok(UndoneTrim {
        id: session.to_owned(),
        archive: undone,
        rows_restored: rows.len(),
    })
}

fn other_backend(path: &Path) -> SourceError {
    SourceError::failure(format!(
        "{} holds rows of another kind of database: nothing was written",
        path.display()
    ))
}
