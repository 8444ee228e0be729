//! An archive put back (`checkpoints restore`, and the TUI's), in one transaction: every row
//! inserted as it was, then the parent links the prune cleared. Only into the database the
//! archive came from: each of its threads must still hold a checkpoint the prune left there
//! (so a moved or copied file restores, and another database's same-named thread does not);
//! and only once: rows already there are said to be there, in plain words.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::archive::{ArchiveError, Cell, KeptCheckpoints, Line, read, read_header, unhex};
use super::read::LangGraphPool;
use crate::sources::checkpoint_prune::{ArchivedPrune, RestoredArchive};
use crate::store::absolute_url;

/// The command line that puts an archive's rows back into `database` (its URL, password
/// redacted), on one line as it runs: the CLI prints it after a prune, the TUI shows it.
pub fn restore_command(database: &str, archive: &Path) -> String {
    format!(
        "memscope --write --db {} checkpoints restore {} --yes",
        shell_word(&absolute_url(database)),
        shell_word(&archive.display().to_string())
    )
}

/// `text` as one word of a POSIX shell: as it is when nothing in it is special, else quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Puts an archive's rows back into the database at `here` (its redacted URL), refusing
/// another database and an archive already restored, with nothing written.
pub async fn restore(
    pool: &LangGraphPool,
    here: &str,
    path: &Path,
) -> Result<RestoredArchive, ArchiveError> {
    let (header, lines) = read(path)?;
    if header.saver != pool.saver() {
        return Err(ArchiveError::OtherSaver {
            path: path.to_owned(),
            archived: header.saver,
            here: pool.saver(),
        });
    }
    let failed = |source| ArchiveError::Restore {
        path: path.to_owned(),
        source,
    };
    let from = header.origin.as_ref().map(|o| o.database.clone());
    let threads = match &header.origin {
        Some(origin) => origin.threads.clone(),
        None => kept_in_lines(&lines),
    };
    for thread in &threads {
        if thread.kept.is_empty() {
            return Err(ArchiveError::Unproven {
                path: path.to_owned(),
                thread: thread.thread_id.clone(),
            });
        }
        let here_now = checkpoint_keys(pool, &thread.thread_id)
            .await
            .map_err(failed)?;
        if !thread.kept.iter().any(|key| here_now.contains(key)) {
            return Err(ArchiveError::OtherDatabase {
                path: path.to_owned(),
                from,
                here: here.to_owned(),
                thread: thread.thread_id.clone(),
            });
        }
    }
    let rows = lines
        .iter()
        .filter(|l| matches!(l, Line::SqliteRow { .. } | Line::PostgresRow { .. }))
        .count();
    let parents = insert_all(pool, &lines)
        .await
        .map_err(|error| match &error {
            sqlx::Error::Database(e) if e.is_unique_violation() => ArchiveError::AlreadyRestored {
                path: path.to_owned(),
            },
            _ => failed(error),
        })?;
    Ok(RestoredArchive {
        path: path.to_owned(),
        saver: header.saver.name(),
        from,
        rows,
        parents,
    })
}

/// The newest archive in `dir` (where [`super::archive::new_archive_path`] puts them, named by
/// the time) holding rows of `thread`; `None` when no archive there does.
pub fn newest_archive_of(dir: &Path, thread: &str) -> Result<Option<ArchivedPrune>, ArchiveError> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                name.starts_with("prune-") && name.ends_with(".jsonl")
            })
            .collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ArchiveError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    paths.sort();
    for path in paths.into_iter().rev() {
        // An archive recording its threads is read whole only when it holds this one.
        let named = read_header(&path)?.origin.map(|origin| origin.threads);
        if named.is_some_and(|threads| threads.iter().all(|t| t.thread_id != thread)) {
            continue;
        }
        let (header, lines) = read(&path)?;
        let threads: Vec<String> = match &header.origin {
            Some(origin) => origin.threads.iter().map(|t| t.thread_id.clone()).collect(),
            None => kept_in_lines(&lines)
                .into_iter()
                .map(|t| t.thread_id)
                .collect(),
        };
        if !threads.iter().any(|t| t == thread) {
            continue;
        }
        let table = |line: &Line| match line {
            Line::SqliteRow { table, .. } | Line::PostgresRow { table, .. } => Some(table.clone()),
            _ => None,
        };
        let tables: Vec<String> = lines.iter().filter_map(table).collect();
        return Ok(Some(ArchivedPrune {
            path,
            threads,
            checkpoints: tables.iter().filter(|t| *t == "checkpoints").count(),
            rows: tables.len(),
        }));
    }
    Ok(None)
}

