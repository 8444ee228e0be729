//! Tests of the core's routing: keys that act everywhere, and ticks.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::action::Action;
use crate::tui::update::test_support::*;
use crate::tui::update::{Event, JobEvent, LoadReport, update};

#[test]
fn ticks_redraw_only_while_busy() {
    let mut state = opened();
    let generation = conversation(&state).budget_generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Budget(Err("boom".to_owned())),
        )),
    );
    state.dirty = false;
    update(&mut state, Event::Tick);
    assert!(!state.dirty);
    update(&mut state, Event::Action(Action::Refresh));
    state.dirty = false;
    update(&mut state, Event::Tick);
    assert!(state.dirty, "the spinner moves");
}

#[test]
fn ctrl_c_quits_even_while_typing() {
    let mut state = state();
    update(&mut state, key(':'));
    update(
        &mut state,
        Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    );
    assert!(state.quit);
}
