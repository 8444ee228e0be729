//! Opening a SQLite file so that reading it changes nothing: not the file, not the `-wal` and
//! `-shm` beside it, and no side file left behind where there was none. Memory databases are
//! often copies (a backup, a forensic copy of a bot's `.db` with its log), and SQLite's usual
//! read-only open still writes: it rebuilds the log's index in `-shm`, or creates both side files
//! of a WAL-mode database, and a read-write open folds the log into the file when it closes.
//!
//! What each file asks for:
//! - a log (`-wal`) with its index (`-shm`) beside it: the log is read through a read-only index
//!   (SQLite's `readonly_shm`), which writes neither; a process writing the database meanwhile
//!   is still seen;
//! - a log without its index: refused, since any open would create the index; an empty log
//!   holds nothing and counts as none (SQLite itself leaves one behind when a read-only open
//!   races the last writer's close, which removes the index first);
//! - no log, a WAL-mode file that may be written: read-write with `query_only` on, so SQLite
//!   removes the side files it creates when the last connection closes, as the file's own
//!   clients do; with nothing logged, closing leaves the file as it was;
//! - no log, a WAL-mode file that cannot be written: `immutable`, which creates no side file;
//! - a rollback-journal file: plainly read-only, which creates no side file.

use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;

/// Why a file cannot be read without changing what lies beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogWithoutIndex {
    /// The `-wal` file that is there.
    pub log: PathBuf,
}

/// What lies beside a SQLite file: its log (`-wal`) with its length, and the log's index
/// (`-shm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SideFiles {
    pub log_bytes: Option<u64>,
    pub index: bool,
}

/// What lies beside the file at `path` now.
pub(crate) fn side_files(path: &Path) -> SideFiles {
    SideFiles {
        log_bytes: std::fs::metadata(side_file(path, "-wal"))
            .ok()
            .map(|meta| meta.len()),
        index: side_file(path, "-shm").exists(),
    }
}

fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `options` (opening `path`) made read-only in the way that file needs, as the module says.
pub(crate) fn read_only_options(
    options: SqliteConnectOptions,
    path: &Path,
) -> Result<SqliteConnectOptions, LogWithoutIndex> {
    match side_files(path) {
        SideFiles {
            log_bytes: Some(_),
            index: true,
        } => {
            return Ok(options
                .read_only(true)
                .filename(uri_with(path, "mode=ro&readonly_shm=1")));
        }
        SideFiles {
            log_bytes: Some(bytes),
            index: false,
        } if bytes > 0 => {
            return Err(LogWithoutIndex {
                log: side_file(path, "-wal"),
            });
        }
        _ => {}
    }
    let writable =
        std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && !meta.permissions().readonly());
    Ok(match (is_wal_mode(path), writable) {
        (true, true) => options.pragma("query_only", "ON"),
        (true, false) => options.immutable(true),
        (false, _) => options.read_only(true),
    })
}

/// Whether the file's header says it keeps a write-ahead log (its read and write versions, at
/// bytes 18 and 19, are 2). A file too short to say is not.
fn is_wal_mode(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut header))
        .is_ok_and(|()| header[18] == 2 && header[19] == 2)
}

/// A `file:` URI naming `path` with `query`: the characters a URI's path cannot hold as they are
/// (`%`, `?`, `#`) escaped, as SQLite reads them back.
fn uri_with(path: &Path, query: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push('?');
    uri.push_str(query);
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_becomes_a_uri_sqlite_reads_back() {
        assert_eq!(
            uri_with(Path::new("/tmp/a b/c%d?e#f.db"), "mode=ro"),
            "file:/tmp/a b/c%25d%3fe%23f.db?mode=ro"
        );
        assert_eq!(uri_with(Path::new("rel.db"), "x=1"), "file:rel.db?x=1");
    }

    #[test]
    fn a_log_without_its_index_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("m.db");
        std::fs::write(&db, b"").unwrap();
        std::fs::write(dir.path().join("m.db-wal"), b"a logged page").unwrap();
        let refused = read_only_options(SqliteConnectOptions::new().filename(&db), &db);
        assert_eq!(
            refused.unwrap_err(),
            LogWithoutIndex {
                log: dir.path().join("m.db-wal")
            }
        );
    }

    #[test]
    fn an_empty_log_without_its_index_counts_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("m.db");
        std::fs::write(&db, b"").unwrap();
        std::fs::write(dir.path().join("m.db-wal"), b"").unwrap();
        assert!(read_only_options(SqliteConnectOptions::new().filename(&db), &db).is_ok());
    }

    #[test]
    fn the_header_tells_the_journal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("wal.db");
        let mut header = vec![0u8; 100];
        header[18] = 2;
        header[19] = 2;
        std::fs::write(&wal, &header).unwrap();
        let rollback = dir.path().join("rollback.db");
        header[18] = 1;
        header[19] = 1;
        std::fs::write(&rollback, &header).unwrap();
        let short = dir.path().join("short.db");
        std::fs::write(&short, b"SQLite").unwrap();
        assert!(is_wal_mode(&wal));
        assert!(!is_wal_mode(&rollback));
        assert!(!is_wal_mode(&short));
    }
}
