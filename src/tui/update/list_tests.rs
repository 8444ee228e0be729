//! Tests of the conversations list: pages, filter, search and thread counts.

use crossterm::event::KeyCode;

use super::*;
use crate::tui::action::Action;
use crate::tui::state::{AppState, LoadStatus, Overlay, PAGE_SIZE, POLL_EVERY_TICKS};
use crate::tui::update::list_query::DELETED;
use crate::tui::update::test_support::*;
use crate::tui::update::{Effect, Event, JobEvent, Load, LoadReport, Stamped, start, update};

#[test]
fn start_loads_the_first_page_and_shows_loading() {
    let mut state = state();
    let effects = start(&mut state);
    assert!(matches!(
        &effects[..],
        [Effect::Load(Stamped { value: Load::List(filter), .. }), ..] if filter.after.is_none() && filter.search.is_none()
    ));
    assert_eq!(state.list.status, LoadStatus::Loading);
    assert!(state.busy());
}

#[test]
fn stale_list_results_are_dropped() {
    let mut state = state();
    start(&mut state);
    let stale = state.list.generation;
    update(&mut state, Event::Action(Action::Refresh));
    state.dirty = false;
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            stale,
            LoadReport::List(Ok(page_of(vec![summary("old")]))),
        )),
    );
    assert!(effects.is_empty());
    assert!(state.list.rows.is_empty());
    assert!(!state.dirty, "a dropped result needs no frame");
    list_loaded(&mut state, &["new"]);
    assert_eq!(state.list.rows[0].id, "new");
}

#[test]
fn loaded_list_asks_for_thread_tokens_of_the_page() {
    let mut state = state();
    start(&mut state);
    let effects = list_loaded(&mut state, &["x", "y"]);
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::CountThreads { ids, .. },
    })) = effects.first()
    else {
        panic!("expected a token count, got {effects:?}");
    };
    assert_eq!(ids, &["x", "y"]);
    let generation = *generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::ThreadTokens(vec![("x".to_owned(), 42)]),
        )),
    );
    assert_eq!(state.list.thread_tokens.get("x"), Some(&42));
}

#[test]
fn a_poll_recounts_only_new_or_changed_conversations() {
    let mut state = state();
    start(&mut state);
    let effects = list_loaded(&mut state, &["x", "y"]);
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::CountThreads { .. },
    })) = effects.first()
    else {
        panic!("{effects:?}");
    };
    let generation = *generation;
    let tokens = vec![("x".to_owned(), 1), ("y".to_owned(), 2)];
    update(
        &mut state,
        Event::Job(JobEvent::load(generation, LoadReport::ThreadTokens(tokens))),
    );
    let polled: Vec<Effect> = (0..POLL_EVERY_TICKS)
        .flat_map(|_| update(&mut state, Event::Tick))
        .collect();
    assert!(matches!(
        &polled[..],
        [Effect::Load(Stamped {
            value: Load::List(..),
            ..
        })]
    ));
    assert!(list_loaded(&mut state, &["x", "y"]).is_empty());
    let generation = state.list.generation;
    let mut changed = summary("y");
    changed.messages = changed.messages.map(|n| n + 1);
    let rows = vec![summary("new"), summary("x"), changed];
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::List(Ok(page_of(rows))),
        )),
    );
    assert!(
        matches!(&effects[..], [Effect::Load(Stamped { value: Load::CountThreads { ids, .. }, .. })] if ids == &["new", "y"])
    );
    for c in ":counter zero".chars() {
        update(&mut state, key(c));
    }
    update(&mut state, code(KeyCode::Enter));
    assert!(
        state.list.thread_tokens.is_empty(),
        "another counter makes the counts stale"
    );
}

#[test]
fn list_errors_and_empty_pages_are_states() {
    let mut state = state();
    start(&mut state);
    let generation = state.list.generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::List(Err("connection refused".to_owned())),
        )),
    );
    assert_eq!(
        state.list.status,
        LoadStatus::Failed("connection refused".to_owned())
    );
    update(&mut state, Event::Action(Action::Refresh));
    list_loaded(&mut state, &[]);
    assert_eq!(state.list.status, LoadStatus::Loaded);
    assert!(state.list.rows.is_empty());
    update(&mut state, Event::Action(Action::Down));
    assert_eq!(state.list.selected, 0);
}

