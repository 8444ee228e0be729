//! The archive a prune writes before it commits, and its restore. A file of JSON lines: a
//! header naming the saver, then one line per deleted row (`table` and its cells) and one per
//! parent a prune cleared. SQLite cells keep their storage class (`text`, `blob` in hex, `int`,
//! `real`, `null`); PostgreSQL rows are `row_to_json` text, put back through
//! `json_populate_record`, so every value comes back byte for byte. The file is written under a
//! temporary name, flushed to disk and renamed whole: an archive either exists complete or not
//! at all.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Column, Row, TypeInfo, ValueRef};

use super::read::LangGraphPool;
use super::saver::Saver;

const FORMAT: &str = "memscope LangGraph prune archive";
const VERSION: u32 = 1;
/// The saver tables an archive may name (never any other name reaches SQL).
const TABLES: &[&str] = &[
    "checkpoints",
    "writes",
    "checkpoint_writes",
    "checkpoint_blobs",
];
/// Set to a fault point's name, the process aborts there (tests prove a kill changes nothing).
pub const FAULT_VARIABLE: &str = "MEMSCOPE_FAULT_POINT";

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} exists already; name a new archive file")]
    Exists(PathBuf),
    #[error("{path}: line {line} is not part of a memscope archive: {reason}")]
    Format {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path} holds {archived:?}'s rows; this database is {here:?}'s")]
    OtherSaver {
        path: PathBuf,
        archived: Saver,
        here: Saver,
    },
    #[error("restoring {path} failed, nothing was restored: {source}")]
    Restore { path: PathBuf, source: sqlx::Error },
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    saver: Saver,
}

/// One SQLite value with its storage class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// Hex.
    Blob(String),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// A deleted SQLite row.
    SqliteRow {
        table: String,
        cells: Vec<(String, Cell)>,
    },
    /// A deleted PostgreSQL row, as `row_to_json` wrote it.
    PostgresRow {
        table: String,
        row_json: String,
    },
    /// A kept checkpoint's parent before the prune cleared it.
    SqliteParent {
        cells: Vec<(String, Cell)>,
    },
    PostgresParent {
        row_json: String,
    },
}

/// What an archive held, once restored.
#[derive(Debug, Clone, Serialize)]
pub struct Archive {
    pub path: PathBuf,
    pub saver: Saver,
    pub rows: usize,
    pub parents: usize,
}

pub struct ArchiveWriter {
    out: BufWriter<File>,
    partial: PathBuf,
    path: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_owned(),
        source,
    }
}

impl ArchiveWriter {
    /// Starts `path` (which must not exist) under a temporary name beside it.
    pub fn create(path: &Path, saver: Saver) -> Result<ArchiveWriter, ArchiveError> {
        if path.exists() {
            return Err(ArchiveError::Exists(path.to_owned()));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial).map_err(io(&partial))?;
        let mut writer = ArchiveWriter {
            out: BufWriter::new(file),
            partial,
            path: path.to_owned(),
        };
        let header = Header {
            format: FORMAT.to_owned(),
            version: VERSION,
            saver,
        };
        writer.line(&header)?;
        Ok(writer)
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), ArchiveError> {
        let text = serde_json::to_string(value).expect("archive lines serialize");
        writeln!(self.out, "{text}").map_err(io(&self.partial))
    }

    pub fn sqlite_row(&mut self, table: &str, row: &SqliteRow) -> Result<(), ArchiveError> {
        self.line(&Line::SqliteRow {
            table: table.to_owned(),
            cells: cells(row),
        })
    }

    pub fn sqlite_parent(&mut self, row: &SqliteRow) -> Result<(), ArchiveError> {
        self.line(&Line::SqliteParent { cells: cells(row) })
    }

    pub fn postgres_row(&mut self, table: &str, row_json: &str) -> Result<(), ArchiveError> {
        self.line(&Line::PostgresRow {
            table: table.to_owned(),
            row_json: row_json.to_owned(),
        })
    }

    pub fn postgres_parent(&mut self, row_json: &str) -> Result<(), ArchiveError> {
        self.line(&Line::PostgresParent {
            row_json: row_json.to_owned(),
        })
    }

    /// Flushes the file to disk and gives it its name.
    pub fn finish(self) -> Result<(), ArchiveError> {
        let file = self.out.into_inner().map_err(|e| ArchiveError::Io {
            path: self.partial.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(io(&self.partial))?;
        std::fs::rename(&self.partial, &self.path).map_err(io(&self.path))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io(dir))?;
        }
        Ok(())
    }
}

