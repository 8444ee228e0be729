//! `trim preview|apply|undo --conversation THREAD` on a LangGraph database: the thread's latest
//! `messages` as the history every trim reads, counted and cut as `history` cuts them (a
//! preview starts from that cut), and the apply written as LangGraph's own
//! `update_state` with `RemoveMessage`s (so only removals: a change or a summary would need
//! messages of memscope's making, which `add_messages` would append at the end).

use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::inspect::trim::TrimCounter;
use crate::memory::trim::TrimPlan;
use crate::sources::langgraph::decode::budget::MessagesBudget;
use crate::sources::langgraph::decode::removal::removal_indices;
use crate::sources::langgraph::saver::LangGraphDb;
use crate::sources::langgraph::trim::{AppliedTrim, TrimTarget, UndoneTrim, ids_at};
use crate::store::Store;

/// A thread's latest state, read for a trim, with the cut `history` shows of it.
pub struct LoadedThread {
    pub target: TrimTarget,
    pub budget: MessagesBudget,
}

impl LoadedThread {
    pub fn label(&self) -> String {
        format!(
            "LangGraph thread {} at checkpoint {} (its `messages`)",
            self.target.thread_id, self.target.checkpoint_id
        )
    }
}

/// The thread's latest state, counted with `counter` and cut under `max_tokens` as `history`
/// does.
pub async fn load_thread(
    store: &Store,
    thread: &str,
    counter: &TrimCounter,
    max_tokens: i64,
) -> CliResult<LoadedThread> {
    let db = LangGraphDb::open(store)?;
    let target = db.trim_target(thread).await?;
    let budget = MessagesBudget::compute(&target.messages, counter, max_tokens)
        .map_err(|e| CliError::failure(e.to_string()))?;
    Ok(LoadedThread { target, budget })
}

/// Writes a plan's removals as one checkpoint; `None` when the plan removes nothing.
pub async fn write(
    store: &Store,
    thread: &LoadedThread,
    plan: &TrimPlan,
    yes: bool,
) -> CliResult<Option<AppliedTrim>> {
    let removed = removal_indices(plan).map_err(|e| CliError::usage(e.to_string()))?;
    if removed.is_empty() {
        return Ok(None);
    }
    store.ensure_writable_in_place()?;
    confirm(
        yes,
        "apply writes a new checkpoint to the thread (undo removes it)",
    )?;
    let db = LangGraphDb::open(store)?;
    let applied = db
        .apply_trim(&thread.target, &ids_at(&thread.target, removed))
        .await?;
    Ok(Some(applied))
}

pub async fn undo(context: &Context, thread: &str, yes: bool) -> CliResult {
    let store = context.open().await?;
    if !store.profile().has(crate::sources::Part::Checkpoints) {
        return Err(CliError::usage(
            "trim undo --conversation undoes a trim of a LangGraph thread; for a chat memory \
             use --chat-memory ID",
        ));
    }
    store.ensure_writable_in_place()?;
    confirm(yes, "undo deletes memscope's trim checkpoint")?;
    let db = LangGraphDb::open(&store)?;
    let undone = db.undo_trim(thread).await?;
    emit(context.global.json, &undone, |u: &UndoneTrim| {
        format!(
            "deleted trim checkpoint {} of thread {}; its latest checkpoint is {} again",
            u.checkpoint_id, u.thread_id, u.latest_checkpoint_id
        )
    })?;
    Ok(ExitCode::Ok)
}
