//! `trim preview|apply|undo --conversation THREAD` on a LangGraph database: the thread's latest
//! `messages` as the history every trim reads, and the apply written as LangGraph's own
//! `update_state` with `RemoveMessage`s (so only removals: a change or a summary would need
//! messages of memscope's making, which `add_messages` would append at the end).

use super::trim::{Source, plan_for, render};
use crate::cli::args::TrimArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit};
use crate::memory::model::PromptMessage;
use crate::memory::trim::Step;
use crate::sources::langgraph::saver::LangGraphDb;
use crate::sources::langgraph::trim::{TrimTarget, UndoneTrim, ids_at};
use crate::store::Store;

/// A thread's latest state, read for a trim.
pub struct LoadedThread {
    pub target: TrimTarget,
    pub messages: Vec<PromptMessage>,
}

impl LoadedThread {
    pub fn label(&self) -> String {
        format!(
            "LangGraph thread {} at checkpoint {} (its `messages`)",
            self.target.thread_id, self.target.checkpoint_id
        )
    }
}

pub async fn load_thread(store: &Store, thread: &str) -> CliResult<LoadedThread> {
    let db = LangGraphDb::open(store)?;
    let target = db.trim_target(thread).await?;
    let messages = target
        .messages
        .iter()
        .filter_map(|m| m.to_prompt_message())
        .collect();
    Ok(LoadedThread { target, messages })
}

/// Plans exactly as the preview does, then writes the removals as one checkpoint.
pub async fn apply(
    context: &Context,
    store: &Store,
    args: &TrimArgs,
    thread: &LoadedThread,
    source: &Source,
    yes: bool,
) -> CliResult {
    let (mut report, policy) = plan_for(context, args, source).await?;
    if policy.is_some_and(|p| !p.predefined_messages.is_empty()) {
        return Err(CliError::usage(
            "a policy's predefined messages are not in the thread: apply a policy without them",
        ));
    }
    let only_removals = report.plan.steps.iter().all(|step| match step {
        Step::Keep { .. } | Step::Remove { .. } => true,
        Step::Modify { .. } => false,
        Step::Summary => report.plan.summary.is_none(),
    });
    if !only_removals {
        return Err(CliError::usage(
            "this trim changes or adds messages (a partial message, a cleared tool result, a \
             stubbed image or a summary); on a LangGraph thread apply writes removals only, as \
             RemoveMessage does: preview it, or drop those options",
        ));
    }
    let removed: Vec<usize> = report.plan.removed().map(|(index, _)| index).collect();
    if removed.is_empty() {
        emit(context.global.json, &report, render)?;
        return Ok(ExitCode::Ok);
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
    report.checkpoint = Some(applied);
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

pub async fn undo(context: &Context, thread: &str, yes: bool) -> CliResult {
    let store = context.open().await?;
    if store.profile().capabilities().conversations
        != crate::sources::ConversationShape::CheckpointThreads
    {
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
