use super::*;
use crate::sources::conversation::{Extra, ListedConversation, ListedPage};
use crate::sources::opened::ConversationKey;
use crate::tui::state::ConversationScreens;
use crate::tui::update::effect::{Load, LoadReport, Stamped};
use crate::tui::update::session_effects::SessionLoad;
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
    state.conversation_screens = ConversationScreens::Messages;
    state
}

/// The page asked for arrives with `rows`, continued at `next`.
fn page(state: &mut AppState, rows: Vec<ListedConversation>, next: Option<&str>) -> Vec<Effect> {
    let generation = state.list.generation;
    let page = ListedPage {
        conversations: rows,
        next: next.map(str::to_owned),
    };
    update(
        state,
        Event::Job(JobEvent::load(generation, LoadReport::List(Ok(page)))),
    )
}

fn asked_page(effects: &[Effect]) -> Option<(Option<String>, Option<String>)> {
    effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            value: Load::List(query),
            ..
        }) => Some((query.after.clone(), query.search.clone())),
        _ => None,
    })
}

#[test]
fn a_langflow_database_lists_its_sessions_and_pages_by_the_cursor_each_page_gives() {
    let mut state = langflow_state();
    let effects = start(&mut state);
    assert_eq!(asked_page(&effects), Some((None, None)));
    assert!(state.list.status.is_loading());
    page(&mut state, vec![row("s1", "A"), row("s1", "B")], Some("2"));
    assert_eq!(state.list.rows.len(), 2);
    assert_eq!(
        state.key_context(),
        crate::tui::keymap::KeyContext::Sessions
    );

    let effects = update(&mut state, key(']'));
    assert_eq!(asked_page(&effects), Some((Some("2".to_owned()), None)));
    assert_eq!(state.list.target_page(), Some(2));
    // A second step while the page loads waits for the cursor that page brings.
    assert!(asked_page(&update(&mut state, key(']'))).is_none());
    assert_eq!(state.list.target_page(), Some(3));
    let effects = page(&mut state, vec![row("s2", "A")], None);
    assert!(asked_page(&effects).is_none(), "page 2 is the last");
    assert_eq!(state.list.page_number(), 2);
    assert_eq!(state.list.target_page(), None);
    let effects = update(&mut state, key('['));
    assert_eq!(asked_page(&effects), Some((None, None)));
    page(&mut state, vec![row("s1", "A")], Some("1"));
    assert_eq!(state.list.page_number(), 1);
}

#[test]
fn a_stale_page_is_dropped() {
    let mut state = langflow_state();
    start(&mut state);
    let stale = state.list.generation;
    update(&mut state, code(KeyCode::Char('r')));
    let old = ListedPage {
        conversations: vec![row("old", "A")],
        next: None,
    };
    update(
        &mut state,
        Event::Job(JobEvent::load(stale, LoadReport::List(Ok(old)))),
    );
    assert!(state.list.rows.is_empty());
    assert!(state.list.status.is_loading());
}

#[test]
fn a_session_list_counts_no_threads() {
    let mut state = langflow_state();
    start(&mut state);
    let effects = page(&mut state, vec![row("s1", "A")], None);
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            Effect::Load(Stamped {
                value: Load::CountThreads { .. },
                ..
            })
        )),
        "{effects:?}"
    );
}

#[test]
fn the_filter_searches_ids_and_text_from_the_first_page() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, vec![row("s1", "A")], Some("1"));
    update(&mut state, key(']'));
    page(&mut state, vec![row("s2", "A")], None);
    update(&mut state, key('/'));
    let effects = update(&mut state, key('s'));
    assert_eq!(asked_page(&effects), Some((None, Some("s".to_owned()))));
    assert!(state.list.rows.is_empty(), "no stale rows under the filter");
    assert_eq!(state.list.page_number(), 1);
    update(&mut state, code(KeyCode::Enter));
    // Esc while the search's first page loads stops it, keeping the filter.
    let effects = update(&mut state, code(KeyCode::Esc));
    assert!(asked_page(&effects).is_none());
    assert_eq!(state.list.filter, "s");
    let effects = update(&mut state, code(KeyCode::Esc));
    assert_eq!(asked_page(&effects), Some((None, None)), "esc clears it");
}

#[test]
fn a_row_keeps_its_selection_by_session_and_flow_when_the_page_is_read_again() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, vec![row("s1", "A"), row("s1", "B")], None);
    update(&mut state, key('j'));
    update(&mut state, code(KeyCode::Char('r')));
    // The same session id of the other flow now comes first.
    page(&mut state, vec![row("s1", "B"), row("s1", "A")], None);
    assert_eq!(state.list.selected, 0);
    assert_eq!(
        state.list.selected_key(),
        Some(ConversationKey::scoped("s1", Some("B-id".to_owned())))
    );
}

#[test]
fn enter_opens_the_selected_flows_session() {
    let mut state = langflow_state();
    start(&mut state);
    page(&mut state, vec![row("s1", "A"), row("s1", "B")], None);
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