/// A thread's checkpoints in a database, `(namespace, id)`.
async fn checkpoint_keys(
    pool: &LangGraphPool,
    thread: &str,
) -> sqlx::Result<HashSet<(String, String)>> {
    let keys: Vec<(String, String)> = match pool {
        LangGraphPool::Sqlite(pool) => {
            sqlx::query_as(
                "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?1",
            )
            .bind(thread)
            .fetch_all(pool)
            .await?
        }
        LangGraphPool::Postgres(pool) => {
            sqlx::query_as(
                "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = $1",
            )
            .bind(thread)
            .fetch_all(pool)
            .await?
        }
    };
    Ok(keys.into_iter().collect())
}

/// The threads of an archive of the first version, which recorded no origin, each with the
/// kept checkpoints its parent lines name (a kept checkpoint whose parent the prune deleted).
fn kept_in_lines(lines: &[Line]) -> Vec<KeptCheckpoints> {
    let mut threads: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in lines {
        let fields = match line {
            Line::SqliteRow { cells, .. } | Line::SqliteParent { cells } => {
                let text = |name: &str| {
                    cells.iter().find_map(|(n, cell)| match cell {
                        Cell::Text(text) if n == name => Some(text.clone()),
                        _ => None,
                    })
                };
                [
                    text("thread_id"),
                    text("checkpoint_ns"),
                    text("checkpoint_id"),
                ]
            }
            Line::PostgresRow { row_json, .. } | Line::PostgresParent { row_json } => {
                let row: serde_json::Value = serde_json::from_str(row_json).unwrap_or_default();
                let text = |name: &str| row.get(name).and_then(|v| v.as_str()).map(str::to_owned);
                [
                    text("thread_id"),
                    text("checkpoint_ns"),
                    text("checkpoint_id"),
                ]
            }
        };
        let [Some(thread), ns, id] = fields else {
            continue;
        };
        let kept = threads.entry(thread).or_default();
        if let (Line::SqliteParent { .. } | Line::PostgresParent { .. }, Some(ns), Some(id)) =
            (line, ns, id)
        {
            kept.push((ns, id));
        }
    }
    threads
        .into_iter()
        .map(|(thread_id, kept)| KeptCheckpoints { thread_id, kept })
        .collect()
}

