//! What every `mb` subcommand starts from (the database opened for memory bases, the settings
//! the flags give, the output format), and the resolve and emit steps they share with
//! `capture` and `watch`.

use serde::Serialize;

use crate::cli::args::SyncArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, emit};
use crate::kb::embedder::HASHING_MODEL;
use crate::store::memory_bases::MemoryBaseInfo;
use crate::store::{Part, Store};
use crate::sync::{MbSettings, SyncError, Syncer};

/// A sync failure as the CLI reports it: "already syncing" has its own exit code.
pub(super) fn sync_failed(error: SyncError) -> CliError {
    CliError::from(error)
}

/// `[memory_bases]` of the configuration with the command line's overrides.
pub(super) fn mb_settings(context: &Context, args: &SyncArgs) -> MbSettings {
    MbSettings::from_config(&context.resolved).with(&args.overrides())
}

pub(super) fn syncer_for(
    context: &Context,
    store: &Store,
    model: &str,
    args: &SyncArgs,
) -> CliResult<Syncer> {
    mb_settings(context, args)
        .syncer(store.clone(), model)
        .map_err(sync_failed)
}

/// One `mb` subcommand's call: the opened store, the flags and the output format.
pub(super) struct MbContext<'a> {
    pub(super) context: &'a Context,
    pub(super) store: Store,
    pub(super) sync_args: &'a SyncArgs,
    pub(super) json: bool,
}

impl<'a> MbContext<'a> {
    pub(super) async fn open(context: &'a Context, sync_args: &'a SyncArgs) -> CliResult<Self> {
        Ok(MbContext {
            store: context.open_for(Part::MemoryBases).await?,
            context,
            sync_args,
            json: context.global.json,
        })
    }

    pub(super) fn settings(&self) -> MbSettings {
        mb_settings(self.context, self.sync_args)
    }

    /// A syncer whose embedder is `model`.
    pub(super) fn syncer(&self, model: &str) -> CliResult<Syncer> {
        syncer_for(self.context, &self.store, model, self.sync_args)
    }

    /// A base by id or name, with a syncer for its embedding model. Finding it embeds nothing,
    /// so the hashing embedder does.
    pub(super) async fn resolve(&self, key: &str) -> CliResult<(MemoryBaseInfo, Syncer)> {
        let base = self
            .syncer(HASHING_MODEL)?
            .resolve(key)
            .await
            .map_err(sync_failed)?;
        let syncer = self.syncer(&base.embedding_model)?;
        Ok((base, syncer))
    }

    /// Prints `value` (as JSON, or as `human`'s text) and succeeds.
    pub(super) fn emit<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> CliResult {
        emit(self.json, value, human)?;
        Ok(ExitCode::Ok)
    }
}
