//! The trim preview: opening it over a chat memory, a thread or a node context; editing its
//! form (each change replans from the cached counts, right here: a 10,000-message plan takes
//! about 2 ms); the extractive summary of a small slice inline, of a large one as a
//! latest-wins job; summarizing remotely on request; applying.

use std::sync::Arc;

use super::chat_memory_jobs::{MemoryLoad, READ_ONLY};
use super::effect::Effect;
use crate::inspect::trim::{TrimCounter, TrimInspectError, TrimSession, trim_from_cut};
use crate::memory::budget::MessageTokens;
use crate::memory::model::PromptMessage;
use crate::memory::tokens::CountCache;
use crate::memory::trim::{ChatMemoryPolicy, LimitType, Step, TrimOptions, TrimPlan};
use crate::summarize::extractive_plan;
use crate::tui::action::Action;
use crate::tui::state::chat_memories::Write;
use crate::tui::state::confirm::{Confirm, PendingWrite};
use crate::tui::state::trim::{TrimSessions, TrimSource, TrimState};
use crate::tui::state::{AppState, Detail, LoadStatus, Overlay};

/// Lines a page key scrolls the plan.
const SCROLL_PAGE: usize = 10;
/// Removed messages the extractive summarizer reads inline, within a keystroke's budget (about
/// 7 µs each: `benches/trim.rs`); a larger slice is summarized by a latest-wins job.
pub const INLINE_SUMMARY_MESSAGES: usize = 300;

/// Opens the preview over a chat memory: its list is read and counted by a job.
pub(super) fn open_for_memory(
    state: &mut AppState,
    id: &str,
    label: &str,
    effects: &mut Vec<Effect>,
) {
    let generation = state.generation();
    let policy = state
        .chat_memories
        .rows
        .iter()
        .find(|r| r.id == id)
        .and_then(|r| ChatMemoryPolicy::from_json(&r.policy).ok())
        .unwrap_or_default();
    let mut trim = TrimState::new(
        TrimSource::ChatMemory {
            id: id.to_owned(),
            label: label.to_owned(),
        },
        with_default_prompt(policy, state),
        state.settings.budget.max(0) as u64,
    );
    trim.generation = generation;
    state.trim = Some(trim);
    state.overlay = Overlay::Trim;
    let source = MemoryLoad::TrimSource {
        id: id.to_owned(),
        counter: state.settings.counter(),
    };
    effects.push(Effect::load(generation, source));
}

/// Opens the preview over the thread history the budget panel shows.
pub(super) fn open_for_thread(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(conversation) = state.conversation.as_ref() else {
        return;
    };
    let (Some(budget), Some(loaded)) = (&conversation.budget, &conversation.loaded) else {
        state.message = Some("the thread's budget is still loading".to_owned());
        return;
    };
    let source = TrimSource::Thread {
        conversation_id: conversation.id.clone(),
        leaf: loaded.tree.id(conversation.selected).to_owned(),
    };
    let messages = budget.history.prompt_messages().cloned().collect();
    let counts = budget.counts.clone();
    open_counted(state, source, messages, counts, effects);
}

/// Opens the preview over the `messages` of the checkpoint a LangGraph thread shows, on the cut
/// its messages pane shows.
pub(super) fn open_for_checkpoint(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(thread) = state.checkpoints.as_ref() else {
        return;
    };
    let Some(shown) = thread.shown.as_ref() else {
        state.message = Some("the checkpoint is still being read".to_owned());
        return;
    };
    let budget = match &shown.budget {
        Ok(budget) => budget,
        Err(error) => {
            state.message = Some(format!("no preview: {error}"));
            return;
        }
    };
    let source = TrimSource::Checkpoint {
        thread_id: thread.thread_id.clone(),
        checkpoint_id: shown.state.checkpoint_id.clone(),
    };
    let (tokens, options) = trim_from_cut(
        &budget.trim_start(),
        TrimCounter::Tokens(state.settings.counter()),
    );
    open_session(state, source, tokens, Some(&options), effects);
}