#[test]
fn a_scanning_search_shows_rows_as_found_and_esc_stops_it() {
    let mut state = state();
    start(&mut state);
    list_loaded(&mut state, &["x"]);
    update(&mut state, key('/'));
    for c in "needle".chars() {
        update(&mut state, key(c));
    }
    update(&mut state, code(KeyCode::Enter));
    let generation = state.list.generation;
    let found = |state: &mut AppState, id: &str, generation: u64| {
        update(
            state,
            Event::Job(JobEvent::load(
                generation,
                LoadReport::ListFound(summary(id)),
            )),
        )
    };
    found(&mut state, "a", generation);
    found(&mut state, "stale", generation - 1);
    found(&mut state, "b", generation);
    let ids = |rows: &[ListedConversation]| rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&state.list.found_so_far), ["a", "b"]);
    assert_eq!(state.list.status, LoadStatus::Loading);

    // Esc stops it; the list then reads why its selected row matched.
    let effects = update(&mut state, code(KeyCode::Esc));
    assert!(
        matches!(&effects[..], [
            Effect::StopList,
            Effect::Load(Stamped { value: Load::Snippet { key, search, .. }, .. }),
        ] if key.id == "a" && key.scope.is_none() && search == "needle"),
        "{effects:?}"
    );
    assert_eq!(state.list.status, LoadStatus::Loaded);
    assert_eq!(
        ids(&state.list.rows),
        ["a", "b"],
        "what was found becomes the page"
    );
    assert_eq!(state.list.filter, "needle", "the filter stays");
    assert!(state.list.found_so_far.is_empty());
    // What the stopped job still sends is dropped.
    found(&mut state, "late", generation);
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::List(Ok(page_of(vec![summary("late")]))),
        )),
    );
    assert_eq!(ids(&state.list.rows), ["a", "b"]);
    // A second Esc clears the filter, as before.
    assert!(matches!(
        &update(&mut state, code(KeyCode::Esc))[..],
        [Effect::Load(Stamped { value: Load::List(filter), .. })] if filter.search.is_none()
    ));
}

#[test]
fn filter_prompt_types_letters_not_commands_and_filters_as_typed() {
    let mut state = state();
    start(&mut state);
    list_loaded(&mut state, &["x"]);
    update(&mut state, key('/'));
    let searched = |effects: &[Effect]| match effects {
        [
            Effect::Load(Stamped {
                value: Load::List(filter),
                ..
            }),
        ] => filter.search.clone(),
        other => panic!("expected one list load, got {other:?}"),
    };
    // Every letter filters at once; the old rows go, so none stand under the new filter.
    assert_eq!(
        searched(&update(&mut state, key('j'))).as_deref(),
        Some("j")
    );
    assert!(state.list.rows.is_empty());
    assert_eq!(state.list.status, LoadStatus::Loading);
    assert_eq!(
        searched(&update(&mut state, key('q'))).as_deref(),
        Some("jq")
    );
    assert_eq!(
        state.overlay,
        Overlay::Prompt(Prompt::Filter("jq".to_owned()))
    );
    assert!(!state.quit, "q typed into the filter does not quit");
    assert_eq!(
        searched(&update(&mut state, code(KeyCode::Backspace))).as_deref(),
        Some("j")
    );
    update(&mut state, key('q'));
    // Enter keeps the filter already applied: nothing to load again.
    assert!(update(&mut state, code(KeyCode::Enter)).is_empty());
    assert_eq!(state.overlay, Overlay::None);
    assert_eq!(state.list.filter, "jq");
    // Once the search has answered, Esc clears the filter (while it runs, Esc stops it).
    list_loaded(&mut state, &[]);
    assert_eq!(searched(&update(&mut state, code(KeyCode::Esc))), None);
    // Esc in the prompt drops what was typed.
    update(&mut state, key('/'));
    update(&mut state, key('z'));
    assert_eq!(searched(&update(&mut state, code(KeyCode::Esc))), None);
    assert_eq!(state.list.filter, "");
}

