//! The checkpoint-trim capability: a source whose conversations are threads of checkpoints (a
//! LangGraph thread) is trimmed by saving one more checkpoint, as the framework itself would
//! write it, without the removed messages; undo deletes that checkpoint again. Only removals:
//! a message the trim changed or added would not land where the plan puts it. A list stored in
//! place is trimmed by the stored trim (`stored_trim.rs`) instead.

use serde::Serialize;

use super::conversation::{SourceError, SourceFuture};
use super::opened::TrimStart;
use crate::memory::trim::{MessageCounter, TrimPlan};
use crate::store::Store;

/// A thread's latest state, as a trim reads it.
#[derive(Debug, Clone)]
pub struct ThreadState {
    pub thread_id: String,
    pub checkpoint_id: String,
    /// What a trim report says it trims: "LangGraph thread … at checkpoint … (its `messages`)".
    pub label: String,
    /// The messages a model is sent, counted, with the cut `history` shows of them: where a
    /// preview starts.
    pub start: TrimStart,
    /// Each message's id in the thread, in the same order; `None` where it has none.
    pub message_ids: Vec<Option<String>>,
}

impl ThreadState {
    /// The ids of the messages at `indices`, in the thread's order: what a removal names.
    pub fn ids_at(&self, indices: impl IntoIterator<Item = usize>) -> Vec<String> {
        indices
            .into_iter()
            .filter_map(|i| self.message_ids.get(i).cloned().flatten())
            .collect()
    }
}

/// What an applied trim wrote.
#[derive(Debug, Clone, Serialize)]
pub struct TrimCheckpoint {
    pub thread_id: String,
    pub parent_checkpoint_id: String,
    pub checkpoint_id: String,
    pub step: i64,
    pub removed: Vec<String>,
    pub messages_after: usize,
}

/// What an undo deleted.
#[derive(Debug, Clone, Serialize)]
pub struct UndoneTrimCheckpoint {
    pub thread_id: String,
    pub checkpoint_id: String,
    /// The checkpoint the thread reads from again.
    pub latest_checkpoint_id: String,
}

/// Trims of a source's threads of checkpoints.
pub trait CheckpointTrim: Sync {
    /// The latest state of `thread`, counted with `counter` and cut under `max_tokens` as
    /// `history` cuts it.
    fn latest<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        counter: &'a dyn MessageCounter,
        max_tokens: i64,
    ) -> SourceFuture<'a, ThreadState>;

    /// The indices of the messages `plan` removes, refused (a usage error) when the plan does
    /// more than remove.
    fn removals(&self, plan: &TrimPlan) -> Result<Vec<usize>, SourceError>;

    /// Saves the removal of the messages `remove` names as a new checkpoint, child of
    /// `checkpoint_id`, which must still be the thread's latest.
    fn apply<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        checkpoint_id: &'a str,
        remove: &'a [String],
    ) -> SourceFuture<'a, TrimCheckpoint>;

    /// Whether the thread's latest checkpoint is memscope's trim, which `undo` deletes.
    fn is_trimmed<'a>(&'a self, store: &'a Store, thread: &'a str) -> SourceFuture<'a, bool>;

    /// Deletes memscope's trim checkpoint, while it is still the thread's latest.
    fn undo<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
    ) -> SourceFuture<'a, UndoneTrimCheckpoint>;
}