/// A new archive's path in memscope's data directory, named by the time it is asked for, made
/// absolute: the CLI and the TUI write their archives side by side and print where.
pub fn new_archive_path(data_dir: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ");
    std::path::absolute(
        data_dir
            .join("langgraph-archives")
            .join(format!("prune-{stamp}.jsonl")),
    )
}

/// Aborts the process at `point` when [`FAULT_VARIABLE`] names it.
pub fn fault_point(point: &str) {
    if std::env::var(FAULT_VARIABLE).is_ok_and(|v| v == point) {
        std::process::abort();
    }
}

fn cells(row: &SqliteRow) -> Vec<(String, Cell)> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let raw = row.try_get_raw(i).expect("a column of the row");
            let cell = if raw.is_null() {
                Cell::Null
            } else {
                match raw.type_info().name() {
                    "INTEGER" => Cell::Int(row.get(i)),
                    "REAL" => Cell::Real(row.get(i)),
                    "TEXT" => Cell::Text(row.get(i)),
                    _ => Cell::Blob(hex(&row.get::<Vec<u8>, _>(i))),
                }
            };
            (column.name().to_owned(), cell)
        })
        .collect()
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex, a table lookup per nibble (archives hold every deleted byte).
fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX_DIGITS[usize::from(b >> 4)]);
        out.push(HEX_DIGITS[usize::from(b & 0x0f)]);
    }
    String::from_utf8(out).expect("hex digits are ASCII")
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let text = text.as_bytes();
    if text.len() % 2 != 0 {
        return None;
    }
    text.chunks_exact(2)
        .map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}

/// Every line of an archive, checked before anything is written.
fn read(path: &Path) -> Result<(Header, Vec<Line>), ArchiveError> {
    let file = File::open(path).map_err(io(path))?;
    let bad = |line: usize, reason: String| ArchiveError::Format {
        path: path.to_owned(),
        line,
        reason,
    };
    let mut lines = BufReader::new(file).lines();
    let first = lines
        .next()
        .ok_or_else(|| bad(1, "the file is empty".to_owned()))?
        .map_err(io(path))?;
    let header: Header = serde_json::from_str(&first).map_err(|e| bad(1, e.to_string()))?;
    if header.format != FORMAT || header.version != VERSION {
        return Err(bad(
            1,
            format!("{} version {}", header.format, header.version),
        ));
    }
    let mut body = Vec::new();
    for (n, text) in lines.enumerate() {
        let text = text.map_err(io(path))?;
        let line: Line = serde_json::from_str(&text).map_err(|e| bad(n + 2, e.to_string()))?;
        let checked = match &line {
            Line::SqliteRow { table, cells } => {
                check_table(table).and_then(|()| check_cells(cells))
            }
            Line::PostgresRow { table, .. } => check_table(table),
            Line::SqliteParent { cells } => check_cells(cells),
            Line::PostgresParent { .. } => Ok(()),
        };
        checked.map_err(|reason| bad(n + 2, reason))?;
        body.push(line);
    }
    Ok((header, body))
}

fn check_table(table: &str) -> Result<(), String> {
    if TABLES.contains(&table) {
        Ok(())
    } else {
        Err(format!("`{table}` is no table of LangGraph's savers"))
    }
}

fn check_cells(cells: &[(String, Cell)]) -> Result<(), String> {
    for (name, cell) in cells {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{name}` is no column name"));
        }
        if let Cell::Blob(text) = cell
            && unhex(text).is_none()
        {
            return Err(format!("column {name} is not hex"));
        }
    }
    Ok(())
}

/// Puts an archive's rows back in one transaction: every row inserted as it was (a row that is
/// there already fails the whole restore), then the parents the prune cleared.
pub async fn restore(pool: &LangGraphPool, path: &Path) -> Result<Archive, ArchiveError> {
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
    let rows = lines
        .iter()
        .filter(|l| matches!(l, Line::SqliteRow { .. } | Line::PostgresRow { .. }))
        .count();
    insert_all(pool, &lines).await.map_err(failed)?;
    Ok(Archive {
        path: path.to_owned(),
        saver: header.saver,
        rows,
        parents: lines.len() - rows,
    })
}

async fn insert_all(pool: &LangGraphPool, lines: &[Line]) -> sqlx::Result<()> {
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
                query.execute(&mut *tx).await?;
            }
            tx.commit().await
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
                sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .bind(row_json)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&bytes)), Some(bytes));
        assert_eq!(hex(&[0xab, 0x01]), "ab01");
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }
}
