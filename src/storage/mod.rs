//! Dify's object storage, read through Apache OpenDAL: node memory files, offloaded node outputs
//! and message files, on a local disk, in S3 (or an S3-compatible server) or another OpenDAL
//! service.
//!
//! Every read is bounded: an object over [`files::MAX_FILE_BYTES`] is refused after a `stat`,
//! before its bytes are fetched, and each object gets [`files::READ_TIMEOUT`]. On a local disk
//! the file type is checked first (a FIFO, socket or device is never opened, a symlink counts as
//! its target) and the read runs on a thread of its own, so a stalled mount never holds the
//! process. Many objects are read concurrently, at most [`CONCURRENT_READS`] at a time, in the
//! order asked. A missing or unreadable object is an error value naming its key, never a panic.

pub mod dify_env;
pub mod files;
pub mod settings;

use std::time::Duration;

use futures_util::StreamExt;

use files::{FileReadError, ReadLimits};
pub use settings::{AddressStyle, S3Settings, Secret, StorageBackend};

/// Objects read at once: enough to hide a network round trip behind the others, few enough
/// not to flood a server or open hundreds of files.
pub const CONCURRENT_READS: usize = 32;

/// Why the storage could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot use {what}: {reason}")]
pub struct StorageError {
    pub what: String,
    pub reason: String,
}

/// An open object storage.
#[derive(Clone)]
pub struct ObjectStore {
    backend: StorageBackend,
    operator: opendal::Operator,
    limits: ReadLimits,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl ObjectStore {
    /// Sets up a client for `backend`. Nothing is contacted yet: a wrong endpoint or key shows
    /// as an error on each object read.
    pub fn open(backend: &StorageBackend) -> Result<ObjectStore, StorageError> {
        // OpenDAL's HTTP client takes rustls' process-wide crypto provider; another part of
        // the process may have installed one already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (scheme, options) = backend.opendal_options();
        let operator = opendal::Operator::via_iter(&scheme, options).map_err(|e| StorageError {
            what: backend.describe(),
            reason: match e.kind() {
                opendal::ErrorKind::Unsupported => format!(
                    "this memscope has no OpenDAL service `{scheme}` (it has fs and s3); \
                     copy the files to a local directory or an S3 bucket and point [storage] there"
                ),
                _ => format!("{e}; check the [storage] settings (or Dify's) for this service"),
            },
        })?;
        Ok(ObjectStore {
            backend: backend.clone(),
            operator,
            limits: ReadLimits::default(),
        })
    }

    /// The same storage with other limits (tests use small ones).
    pub fn with_limits(mut self, limits: ReadLimits) -> ObjectStore {
        self.limits = limits;
        self
    }

    pub fn backend(&self) -> &StorageBackend {
        &self.backend
    }

    /// Where `key` lives, for messages.
    pub fn location(&self, key: &str) -> String {
        self.backend.location(key)
    }

    /// Reads one object in full, within the limits.
    pub async fn read(&self, key: &str) -> Result<Vec<u8>, FileReadError> {
        let key = key.trim_start_matches('/');
        if key.is_empty() || key.ends_with('/') || key.split('/').any(|part| part == "..") {
            return Err(FileReadError::Io(
                "not an object key (empty, a directory or `..`)".to_owned(),
            ));
        }
        match &self.backend {
            StorageBackend::Fs { root } => {
                // A local read runs on its own thread with its own runtime: a FIFO swapped in
                // after the type check or a stalled mount blocks that thread only.
                let path = root.join(key);
                let operator = self.operator.clone();
                let limits = self.limits;
                let key = key.to_owned();
                files::within(limits.timeout, move || {
                    files::check_local(&path, limits.max_bytes)?;
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| FileReadError::Io(e.to_string()))?;
                    runtime.block_on(read_bounded(&operator, &key, limits.max_bytes))
                })
                .await
            }
            _ => match tokio::time::timeout(
                self.limits.timeout,
                read_bounded(&self.operator, key, self.limits.max_bytes),
            )
            .await
            {
                Ok(result) => result,
                Err(_) => Err(FileReadError::TimedOut(self.limits.timeout)),
            },
        }
    }

    /// Reads many objects concurrently (at most [`CONCURRENT_READS`] at once); the results are
    /// in the order of `keys`.
    pub async fn read_many(&self, keys: &[String]) -> Vec<Result<Vec<u8>, FileReadError>> {
        // Owned futures: a stream of futures borrowing `self` is not `Send` for every
        // lifetime, which spawned tasks need.
        let reads: Vec<_> = keys
            .iter()
            .map(|key| {
                let (store, key) = (self.clone(), key.clone());
                async move { store.read(&key).await }
            })
            .collect();
        futures_util::stream::iter(reads)
            .buffered(CONCURRENT_READS)
            .collect()
            .await
    }

    /// Whether each object exists, concurrently, in the order of `keys`: its size, or why not.
    pub async fn sizes(&self, keys: &[String]) -> Vec<Result<u64, FileReadError>> {
        let stats: Vec<_> = keys
            .iter()
            .map(|key| {
                let (operator, timeout) = (self.operator.clone(), self.limits.timeout);
                let key = key.trim_start_matches('/').to_owned();
                async move {
                    match tokio::time::timeout(timeout, operator.stat(&key)).await {
                        Ok(Ok(meta)) => Ok(meta.content_length()),
                        Ok(Err(e)) => Err(read_error(&e)),
                        Err(_) => Err(FileReadError::TimedOut(timeout)),
                    }
                }
            })
            .collect();
        futures_util::stream::iter(stats)
            .buffered(CONCURRENT_READS)
            .collect()
            .await
    }

