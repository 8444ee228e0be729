//! Tests of the trim preview: its options, its plan and applying it.

use super::*;
use crate::memory::model::Role;
use crate::memory::tokens::CountCache;
use crate::memory::trim::EXTRACTIVE_LABEL;
use crate::tui::state::Screen;
use crate::tui::state::chat_memories::Write;
use crate::tui::update::chat_memory_jobs::{MemoryEffect, MemoryJob, MemoryLoad, MemoryLoaded};
use crate::tui::update::test_support::{code, key, memories, memory_row, opened_with_budget};
use crate::tui::update::{Event, JobEvent, Load, Stamped, update};
use crossterm::event::KeyCode;

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
        [
            Effect::Load(Stamped {
                generation,
                value: Load::ChatMemory(MemoryLoad::TrimSource { .. }),
            }),
        ] => *generation,
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
        Event::Job(JobEvent::load(
            generation - 1,
            MemoryLoaded::TrimSource(Ok((sessions.clone(), ChatMemoryPolicy::default()))),
        )),
    );
    assert!(stale.is_empty() && state.trim.as_ref().unwrap().plan.is_none());
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::TrimSource(Ok((sessions, ChatMemoryPolicy::default()))),
        )),
    );
    (state, effects)
}

#[test]
fn a_large_slice_is_summarized_by_a_latest_wins_job() {
    let policy = r#"{"max_messages":20,"summarization":{"enabled":true}}"#;
    let (mut state, effects) = previewing_with_effects(policy, 400);
    let generation = match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::ChatMemory(MemoryLoad::Summary { offline: true, .. }),
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
        [
            Effect::Load(Stamped {
                generation,
                value: Load::ChatMemory(MemoryLoad::Summary { .. }),
            }),
        ] => *generation,
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
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::Summary(Ok(written.clone())),
        )),
    );
    assert!(stale.is_empty() && plan(&state).summary.as_ref().unwrap().text.is_none());
    update(
        &mut state,
        Event::Job(JobEvent::load(newer, MemoryLoaded::Summary(Ok(written)))),
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
                PendingWrite::ChatMemory(Write::ApplyTrim {
                    memory_id: memory_row("{}", 0).id,
                    policy: expected.clone()
                })
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
        effects.iter().any(|e| matches!(
            e,
            Effect::Load(Stamped {
                value: Load::ChatMemory(MemoryLoad::List),
                ..
            })
        )),
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
    let Effect::Load(Stamped {
        generation,
        value: Load::ChatMemory(MemoryLoad::TrimSource { .. }),
    }) = effects[0]
    else {
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
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::TrimSource(Ok((
                Arc::new(sessions(tokens, messages)),
                ChatMemoryPolicy::default(),
            ))),
        )),
    );
    let slot = plan(&state).summary.clone().unwrap();
    assert!(slot.text.is_none(), "no request without the key");
    assert!(
        slot.prompt.contains("parcel"),
        "the exact prompt is there to show"
    );
    let effects = update(&mut state, key('S'));
    let generation = match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::ChatMemory(MemoryLoad::Summary { .. }),
            }),
        ] => *generation,
        other => panic!("{other:?}"),
    };
    assert!(state.busy());
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            MemoryLoaded::Summary(Err(
                "summarizer http://127.0.0.1:9 did not answer within 5 s".to_owned(),
            )),
        )),
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
        Event::Job(JobEvent::load(
            generation + 1,
            MemoryLoaded::Summary(Ok(old)),
        )),
    );
    assert!(stale.is_empty());
    assert!(state.trim.as_ref().unwrap().summary_status.is_none());
}

#[test]
fn threshold_gauge_below_the_trigger_is_not_a_full_bar() {
    let state = previewing(r#"{"trim_mode":"threshold","trigger":20,"target":10}"#, 15);
    assert_eq!(
        plan(&state).kept_len(),
        15,
        "below the trigger nothing goes"
    );
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 32)).unwrap();
    let theme = crate::tui::theme::Theme::monochrome();
    terminal
        .draw(|frame| crate::tui::ui::draw(&state, &theme, frame))
        .unwrap();
    let screen = terminal.backend().to_string();
    let gauge = screen
        .lines()
        .find(|line| line.contains("/ 20 messages"))
        .unwrap_or_else(|| panic!("the gauge measures against the trigger:\n{screen}"));
    assert!(
        gauge.contains("15 / 20 messages below the trigger"),
        "{gauge}"
    );
    assert!(gauge.contains('░'), "part of the bar stays empty: {gauge}");
}

#[test]
fn i_shows_the_plans_rows_whole_and_esc_returns_to_the_preview() {
    let mut state = previewing(r#"{"max_messages":20}"#, 30);
    update(&mut state, key('i'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i opens the plan whole: {:?}", state.overlay);
    };
    assert!(
        detail.text.contains("#0 user · removed: ")
            && detail
                .text
                .contains("Message 0: the parcel 0 reached Lyon."),
        "{}",
        detail.text
    );
    assert!(
        detail.text.contains("#29 assistant · kept"),
        "{}",
        detail.text
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.overlay, Overlay::Trim);
}
