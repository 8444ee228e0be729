//! A LangGraph database's jobs: a thread's tree (no checkpoint decoded) and the one checkpoint
//! shown, read and counted off the UI thread; a prune's plan; the confirmed writes. All through
//! the source's checkpoint history, checkpoint trim and checkpoint prune.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::slot::{Slot, Tasks, report};
use crate::format::{byte_size, noun, thousands};
use crate::memory::tokens::TokenCounter;
use crate::sources::checkpoint_history::{CheckpointHistory, CheckpointState};
use crate::sources::checkpoint_prune::{CheckpointPrune, KeepRule, PrunePlan, PruneRequest};
use crate::sources::checkpoint_trim::CheckpointTrim;
use crate::sources::{checkpoint_history_of, checkpoint_prune_of, checkpoint_trim_of};
use crate::store::CancelFlag;
use crate::store::Store;
use crate::tui::state::checkpoints::{CheckpointWrite, ShownCheckpoint};
use crate::tui::state::prune::{PlannedPrune, UndoPlan, kept};
use crate::tui::update::{CheckpointLoad, CheckpointLoaded, CheckpointWritten, LoadReport};

/// Starts the load requested as `generation` in its kind's slot.
pub(super) fn load(tasks: &mut Tasks, generation: u64, store: Arc<Store>, load: CheckpointLoad) {
    match load {
        CheckpointLoad::Tree { thread_id } => {
            tasks.load(Slot::CheckpointTree, generation, |reply| async move {
                let result = async {
                    let history = histories_of(&store)?;
                    history.tree(&store, &thread_id).await.map_err(report)
                };
                reply.send(CheckpointLoaded::Tree(result.await));
            })
        }
        CheckpointLoad::Checkpoint {
            thread_id,
            namespace,
            checkpoint_id,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, generation, |reply| async move {
            let result = async {
                let history = histories_of(&store)?;
                let state = history
                    .checkpoint(&store, &thread_id, &namespace, &checkpoint_id)
                    .await
                    .map_err(report)?;
                count(history, Arc::new(state), counter, max_tokens).await
            };
            reply.send(CheckpointLoaded::Shown(result.await));
        }),
        CheckpointLoad::Count {
            state,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, generation, |reply| async move {
            let result = async { count(histories_of(&store)?, state, counter, max_tokens).await };
            reply.send(CheckpointLoaded::Shown(result.await));
        }),
    }
}

/// A prune of `threads` (empty: every thread) keeping each one's `keep_last` newest
/// checkpoints, with no cut-off date: the TUI's rule.
pub(super) fn prune_request(threads: Vec<String>, keep_last: usize) -> PruneRequest {
    PruneRequest {
        threads,
        rule: KeepRule {
            keep_last,
            before_unix_nanos: None,
        },
        before: None,
    }
}

/// Plans a prune, and names the new archive in `data_dir` its rows would go to.
pub(super) fn plan_prune(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    data_dir: PathBuf,
    request: PruneRequest,
) {
    tasks.load(Slot::PrunePlan, generation, |reply| async move {
        let planned = async {
            let prunes = prunes_of(&store)?;
            let plan = prunes.plan(&store, &request).await.map_err(report)?;
            let archive = prunes
                .new_archive(&data_dir)
                .map_err(|e| format!("{}: {e}", data_dir.display()))?;
            let restore = prunes.restore_command(store.url(), &archive);
            Ok::<_, String>(PlannedPrune {
                plan,
                archive,
                restore,
            })
        };
        reply.send(LoadReport::PrunePlan(planned.await));
    })
}

/// What `u` undoes on `thread_id`: memscope's trim when it is the thread's latest checkpoint,
/// else the newest archive in `data_dir` holding the thread's rows.
pub(super) fn plan_undo(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    data_dir: PathBuf,
    thread_id: String,
) {
    tasks.load(Slot::Undo, generation, |reply| async move {
        let planned = async {
            let trims = trims_of(&store)?;
            if trims.is_trimmed(&store, &thread_id).await.map_err(report)? {
                return Ok(UndoPlan::Trim);
            }
            let prunes = prunes_of(&store)?;
            let archives = prunes.archive_dir(&data_dir).map_err(report)?;
            match prunes
                .newest_archive_of(&archives, &thread_id)
                .map_err(report)?
            {
                Some(archive) => Ok(UndoPlan::Restore(archive)),
                None => Err(format!(
                    "its latest checkpoint is not memscope's trim, and no archive in {} holds \
                     a prune of it",
                    archives.display()
                )),
            }
        };
        reply.send(LoadReport::Undo(planned.await));
    })
}

