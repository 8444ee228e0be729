//! `trim preview|apply|undo --conversation THREAD` on a database whose conversations are threads
//! of checkpoints (a LangGraph thread): the thread's latest messages as the history every trim
//! reads, counted and cut as `history` cuts them (a preview starts from that cut), and the
//! apply saved as one more checkpoint that only removes messages (a change or a summary would
//! need messages of memscope's making, which the thread would append at the end).

use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::memory::trim::{MessageCounter, TrimPlan};
use crate::sources::checkpoint_trim::{
    CheckpointTrim, ThreadState, TrimCheckpoint, UndoneTrimCheckpoint,
};
use crate::sources::checkpoint_trim_of;
use crate::store::Store;

/// The open database's checkpoint trim, when its conversations are threads of checkpoints.
pub fn trim_of(store: &Store) -> Option<&'static dyn CheckpointTrim> {
    checkpoint_trim_of(store.profile().source)
}

/// A thread's latest state, read for a trim, with the capability that writes its trim.
pub struct LoadedThread {
    pub trim: &'static dyn CheckpointTrim,
    pub state: ThreadState,
}

/// The thread's latest state, counted with `counter` and cut under `max_tokens` as `history`
/// does.
pub async fn load_thread(
    store: &Store,
    trim: &'static dyn CheckpointTrim,
    thread: &str,
    counter: &dyn MessageCounter,
    max_tokens: i64,
) -> CliResult<LoadedThread> {
    let state = trim.latest(store, thread, counter, max_tokens).await?;
    Ok(LoadedThread { trim, state })
}

/// Writes a plan's removals as one checkpoint; `None` when the plan removes nothing.
pub async fn write(
    store: &Store,
    thread: &LoadedThread,
    plan: &TrimPlan,
    yes: bool,
) -> CliResult<Option<TrimCheckpoint>> {
    let removed = thread.trim.removals(plan)?;
    if removed.is_empty() {
        return Ok(None);
    }
    store.ensure_writable_in_place()?;
    confirm(
        yes,
        "apply writes a new checkpoint to the thread (undo removes it)",
    )?;
    let state = &thread.state;
    let applied = thread
        .trim
        .apply(
            store,
            &state.thread_id,
            &state.checkpoint_id,
            &state.ids_at(removed),
        )
        .await?;
    Ok(Some(applied))
}

pub async fn undo(context: &Context, thread: &str, yes: bool) -> CliResult {
    let store = context.open().await?;
    let Some(trim) = trim_of(&store) else {
        return Err(CliError::usage(
            "trim undo --conversation undoes a trim of a LangGraph thread; for a chat memory \
             use --chat-memory ID",
        ));
    };
    store.ensure_writable_in_place()?;
    confirm(yes, "undo deletes memscope's trim checkpoint")?;
    let undone = trim.undo(&store, thread).await?;
    emit(context.global.json, &undone, |u: &UndoneTrimCheckpoint| {
        format!(
            "deleted trim checkpoint {} of thread {}; its latest checkpoint is {} again",
            u.checkpoint_id, u.thread_id, u.latest_checkpoint_id
        )
    })?;
    Ok(ExitCode::Ok)
}