/// Opens the preview over the selected node's context in the nodes pane.
pub(super) fn open_for_node(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(nodes) = state.nodes() else {
        return;
    };
    let (Some(view), Some(conversation)) = (&nodes.context, &state.conversation) else {
        state.message = Some("the node's context is still loading".to_owned());
        return;
    };
    let source = TrimSource::NodeContext {
        conversation_id: conversation.id.clone(),
        node_id: view.context.node_id.clone(),
        source: view.context.source,
    };
    let messages = view.budget.history.prompt_messages().cloned().collect();
    let counts = view.budget.counts.clone();
    open_counted(state, source, messages, counts, effects);
}

/// Opens the preview over what the open session's or thread's model is fed; a LangGraph
/// thread's on the cut its budget panel shows.
pub(super) fn open_for_session(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(session) = state.session.as_ref() else {
        return;
    };
    let Some(budget) = &session.budget else {
        state.message = Some("the history's budget is still loading".to_owned());
        return;
    };
    let source = TrimSource::Session {
        id: session.key.id.clone(),
    };
    if let Some(start) = &budget.trim_start {
        let (tokens, options) = trim_from_cut(start, TrimCounter::Tokens(state.settings.counter()));
        open_session(state, source, tokens, Some(&options), effects);
        return;
    }
    let messages = budget.view.history.prompt_messages().cloned().collect();
    let counts = budget.view.counts.clone();
    open_counted(state, source, messages, counts, effects);
}

/// A history whose counts a budget view already took: no job, the plan is there at once.
fn open_counted(
    state: &mut AppState,
    source: TrimSource,
    messages: Vec<PromptMessage>,
    counts: Vec<MessageTokens>,
    effects: &mut Vec<Effect>,
) {
    let counter = TrimCounter::Tokens(state.settings.counter());
    let Some(tokens) = TrimSession::with_counts(messages, counts, counter) else {
        state.message = Some("the budget is out of date: reload and try again".to_owned());
        return;
    };
    open_session(state, source, tokens, None, effects);
}

/// Opens the preview over a counted history: on `trim_messages` with `start`'s options, else
/// on a policy under the budget.
fn open_session(
    state: &mut AppState,
    source: TrimSource,
    tokens: TrimSession,
    start: Option<&TrimOptions>,
    effects: &mut Vec<Effect>,
) {
    let budget = state.settings.budget.max(0) as u64;
    let policy = ChatMemoryPolicy {
        limit_type: LimitType::Tokens,
        max_tokens: budget,
        ..ChatMemoryPolicy::default()
    };
    let policy = with_default_prompt(policy, state);
    let mut trim = match start {
        Some(options) => TrimState::on_trim_messages(source, policy, options),
        None => TrimState::new(source, policy, budget),
    };
    let messages = tokens.messages.clone();
    trim.sessions = Some(Arc::new(sessions(tokens, messages)));
    trim.status = LoadStatus::Loaded;
    state.trim = Some(trim);
    state.overlay = Overlay::Trim;
    recompute(state, effects);
}

/// The two sessions of a history: its token counts, and messages counted as `len` does.
pub fn sessions(tokens: TrimSession, messages: Vec<PromptMessage>) -> TrimSessions {
    let messages = TrimSession::new(messages, TrimCounter::Messages, &mut CountCache::default());
    TrimSessions { tokens, messages }
}

/// `[summarizer] summarize_prompt` for a policy that names no rules of its own.
fn with_default_prompt(mut policy: ChatMemoryPolicy, state: &AppState) -> ChatMemoryPolicy {
    if policy.summarization.prompt.is_none() {
        policy.summarization.prompt = state.summarizer.default_prompt.clone();
    }
    policy
}

/// A chat memory's list arrived.
pub(super) fn on_source(
    state: &mut AppState,
    result: Result<(Arc<TrimSessions>, ChatMemoryPolicy), String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(trim) = state.trim.as_mut() else {
        return false;
    };
    match result {
        Ok((sessions, _)) => {
            trim.sessions = Some(sessions);
            trim.status = LoadStatus::Loaded;
            recompute(state, effects);
        }
        Err(error) => trim.status = LoadStatus::Failed(error),
    }
    true
}

/// A remote summary arrived for the plan shown (`loads.rs` checks it answers that plan).
pub(super) fn on_summary(state: &mut AppState, result: Result<TrimPlan, String>) -> bool {
    let Some(trim) = state.trim.as_mut() else {
        return false;
    };
    match result {
        Ok(plan) => {
            trim.plan = Some(Ok(plan));
            trim.summary_status = Some(LoadStatus::Loaded);
        }
        Err(error) => trim.summary_status = Some(LoadStatus::Failed(error)),
    }
    true
}

