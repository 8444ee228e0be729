//! A LangGraph thread's jobs: its tree (no checkpoint decoded) and the one checkpoint shown,
//! read and counted off the UI thread.

use std::sync::Arc;

use super::slot::{Slot, Tasks, report};
use crate::inspect::langgraph_thread::{CheckpointState, ThreadTree, load_checkpoint};
use crate::memory::langgraph::budget::MessagesBudget;
use crate::memory::tokens::TokenCounter;
use crate::sources::langgraph::saver::LangGraphDb;
use crate::store::Store;
use crate::tui::state::checkpoints::ShownCheckpoint;
use crate::tui::update::{CheckpointEffect, CheckpointEvent};

pub(super) fn start(tasks: &mut Tasks, store: Arc<Store>, effect: CheckpointEffect) {
    let reply = tasks.reply();
    match effect {
        CheckpointEffect::LoadTree {
            generation,
            thread_id,
        } => tasks.load(Slot::CheckpointTree, async move {
            let result = tree(&store, &thread_id).await.map_err(report);
            reply.send(CheckpointEvent::Tree { generation, result });
        }),
        CheckpointEffect::LoadCheckpoint {
            generation,
            thread_id,
            namespace,
            checkpoint_id,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, async move {
            let result = match read(&store, &thread_id, &namespace, &checkpoint_id).await {
                Ok(state) => count(Arc::new(state), counter, max_tokens).await,
                Err(error) => Err(report(error)),
            };
            reply.send(CheckpointEvent::Shown { generation, result });
        }),
        CheckpointEffect::Count {
            generation,
            state,
            counter,
            max_tokens,
        } => tasks.load(Slot::Checkpoint, async move {
            let result = count(state, counter, max_tokens).await;
            reply.send(CheckpointEvent::Shown { generation, result });
        }),
    }
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
