//! Every screen drawn into a TestBackend at two sizes, in its loading, empty, error and loaded
//! states, compared with insta snapshots. The state is driven through `update` exactly as the
//! app drives it, with job results delivered by hand.

#[macro_use]
mod tui_support;

use tui_support::{key, render, run_budgets, screen_text};

use std::sync::Arc;

use chrono::NaiveDateTime;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::inspect::nodes::{
    ContextSource, ExecutionDocs, FullColumn, LatestContext, MemoryFileRead, NodeContextView,
    NodeSources, NodeSummary, NodeThread, node_context, timeline,
};
use memscope::memory::context_windows::ContextWindow;
use memscope::memory::model::StoredMessage;
use memscope::memory::node_context::ThreadTurn;
use memscope::memory::tokens::CountCache;
use memscope::sources::conversation::{ListedConversation, ListedPage};
use memscope::sources::conversations_of;
use memscope::sources::dify::Dify;
use memscope::sources::dify::listing::listed;
use memscope::sources::dify::queries::ConversationSummary;
use memscope::sources::turn_trees::{RowWindows, TurnConversation, TurnInfo};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Loaded, NodeRow, Settings};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, LoadReport, LoadedNodes, Stamped, start, update,
};
use serde_json::json;

#[path = "tui_screens/nodes.rs"]
mod nodes;
#[path = "tui_screens/status_and_search.rs"]
mod status_and_search;

fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

fn time(seconds: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp(1_750_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

/// A 30-token budget, so the small conversations here show a cut line; two models to cycle.
fn settings() -> Settings {
    Settings {
        models: vec!["gpt-4o".to_owned(), "gpt-4".to_owned()],
        budget: 30,
        ..tui_support::settings()
    }
}

fn state() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/memscope.db".to_owned(),
        true,
    );
    start(&mut state);
    state.keeps(conversations_of(&Dify).unwrap());
    state
}

/// A Dify conversation as Dify's source lists it.
fn summary(n: u32, name: &str, messages: i64) -> ListedConversation {
    listed(&stored(n, name, messages))
}

/// The list's page of `rows`, the last.
fn page(rows: Vec<ListedConversation>) -> ListedPage {
    ListedPage {
        conversations: rows,
        next: None,
    }
}

fn stored(n: u32, name: &str, messages: i64) -> ConversationSummary {
    ConversationSummary {
        id: id(n),
        name: name.to_owned(),
        app_id: id(900),
        app_name: Some("Support bot".to_owned()),
        app_mode: Some("advanced-chat".to_owned()),
        mode: "advanced-chat".to_owned(),
        message_count: messages,
        last_activity: time(i64::from(n) * 60),
        updated_at: time(i64::from(n) * 60),
        is_deleted: false,
    }
}

fn message(n: u32, parent: Option<u32>, query: &str, answer: &str) -> StoredMessage {
    let parent = parent.map(id);
    let created = time(i64::from(n) * 10);
    StoredMessage::turn(id(n), id(1), parent.as_deref(), query, answer, created)
}

/// A refund conversation: the second answer was regenerated, the thread goes on from the first.
fn refund_conversation(rows: Vec<StoredMessage>) -> Arc<Loaded> {
    let info = TurnInfo {
        id: id(1),
        name: "Refund question".to_owned(),
        mode: "advanced-chat".to_owned(),
        app_id: id(900),
        app_mode: Some("advanced-chat".to_owned()),
        is_deleted: false,
        app_window: None,
        answered_rows_only: false,
    };
    Arc::new(Loaded::new(TurnConversation {
        info,
        rows,
        files: Vec::new(),
        // Dify's default: the app sets no window.
        windows: RowWindows {
            app_honoured: 500,
            app_set_aside: 500,
        },
    }))
}

fn refund_rows() -> Vec<StoredMessage> {
    vec![
        message(
            0x11,
            None,
            "I want a refund for order 4411",
            "Sure, which item?",
        ),
        message(
            0x12,
            Some(0x11),
            "The blue kettle",
            "It is eligible: refund started.",
        ),
        message(
            0x13,
            Some(0x11),
            "The blue kettle",
            "Regenerated: refund opened, 5 days.",
        ),
        message(
            0x14,
            Some(0x12),
            "How long will it take?",
            "Three to five business days.",
        ),
        message(0x15, Some(0x14), "Thanks!", "You are welcome."),
    ]
}

fn deliver(state: &mut AppState, job: JobEvent) -> Vec<Effect> {
    update(state, Event::Job(job))
}