/// Replans from the form's values and the cached counts. The extractive summary of a small
/// slice is written here; a larger one is asked of a job (the plan shows meanwhile).
pub fn recompute(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let offline = state.summarizer.offline;
    let Some(trim) = state.trim.as_mut() else {
        return;
    };
    trim.sync_visibility();
    trim.plan_generation = generation;
    trim.summary_status = None;
    let Some(sessions) = trim.sessions.clone() else {
        return;
    };
    let plan = if trim.is_policy() {
        let policy = trim.policy();
        sessions.tokens.planner(&policy).map(|planner| {
            let plan = planner.plan();
            let small = plan
                .summary
                .as_ref()
                .is_some_and(|s| s.summarized.len() <= INLINE_SUMMARY_MESSAGES);
            if offline && small {
                extractive_plan(&planner, plan)
            } else {
                plan
            }
        })
    } else {
        let session = match trim.form.choice("counter") {
            "messages" => &sessions.messages,
            _ => &sessions.tokens,
        };
        session.preview_trim_messages(&trim.trim_options())
    };
    trim.plan = Some(plan.map_err(|e| e.to_string()));
    if offline {
        ask_for_summary(trim, true, effects);
    }
}

/// Asks a job for the plan's pending summary (offline: the extractive one; else the
/// configured summarizer). `false` when the plan has no pending summary.
fn ask_for_summary(trim: &mut TrimState, offline: bool, effects: &mut Vec<Effect>) -> bool {
    let pending = matches!(&trim.plan, Some(Ok(plan))
        if plan.summary.as_ref().is_some_and(|s| s.text.is_none()));
    let Some(sessions) = trim
        .sessions
        .clone()
        .filter(|_| pending && trim.is_policy())
    else {
        return false;
    };
    trim.summary_generation = trim.plan_generation;
    trim.summary_status = Some(LoadStatus::Loading);
    let summary = MemoryLoad::Summary {
        sessions,
        policy: trim.policy(),
        offline,
    };
    effects.push(Effect::load(trim.plan_generation, summary));
    true
}

/// Typed characters: digits and backspace edit the focused number field. `false` when the key
/// is not an edit (the keymap then handles it).
pub(super) fn type_key(
    state: &mut AppState,
    key: crossterm::event::KeyCode,
    effects: &mut Vec<Effect>,
) -> bool {
    use crossterm::event::KeyCode;
    let Some(value) = state.trim.as_mut().and_then(|t| t.form.focused_value()) else {
        return false;
    };
    let edited = match key {
        KeyCode::Char(c) => value.type_char(c),
        KeyCode::Backspace => value.backspace(),
        _ => false,
    };
    if edited {
        recompute(state, effects);
    }
    edited
}

/// Keys while the preview is open.
pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(trim) = state.trim.as_mut() else {
        state.overlay = Overlay::None;
        return;
    };
    match action {
        Action::Back => {
            state.trim = None;
            state.overlay = Overlay::None;
        }
        Action::Up => trim.form.move_focus(-1),
        Action::Down => trim.form.move_focus(1),
        Action::Increase | Action::Decrease => {
            if let Some(value) = trim.form.focused_value() {
                value.step(if action == Action::Increase { 1 } else { -1 });
                recompute(state, effects);
            }
        }
        Action::PageDown => trim.scroll = trim.scroll.saturating_add(SCROLL_PAGE),
        Action::PageUp => trim.scroll = trim.scroll.saturating_sub(SCROLL_PAGE),
        Action::Top => trim.scroll = 0,
        Action::Summarize => summarize(state, effects),
        Action::Apply => ask_to_apply(state, effects),
        Action::Details => show_plan(state),
        _ => {}
    }
}

