//! Every screen drawn into a TestBackend at two sizes, in its loading, empty, error and loaded
//! states, compared with insta snapshots. The state is driven through `update` exactly as the
//! app drives it, with job results delivered by hand.

use std::sync::Arc;

use chrono::NaiveDateTime;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::inspect::budget::BudgetView;
use memscope::inspect::conversation::LoadedConversation;
use memscope::memory::model::StoredMessage;
use memscope::memory::tokens::{CountCache, CounterKind, Encoding};
use memscope::store::{ConversationInfo, ConversationSummary};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Loaded, Settings};
use memscope::tui::theme::Theme;
use memscope::tui::ui;
use memscope::tui::update::{Effect, Event, JobEvent, start, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const SIZES: [(u16, u16); 2] = [(120, 32), (80, 24)];

fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

fn time(seconds: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp(1_750_000_000 + seconds, 0)
        .unwrap()
        .naive_utc()
}

fn settings() -> Settings {
    Settings {
        models: vec!["gpt-4o".to_owned(), "gpt-4".to_owned()],
        model_index: 0,
        counter: CounterKind::Raw,
        encoding: Some(Encoding::Cl100kBase),
        budget: 30,
        message_limit: 0,
        app_window: true,
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
    state
}

fn summary(n: u32, name: &str, messages: i64) -> ConversationSummary {
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
    }
}

fn message(n: u32, parent: Option<u32>, query: &str, answer: &str) -> StoredMessage {
    let parent = parent.map(id);
    let created = time(i64::from(n) * 10);
    StoredMessage::turn(id(n), id(1), parent.as_deref(), query, answer, created)
}

/// A refund conversation: the second answer was regenerated, the thread goes on from the first.
fn refund_conversation(rows: Vec<StoredMessage>) -> Arc<Loaded> {
    let info = ConversationInfo {
        id: id(1),
        name: "Refund question".to_owned(),
        mode: "advanced-chat".to_owned(),
        status: "normal".to_owned(),
        from_source: "api".to_owned(),
        dialogue_count: rows.len() as i64,
        app_id: id(900),
        app_name: Some("Support bot".to_owned()),
        app_mode: Some("advanced-chat".to_owned()),
        memory_window: None,
        created_at: time(0),
        updated_at: time(100),
    };
    Arc::new(Loaded::new(LoadedConversation {
        info,
        rows,
        files: Vec::new(),
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
        JobEvent::List {
            generation,
            result: Ok(rows),
        },
    );
    if let Some(Effect::CountThreads { generation, .. }) = effects.first() {
        let tokens = vec![(id(1), 118), (id(2), 942)];
        deliver(
            state,
            JobEvent::ThreadTokens {
                generation: *generation,
                tokens,
            },
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
        [Effect::LoadConversation { generation, .. }] => *generation,
        other => panic!("expected a conversation load, got {other:?}"),
    }
}

/// Runs every budget request the effects contain, as the job runner would.
fn run_budgets(state: &mut AppState, effects: Vec<Effect>) {
    let mut cache = CountCache::new(1000);
    for effect in effects {
        if let Effect::ComputeBudget {
            generation,
            loaded,
            leaf,
            mode,
            window,
            settings,
        } = effect
        {
            let rows = loaded.budget_rows(leaf, mode, window);
            let view =
                BudgetView::compute(&rows, &loaded.conversation.files, &settings, &mut cache);
            deliver(
                state,
                JobEvent::Budget {
                    generation,
                    result: Ok(Box::new(view)),
                },
            );
        }
    }
}

fn conversation_loaded(state: &mut AppState, rows: Vec<StoredMessage>) {
    list_loaded(state);
    let generation = open(state);
    let effects = deliver(
        state,
        JobEvent::Conversation {
            generation,
            result: Ok(refund_conversation(rows)),
        },
    );
    run_budgets(state, effects);
}

fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    update(
        state,
        Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
    )
}

fn render(state: &AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| ui::draw(state, &Theme::monochrome(), frame))
        .unwrap();
    terminal
}

fn snapshot(name: &str, state: &AppState) {
    for (width, height) in SIZES {
        let terminal = render(state, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

fn screen_text(state: &AppState, width: u16, height: u16) -> String {
    render(state, width, height).backend().to_string()
}

#[test]
fn conversations_loading() {
    snapshot("conversations_loading", &state());
}

#[test]
fn conversations_empty() {
    let mut state = state();
    let generation = state.list.generation;
    deliver(
        &mut state,
        JobEvent::List {
            generation,
            result: Ok(Vec::new()),
        },
    );
    snapshot("conversations_empty", &state);
}

#[test]
fn conversations_error() {
    let mut state = state();
    let generation = state.list.generation;
    let error = "could not connect to postgres://memscope:***@db:5432/dify".to_owned();
    deliver(
        &mut state,
        JobEvent::List {
            generation,
            result: Err(error),
        },
    );
    snapshot("conversations_error", &state);
}

#[test]
fn conversations_loaded() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, 'j');
    snapshot("conversations_loaded", &state);
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
    snapshot("conversations_filter_prompt", &state);
}

#[test]
fn conversation_loading() {
    let mut state = state();
    list_loaded(&mut state);
    open(&mut state);
    snapshot("conversation_loading", &state);
}

#[test]
fn conversation_error() {
    let mut state = state();
    list_loaded(&mut state);
    let generation = open(&mut state);
    let error = format!("no conversation {} in sqlite:///data/memscope.db", id(1));
    deliver(
        &mut state,
        JobEvent::Conversation {
            generation,
            result: Err(error),
        },
    );
    snapshot("conversation_error", &state);
}

#[test]
fn conversation_empty() {
    let mut state = state();
    conversation_loaded(&mut state, Vec::new());
    snapshot("conversation_empty", &state);
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
    snapshot("conversation_loaded", &state);
}

#[test]
fn conversation_divergence_on_a_regenerated_branch() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    // The regeneration (the last visible line) is not on Dify's thread.
    let effects = key(&mut state, 'G');
    run_budgets(&mut state, effects);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("⚑"), "{text}");
    snapshot("conversation_divergence", &state);
}

#[test]
fn conversation_tree_mode_and_zero_counter() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    let mut effects = key(&mut state, 't');
    effects.extend(key(&mut state, 'c'));
    run_budgets(&mut state, effects);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("NOTHING is pruned"), "{text}");
    snapshot("conversation_tree_zero_counter", &state);
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
    snapshot("extraction_demo", &state);
}

#[test]
fn help_popup_lists_the_keymap() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, '?');
    let text = screen_text(&state, 120, 32);
    for expected in [
        "Conversation list",
        "budget +",
        "extraction demo",
        ":budget N",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    snapshot("help", &state);
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
