use super::*;
use crate::inspect::sessions::{ConversationRow, SessionKey};
use crate::store::ConversationShape;
use crate::tui::update::effect::{Load, Stamped};
use crate::tui::update::session_effects::{SessionLoad, SessionLoaded};
use crate::tui::update::test_support::{code, key, state};
use crate::tui::update::{Event, JobEvent, start, update};
use crossterm::event::KeyCode;

fn row(id: &str, flow: &str) -> ConversationRow {
    ConversationRow {
        key: SessionKey {
            id: id.to_owned(),
            flow_id: Some(format!("{flow}-id")),
        },
        flow_name: Some(flow.to_owned()),
        messages: Some(3),
        checkpoints: None,
        last_activity: Some("2026-01-01 10:00".to_owned()),
        owner: Some("ada".to_owned()),
        problem: None,
    }
}

fn langflow_state() -> AppState {
    let mut state = state();
    state.shape = ConversationShape::FlowSessions;
    state
}

fn page(state: &mut AppState, offset: u64, rows: Vec<ConversationRow>, has_more: bool) -> bool {
    let generation = state.sessions.generation;
    update(
        state,
        Event::Job(JobEvent::load(
            generation,
            SessionLoaded::Page {
                offset,
                result: Ok(ConversationRowPage { rows, has_more }),
            },
        )),
    );
    state.dirty
}

fn asked_offset(effects: &[Effect]) -> Option<(u64, Option<String>)> {
    effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            value: Load::Sessions(SessionLoad::Page { offset, search, .. }),
            ..
        }) => Some((*offset, search.clone())),
        _ => None,
    })
}

#[test]
fn a_langflow_database_lists_its_sessions_and_pages_by_offset() {
    let mut state = langflow_state();
    let effects = start(&mut state);
    assert_eq!(asked_offset(&effects), Some((0, None)));
    assert!(state.sessions.status.is_loading());
    page(&mut state, 0, vec![row("s1", "A"), row("s1", "B")], true);
    assert_eq!(state.sessions.rows.len(), 2);
    assert_eq!(
        state.key_context(),
        crate::tui::keymap::KeyContext::Sessions
    );

    let effects = update(&mut state, key(']'));
    assert_eq!(asked_offset(&effects), Some((2, None)));
    // A second step while the page loads waits for it.
    assert!(asked_offset(&update(&mut state, key(']'))).is_none());
    page(&mut state, 2, vec![row("s2", "A")], false);
    assert_eq!(state.sessions.offset, 2);
    assert!(
        asked_offset(&update(&mut state, key(']'))).is_none(),
        "the last page"
    );
    let effects = update(&mut state, key('['));
    assert_eq!(asked_offset(&effects), Some((0, None)));
}

#[test]
fn a_stale_page_is_dropped() {
    let mut state = langflow_state();
    start(&mut state);
    let stale = state.sessions.generation;
    update(&mut state, code(KeyCode::Char('r')));
    update(
        &mut state,
        Event::Job(JobEvent::load(
            stale,
            SessionLoaded::Page {
                offset: 0,
                result: Ok(ConversationRowPage {
                    rows: vec![row("old", "A")],
                    has_more: false,
                }),
            },
        )),
    );
    assert!(state.sessions.rows.is_empty());
    assert!(state.sessions.status.is_loading());
}

#[test]
fn the_filter_searches_ids_and_text_from_the_first_page() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, 0, vec![row("s1", "A")], true);
    update(&mut state, key(']'));
    page(&mut state, 1, vec![row("s2", "A")], false);
    update(&mut state, key('/'));
    let effects = update(&mut state, key('s'));
    assert_eq!(asked_offset(&effects), Some((0, Some("s".to_owned()))));
    assert!(
        state.sessions.rows.is_empty(),
        "no stale rows under the filter"
    );
    assert_eq!(state.sessions.offset, 0);
    update(&mut state, code(KeyCode::Enter));
    let effects = update(&mut state, code(KeyCode::Esc));
    assert_eq!(asked_offset(&effects), Some((0, None)), "esc clears it");
}

#[test]
fn enter_opens_the_selected_flows_session() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, 0, vec![row("s1", "A"), row("s1", "B")], false);
    update(&mut state, key('j'));
    let effects = update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Session);
    let opened = effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            value: Load::Sessions(SessionLoad::Open { key }),
            ..
        }) => Some(key.clone()),
        _ => None,
    });
    assert_eq!(
        opened,
        Some(SessionKey {
            id: "s1".to_owned(),
            flow_id: Some("B-id".to_owned())
        })
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
}
