//! The trim preview: opening it over a chat memory, a thread or a node context; editing its
//! form (each change replans from the cached counts, right here: a 10,000-message plan takes
//! about 2 ms); the extractive summary of a small slice inline, of a large one as a
//! latest-wins job; summarizing remotely on request; applying.

use std::sync::Arc;

use super::Effect;
use super::chat_memory_jobs::{MemoryEffect, READ_ONLY};
use crate::inspect::trim::{TrimCounter, TrimInspectError, TrimSession};
use crate::memory::budget::MessageTokens;
use crate::memory::model::{PromptMessage, Role};
use crate::memory::tokens::CountCache;
use crate::memory::trim::{ChatMemoryPolicy, LimitType, Strategy, TrimOptions, TrimPlan};
use crate::summarize::extractive_plan;
use crate::tui::action::Action;
use crate::tui::state::chat_memories::{Confirm, Write};
use crate::tui::state::trim::{TrimSessions, TrimSource, TrimState};
use crate::tui::state::{AppState, LoadStatus, Overlay};

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
    effects.push(Effect::ChatMemory(MemoryEffect::LoadTrimSource {
        generation,
        id: id.to_owned(),
        counter: state.settings.counter(),
    }));
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

/// A history whose counts a budget view already took: no job, the plan is there at once.
fn open_counted(
    state: &mut AppState,
    source: TrimSource,
    messages: Vec<PromptMessage>,
    counts: Vec<MessageTokens>,
    effects: &mut Vec<Effect>,
) {
    let counter = TrimCounter::Tokens(state.settings.counter());
    let Some(tokens) = TrimSession::with_counts(messages.clone(), counts, counter) else {
        state.message = Some("the budget is out of date: reload and try again".to_owned());
        return;
    };
    let budget = state.settings.budget.max(0) as u64;
    let policy = ChatMemoryPolicy {
        limit_type: LimitType::Tokens,
        max_tokens: budget,
        ..ChatMemoryPolicy::default()
    };
    let mut trim = TrimState::new(source, with_default_prompt(policy, state), budget);
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
    generation: u64,
    result: Result<(Arc<TrimSessions>, ChatMemoryPolicy), String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(trim) = state.trim.as_mut().filter(|t| t.generation == generation) else {
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

/// A remote summary arrived: used only if the plan is still the one it was asked for.
pub(super) fn on_summary(
    state: &mut AppState,
    generation: u64,
    result: Result<TrimPlan, String>,
) -> bool {
    let Some(trim) = state
        .trim
        .as_mut()
        .filter(|t| t.summary_generation == generation && t.plan_generation == generation)
    else {
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
        session.preview_trim_messages(&trim_options(trim))
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
    effects.push(Effect::ChatMemory(MemoryEffect::Summarize {
        generation: trim.plan_generation,
        sessions,
        policy: trim.policy(),
        offline,
    }));
    true
}

/// `trim_messages`' options from the form.
pub fn trim_options(trim: &TrimState) -> TrimOptions {
    let form = &trim.form;
    let last = form.choice("lc_strategy") == "last";
    let role = |key: &str| match form.choice(key) {
        "human" => Some(vec![Role::User]),
        "ai" => Some(vec![Role::Assistant]),
        "system" => Some(vec![Role::System]),
        "tool" => Some(vec![Role::Tool]),
        _ => None,
    };
    TrimOptions {
        strategy: if last {
            Strategy::Last
        } else {
            Strategy::First
        },
        include_system: last && form.toggle("include_system"),
        start_on: role("start_on").filter(|_| last),
        end_on: role("end_on"),
        allow_partial: form.toggle("allow_partial"),
        ..TrimOptions::new(form.number("lc_max_tokens") as i64)
    }
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
        Action::Apply => ask_to_apply(state),
        _ => {}
    }
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

/// Apply is for chat memories only, and asks first.
fn ask_to_apply(state: &mut AppState) {
    let Some(trim) = state.trim.as_ref() else {
        return;
    };
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
        write: Write::ApplyTrim {
            memory_id: id.clone(),
            policy: trim.policy(),
        },
    });
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::memory::tokens::CountCache;
    use crate::memory::trim::EXTRACTIVE_LABEL;
    use crate::store::ChatMemorySummary;
    use crate::tui::state::Screen;
    use crate::tui::state::chat_memories::Write;
    use crate::tui::update::chat_memory_jobs::MemoryJob;
    use crate::tui::update::tests::{code, key, opened_with_budget, state};
    use crate::tui::update::{Event, JobEvent, update};
    use crossterm::event::KeyCode;

    pub(crate) fn memory_row(policy: &str, messages: i64) -> ChatMemorySummary {
        ChatMemorySummary {
            id: "00000000-0000-4000-8000-000000000001".to_owned(),
            memory_node_id: "node-1".to_owned(),
            chat_id: "chat-1".to_owned(),
            label: "Support".to_owned(),
            policy: policy.to_owned(),
            created_at: chrono::NaiveDateTime::default(),
            updated_at: chrono::NaiveDateTime::default(),
            message_count: messages,
        }
    }

    /// The chat memories tab with one memory listed.
    pub(crate) fn memories(policy: &str, messages: i64) -> AppState {
        let mut state = state();
        // The conversations tab is not loading: busy() speaks for this tab alone.
        state.list.status = LoadStatus::Loaded;
        update(&mut state, key('2'));
        assert_eq!(state.screen, Screen::ChatMemories);
        let generation = state.chat_memories.generation;
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::List {
                generation,
                result: Ok(vec![memory_row(policy, messages)]),
            })),
        );
        state
    }

    fn history(n: usize) -> Vec<PromptMessage> {
        (0..n)
            .map(|i| {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                PromptMessage::text(role, format!("Message {i}: the parcel {i} reached Lyon."))
            })
            .collect()
    }

    /// `T` on the listed memory, and its `n` messages delivered.
    fn previewing(policy: &str, n: usize) -> AppState {
        previewing_with_effects(policy, n).0
    }

    /// [`previewing`], with what the delivery asked for.
    fn previewing_with_effects(policy: &str, n: usize) -> (AppState, Vec<Effect>) {
        let mut state = memories(policy, n as i64);
        let effects = update(&mut state, key('T'));
        let generation = match &effects[..] {
            [Effect::ChatMemory(MemoryEffect::LoadTrimSource { generation, .. })] => *generation,
            other => panic!("expected the memory's list to be read, got {other:?}"),
        };
        assert_eq!(state.overlay, Overlay::Trim);
        assert!(state.trim.as_ref().unwrap().status.is_loading());
        let messages = history(n);
        let tokens = TrimSession::new(
            messages.clone(),
            TrimCounter::Messages,
            &mut CountCache::default(),
        );
        let sessions = Arc::new(sessions(tokens, messages));
        // A stale answer is dropped.
        let stale = update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::TrimSource {
                generation: generation - 1,
                result: Ok((sessions.clone(), ChatMemoryPolicy::default())),
            })),
        );
        assert!(stale.is_empty() && state.trim.as_ref().unwrap().plan.is_none());
        let effects = update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::TrimSource {
                generation,
                result: Ok((sessions, ChatMemoryPolicy::default())),
            })),
        );
        (state, effects)
    }

    #[test]
    fn a_large_slice_is_summarized_by_a_latest_wins_job() {
        let policy = r#"{"max_messages":20,"summarization":{"enabled":true}}"#;
        let (mut state, effects) = previewing_with_effects(policy, 400);
        let generation = match &effects[..] {
            [
                Effect::ChatMemory(MemoryEffect::Summarize {
                    generation,
                    offline: true,
                    ..
                }),
            ] => *generation,
            other => panic!("expected an extractive summary job, got {other:?}"),
        };
        let slot = plan(&state).summary.clone().unwrap();
        assert!(slot.text.is_none() && slot.summarized.len() > INLINE_SUMMARY_MESSAGES);
        assert_eq!(
            plan(&state).removed().count(),
            381,
            "the plan is there at once"
        );
        assert!(state.busy());
        // A change before the answer: the old answer is dropped, a new job is asked for.
        focus(&mut state, "max_messages");
        let effects = update(&mut state, code(KeyCode::Right));
        let newer = match &effects[..] {
            [Effect::ChatMemory(MemoryEffect::Summarize { generation, .. })] => *generation,
            other => panic!("{other:?}"),
        };
        assert_ne!(newer, generation);
        let trim = state.trim.as_ref().unwrap();
        let sessions = trim.sessions.clone().unwrap();
        let policy = trim.policy();
        let planner = sessions.tokens.planner(&policy).unwrap();
        let written = extractive_plan(&planner, planner.plan());
        let stale = update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Summary {
                generation,
                result: Ok(written.clone()),
            })),
        );
        assert!(stale.is_empty() && plan(&state).summary.as_ref().unwrap().text.is_none());
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Summary {
                generation: newer,
                result: Ok(written),
            })),
        );
        let slot = plan(&state).summary.clone().unwrap();
        assert!(slot.text.unwrap().contains("Lyon"));
        assert!(!state.busy());
    }

    fn plan(state: &AppState) -> &TrimPlan {
        match &state.trim.as_ref().expect("the preview is open").plan {
            Some(Ok(plan)) => plan,
            other => panic!("no plan: {other:?}"),
        }
    }

    fn focus(state: &mut AppState, field: &str) {
        update(state, Event::Action(Action::Top));
        let trim = state.trim.as_mut().unwrap();
        trim.form.focused = 0;
        while trim.form.focused_key() != Some(field) {
            let before = trim.form.focused;
            trim.form.move_focus(1);
            assert_ne!(before, trim.form.focused, "{field} is not visible");
        }
    }

    #[test]
    fn help_over_the_preview_goes_back_to_it() {
        let mut state = previewing(r#"{"max_messages":20}"#, 30);
        update(&mut state, key('?'));
        assert_eq!(state.overlay, Overlay::Help);
        update(&mut state, key('?'));
        assert_eq!(state.overlay, Overlay::Trim, "the preview is still open");
    }

    #[test]
    fn every_form_change_replans_from_the_cached_counts() {
        let mut state = previewing(r#"{"max_messages":20}"#, 30);
        assert_eq!(plan(&state).kept_len(), 20);
        assert_eq!(plan(&state).removed().count(), 10);
        // Typing edits the focused number: backspace, then digits.
        focus(&mut state, "max_messages");
        update(&mut state, code(KeyCode::Backspace));
        assert_eq!(plan(&state).kept_len(), 2);
        update(&mut state, key('5'));
        assert_eq!(plan(&state).kept_len(), 25);
        update(&mut state, code(KeyCode::Right));
        assert_eq!(plan(&state).kept_len(), 26);
        // Drop middle keeps the first K and the newest.
        focus(&mut state, "strategy");
        update(&mut state, code(KeyCode::Right));
        focus(&mut state, "keep_first");
        update(&mut state, key('3'));
        let removed: Vec<usize> = plan(&state).removed().map(|(i, _)| i).collect();
        assert_eq!(removed, (3..7).collect::<Vec<_>>());
        // A summary stands at the cut, written offline on the spot.
        focus(&mut state, "summarize");
        update(&mut state, code(KeyCode::Right));
        let slot = plan(&state).summary.clone().expect("a summary slot");
        assert!(slot.text.as_deref().is_some_and(|t| t.contains("Lyon")));
        assert_eq!(slot.summarizer.as_deref(), Some(EXTRACTIVE_LABEL));
        // A digit on a choice field is no tab switch: the overlay keeps its keys.
        focus(&mut state, "engine");
        update(&mut state, key('3'));
        assert_eq!(
            (state.screen, &state.overlay),
            (Screen::ChatMemories, &Overlay::Trim)
        );
        // trim_messages: its own fields, its own plan.
        update(&mut state, code(KeyCode::Right));
        let trim = state.trim.as_ref().unwrap();
        assert!(!trim.is_policy());
        let visible = |key: &str| trim.form.fields.iter().any(|f| f.key == key && f.visible);
        assert!(visible("lc_max_tokens") && visible("start_on") && !visible("max_messages"));
        focus(&mut state, "counter");
        update(&mut state, code(KeyCode::Right));
        focus(&mut state, "lc_max_tokens");
        for _ in 0..4 {
            update(&mut state, code(KeyCode::Backspace));
        }
        update(&mut state, key('4'));
        assert_eq!(
            plan(&state).kept_len(),
            4,
            "the last 4 messages, counted as len"
        );
        assert!(plan(&state).summary.is_none());
    }

    #[test]
    fn a_bad_form_value_is_shown_not_planned() {
        let mut state = previewing(r#"{"trim_mode":"threshold","trigger":20,"target":10}"#, 30);
        assert_eq!(plan(&state).kept_len(), 10);
        focus(&mut state, "target");
        update(&mut state, key('0'));
        let trim = state.trim.as_ref().unwrap();
        assert!(
            matches!(&trim.plan, Some(Err(e)) if e.contains("above its trigger")),
            "{:?}",
            trim.plan
        );
    }

    #[test]
    fn apply_asks_first_and_no_goes_back_to_the_preview() {
        let mut state = previewing(r#"{"max_messages":20}"#, 30);
        let expected = state.trim.as_ref().unwrap().policy();
        assert!(update(&mut state, key('A')).is_empty());
        match &state.overlay {
            Overlay::Confirm(confirm) => {
                assert!(
                    confirm.question.contains("remove 10"),
                    "{}",
                    confirm.question
                );
                assert_eq!(
                    confirm.write,
                    Write::ApplyTrim {
                        memory_id: memory_row("{}", 0).id,
                        policy: expected.clone()
                    }
                );
            }
            other => panic!("expected a confirmation, got {other:?}"),
        }
        assert!(update(&mut state, key('n')).is_empty());
        assert_eq!(state.overlay, Overlay::Trim, "no returns to the preview");
        update(&mut state, code(KeyCode::Enter));
        let effects = update(&mut state, key('y'));
        match &effects[..] {
            [Effect::ChatMemory(MemoryEffect::Write { write, .. })] => {
                assert!(matches!(write, Write::ApplyTrim { policy, .. } if *policy == expected));
            }
            other => panic!("expected the write, got {other:?}"),
        }
        assert!(state.trim.is_none() && state.overlay == Overlay::None);
        assert!(state.chat_memories.writing && state.busy());
        let effects = update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Written {
                memory_id: memory_row("{}", 0).id,
                result: Ok("trimmed Support".to_owned()),
            })),
        );
        assert_eq!(state.message.as_deref(), Some("trimmed Support"));
        assert!(!state.chat_memories.writing);
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::ChatMemory(MemoryEffect::LoadList { .. }))),
            "the list is reloaded after a write"
        );
    }

    #[test]
    fn nothing_to_apply_and_read_only_databases_are_refused() {
        let mut state = previewing(r#"{"max_messages":50}"#, 30);
        assert!(update(&mut state, key('A')).is_empty());
        assert_eq!(state.overlay, Overlay::Trim);
        assert!(
            state
                .message
                .as_deref()
                .unwrap()
                .starts_with("nothing to apply")
        );
        let mut state = previewing(r#"{"max_messages":5}"#, 30);
        state.read_only = true;
        assert!(update(&mut state, key('A')).is_empty());
        assert_eq!(state.message.as_deref(), Some(READ_ONLY));
        assert_eq!(state.overlay, Overlay::Trim);
    }

    #[test]
    fn apply_is_refused_on_a_thread_and_on_a_node_context() {
        let mut state = opened_with_budget();
        // The thread's counts are the budget panel's: the plan is there at once, no job.
        assert!(update(&mut state, key('T')).is_empty());
        let trim = state.trim.as_ref().unwrap();
        assert!(matches!(trim.source, TrimSource::Thread { .. }));
        assert_eq!(trim.messages_before(), 6, "3 turns on the thread");
        assert!(matches!(trim.plan, Some(Ok(_))));
        assert!(update(&mut state, key('A')).is_empty());
        let refusal = state.message.clone().unwrap();
        assert!(
            refusal.contains("a conversation thread is a view computed at read time")
                && refusal.contains("never deleted"),
            "{refusal}"
        );
        assert_eq!(state.overlay, Overlay::Trim, "no confirmation is asked");
        state.trim.as_mut().unwrap().source = TrimSource::NodeContext {
            conversation_id: "c1".to_owned(),
            node_id: "llm".to_owned(),
            source: crate::inspect::nodes::ContextSource::Outputs,
        };
        assert!(update(&mut state, code(KeyCode::Enter)).is_empty());
        assert!(
            state
                .message
                .as_deref()
                .unwrap()
                .contains("a node context is a view")
        );
        update(&mut state, code(KeyCode::Esc));
        assert!(state.trim.is_none() && state.overlay == Overlay::None);
        assert_eq!(
            state.screen,
            Screen::Conversation,
            "esc closes only the preview"
        );
    }

    #[test]
    fn a_remote_summarizer_is_asked_only_on_its_key() {
        let mut state = memories(r#"{"max_messages":4,"summarization":{"enabled":true}}"#, 10);
        state.summarizer.offline = false;
        state.summarizer.label = "tiny via http://127.0.0.1:9/v1/chat/completions".to_owned();
        let effects = update(&mut state, key('T'));
        let Effect::ChatMemory(MemoryEffect::LoadTrimSource { generation, .. }) = effects[0] else {
            panic!("{effects:?}")
        };
        let messages = history(10);
        let tokens = TrimSession::new(
            messages.clone(),
            TrimCounter::Messages,
            &mut CountCache::default(),
        );
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::TrimSource {
                generation,
                result: Ok((
                    Arc::new(sessions(tokens, messages)),
                    ChatMemoryPolicy::default(),
                )),
            })),
        );
        let slot = plan(&state).summary.clone().unwrap();
        assert!(slot.text.is_none(), "no request without the key");
        assert!(
            slot.prompt.contains("parcel"),
            "the exact prompt is there to show"
        );
        let effects = update(&mut state, key('S'));
        let generation = match &effects[..] {
            [Effect::ChatMemory(MemoryEffect::Summarize { generation, .. })] => *generation,
            other => panic!("{other:?}"),
        };
        assert!(state.busy());
        update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Summary {
                generation,
                result: Err("summarizer http://127.0.0.1:9 did not answer within 5 s".to_owned()),
            })),
        );
        let trim = state.trim.as_ref().unwrap();
        assert!(matches!(&trim.summary_status, Some(LoadStatus::Failed(e)) if e.contains("5 s")));
        assert!(!state.busy(), "a failed summary leaves nothing waiting");
        // An answer for an older plan is dropped.
        update(&mut state, key('S'));
        update(&mut state, code(KeyCode::Down));
        update(&mut state, code(KeyCode::Down));
        update(&mut state, code(KeyCode::Right));
        let old = plan(&state).clone();
        let stale = update(
            &mut state,
            Event::Job(JobEvent::ChatMemory(MemoryJob::Summary {
                generation: generation + 1,
                result: Ok(old),
            })),
        );
        assert!(stale.is_empty());
        assert!(state.trim.as_ref().unwrap().summary_status.is_none());
    }
}
