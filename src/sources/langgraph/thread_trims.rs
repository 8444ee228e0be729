//! LangGraph's threads through the checkpoint-trim capability: the thread's latest `messages`
//! counted and cut as `history` cuts them, the trim written as LangGraph's own `update_state`
//! with `RemoveMessage`s (`trim.rs`), and its undo.

use super::decode::budget::channel_budget;
use super::decode::removal::removal_indices;
use super::saver::LangGraphDb;
use super::trim::TrimWriteError;
use crate::memory::trim::{MessageCounter, TrimPlan};
use crate::sources::checkpoint_trim::{
    CheckpointTrim, ThreadState, TrimCheckpoint, UndoneTrimCheckpoint,
};
use crate::sources::conversation::{SourceError, SourceFuture};
use crate::store::Store;

/// Trims of a LangGraph database's threads.
pub struct ThreadTrims;

/// A trim that cannot be written or undone is a failure, said with its causes.
impl From<TrimWriteError> for SourceError {
    fn from(error: TrimWriteError) -> Self {
        SourceError::failure(crate::store::error_chain_text(&error))
    }
}

impl CheckpointTrim for ThreadTrims {
    fn latest<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        counter: &'a dyn MessageCounter,
        max_tokens: i64,
    ) -> SourceFuture<'a, ThreadState> {
        Box::pin(async move {
            let target = LangGraphDb::open(store)?.trim_target(thread).await?;
            let budget = channel_budget(&target.messages, counter, max_tokens)
                .map_err(|e| SourceError::failure(e.to_string()))?;
            Ok(ThreadState {
                label: format!(
                    "LangGraph thread {} at checkpoint {} (its `messages`)",
                    target.thread_id, target.checkpoint_id
                ),
                start: budget.trim_start(),
                message_ids: target.messages.into_iter().map(|m| m.id).collect(),
                thread_id: target.thread_id,
                checkpoint_id: target.checkpoint_id,
            })
        })
    }

    fn removals(&self, plan: &TrimPlan) -> Result<Vec<usize>, SourceError> {
        removal_indices(plan).map_err(|e| SourceError::usage(e.to_string()))
    }

    fn apply<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        checkpoint_id: &'a str,
        remove: &'a [String],
    ) -> SourceFuture<'a, TrimCheckpoint> {
        Box::pin(async move {
            let db = LangGraphDb::open(store)?;
            let target = db.trim_target(thread).await?;
            if target.checkpoint_id != checkpoint_id {
                return Err(TrimWriteError::Moved {
                    thread: thread.to_owned(),
                    latest: target.checkpoint_id,
                }
                .into());
            }
            Ok(db.apply_trim(&target, remove).await?)
        })
    }

    fn is_trimmed<'a>(&'a self, store: &'a Store, thread: &'a str) -> SourceFuture<'a, bool> {
        Box::pin(async move { Ok(LangGraphDb::open(store)?.latest_is_trim(thread).await?) })
    }

    fn undo<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
    ) -> SourceFuture<'a, UndoneTrimCheckpoint> {
        Box::pin(async move { Ok(LangGraphDb::open(store)?.undo_trim(thread).await?) })
    }
}
