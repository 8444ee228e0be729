//! Tests of the budget: its cut line and its jobs.

use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::history::assemble_history;
use crate::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter};
use crate::tui::action::Action;
use crate::tui::state::BUDGET_STEP;
use crate::tui::update::test_support::*;
use crate::tui::update::{Event, JobEvent, LoadReport, update};

#[test]
fn budget_keys_move_the_cut_line_without_a_job() {
    let mut state = opened_with_budget();
    let before = conversation(&state).budget.clone().unwrap();
    assert_eq!(before.dropped(), 0);
    update(&mut state, Event::Action(Action::BudgetDown));
    for _ in 0..10 {
        assert!(update(&mut state, key('-')).is_empty());
    }
    let after = conversation(&state).budget.clone().unwrap();
    assert_eq!(after.max_tokens, 0);
    assert_eq!(state.settings.budget, 0, "the budget never goes negative");
    assert_eq!(after.dropped(), after.counts.len() - 1);
    update(&mut state, key('+'));
    assert_eq!(
        conversation(&state).budget.as_ref().unwrap().max_tokens,
        BUDGET_STEP
    );
}

#[test]
fn zero_counter_is_requested_and_keeps_everything() {
    let mut state = opened();
    state.settings.counter = CounterKind::Plugin;
    let effects = update(&mut state, key('c'));
    assert_eq!(state.settings.counter, CounterKind::Raw);
    let (_, _, settings) = budget_effect(&effects);
    assert_eq!(settings.counter.kind(), CounterKind::Raw);
    let effects = update(&mut state, key('c'));
    let (_, _, settings) = budget_effect(&effects);
    assert_eq!(settings.counter.kind(), CounterKind::Zero);
    deliver_budget(&mut state, &effects);
    update(&mut state, Event::Action(Action::BudgetDown));
    let view = conversation(&state).budget.clone().unwrap();
    assert!(view.zero_counter_trap());
    assert_eq!(view.dropped(), 0);
}

#[test]
fn stale_budgets_are_dropped() {
    let mut state = opened();
    let first = budget_effect(&update(&mut state, key('j'))).0;
    update(&mut state, key('k'));
    let counter = TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase);
    let settings = BudgetSettings {
        counter,
        max_tokens: 10,
        model: "gpt-4o".to_owned(),
        context_window: crate::memory::context_windows::ContextWindow::Exact(128_000),
        options: Default::default(),
    };
    let view = BudgetView::for_history(
        assemble_history(&[], &[], &settings.options),
        &settings,
        &mut CountCache::new(10),
    );
    update(
        &mut state,
        Event::Job(JobEvent::load(
            first,
            LoadReport::Budget(Ok(Box::new(view))),
        )),
    );
    assert!(conversation(&state).budget.is_none());
    assert!(conversation(&state).budget_status.is_loading());
}

/// The tree marks a thread row `●` while the model is fed it and `○` once the budget panel's
/// cut drops it, as a session's messages are marked.
#[test]
fn the_tree_marks_follow_the_cut_the_budget_panel_shows() {
    let mut state = opened_with_budget();
    // The thread a → b → c, everything sent under the first budget.
    assert_eq!(conversation(&state).is_fed("a"), Some(true));
    assert!(screen(&state).contains("● a "), "{}", screen(&state));
    // A budget of 0 keeps the newest message alone: c's answer.
    for _ in 0..10 {
        update(&mut state, key('-'));
    }
    assert_eq!(conversation(&state).is_fed("a"), Some(false));
    assert_eq!(conversation(&state).is_fed("b"), Some(false));
    assert_eq!(conversation(&state).is_fed("c"), Some(true));
    let text = screen(&state);
    for (marked, id) in [("○", "a"), ("○", "b"), ("●", "c")] {
        assert!(text.contains(&format!("{marked} {id} ")), "{id}: {text}");
    }
    // A regeneration off the thread keeps no mark.
    assert!(text.contains("  b2 "), "{text}");
    // While a new budget is counted the marks wait for it.
    update(&mut state, key('c'));
    assert_eq!(conversation(&state).is_fed("a"), None);
}
