//! Tests of `:open URL` as far as the core goes: the request, a failure, a stale report. The
//! switch itself, on real databases, is in `tests/tui_app.rs`.

use crossterm::event::KeyCode;

use crate::tui::state::{AppState, Screen};
use crate::tui::update::test_support::*;
use crate::tui::update::{Effect, JobEvent, Load, LoadReport, Stamped, update};

fn type_command(state: &mut AppState, text: &str) -> Vec<Effect> {
    update(state, key(':'));
    for c in text.chars() {
        update(state, key(c));
    }
    update(state, code(KeyCode::Enter))
}

fn database_request(effects: &[Effect]) -> (u64, String) {
    match effects {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Database { url },
            }),
        ] => (*generation, url.clone()),
        other => panic!("expected a database load, got {other:?}"),
    }
}

fn failed(generation: u64, error: &str) -> crate::tui::update::Event {
    crate::tui::update::Event::Job(JobEvent::load(
        generation,
        LoadReport::Database(Err(error.to_owned())),
    ))
}

#[test]
fn open_asks_for_the_database_a_path_or_url_names() {
    let mut state = opened();
    let (_, url) = database_request(&type_command(&mut state, "open /tmp/other dir/x.db"));
    assert_eq!(
        url, "sqlite:///tmp/other dir/x.db",
        "a path as --db takes it"
    );
    assert!(state.busy(), "the spinner turns while it opens");
    let (_, url) = database_request(&type_command(&mut state, "open postgres://u:pw@h/db"));
    assert_eq!(url, "postgres://u:pw@h/db");
    let message = state.message.clone().unwrap();
    assert!(message.starts_with("opening postgres://"), "{message}");
    assert!(
        !message.contains("pw"),
        "the password is not shown: {message}"
    );
}

#[test]
fn a_database_that_fails_to_open_leaves_the_open_one_as_it_was() {
    let mut state = opened();
    let before = state.database.clone();
    let conversation = state.conversation.clone().map(|c| c.id);
    let (generation, _) = database_request(&type_command(&mut state, "open /nowhere/x.db"));
    let effects = update(
        &mut state,
        failed(generation, "cannot open sqlite:///nowhere/x.db"),
    );
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(state.database, before);
    assert_eq!(state.screen, Screen::Conversation);
    assert_eq!(state.conversation.clone().map(|c| c.id), conversation);
    let message = state.message.clone().unwrap();
    assert!(
        message.contains("cannot open sqlite:///nowhere/x.db") && message.contains(&before),
        "says why and what is still open: {message}"
    );
    assert!(state.opening.is_none(), "the spinner stops");
}

#[test]
fn only_the_latest_open_is_answered() {
    let mut state = opened();
    let (first, _) = database_request(&type_command(&mut state, "open a.db"));
    let (second, _) = database_request(&type_command(&mut state, "open b.db"));
    update(&mut state, failed(first, "first"));
    assert!(state.opening.is_some(), "the first answer is stale");
    update(&mut state, failed(second, "second"));
    assert!(state.opening.is_none());
    assert!(state.message.clone().unwrap().contains("second"));
}
