//! The archive a prune writes before it commits (its restore is `restore.rs`). A file of JSON
//! lines: a header naming the saver and where the rows came from (the database's URL, password
//! redacted, and the checkpoints the prune left in each thread: their presence is what proves a
//! database is the one pruned), then one line per deleted row (`table` and its cells) and one per
//! parent a prune cleared. SQLite cells keep their storage class (`text`, `blob` in hex, `int`,
//! `real`, `null`); PostgreSQL rows are `row_to_json` text, put back through
//! `json_populate_record`, so every value comes back byte for byte. The file is written under a
//! temporary name, flushed to disk and renamed whole: an archive either exists complete or not
//! at all (a writer dropped before it finished removes its partial file).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Column, Row, TypeInfo, ValueRef};

use super::saver::Saver;
use crate::store::CancelFlag;

const FORMAT: &str = "memscope LangGraph prune archive";
/// Version 2 records the archive's origin; version 1 did not (its restore proves the database
/// by the kept checkpoints its parent lines name).
const VERSION: u32 = 2;
const VERSIONS: [u32; 2] = [1, 2];
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
    #[error(
        "{} came from {}, not from this database ({here}): thread {thread} here has none of \
         the checkpoints that prune left in it, so these rows are another database's; nothing \
         was written",
        path.display(),
        from.as_deref().unwrap_or("a database it does not name")
    )]
    OtherDatabase {
        path: PathBuf,
        /// The URL the archive names (`None`: an archive of the first version).
        from: Option<String>,
        here: String,
        thread: String,
    },
    #[error(
        "{} was written by an earlier memscope, which did not record the database it came \
         from, and names no checkpoint its prune left in thread {thread}: memscope cannot tell \
         that this is that database; nothing was written",
        path.display()
    )]
    Unproven { path: PathBuf, thread: String },
    #[error(
        "the rows of {} are in this database already (it was restored before): nothing was \
         written",
        path.display()
    )]
    AlreadyRestored { path: PathBuf },
    #[error("restoring {path} failed, nothing was restored: {source}")]
    Restore { path: PathBuf, source: sqlx::Error },
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Header {
    format: String,
    pub(super) version: u32,
    pub(super) saver: Saver,
    /// Where the rows came from (from version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) origin: Option<Origin>,
}

/// The database an archive's rows came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// Its URL, password redacted (a SQLite file's absolute path).
    pub database: String,
    /// The checkpoints each pruned thread kept.
    pub threads: Vec<KeptCheckpoints>,
}

/// The checkpoints a prune left in a thread, `(namespace, id)`: while one of them is in a
/// database, that database is the one pruned (or a copy of it), wherever its file now is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptCheckpoints {
    pub thread_id: String,
    pub kept: Vec<(String, String)>,
}

/// One SQLite value with its storage class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// Hex.
    Blob(String),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Line {
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

pub struct ArchiveWriter {
    /// `None` once finished.
    out: Option<BufWriter<File>>,
    partial: PathBuf,
    path: PathBuf,
}

/// A writer dropped before [`ArchiveWriter::finish`] (a failed or interrupted prune) removes
/// its partial file: nothing of an archive that never completed is left behind.
impl Drop for ArchiveWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_owned(),
        source,
    }
}

impl ArchiveWriter {
    /// Starts `path` (which must not exist) under a temporary name beside it.
    pub fn create(
        path: &Path,
        saver: Saver,
        origin: Origin,
    ) -> Result<ArchiveWriter, ArchiveError> {
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
            out: Some(BufWriter::new(file)),
            partial,
            path: path.to_owned(),
        };
        let header = Header {
            format: FORMAT.to_owned(),
            version: VERSION,
            saver,
            origin: Some(origin),
        };
        writer.line(&header)?;
        Ok(writer)
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), ArchiveError> {
        let text = serde_json::to_string(value).expect("archive lines serialize");
        let out = self.out.as_mut().expect("an unfinished writer");
        writeln!(out, "{text}").map_err(io(&self.partial))
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
    pub fn finish(mut self) -> Result<(), ArchiveError> {
        let out = self.out.take().expect("an unfinished writer");
        let written = out
            .into_inner()
            .map_err(|e| ArchiveError::Io {
                path: self.partial.clone(),
                source: e.into_error(),
            })
            .and_then(|file| file.sync_all().map_err(io(&self.partial)))
            .and_then(|()| std::fs::rename(&self.partial, &self.path).map_err(io(&self.path)));
        if let Err(error) = written {
            let _ = std::fs::remove_file(&self.partial);
            return Err(error);
        }
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
    Ok(archive_dir(data_dir)?.join(format!("prune-{stamp}.jsonl")))
}

/// Where memscope's archives are in its data directory, made absolute.
pub fn archive_dir(data_dir: &Path) -> std::io::Result<PathBuf> {
    std::path::absolute(data_dir.join("langgraph-archives"))
}

/// Aborts the process at `point` when [`FAULT_VARIABLE`] names it.
pub fn fault_point(point: &str) {
    if std::env::var(FAULT_VARIABLE).is_ok_and(|v| v == point) {
        std::process::abort();
    }
}

/// Stops at `point` when [`FAULT_VARIABLE`] names it, saying so on standard error, until `stop`
/// is set: a test interrupts a prune while its archive is being written.
pub async fn pause_point(point: &str, stop: &CancelFlag) {
    if std::env::var(FAULT_VARIABLE).is_ok_and(|v| v == point) {
        eprintln!("paused at {point}");
        while !stop.is_cancelled() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
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

pub(super) fn unhex(text: &str) -> Option<Vec<u8>> {
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

/// An archive's header alone, checked: what a look for a thread's archive reads of each file.
pub(super) fn read_header(path: &Path) -> Result<Header, ArchiveError> {
    let file = File::open(path).map_err(io(path))?;
    header(path, &mut BufReader::new(file).lines())
}

fn header(
    path: &Path,
    lines: &mut std::io::Lines<BufReader<File>>,
) -> Result<Header, ArchiveError> {
    let bad = |reason: String| ArchiveError::Format {
        path: path.to_owned(),
        line: 1,
        reason,
    };
    let first = lines
        .next()
        .ok_or_else(|| bad("the file is empty".to_owned()))?
        .map_err(io(path))?;
    let header: Header = serde_json::from_str(&first).map_err(|e| bad(e.to_string()))?;
    if header.format != FORMAT || !VERSIONS.contains(&header.version) {
        return Err(bad(format!("{} version {}", header.format, header.version)));
    }
    Ok(header)
}

/// Every line of an archive, checked before anything is written.
pub(super) fn read(path: &Path) -> Result<(Header, Vec<Line>), ArchiveError> {
    let file = File::open(path).map_err(io(path))?;
    let bad = |line: usize, reason: String| ArchiveError::Format {
        path: path.to_owned(),
        line,
        reason,
    };
    let mut lines = BufReader::new(file).lines();
    let header = header(path, &mut lines)?;
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