/// Inserts the rows, then sets the cleared parents again; the parent links set, counted where
/// the checkpoint was there to take one.
async fn insert_all(pool: &LangGraphPool, lines: &[Line]) -> sqlx::Result<usize> {
    // Rows first, so a cleared parent is set again once the parent is back.
    let mut ordered: Vec<&Line> = lines
        .iter()
        .filter(|l| matches!(l, Line::SqliteRow { .. } | Line::PostgresRow { .. }))
        .collect();
    ordered.extend(
        lines
            .iter()
            .filter(|l| matches!(l, Line::SqliteParent { .. } | Line::PostgresParent { .. })),
    );
    let mut parents = 0;
    match pool {
        LangGraphPool::Sqlite(pool) => {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            for line in ordered {
                let (sql, cells) = match line {
                    Line::SqliteRow { table, cells } => {
                        let names: Vec<String> = cells
                            .iter()
                            .map(|(name, _)| format!("\"{name}\""))
                            .collect();
                        let marks = vec!["?"; cells.len()].join(", ");
                        (
                            format!(
                                "INSERT INTO {table} ({}) VALUES ({marks})",
                                names.join(", ")
                            ),
                            cells.iter().collect::<Vec<_>>(),
                        )
                    }
                    Line::SqliteParent { cells } => {
                        let cell = |name: &str| cells.iter().find(|(n, _)| n == name);
                        let ordered: Vec<&(String, Cell)> = [
                            "parent_checkpoint_id",
                            "thread_id",
                            "checkpoint_ns",
                            "checkpoint_id",
                        ]
                        .into_iter()
                        .filter_map(cell)
                        .collect();
                        (
                            "UPDATE checkpoints SET parent_checkpoint_id = ?1 \
                             WHERE thread_id = ?2 AND checkpoint_ns = ?3 AND checkpoint_id = ?4"
                                .to_owned(),
                            ordered,
                        )
                    }
                    _ => continue,
                };
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
                for (_, cell) in cells {
                    query = match cell {
                        Cell::Null => query.bind(None::<String>),
                        Cell::Int(n) => query.bind(*n),
                        Cell::Real(f) => query.bind(*f),
                        Cell::Text(text) => query.bind(text.clone()),
                        Cell::Blob(text) => query.bind(unhex(text).unwrap_or_default()),
                    };
                }
                let done = query.execute(&mut *tx).await?;
                if matches!(line, Line::SqliteParent { .. }) {
                    parents += usize::try_from(done.rows_affected()).unwrap_or(usize::MAX);
                }
            }
            tx.commit().await?;
            Ok(parents)
        }
        LangGraphPool::Postgres(pool) => {
            let mut tx = pool.begin().await?;
            for line in ordered {
                let (sql, row_json) = match line {
                    Line::PostgresRow { table, row_json } => (
                        format!(
                            "INSERT INTO {table} SELECT * FROM json_populate_record(NULL::{table}, $1::json)"
                        ),
                        row_json,
                    ),
                    Line::PostgresParent { row_json } => (
                        "UPDATE checkpoints c SET parent_checkpoint_id = r.parent_checkpoint_id \
                         FROM json_populate_record(NULL::checkpoints, $1::json) r \
                         WHERE c.thread_id = r.thread_id AND c.checkpoint_ns = r.checkpoint_ns \
                         AND c.checkpoint_id = r.checkpoint_id"
                            .to_owned(),
                        row_json,
                    ),
                    _ => continue,
                };
                let done = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .bind(row_json)
                    .execute(&mut *tx)
                    .await?;
                if matches!(line, Line::PostgresParent { .. }) {
                    parents += usize::try_from(done.rows_affected()).unwrap_or(usize::MAX);
                }
            }
            tx.commit().await?;
            Ok(parents)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::archive::{ArchiveWriter, Origin};
    use super::super::saver::Saver;
    use super::*;

    /// An archive of `threads` (no rows) named `prune-STAMP.jsonl` in `dir`.
    fn archive(dir: &Path, stamp: &str, threads: &[&str]) -> PathBuf {
        let path = dir.join(format!("prune-{stamp}.jsonl"));
        let origin = Origin {
            database: "sqlite:///data/agent.db".to_owned(),
            threads: threads
                .iter()
                .map(|t| KeptCheckpoints {
                    thread_id: (*t).to_owned(),
                    kept: vec![(String::new(), "1-z".to_owned())],
                })
                .collect(),
        };
        ArchiveWriter::create(&path, Saver::SqliteSaver, origin)
            .unwrap()
            .finish()
            .unwrap();
        path
    }

    #[test]
    fn a_threads_newest_archive_is_the_newest_one_holding_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none yet");
        assert_eq!(newest_archive_of(&missing, "agent").unwrap(), None);
        archive(dir.path(), "20260301T100000.000000Z", &["agent"]);
        let newest = archive(dir.path(), "20260302T100000.000000Z", &["agent", "other"]);
        // Newer, of another thread only; and a file that is no archive of memscope's.
        archive(dir.path(), "20260303T100000.000000Z", &["other"]);
        std::fs::write(dir.path().join("notes.txt"), "not an archive").unwrap();
        let found = newest_archive_of(dir.path(), "agent").unwrap().unwrap();
        assert_eq!(found.path, newest);
        assert_eq!(found.threads, ["agent", "other"]);
        assert_eq!((found.checkpoints, found.rows), (0, 0));
        assert_eq!(newest_archive_of(dir.path(), "nobody").unwrap(), None);
    }

    #[test]
    fn the_restore_command_runs_as_printed() {
        assert_eq!(
            restore_command("sqlite:///data/agent.db", Path::new("/a/prune.jsonl")),
            "memscope --write --db sqlite:///data/agent.db checkpoints restore /a/prune.jsonl --yes"
        );
        // A word the shell would split or expand is quoted.
        assert_eq!(
            restore_command(
                "postgres://u:***@db/x?sslmode=require",
                Path::new("/my archives/it's.jsonl")
            ),
            "memscope --write --db 'postgres://u:***@db/x?sslmode=require' checkpoints restore \
             '/my archives/it'\\''s.jsonl' --yes"
        );
        // A file named relative to the working directory is named from anywhere.
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            absolute_url("sqlite://./agent.db?mode=rwc"),
            format!("sqlite://{}?mode=rwc", here.join("agent.db").display())
        );
        assert_eq!(absolute_url("sqlite::memory:"), "sqlite::memory:");
        assert_eq!(absolute_url("postgres://h/db"), "postgres://h/db");
    }
}