fn list_loaded(state: &mut AppState) {
    let generation = state.list.generation;
    let rows = vec![
        summary(1, "Refund question", 5),
        summary(2, "Shipping delay", 12),
        summary(3, "", 0),
    ];
    let effects = deliver(
        state,
        JobEvent::load(generation, LoadReport::List(Ok(page(rows)))),
    );
    if let Some(Effect::Load(Stamped {
        generation,
        value: Load::CountThreads { .. },
    })) = effects.first()
    {
        let tokens = vec![(id(1), 118), (id(2), 942)];
        deliver(
            state,
            JobEvent::load(*generation, LoadReport::ThreadTokens(tokens)),
        );
    }
}

/// Opens the first conversation and returns the load's generation.
fn open(state: &mut AppState) -> u64 {
    let effects = update(
        state,
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Conversation { .. },
            }),
        ] => *generation,
        other => panic!("expected a conversation load, got {other:?}"),
    }
}

fn conversation_loaded(state: &mut AppState, rows: Vec<StoredMessage>) {
    list_loaded(state);
    let generation = open(state);
    let effects = deliver(
        state,
        JobEvent::load(
            generation,
            LoadReport::Conversation(Ok(refund_conversation(rows))),
        ),
    );
    run_budgets(state, effects, &mut CountCache::new(1000));
}

#[test]
fn conversations_loading() {
    snapshot!("conversations_loading", &state());
}

#[test]
fn conversations_empty() {
    let mut state = state();
    let generation = state.list.generation;
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::List(Ok(page(Vec::new())))),
    );
    snapshot!("conversations_empty", &state);
}

#[test]
fn conversations_error() {
    let mut state = state();
    let generation = state.list.generation;
    let error = "could not connect to postgres://memscope:***@db:5432/dify".to_owned();
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::List(Err(error))),
    );
    snapshot!("conversations_error", &state);
}

#[test]
fn conversations_loaded() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, 'j');
    snapshot!("conversations_loaded", &state);
}

/// `x` lists the conversations deleted in Dify too, marked and dimmed; the title says so.
#[test]
fn conversations_with_deleted_shown() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, 'x');
    let generation = state.list.generation;
    let rows = vec![
        summary(1, "Refund question", 5),
        listed(&ConversationSummary {
            is_deleted: true,
            ..stored(4, "Old complaint", 3)
        }),
        summary(2, "Shipping delay", 12),
    ];
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::List(Ok(page(rows)))),
    );
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("✗ deleted in Dify, shown"), "{text}");
    assert!(text.contains("✗ Old complaint"), "{text}");
    snapshot!("conversations_with_deleted_shown", &state);
}

#[test]
fn conversations_filter_prompt() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, '/');
    for c in "kettle".chars() {
        key(&mut state, c);
    }
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("/kettle"), "{text}");
    snapshot!("conversations_filter_prompt", &state);
}

#[test]
fn conversation_loading() {
    let mut state = state();
    list_loaded(&mut state);
    open(&mut state);
    snapshot!("conversation_loading", &state);
}

#[test]
fn conversation_error() {
    let mut state = state();
    list_loaded(&mut state);
    let generation = open(&mut state);
    let error = format!("no conversation {} in sqlite:///data/memscope.db", id(1));
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::Conversation(Err(error))),
    );
    snapshot!("conversation_error", &state);
}

#[test]
fn conversation_empty() {
    let mut state = state();
    conversation_loaded(&mut state, Vec::new());
    snapshot!("conversation_empty", &state);
}

#[test]
fn conversation_loaded_with_budget_and_cut_line() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    let text = screen_text(&state, 120, 32);
    assert!(
        text.contains("cut:"),
        "a budget of 30 drops messages:\n{text}"
    );
    snapshot!("conversation_loaded", &state);
}

/// A long support thread: 81 turns, each the child of the one before, so the history has 160
/// messages once the newest is popped as the request's placeholder.
fn long_thread() -> Vec<StoredMessage> {
    (0..81u32)
        .map(|n| {
            message(
                0x100 + n,
                n.checked_sub(1).map(|p| 0x100 + p),
                &format!("question {n} about the checkout latency"),
                &format!("answer {n}: the p99 is fine"),
            )
        })
        .collect()
}

/// The budget table's row for message `index`, as `draw_rows` prints it.
fn budget_row(index: usize) -> String {
    format!("{index:>4}  ")
}

