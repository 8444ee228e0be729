use super::*;
use crate::inspect::document::DocumentHead;
use crate::sources::conversation::{Extra, ListedConversation};
use crate::sources::opened::ConversationKey;
use crate::store::ConversationShape;
use crate::tui::update::effect::{Load, Stamped};
use crate::tui::update::session_effects::{SessionLoad, SessionLoaded};
use crate::tui::update::test_support::{code, key, state};
use crate::tui::update::{Event, JobEvent, start, update};
use crossterm::event::KeyCode;

fn row(id: &str, flow: &str) -> ListedConversation {
    ListedConversation {
        id: id.to_owned(),
        title: Some(flow.to_owned()),
        messages: Some(3),
        last_activity: None,
        deleted: false,
        problem: None,
        extra: Extra::new(),
        scope: Some(format!("{flow}-id")),
    }
}

fn langflow_state() -> AppState {
    let mut state = state();
    state.shape = ConversationShape::FlowSessions;
    state
}

/// A page of `rows` as the list reads it, continued at `next`.
fn listed(rows: Vec<ListedConversation>, next: Option<&str>) -> ConversationList {
    ConversationList {
        head: DocumentHead {
            version: 1,
            source: "langflow",
        },
        noun: "session",
        conversations: rows,
        next: next.map(str::to_owned),
    }
}

/// The page starting at `after` arrives with `rows`, continued at `next`.
fn page(
    state: &mut AppState,
    after: Option<&str>,
    rows: Vec<ListedConversation>,
    next: Option<&str>,
) -> bool {
    let generation = state.sessions.generation;
    update(
        state,
        Event::Job(JobEvent::load(
            generation,
            SessionLoaded::Page {
                after: after.map(str::to_owned),
                result: Ok(listed(rows, next)),
            },
        )),
    );
    state.dirty
}

fn asked_page(effects: &[Effect]) -> Option<(Option<String>, Option<String>)> {
    effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            value: Load::Sessions(SessionLoad::Page { after, search, .. }),
            ..
        }) => Some((after.clone(), search.clone())),
        _ => None,
    })
}

#[test]
fn a_langflow_database_lists_its_sessions_and_pages_by_the_cursor_each_page_gives() {
    let mut state = langflow_state();
    let effects = start(&mut state);
    assert_eq!(asked_page(&effects), Some((None, None)));
    assert!(state.sessions.status.is_loading());
    page(
        &mut state,
        None,
        vec![row("s1", "A"), row("s1", "B")],
        Some("2"),
    );
    assert_eq!(state.sessions.rows.len(), 2);
    assert_eq!(
        state.key_context(),
        crate::tui::keymap::KeyContext::Sessions
    );

    let effects = update(&mut state, key(']'));
    assert_eq!(asked_page(&effects), Some((Some("2".to_owned()), None)));
    assert_eq!(state.sessions.loading_page(), Some(2));
    // A second step while the page loads waits for it.
    assert!(asked_page(&update(&mut state, key(']'))).is_none());
    page(&mut state, Some("2"), vec![row("s2", "A")], None);
    assert_eq!(state.sessions.start.as_deref(), Some("2"));
    assert_eq!(state.sessions.page_number(), 2);
    assert!(
        asked_page(&update(&mut state, key(']'))).is_none(),
        "the last page"
    );
    let effects = update(&mut state, key('['));
    assert_eq!(asked_page(&effects), Some((None, None)));
    page(&mut state, None, vec![row("s1", "A")], Some("1"));
    assert_eq!(state.sessions.page_number(), 1);
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
                after: None,
                result: Ok(listed(vec![row("old", "A")], None)),
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
    page(&mut state, None, vec![row("s1", "A")], Some("1"));
    update(&mut state, key(']'));
    page(&mut state, Some("1"), vec![row("s2", "A")], None);
    update(&mut state, key('/'));
    let effects = update(&mut state, key('s'));
    assert_eq!(asked_page(&effects), Some((None, Some("s".to_owned()))));
    assert!(
        state.sessions.rows.is_empty(),
        "no stale rows under the filter"
    );
    assert_eq!(state.sessions.page_number(), 1);
    update(&mut state, code(KeyCode::Enter));
    let effects = update(&mut state, code(KeyCode::Esc));
    assert_eq!(asked_page(&effects), Some((None, None)), "esc clears it");
}

#[test]
fn enter_opens_the_selected_flows_session() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, None, vec![row("s1", "A"), row("s1", "B")], None);
    update(&mut state, key('j'));
    let effects = update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Session);
    let opened = effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            value: Load::Sessions(SessionLoad::Open { key, .. }),
            ..
        }) => Some(key.clone()),
        _ => None,
    });
    assert_eq!(
        opened,
        Some(ConversationKey::scoped("s1", Some("B-id".to_owned())))
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
}