    /// Every object key under `prefix` (a directory such as `node_memory/`), sorted. A prefix
    /// with nothing under it has no keys.
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, FileReadError> {
        let listed = tokio::time::timeout(
            LIST_TIMEOUT,
            self.operator.list_with(prefix).recursive(true),
        )
        .await
        .map_err(|_| FileReadError::TimedOut(LIST_TIMEOUT))?;
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) if e.kind() == opendal::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(read_error(&e)),
        };
        let mut keys: Vec<String> = entries
            .iter()
            .filter(|entry| !entry.metadata().is_dir() && !entry.path().ends_with('/'))
            .map(|entry| entry.path().to_owned())
            .collect();
        keys.sort();
        Ok(keys)
    }
}

/// How long listing a prefix may take (it pages through every key below it).
const LIST_TIMEOUT: Duration = Duration::from_secs(60);

/// `stat`, refuse what is too large or not a file, then read: an oversized object is never
/// downloaded. (A ranged read alone cannot do it: OpenDAL refuses a range longer than the
/// object.)
async fn read_bounded(
    operator: &opendal::Operator,
    key: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, FileReadError> {
    let meta = operator.stat(key).await.map_err(|e| read_error(&e))?;
    if meta.is_dir() {
        return Err(FileReadError::NotRegular("a directory"));
    }
    if meta.content_length() > max_bytes {
        return Err(FileReadError::TooLarge {
            size: meta.content_length(),
            limit: max_bytes,
        });
    }
    if meta.content_length() == 0 {
        return Ok(Vec::new());
    }
    let buffer = operator
        .read_with(key)
        .range(0..meta.content_length().min(max_bytes + 1))
        .await
        .map_err(|e| read_error(&e))?;
    if buffer.len() as u64 > max_bytes {
        return Err(FileReadError::TooLarge {
            size: buffer.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(buffer.to_vec())
}

/// An OpenDAL error as a read error, with what to check next.
fn read_error(error: &opendal::Error) -> FileReadError {
    use opendal::ErrorKind;
    match error.kind() {
        ErrorKind::NotFound => FileReadError::NotFound,
        ErrorKind::PermissionDenied => FileReadError::Io(
            "access denied: check the storage credentials and the bucket's policy".to_owned(),
        ),
        ErrorKind::ConfigInvalid => FileReadError::Io(format!(
            "the storage settings are invalid ({}); check [storage] or Dify's settings",
            error.message()
        )),
        _ => FileReadError::Io(format!("{}: {}", error.kind(), error.message())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(root: &std::path::Path) -> ObjectStore {
        ObjectStore::open(&StorageBackend::Fs {
            root: root.to_owned(),
        })
        .unwrap()
    }

    #[tokio::test]
    async fn local_objects_are_read_in_order_and_missing_ones_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/1.json"), b"[1]").unwrap();
        std::fs::write(dir.path().join("a/empty.json"), b"").unwrap();
        let store = local(dir.path());
        let keys = vec![
            "a/b/1.json".to_owned(),
            "a/none.json".to_owned(),
            "a/empty.json".to_owned(),
        ];
        let read = store.read_many(&keys).await;
        assert_eq!(read[0].as_deref().unwrap(), b"[1]");
        assert_eq!(read[1], Err(FileReadError::NotFound));
        assert_eq!(read[2].as_deref().unwrap(), b"");
        assert_eq!(
            store.list("a/").await.unwrap(),
            vec!["a/b/1.json".to_owned(), "a/empty.json".to_owned()]
        );
        assert_eq!(store.list("nothing/").await.unwrap(), Vec::<String>::new());
        let sizes = store.sizes(&keys).await;
        assert_eq!(sizes[0], Ok(3));
        assert_eq!(sizes[1], Err(FileReadError::NotFound));
    }

    #[tokio::test]
    async fn local_fifos_are_never_opened_and_keys_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let store = local(dir.path()).with_limits(ReadLimits {
            timeout: Duration::from_secs(600),
            ..ReadLimits::default()
        });
        assert_eq!(
            store.read("x.json").await,
            Err(FileReadError::NotRegular("a FIFO (named pipe)"))
        );
        assert!(matches!(
            store.read("../etc/passwd").await,
            Err(FileReadError::Io(_))
        ));
    }

    #[tokio::test]
    async fn objects_over_the_limit_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.json"), vec![b' '; 1000]).unwrap();
        let store = local(dir.path()).with_limits(ReadLimits {
            max_bytes: 999,
            ..ReadLimits::default()
        });
        assert_eq!(
            store.read("big.json").await,
            Err(FileReadError::TooLarge {
                size: 1000,
                limit: 999
            })
        );
    }

    #[test]
    fn an_unknown_service_says_what_this_build_has() {
        let err = ObjectStore::open(&StorageBackend::Other {
            scheme: "hdfs".into(),
            options: Default::default(),
            secrets: Default::default(),
        })
        .unwrap_err();
        assert!(err.to_string().contains("fs and s3"), "{err}");
    }
}