#[test]
fn budget_panel_shows_the_cut_and_every_sent_row_and_scrolls() {
    let mut state = state();
    conversation_loaded(&mut state, long_thread());
    let view = state.conversation.as_ref().unwrap().budget.clone().unwrap();
    let messages = view.history.messages.len();
    let cut = view.dropped();
    assert!(cut > 100 && messages - cut <= 4, "{cut} of {messages}");
    let last = messages - 1;
    for (width, height) in tui_support::ALL_SIZES {
        let text = screen_text(&state, width, height);
        assert!(
            text.contains("cut:"),
            "{width}x{height}: no cut line\n{text}"
        );
        for sent in cut..messages {
            assert!(
                text.lines()
                    .any(|l| l.contains(&format!("│{}", budget_row(sent)))),
                "{width}x{height}: sent row {sent} is not shown\n{text}"
            );
        }
    }
    snapshot!("budget_panel_cut_near_the_end", &state, all_sizes);

    // b focuses the panel: the moving keys scroll its rows, not the tree.
    let cursor = state.conversation.as_ref().unwrap().cursor;
    key(&mut state, 'b');
    assert!(state.budget_panel.focused);
    let text = screen_text(&state, 160, 45);
    assert!(text.contains("j/k scroll"), "{text}");
    key(&mut state, 'g');
    let text = screen_text(&state, 80, 24);
    assert!(text.contains(&format!("│{}user", budget_row(0))), "{text}");
    assert!(!text.contains("cut:"), "{text}");
    assert_eq!(state.conversation.as_ref().unwrap().cursor, cursor);
    key(&mut state, 'j');
    let text = screen_text(&state, 80, 24);
    assert!(text.contains(&format!("│{}", budget_row(1))), "{text}");
    assert!(!text.contains(&format!("│{}user", budget_row(0))), "{text}");
    key(&mut state, 'G');
    let text = screen_text(&state, 80, 24);
    assert!(text.contains(&format!("│{}", budget_row(last))), "{text}");
    // b again (or esc) gives the keys back to the tree.
    key(&mut state, 'b');
    assert!(!state.budget_panel.focused);
    key(&mut state, 'k');
    assert_ne!(state.conversation.as_ref().unwrap().cursor, cursor);
}

#[test]
fn conversation_divergence_on_a_regenerated_branch() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    // The regeneration (the last visible line) is not on Dify's thread.
    let effects = key(&mut state, 'G');
    run_budgets(&mut state, effects, &mut CountCache::new(1000));
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("⚑"), "{text}");
    snapshot!("conversation_divergence", &state);
}

#[test]
fn conversation_tree_mode_and_zero_counter() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    let mut effects = key(&mut state, 't');
    effects.extend(key(&mut state, 'c'));
    run_budgets(&mut state, effects, &mut CountCache::new(1000));
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("NOTHING is pruned"), "{text}");
    snapshot!("conversation_tree_zero_counter", &state);
}

#[test]
fn extraction_demo_mid_walk() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    key(&mut state, 'd');
    key(&mut state, ' ');
    key(&mut state, ' ');
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("step 3 of"), "{text}");
    snapshot!("extraction_demo", &state);
}

#[test]
fn help_popup_lists_the_keymap() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, '?');
    let text = screen_text(&state, 120, 32);
    // The screen's own keys come first, then the global ones.
    for expected in ["Conversation list", "filter by name", "Everywhere", "quit"] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    assert!(
        text.contains("j/k scroll"),
        "the help says it scrolls:\n{text}"
    );
    snapshot!("help", &state, all_sizes);
    // One column at any size: a wide terminal shows each description whole, not cut into the
    // next column.
    let wide = screen_text(&state, 140, 45);
    assert!(
        wide.contains("/ filter by name, id, app or text "),
        "cut or run together:\n{wide}"
    );
    // Scrolled to the end, the other screens' keys and the commands show.
    key(&mut state, 'G');
    let text = screen_text(&state, 120, 32);
    for expected in ["Trim preview", ":budget N"] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    snapshot!("help_scrolled", &state);
}

#[test]
fn too_small_says_so() {
    let mut state = state();
    list_loaded(&mut state);
    let text = screen_text(&state, 40, 10);
    assert!(text.contains("terminal too small"), "{text}");
    insta::assert_snapshot!("too_small_40x10", render(&state, 40, 10).backend());
}

#[test]
fn budget_key_redraws_the_cut_line_in_the_next_frame() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    let before = screen_text(&state, 120, 32);
    state.dirty = false;
    let effects = key(&mut state, '+');
    assert!(
        effects.is_empty(),
        "no job: the cut moves from cached counts"
    );
    assert!(state.dirty);
    let after = screen_text(&state, 120, 32);
    assert_ne!(before, after);
    assert!(after.contains("max 280"), "{after}");
}