#[test]
fn x_shows_and_hides_deleted_conversations_from_the_first_page() {
    let mut state = state();
    start(&mut state);
    let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("c{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    list_loaded(&mut state, &refs);
    update(&mut state, key(']'));
    list_loaded(&mut state, &refs);
    assert_eq!(state.list.page_number(), 2);
    let effects = update(&mut state, key('x'));
    assert!(matches!(
        &effects[..],
        [Effect::Load(Stamped { value: Load::List(filter), .. })] if filter.options.is_set(DELETED) && filter.after.is_none()
    ));
    assert!(
        state
            .message
            .as_deref()
            .unwrap()
            .contains("deleted conversations shown")
    );
    let effects = update(&mut state, key('x'));
    assert!(matches!(
        &effects[..],
        [Effect::Load(Stamped { value: Load::List(filter), .. })] if !filter.options.is_set(DELETED)
    ));
    assert!(
        state
            .message
            .as_deref()
            .unwrap()
            .contains("hidden, as in Dify")
    );
}

#[test]
fn pages_follow_the_keyset_cursor_and_come_back() {
    let mut state = state();
    start(&mut state);
    let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("c{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    list_loaded(&mut state, &refs);
    let effects = update(&mut state, key(']'));
    let last = ids.last().unwrap();
    assert!(matches!(
        &effects[..],
        [Effect::Load(Stamped { value: Load::List(filter), .. })] if filter.after.as_ref() == Some(last)
    ));
    // The label names the rows on screen until the next page's rows arrive.
    assert_eq!(state.list.page_number(), 1);
    assert_eq!(state.list.target_page(), Some(2));
    let ids2: Vec<String> = (0..PAGE_SIZE).map(|i| format!("d{i}")).collect();
    let refs2: Vec<&str> = ids2.iter().map(String::as_str).collect();
    list_loaded(&mut state, &refs2);
    assert_eq!(state.list.page_number(), 2);
    assert_eq!(state.list.target_page(), None);
    let effects = update(&mut state, key('['));
    assert!(
        matches!(&effects[..], [Effect::Load(Stamped { value: Load::List(filter), .. })] if filter.after.is_none())
    );
    list_loaded(&mut state, &refs);
    assert_eq!(state.list.page_number(), 1);
}

/// Delivers page `page` (`PAGE_SIZE` rows named `p{page}-{row}`); returns the list loads it
/// chains.
fn page_loaded(state: &mut AppState, page: usize) -> Vec<Effect> {
    let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("p{page}-{i:02}")).collect();
    list_loaded(state, &ids.iter().map(String::as_str).collect::<Vec<_>>())
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                Effect::Load(Stamped {
                    value: Load::List(..),
                    ..
                })
            )
        })
        .collect()
}

#[test]
fn paging_far_keeps_a_bounded_number_of_thread_counts() {
    let mut state = state();
    start(&mut state);
    for page in 1..=200 {
        page_loaded(&mut state, page);
        let generation = state.list.tokens_generation;
        let tokens = state.list.rows.iter().map(|r| (r.id.clone(), 7)).collect();
        update(
            &mut state,
            Event::Job(JobEvent::load(generation, LoadReport::ThreadTokens(tokens))),
        );
        let listed = &state.list.rows;
        assert!(
            listed
                .iter()
                .all(|r| state.list.thread_tokens.contains_key(&r.id)),
            "the shown page keeps its counts"
        );
        update(&mut state, key(']'));
    }
    let held = state.list.thread_tokens.len();
    assert!(
        held <= KEPT_THREAD_COUNTS + PAGE_SIZE as usize,
        "{held} counts held after 200 pages"
    );
}

#[test]
fn a_burst_of_next_page_keys_chains_from_each_loaded_page() {
    let mut state = state();
    start(&mut state);
    page_loaded(&mut state, 1);
    let mut requests = Vec::new();
    for _ in 0..40 {
        requests.extend(update(&mut state, key(']')));
    }
    // One request at a time: the others wait for the page they start from.
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(state.list.page_number(), 1);
    assert_eq!(state.list.target_page(), Some(41));
    for page in 2..=41 {
        let Some(Effect::Load(Stamped {
            value: Load::List(filter),
            ..
        })) = requests.pop()
        else {
            panic!("page {page} was not asked for");
        };
        let previous_last = format!("p{}-{:02}", page - 1, PAGE_SIZE - 1);
        assert_eq!(
            filter.after.as_deref(),
            Some(previous_last.as_str()),
            "page {page} starts after the last row of page {}",
            page - 1
        );
        requests = page_loaded(&mut state, page);
        assert_eq!(state.list.page_number(), page);
        assert_eq!(state.list.rows[0].id, format!("p{page}-00"));
    }
    assert!(requests.is_empty(), "{requests:?}");
    assert_eq!(state.list.target_page(), None);
    // And back: a burst of `[` walks the same cursors down.
    for _ in 0..3 {
        requests.extend(update(&mut state, key('[')));
    }
    assert_eq!(requests.len(), 1);
    for page in (38..=40).rev() {
        let chained = page_loaded(&mut state, page);
        assert_eq!(state.list.page_number(), page);
        assert_eq!(chained.len(), usize::from(page > 38), "page {page}");
    }
}

#[test]
fn a_failed_page_stops_the_burst_and_keeps_the_shown_page() {
    let mut state = state();
    start(&mut state);
    page_loaded(&mut state, 1);
    update(&mut state, key(']'));
    update(&mut state, key(']'));
    let generation = state.list.generation;
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::List(Err("disk I/O error".to_owned())),
        )),
    );
    assert!(effects.is_empty());
    assert_eq!(state.list.page_number(), 1);
    assert_eq!(state.list.target_page(), None);
}

#[test]
fn short_page_has_no_next_page() {
    let mut state = state();
    start(&mut state);
    list_loaded(&mut state, &["only"]);
    assert!(update(&mut state, key(']')).is_empty());
}
