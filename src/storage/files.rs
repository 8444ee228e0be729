//! Reading files under the storage root (node memory JSON files, offloaded node outputs) without
//! ever blocking: the file type is checked before opening (a FIFO, socket or device is never
//! opened, a symlink counts as what it points to), files over a size limit are refused, and the
//! whole read runs on its own thread with a time limit, so a FIFO swapped in at the last moment
//! or a stalled network mount gives an error within a bounded time instead of a hang.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest file memscope reads from storage (node memory files are a few KB; Dify offloads
/// outputs of a few hundred KB and more).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// How long one file may take, from its type check to its last byte.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a storage file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileReadError {
    #[error("it does not exist")]
    NotFound,
    #[error("it is {0}, not a regular file; memscope never opens those")]
    NotRegular(&'static str),
    #[error("it is {size} bytes, over the {limit}-byte limit for storage files")]
    TooLarge { size: u64, limit: u64 },
    #[error("no answer within {} s (a stalled mount?)", .0.as_secs())]
    TimedOut(Duration),
    #[error("{0}")]
    Io(String),
}

/// Limits of one read.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    pub max_bytes: u64,
    pub timeout: Duration,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_bytes: MAX_FILE_BYTES,
            timeout: READ_TIMEOUT,
        }
    }
}

/// Reads a regular file (or a symlink to one) in full, within `limits`.
pub async fn read_file(path: &Path, limits: ReadLimits) -> Result<Vec<u8>, FileReadError> {
    let path = path.to_path_buf();
    within(limits.timeout, move || {
        read_regular(&path, limits.max_bytes)
    })
    .await
}

/// [`read_file`] for synchronous callers: the same checks and limits, without a runtime.
pub fn read_file_blocking(path: &Path, limits: ReadLimits) -> Result<Vec<u8>, FileReadError> {
    let path = path.to_path_buf();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(read_regular(&path, limits.max_bytes));
    });
    receiver
        .recv_timeout(limits.timeout)
        .unwrap_or(Err(FileReadError::TimedOut(limits.timeout)))
}

/// Runs `work` on a thread of its own and waits at most `timeout` for it. A thread stuck in the
/// kernel is left behind (detached: it never holds the process open), the caller goes on.
pub async fn within<T: Send + 'static>(
    timeout: Duration,
    work: impl FnOnce() -> Result<T, FileReadError> + Send + 'static,
) -> Result<T, FileReadError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match tokio::time::timeout(timeout, receiver).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(FileReadError::Io("the reading thread died".to_owned())),
        Err(_) => Err(FileReadError::TimedOut(timeout)),
    }
}

fn io(e: std::io::Error) -> FileReadError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FileReadError::NotFound
    } else {
        FileReadError::Io(e.to_string())
    }
}

/// Checks, without opening it, that `path` is a regular file (a symlink counts as its target)
/// of at most `max_bytes`.
pub fn check_local(path: &Path, max_bytes: u64) -> Result<(), FileReadError> {
    // `metadata` follows symlinks: a link is judged by its target.
    check_type(&std::fs::metadata(path).map_err(io)?, max_bytes)
}

fn read_regular(path: &PathBuf, max_bytes: u64) -> Result<Vec<u8>, FileReadError> {
    check_local(path, max_bytes)?;
    let file = std::fs::File::open(path).map_err(io)?;
    // The file may have been swapped between the check and the open: check what was opened.
    check_type(&file.metadata().map_err(io)?, max_bytes)?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(FileReadError::TooLarge {
            size: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(bytes)
}

fn check_type(meta: &std::fs::Metadata, max_bytes: u64) -> Result<(), FileReadError> {
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(FileReadError::NotRegular(describe_type(&kind)));
    }
    if meta.len() > max_bytes {
        return Err(FileReadError::TooLarge {
            size: meta.len(),
            limit: max_bytes,
        });
    }
    Ok(())
}

fn describe_type(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
    }

    #[tokio::test]
    async fn regular_files_and_symlinks_to_them_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, b"[1]").unwrap();
        assert_eq!(
            read_file(&file, ReadLimits::default()).await.unwrap(),
            b"[1]"
        );
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            read_file(&link, ReadLimits::default()).await.unwrap(),
            b"[1]"
        );
    }

    #[tokio::test]
    async fn fifos_directories_and_links_to_fifos_are_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.json");
        mkfifo(&fifo);
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        // A generous limit: a refusal comes from the type check, not the clock.
        let limits = ReadLimits {
            timeout: Duration::from_secs(600),
            ..ReadLimits::default()
        };
        for path in [&fifo, &link] {
            let err = read_file(path, limits).await.unwrap_err();
            assert_eq!(err, FileReadError::NotRegular("a FIFO (named pipe)"));
        }
        assert_eq!(
            read_file_blocking(&fifo, limits).unwrap_err(),
            FileReadError::NotRegular("a FIFO (named pipe)")
        );
        assert_eq!(
            read_file(dir.path(), limits).await.unwrap_err(),
            FileReadError::NotRegular("a directory")
        );
        assert_eq!(
            read_file(&dir.path().join("none"), limits)
                .await
                .unwrap_err(),
            FileReadError::NotFound
        );
    }

    #[tokio::test]
    async fn files_over_the_limit_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.json");
        std::fs::write(&file, vec![b' '; 1000]).unwrap();
        let limits = ReadLimits {
            max_bytes: 999,
            ..ReadLimits::default()
        };
        assert_eq!(
            read_file(&file, limits).await.unwrap_err(),
            FileReadError::TooLarge {
                size: 1000,
                limit: 999
            }
        );
    }

    #[tokio::test]
    async fn a_read_that_never_returns_times_out() {
        // Work that blocks until the test ends stands for a read stuck in the kernel.
        let (_keep, blocked) = std::sync::mpsc::channel::<()>();
        let err = within(Duration::from_millis(50), move || {
            let _ = blocked.recv();
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(matches!(err, FileReadError::TimedOut(_)));
    }
}
