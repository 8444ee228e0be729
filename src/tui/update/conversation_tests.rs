//! Tests of the conversation screen: the tree, its thread, the demo and polling.

use std::sync::Arc;

use crossterm::event::KeyCode;

use super::*;
use crate::memory::thread::ExtractionMode;
use crate::sources::turn_trees::TurnConversation;
use crate::tui::action::Action;
use crate::tui::state::{POLL_EVERY_TICKS, Screen};
use crate::tui::update::test_support::*;
use crate::tui::update::{Effect, Event, JobEvent, Load, LoadReport, Stamped, update};

#[test]
fn opening_selects_the_latest_leaf_and_marks_its_thread() {
    let state = opened();
    assert_eq!(state.screen, Screen::Conversation);
    assert_eq!(selected_id(&state), "c");
    let mut thread = thread_ids(&state);
    thread.sort();
    assert_eq!(thread, ["a", "b", "c"]);
}

#[test]
fn thread_mode_toggle_flags_the_divergence_on_an_older_branch() {
    let mut state = opened();
    // Visible order: a, b, c, b2. Select b2, a regeneration that is not the newest row.
    update(&mut state, Event::Action(Action::Bottom));
    assert_eq!(selected_id(&state), "b2");
    let thread = conversation(&state).thread.clone().unwrap();
    assert_eq!(thread.mode, ThreadMode::Dify);
    assert_ne!(
        thread.comparison,
        crate::memory::thread::ThreadComparison::Same
    );
    assert!(on_thread(&state, "c"));
    update(&mut state, key('t'));
    assert_eq!(conversation(&state).mode, ThreadMode::Tree);
    assert!(on_thread(&state, "b2") && !on_thread(&state, "c"));
    let effects = update(&mut state, key('t'));
    assert_eq!(conversation(&state).mode, ThreadMode::Fixed);
    let (_, _, settings) = budget_effect(&effects);
    assert_eq!(
        settings.options.extraction,
        ExtractionMode::Fixed,
        "memory runs the fix too"
    );
}

#[test]
fn collapse_hides_children_then_goes_to_parent() {
    let mut state = opened();
    update(&mut state, Event::Action(Action::Top));
    assert_eq!(selected_id(&state), "a");
    update(&mut state, key('h'));
    assert!(conversation(&state).is_collapsed(conversation(&state).selected));
    update(&mut state, Event::Action(Action::Bottom));
    assert_eq!(selected_id(&state), "a", "only the root is visible");
    update(&mut state, key('l'));
    update(&mut state, key('j'));
    assert_eq!(selected_id(&state), "b");
    update(&mut state, key('h'));
    update(&mut state, key('h'));
    assert_eq!(selected_id(&state), "a");
}

#[test]
fn jump_latest_opens_collapsed_ancestors() {
    let mut state = opened();
    update(&mut state, Event::Action(Action::Top));
    update(&mut state, key('h'));
    update(&mut state, key('L'));
    assert_eq!(selected_id(&state), "c");
    assert_eq!(conversation(&state).cursor, 2);
}

#[test]
fn demo_steps_walk_the_extraction_and_select_the_examined_row() {
    let mut state = opened();
    update(&mut state, key('d'));
    let demo = conversation(&state).demo.clone().unwrap();
    assert_eq!(demo.shown, 1);
    assert_eq!(selected_id(&state), "c", "the newest row is examined first");
    update(&mut state, key('n'));
    assert_eq!(selected_id(&state), "b2");
    assert!(!on_thread(&state, "b2"), "a sibling is skipped");
    update(&mut state, key('n'));
    assert_eq!(selected_id(&state), "b");
    assert!(on_thread(&state, "b"));
    for _ in 0..10 {
        update(&mut state, key('n'));
    }
    let c = conversation(&state);
    assert_eq!(
        c.demo.as_ref().unwrap().shown,
        c.demo.as_ref().unwrap().trace.steps.len()
    );
    update(&mut state, code(KeyCode::Esc));
    assert!(conversation(&state).demo.is_none());
    assert_eq!(
        state.screen,
        Screen::Conversation,
        "esc leaves the demo first"
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
}

#[test]
fn polling_reloads_only_when_the_newest_message_changed() {
    let mut state = opened();
    let polls: Vec<Effect> = (0..POLL_EVERY_TICKS)
        .flat_map(|_| update(&mut state, Event::Tick))
        .collect();
    assert!(matches!(&polls[..], [Effect::PollNewest { id }] if id == "c1"));
    let same = update(
        &mut state,
        Event::Job(JobEvent::Newest {
            id: "c1".to_owned(),
            newest: Some("c".to_owned()),
        }),
    );
    assert!(same.is_empty());
    let changed = update(
        &mut state,
        Event::Job(JobEvent::Newest {
            id: "c1".to_owned(),
            newest: Some("d".to_owned()),
        }),
    );
    assert!(
        matches!(&changed[..], [Effect::Load(Stamped { value: Load::Conversation { id, .. }, .. })] if id == "c1")
    );
}

#[test]
fn a_reload_follows_the_latest_leaf_when_it_was_selected() {
    let mut state = opened();
    let mut rows = loaded().conversation.rows.clone();
    rows.push(message("d", Some("c"), 40));
    let conversation_data = TurnConversation {
        rows,
        ..loaded().conversation.clone()
    };
    let generation = state.generation();
    state.conversation.as_mut().unwrap().generation = generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Conversation(Ok(Arc::new(Loaded::new(conversation_data)))),
        )),
    );
    assert_eq!(selected_id(&state), "d");
}

#[test]
fn row_window_key_says_what_it_changed_when_the_app_sets_no_window() {
    let mut state = opened();
    update(&mut state, key('W'));
    let said = state.message.clone().expect("W says what it did");
    assert!(
        said.contains("sets no memory window") && said.contains("500 rows"),
        "{said}"
    );
    update(&mut state, key('W'));
    assert!(state.message.is_some(), "W says so both ways");
}

#[test]
fn slash_in_a_conversation_searches_it_instead_of_running_keys() {
    let mut state = opened();
    // `1` from another tab brings this screen back; the user types a search.
    update(&mut state, key('3'));
    update(&mut state, key('1'));
    assert_eq!(state.screen, Screen::Conversation);
    update(&mut state, key('/'));
    for c in "kyoto".chars() {
        update(&mut state, key(c));
    }
    assert_eq!(state.screen, Screen::Conversation);
    assert_eq!(
        state.overlay,
        crate::tui::state::Overlay::Prompt(crate::tui::state::Prompt::Search("kyoto".to_owned()))
    );
    assert!(
        conversation(&state).nodes.is_none(),
        "o and t were typed, not run"
    );
}
