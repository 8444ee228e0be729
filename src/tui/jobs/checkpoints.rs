//! A LangGraph thread's jobs: its tree (no checkpoint decoded) and the one checkpoint shown,
//! read and counted off the UI thread.

use std::sync::Arc;

use super::slot::{Slot, Tasks, report};
use crate::inspect::langgraph_thread::{CheckpointState, ThreadTree, load_checkpoint};
use crate::memory::langgraph::budget::MessagesBudget;
use crate::memory::tokens::TokenCounter;
use crate::sources::langgraph::saver::LangGraphDb;
use crate::store::CancelFlag;
use crate::store::Store;
use crate::tui::state::checkpoints::{CheckpointWrite, ShownCheckpoint};
use crate::tui::update::{CheckpointLoad, CheckpointLoaded, CheckpointWritten};

/// Starts the load requested as `generation` in its kind's slot.
pub(super) fn load(tasks: &mut Tasks, generation: u64, store: Arc<Store>, load: CheckpointLoad) {
    match load {
        CheckpointLoad::Tree { thread_id } => {
            tasks.load(Slot::CheckpointTree, generation, |reply| async move {
                let result = tree(&store, &thread_id).await.map_err(report);
                reply.send(CheckpointLoaded::Tree(result));
            })
        }
        CheckpointLoad::Checkpoint {
            thread_id,
            namespace,
            checkpoint_id,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, generation, |reply| async move {
            let result = match read(&store, &thread_id, &namespace, &checkpoint_id).await {
                Ok(state) => count(Arc::new(state), counter, max_tokens).await,
                Err(error) => Err(report(error)),
            };
            reply.send(CheckpointLoaded::Shown(result));
        }),
        CheckpointLoad::Count {
            state,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, generation, |reply| async move {
            let result = count(state, counter, max_tokens).await;
            reply.send(CheckpointLoaded::Shown(result));
        }),
    }
}

/// Runs a confirmed write to its end.
pub(super) fn write(tasks: &mut Tasks, store: Arc<Store>, write: CheckpointWrite) {
    let reply = tasks.reply();
    tasks.write(CancelFlag::default(), async move {
        let thread_id = match &write {
            CheckpointWrite::Trim { thread_id, .. } | CheckpointWrite::Undo { thread_id } => {
                thread_id.clone()
            }
        };
        let result = written(&store, write).await;
        reply.send(CheckpointWritten { thread_id, result });
    });
}

async fn tree(store: &Store, thread_id: &str) -> Result<ThreadTree, String> {
    let db = LangGraphDb::open(store).map_err(report)?;
    let tree = db.tree(thread_id).await.map_err(report)?;
    ThreadTree::of(thread_id, &tree, None).map_err(report)
}

async fn read(
    store: &Store,
    thread_id: &str,
    namespace: &str,
    checkpoint_id: &str,
) -> Result<CheckpointState, String> {
    let db = LangGraphDb::open(store).map_err(report)?;
    load_checkpoint(&db, thread_id, namespace, checkpoint_id)
        .await
        .map_err(report)
}

/// Carries a confirmed write out, in the saver's own format, and says what it did.
async fn written(store: &Store, write: CheckpointWrite) -> Result<String, String> {
    let db = LangGraphDb::open(store).map_err(report)?;
    match write {
        CheckpointWrite::Trim {
            thread_id,
            checkpoint_id,
            remove,
        } => {
            let target = db.trim_target(&thread_id).await.map_err(report)?;
            if target.checkpoint_id != checkpoint_id {
                return Err(format!(
                    "thread {thread_id} moved on to checkpoint {} since the preview: nothing \
                     written; preview it again",
                    target.checkpoint_id
                ));
            }
            let applied = db.apply_trim(&target, &remove).await.map_err(report)?;
            Ok(format!(
                "wrote checkpoint {} after {}: {} messages removed, {} left (u undoes it)",
                applied.checkpoint_id,
                applied.parent_checkpoint_id,
                applied.removed.len(),
                applied.messages_after
            ))
        }
        CheckpointWrite::Undo { thread_id } => {
            let undone = db.undo_trim(&thread_id).await.map_err(report)?;
            Ok(format!(
                "deleted trim checkpoint {}; the latest is {} again",
                undone.checkpoint_id, undone.latest_checkpoint_id
            ))
        }
    }
}

/// Counts the messages on a blocking thread: a long thread's tokenizing takes a while.
async fn count(
    state: Arc<CheckpointState>,
    counter: TokenCounter,
    max_tokens: i64,
) -> Result<ShownCheckpoint, String> {
    tokio::task::spawn_blocking(move || {
        let budget = MessagesBudget::compute(&state.messages, &counter, max_tokens)
            .map_err(|e| e.to_string());
        ShownCheckpoint {
            state,
            budget,
            max_tokens,
        }
    })
    .await
    .map_err(report)
}
