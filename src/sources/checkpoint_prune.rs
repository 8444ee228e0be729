//! The checkpoint-prune capability: a source whose threads save a checkpoint at every step (a
//! LangGraph database) deletes each thread's older checkpoints, every deleted row archived
//! first (stopped before its commit, it deletes nothing and leaves no file), and puts an
//! archive back, only into the database it came from.

use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::conversation::{SourceError, SourceFuture};
use crate::store::{CancelFlag, Store};

/// What a prune keeps of each thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepRule {
    /// The newest checkpoints of each namespace kept whatever their age (at least 1: the one
    /// the thread reads from).
    pub keep_last: usize,
    /// Only checkpoints saved before this instant (nanoseconds since 1970) are deleted.
    pub before_unix_nanos: Option<u64>,
}

/// The threads and the rule a prune applies.
#[derive(Debug, Clone)]
pub struct PruneRequest {
    /// Empty: every thread.
    pub threads: Vec<String>,
    pub rule: KeepRule,
    /// The cut-off, as given.
    pub before: Option<String>,
}

/// One thread's part of a prune.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ThreadPrune {
    pub thread_id: String,
    pub checkpoints_before: usize,
    pub checkpoints: usize,
    pub writes: i64,
    pub blobs: usize,
    pub bytes: i64,
}

impl ThreadPrune {
    /// The thread's figures as both front ends print them: its checkpoints deleted of those it
    /// had ("12 of 15"), its writes, its blobs, and its bytes as `bytes` words them.
    pub fn figures(&self, bytes: impl Fn(i64) -> String) -> [String; 4] {
        use crate::format::thousands;
        [
            format!(
                "{} of {}",
                thousands(self.checkpoints as u64),
                thousands(self.checkpoints_before as u64)
            ),
            thousands(self.writes),
            thousands(self.blobs as u64),
            bytes(self.bytes),
        ]
    }
}

/// What a prune deletes (or deleted), thread by thread.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PrunePlan {
    /// What wrote the rows: "SqliteSaver", "PostgresSaver".
    pub saver: &'static str,
    pub keep_last: usize,
    /// The cut-off, as given.
    pub before: Option<String>,
    pub threads: Vec<ThreadPrune>,
    pub checkpoints: usize,
    pub writes: i64,
    pub blobs: usize,
    pub bytes: i64,
}

/// What an archive held, once restored.
#[derive(Debug, Clone, Serialize)]
pub struct RestoredArchive {
    pub path: PathBuf,
    /// What wrote the rows: "SqliteSaver", "PostgresSaver".
    pub saver: &'static str,
    /// The database the archive names (`None`: an archive of the first version).
    pub from: Option<String>,
    pub rows: usize,
    /// The parent links set again (a link whose checkpoint is no longer there is not).
    pub parents: usize,
}

/// An archive a prune wrote, as an undo names it before putting it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedPrune {
    pub path: PathBuf,
    /// The threads it holds rows of.
    pub threads: Vec<String>,
    /// Its checkpoints, and every row with their writes and blobs.
    pub checkpoints: usize,
    pub rows: usize,
}

/// Why a prune or a restore wrote nothing, told apart where a front end says more than the
/// message.
#[derive(Debug, thiserror::Error)]
pub enum PruneFailure {
    /// Stopped before its commit: the transaction rolled back, the partial archive removed.
    #[error("interrupted: nothing was deleted")]
    Interrupted,
    /// The archive's rows are another database's.
    #[error("{message}")]
    OtherDatabase {
        message: String,
        /// The database the archive names (`None`: an archive of the first version).
        from: Option<String>,
    },
    /// The archive's rows are in this database already.
    #[error("{0}")]
    AlreadyRestored(String),
    #[error(transparent)]
    Source(#[from] SourceError),
}

/// A prune's or a restore's write, or why it wrote nothing.
pub type PruneFuture<'a, T> = BoxFuture<'a, Result<T, PruneFailure>>;

/// Prunes of a source's threads of checkpoints, and their undoing.
pub trait CheckpointPrune: Sync {
    /// What a prune would delete, changing nothing.
    fn plan<'a>(
        &'a self,
        store: &'a Store,
        request: &'a PruneRequest,
    ) -> SourceFuture<'a, PrunePlan>;

    /// Prunes in one transaction, every deleted row archived to `archive` (a new file) first;
    /// `stop` set before the commit rolls it back and removes the archive.
    fn prune<'a>(
        &'a self,
        store: &'a Store,
        request: &'a PruneRequest,
        archive: &'a Path,
        stop: &'a CancelFlag,
    ) -> PruneFuture<'a, PrunePlan>;

    /// Gives the space a prune freed back to the file system.
    fn vacuum<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, ()>;

    /// Puts every row of `archive` back in one transaction, when this is the database it came
    /// from and its rows are not here already.
    fn restore<'a>(
        &'a self,
        store: &'a Store,
        archive: &'a Path,
    ) -> PruneFuture<'a, RestoredArchive>;

    /// A new archive's path in memscope's data directory `data_dir`, made absolute.
    fn new_archive(&self, data_dir: &Path) -> std::io::Result<PathBuf>;

    /// Where the archives are in memscope's data directory `data_dir`, made absolute.
    fn archive_dir(&self, data_dir: &Path) -> std::io::Result<PathBuf>;

    /// The newest archive in `archives` holding rows of `thread`; `None` when none does.
    fn newest_archive_of(
        &self,
        archives: &Path,
        thread: &str,
    ) -> Result<Option<ArchivedPrune>, SourceError>;

    /// The command line that puts `archive`'s rows back into `database` (its URL).
    fn restore_command(&self, database: &str, archive: &Path) -> String;
}