/// Runs a confirmed write to its end.
pub(super) fn write(tasks: &mut Tasks, store: Arc<Store>, write: CheckpointWrite) {
    let reply = tasks.reply();
    tasks.write(CancelFlag::default(), async move {
        let result = written(&store, write.clone()).await;
        reply.send(CheckpointWritten { write, result });
    });
}

/// The database's checkpoint history; every database the checkpoint view opens has one.
fn histories_of(store: &Store) -> Result<&'static dyn CheckpointHistory, String> {
    checkpoint_history_of(store.profile().source)
        .ok_or_else(|| "memscope does not read this database's threads of checkpoints".to_owned())
}

/// The database's checkpoint trim; every database the checkpoint view opens has one.
fn trims_of(store: &Store) -> Result<&'static dyn CheckpointTrim, String> {
    checkpoint_trim_of(store.profile().source)
        .ok_or_else(|| "memscope does not trim this database's threads".to_owned())
}

/// The database's checkpoint prune; every database the checkpoint view opens has one.
fn prunes_of(store: &Store) -> Result<&'static dyn CheckpointPrune, String> {
    checkpoint_prune_of(store.profile().source)
        .ok_or_else(|| "memscope does not prune this database's checkpoints".to_owned())
}

/// Carries a confirmed write out, in the saver's own format, and says what it did.
async fn written(store: &Store, write: CheckpointWrite) -> Result<String, String> {
    match write {
        CheckpointWrite::Trim {
            thread_id,
            checkpoint_id,
            remove,
        } => {
            let applied = trims_of(store)?
                .apply(store, &thread_id, &checkpoint_id, &remove)
                .await
                .map_err(report)?;
            Ok(format!(
                "wrote checkpoint {} after {}: {} removed, {} left (u undoes it)",
                applied.checkpoint_id,
                applied.parent_checkpoint_id,
                crate::format::count(applied.removed.len() as u64, "message"),
                thousands(applied.messages_after as u64)
            ))
        }
        CheckpointWrite::Undo { thread_id } => {
            let undone = trims_of(store)?
                .undo(store, &thread_id)
                .await
                .map_err(report)?;
            Ok(format!(
                "deleted trim checkpoint {}; the latest is {} again",
                undone.checkpoint_id, undone.latest_checkpoint_id
            ))
        }
        CheckpointWrite::Prune {
            threads,
            keep_last,
            archive,
        } => {
            store.ensure_writable_in_place().map_err(report)?;
            let prunes = prunes_of(store)?;
            let request = prune_request(threads, keep_last);
            let pruned = prunes
                .prune(store, &request, &archive, &CancelFlag::default())
                .await
                .map_err(report)?;
            let restore = prunes.restore_command(store.url(), &archive);
            Ok(pruned_message(&pruned, &archive, &restore))
        }
        CheckpointWrite::Restore { thread_id, archive } => {
            store.ensure_writable_in_place().map_err(report)?;
            let restored = prunes_of(store)?
                .restore(store, &archive)
                .await
                .map_err(report)?;
            Ok(format!(
                "undid thread {thread_id}'s last prune: restored {} {} and {} {} from {}",
                thousands(restored.rows as u64),
                noun(restored.rows as u64, "row"),
                thousands(restored.parents as u64),
                noun(restored.parents as u64, "parent link"),
                restored.path.display()
            ))
        }
    }
}

/// What a prune deleted, and where the rows went with the command `restore` that puts them
/// back.
fn pruned_message(pruned: &PrunePlan, archive: &Path, restore: &str) -> String {
    let threads = pruned.threads.len() as u64;
    format!(
        "pruned {} {}, {} {} and {} {} ({}) of {} {}, each keeping {}; archived in {} ({} puts \
         them back)",
        thousands(pruned.checkpoints as u64),
        noun(pruned.checkpoints as u64, "checkpoint"),
        thousands(pruned.writes),
        noun(pruned.writes.max(0) as u64, "write"),
        thousands(pruned.blobs as u64),
        noun(pruned.blobs as u64, "blob"),
        byte_size(pruned.bytes.max(0) as u64),
        thousands(threads),
        noun(threads, "thread"),
        kept(pruned.keep_last),
        archive.display(),
        restore
    )
}

/// Counts the messages on a blocking thread: a long thread's tokenizing takes a while.
async fn count(
    history: &'static dyn CheckpointHistory,
    state: Arc<CheckpointState>,
    counter: TokenCounter,
    max_tokens: i64,
) -> Result<Box<ShownCheckpoint>, String> {
    tokio::task::spawn_blocking(move || {
        let budget = history
            .budget(&state, &counter, max_tokens)
            .map_err(|e| e.to_string());
        Box::new(ShownCheckpoint {
            state,
            budget,
            max_tokens,
        })
    })
    .await
    .map_err(report)
}