/// The plan's rows whole, from the first one shown: each message's text and why it is kept,
/// removed or changed (the preview's rows cut both to one line).
fn show_plan(state: &mut AppState) {
    let Some(trim) = state.trim.as_ref() else {
        return;
    };
    let Some(Ok(plan)) = &trim.plan else {
        state.say("no plan to show: the form's values do not make one".to_owned());
        return;
    };
    let text_of = |message: Option<&PromptMessage>| {
        message.map_or_else(String::new, |m| {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|call| format!("→ {}({})", call.name, call.arguments))
                .collect();
            [m.content.text().into_owned(), calls.join(" ")]
                .into_iter()
                .filter(|part| !part.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        })
    };
    let role_of = |index: usize| trim.message(index).map_or("?", |m| m.role.as_str());
    let mut text = String::new();
    for step in plan.steps.iter().skip(trim.scroll) {
        let (heading, body) = match step {
            Step::Keep { index } => (
                format!("#{index} {} · kept", role_of(*index)),
                text_of(trim.message(*index)),
            ),
            Step::Remove { index, reason } => (
                format!(
                    "#{index} {} · removed: {}",
                    role_of(*index),
                    reason.describe()
                ),
                text_of(trim.message(*index)),
            ),
            Step::Modify {
                index,
                message,
                reason,
            } => (
                format!(
                    "#{index} {} · changed: {}",
                    message.role.as_str(),
                    reason.describe()
                ),
                text_of(Some(message)),
            ),
            Step::Summary => match &plan.summary {
                Some(slot) => (
                    format!(
                        "summary of {}",
                        crate::format::count(slot.summarized.len() as u64, "message")
                    ),
                    slot.text
                        .clone()
                        .unwrap_or_else(|| "(not written yet)".to_owned()),
                ),
                None => continue,
            },
        };
        text.push_str(&format!("{heading}\n{body}\n\n"));
    }
    let title = format!(" Trim plan from row {} ", trim.scroll + 1);
    state.overlay = Overlay::Detail(Detail::new(title, text).over(Overlay::Trim));
}

/// Sends the plan to the configured summarizer (remote ones wait for this key).
fn summarize(state: &mut AppState, effects: &mut Vec<Effect>) {
    let offline = state.summarizer.offline;
    let Some(trim) = state.trim.as_mut() else {
        return;
    };
    if offline {
        state.message = Some("the extractive summarizer writes the summary by itself".to_owned());
    } else if !ask_for_summary(trim, false, effects) {
        state.message = Some("nothing to summarize: this plan has no pending summary".to_owned());
    }
}

/// Apply writes a chat memory's policy, a checkpoint's removals, or a trim in place of a
/// session whose source keeps it as a list; each asks first.
fn ask_to_apply(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(trim) = state.trim.as_ref() else {
        return;
    };
    match &trim.source {
        TrimSource::Checkpoint { .. } => {
            super::checkpoint_writes::ask_to_apply_trim(state);
            return;
        }
        TrimSource::Session { id } if state.trims_in_place => {
            let id = id.clone();
            super::session_trim::ask_to_apply(state, id, effects);
            return;
        }
        _ => {}
    }
    let refusal = match &trim.source {
        TrimSource::ChatMemory { .. } if !trim.is_policy() => Some(
            "apply uses chat memory policies: trim_messages is for previews (choose engine \
             policy)"
                .to_owned(),
        ),
        TrimSource::ChatMemory { .. } if state.read_only => Some(READ_ONLY.to_owned()),
        TrimSource::ChatMemory { .. } => None,
        other => Some(TrimInspectError::NotAStoredList(other.view_kind()).to_string()),
    };
    if let Some(refusal) = refusal {
        state.message = Some(refusal);
        return;
    }
    let TrimSource::ChatMemory { id, label } = &trim.source else {
        return;
    };
    let plan = match &trim.plan {
        Some(Ok(plan)) if !plan.is_noop() => plan,
        Some(Err(error)) => {
            state.message = Some(format!("no plan to apply: {error}"));
            return;
        }
        _ => {
            state.message = Some("nothing to apply: the plan keeps every message".to_owned());
            return;
        }
    };
    let removed = plan.removed().count();
    let modified = plan.modified().count();
    let summary = if plan.summary.is_some() {
        format!(", and insert a summary ({})", state.summarizer.label)
    } else {
        String::new()
    };
    let question = format!(
        "Apply this trim to chat memory {label}? It will remove {removed} and modify {modified} \
         messages{summary}, in one transaction; undo (u) restores them."
    );
    state.overlay = Overlay::Confirm(Confirm {
        question,
        write: PendingWrite::ChatMemory(Write::ApplyTrim {
            memory_id: id.clone(),
            policy: trim.policy(),
        }),
    });
}

#[cfg(test)]
#[path = "trim_tests.rs"]
mod tests;
