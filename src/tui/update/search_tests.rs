//! Tests of `/` in an open conversation: it searches the conversation's messages instead of
//! leaving for the list's filter.

use crossterm::event::KeyCode;

use crate::tui::state::{AppState, Overlay, Prompt, Screen};
use crate::tui::update::test_support::*;
use crate::tui::update::update;

fn type_text(state: &mut AppState, text: &str) {
    for c in text.chars() {
        update(state, key(c));
    }
}

fn selected(state: &AppState) -> String {
    selected_id(state)
}

fn matches(state: &AppState) -> Vec<usize> {
    let search = conversation(state).search.as_ref();
    search.map(|s| s.matches.clone()).unwrap_or_default()
}

#[test]
fn slash_in_a_conversation_searches_its_messages_and_keeps_it_open() {
    let mut state = opened();
    assert_eq!(selected(&state), "c", "opened on the latest leaf");
    update(&mut state, key('/'));
    assert_eq!(state.screen, Screen::Conversation, "the conversation stays");
    assert_eq!(
        state.overlay,
        Overlay::Prompt(Prompt::Search(String::new()))
    );
    type_text(&mut state, "ANSWER B2");
    assert_eq!(selected(&state), "b2", "the selection goes to the match");
    assert_eq!(matches(&state).len(), 1);
    assert_eq!(
        state.message.as_deref(),
        Some("\"ANSWER B2\": match 1 of 1")
    );
    assert!(
        state.list.filter.is_empty(),
        "the list's filter is untouched"
    );
    // Esc in the prompt drops the search typed so far.
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.overlay, Overlay::None);
    assert!(conversation(&state).search.is_none());
    assert_eq!(state.screen, Screen::Conversation);
}

#[test]
fn n_and_shift_n_go_from_match_to_match_and_esc_clears_before_leaving() {
    let mut state = opened();
    update(&mut state, key('/'));
    type_text(&mut state, "question");
    update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.overlay, Overlay::None);
    // Every message holds it: the tree's order is a, b, c, b2.
    assert_eq!(matches(&state), [0, 1, 2, 3]);
    assert_eq!(selected(&state), "c", "the selection held a match already");
    update(&mut state, key('n'));
    assert_eq!(selected(&state), "b2");
    assert_eq!(state.message.as_deref(), Some("\"question\": match 4 of 4"));
    update(&mut state, key('n'));
    assert_eq!(selected(&state), "a", "n wraps past the last match");
    update(&mut state, key('N'));
    assert_eq!(selected(&state), "b2", "N wraps before the first");
    update(&mut state, key('N'));
    assert_eq!(selected(&state), "c");
    // Esc clears the search first, then leaves.
    update(&mut state, code(KeyCode::Esc));
    assert!(conversation(&state).search.is_none());
    assert_eq!(state.screen, Screen::Conversation);
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
}

#[test]
fn a_search_that_finds_nothing_says_so_and_n_without_one_says_how() {
    let mut state = opened();
    update(&mut state, key('n'));
    assert!(state.message.as_deref().unwrap().starts_with("/ searches"));
    update(&mut state, key('/'));
    type_text(&mut state, "zzz");
    assert_eq!(state.message.as_deref(), Some("no message holds \"zzz\""));
    assert_eq!(selected(&state), "c", "the selection stays");
}

#[test]
fn n_steps_the_extraction_demo_while_nothing_is_searched() {
    let mut state = opened();
    update(&mut state, key('d'));
    let shown = |state: &AppState| conversation(state).demo.as_ref().unwrap().shown;
    assert_eq!(shown(&state), 1);
    update(&mut state, key('n'));
    assert_eq!(shown(&state), 2);
    update(&mut state, key('N'));
    assert_eq!(shown(&state), 1);
}
