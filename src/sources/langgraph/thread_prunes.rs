//! LangGraph's threads through the checkpoint-prune capability: the plan and the prune with its
//! archive (`prune.rs`, `archive.rs`), and the archive put back (`restore.rs`).

use std::path::{Path, PathBuf};

use super::archive::{ArchiveError, archive_dir, new_archive_path};
use super::prune::PruneError;
use super::restore::{newest_archive_of, restore_command};
use super::saver::LangGraphDb;
use crate::sources::checkpoint_prune::{
    ArchivedPrune, CheckpointPrune, PruneFailure, PruneFuture, PrunePlan, PruneRequest,
    RestoredArchive,
};
use crate::sources::conversation::{SourceError, SourceFuture};
use crate::store::{CancelFlag, Store};

/// Prunes of a LangGraph database's threads.
pub struct ThreadPrunes;

/// A prune or a restore that failed is a failure, said with its causes.
impl From<PruneError> for SourceError {
    fn from(error: PruneError) -> Self {
        SourceError::failure(crate::store::error_chain_text(&error))
    }
}

impl From<PruneError> for PruneFailure {
    fn from(error: PruneError) -> Self {
        match error {
            PruneError::Interrupted => PruneFailure::Interrupted,
            PruneError::Archive(ArchiveError::OtherDatabase { ref from, .. }) => {
                PruneFailure::OtherDatabase {
                    from: from.clone(),
                    message: error.to_string(),
                }
            }
            PruneError::Archive(ArchiveError::AlreadyRestored { .. }) => {
                PruneFailure::AlreadyRestored(error.to_string())
            }
            error => PruneFailure::Source(error.into()),
        }
    }
}

impl CheckpointPrune for ThreadPrunes {
    fn plan<'a>(
        &'a self,
        store: &'a Store,
        request: &'a PruneRequest,
    ) -> SourceFuture<'a, PrunePlan> {
        Box::pin(async move { Ok(LangGraphDb::open(store)?.prune_plan(request).await?) })
    }

    fn prune<'a>(
        &'a self,
        store: &'a Store,
        request: &'a PruneRequest,
        archive: &'a Path,
        stop: &'a CancelFlag,
    ) -> PruneFuture<'a, PrunePlan> {
        Box::pin(async move {
            let db = LangGraphDb::open(store).map_err(SourceError::from)?;
            Ok(db.prune(request, archive, stop).await?)
        })
    }

    fn vacuum<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, ()> {
        Box::pin(async move { Ok(LangGraphDb::open(store)?.vacuum().await?) })
    }

    fn restore<'a>(
        &'a self,
        store: &'a Store,
        archive: &'a Path,
    ) -> PruneFuture<'a, RestoredArchive> {
        Box::pin(async move {
            let db = LangGraphDb::open(store).map_err(SourceError::from)?;
            Ok(db.restore(archive).await?)
        })
    }

    fn new_archive(&self, data_dir: &Path) -> std::io::Result<PathBuf> {
        new_archive_path(data_dir)
    }

    fn archive_dir(&self, data_dir: &Path) -> std::io::Result<PathBuf> {
        archive_dir(data_dir)
    }

    fn newest_archive_of(
        &self,
        archives: &Path,
        thread: &str,
    ) -> Result<Option<ArchivedPrune>, SourceError> {
        newest_archive_of(archives, thread)
            .map_err(|e| SourceError::failure(crate::store::error_chain_text(&e)))
    }

    fn restore_command(&self, database: &str, archive: &Path) -> String {
        restore_command(database, archive)
    }
}
