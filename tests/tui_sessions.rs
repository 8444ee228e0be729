//! The conversations tab of a Langflow database (one row per flow's session) and of a LangGraph
//! database (one row per thread), and the session view with what the model is fed, drawn into a
//! TestBackend at both sizes and compared with insta snapshots. The state is driven through
//! `update` as the app drives it; job results are computed by the same functions the job runner
//! calls and delivered by hand.

#[macro_use]
mod tui_support;

use tui_support::{code, key, screen_text};

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use crossterm::event::KeyCode;
use memscope::memory::agent_history::LangflowMessage;
use memscope::memory::tokens::CountCache;
use memscope::sources::conversation::{Extra, ListedConversation, ListedPage};
use memscope::sources::langflow::conversation::LangflowSessions;
use memscope::sources::langflow::opened::{agent_memory, shown};
use memscope::sources::langgraph::conversation::LangGraphThreads;
use memscope::sources::langgraph::decode::message::{LangChainMessage, LangChainToolCall};
use memscope::sources::langgraph::opened::channel;
use memscope::sources::opened::{ConversationKey, OpenConversation};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::ConversationScreens;
use memscope::tui::state::{AppState, Settings};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, LoadReport, SessionLoad, SessionLoaded, Stamped, start, update,
};
use serde_json::json;

const SUPPORT: &str = "5e0c1a2b-0000-4000-8000-000000000001";
const SALES: &str = "5e0c1a2b-0000-4000-8000-000000000002";
const OWNER: &str = "0a0e0000-0000-4000-8000-00000000000a";

/// A 60-token budget, so the sessions here show a cut line (the thread's trim keeps its system
/// message above it).
fn settings() -> Settings {
    Settings {
        budget: 60,
        ..tui_support::settings()
    }
}

fn state(screens: ConversationScreens) -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/langflow.db".to_owned(),
        true,
    );
    state.conversation_screens = screens;
    match screens {
        ConversationScreens::CheckpointThread => state.keeps(&LangGraphThreads),
        _ => state.keeps(&LangflowSessions),
    }
    start(&mut state);
    state
}

fn deliver(state: &mut AppState, generation: u64, report: SessionLoaded) -> Vec<Effect> {
    update(state, Event::Job(JobEvent::load(generation, report)))
}

fn flow_row(
    session: &str,
    flow: &str,
    flow_id: &str,
    messages: u64,
    minute: u32,
) -> ListedConversation {
    let extra = Extra::from_iter([
        ("flow_id".to_owned(), json!(flow_id)),
        ("owner_name".to_owned(), json!("history-owner")),
    ]);
    ListedConversation {
        id: session.to_owned(),
        title: Some(flow.to_owned()),
        messages: Some(messages),
        last_activity: Some(Utc.with_ymd_and_hms(2026, 1, 5, 9, minute, 0).unwrap()),
        deleted: false,
        problem: None,
        extra,
        scope: Some(flow_id.to_owned()),
    }
}

/// Delivers a page of the list; the effects its arrival asked for.
fn list_loaded(
    state: &mut AppState,
    rows: Vec<ListedConversation>,
    next: Option<&str>,
) -> Vec<Effect> {
    let generation = state.list.generation;
    let page = Ok(ListedPage {
        conversations: rows,
        next: next.map(str::to_owned),
    });
    update(
        state,
        Event::Job(JobEvent::load(generation, LoadReport::List(page))),
    )
}

fn langflow_rows() -> Vec<ListedConversation> {
    vec![
        flow_row("long", "Sales Chat", SALES, 130, 40),
        flow_row("New Session 0", "Support Chat", SUPPORT, 16, 30),
        flow_row("New Session 0", "Sales Chat", SALES, 2, 20),
    ]
}

fn stored(n: u32, sender: &str, text: &str, run: u32) -> LangflowMessage {
    LangflowMessage {
        id: format!("{n:08x}-1111-4000-8000-000000000000"),
        timestamp: Utc
            .timestamp_opt(1_767_603_600 + i64::from(n) * 7, 0)
            .unwrap(),
        flow_id: Some(SUPPORT.into()),
        session_id: "New Session 0".into(),
        context_id: None,
        owner: Some(OWNER.into()),
        run_id: Some(format!("{run:08x}-2222-4000-8000-000000000000")),
        sender: sender.into(),
        sender_name: if sender == "User" { "User" } else { "AI" }.into(),
        text: text.into(),
        files: Vec::new(),
        error: false,
        category: "message".into(),
        stored_order: u64::from(n),
    }
}

fn support_session() -> OpenConversation {
    let mut rows = vec![
        stored(0, "User", "My order 1182 never arrived.", 0),
        stored(
            1,
            "Machine",
            "Sorry about that! Let me check order 1182 for you.",
            0,
        ),
        stored(2, "User", "Any news? It has been two weeks.", 1),
        stored(3, "Machine", "Error: rate limited", 1),
        stored(4, "User", "Hello? Please refund me.", 2),
        stored(5, "Machine", "I have started a refund for order 1182.", 2),
    ];
    rows[3].category = "error".into();
    let mut flagged = stored(6, "Machine", "Error: tool call failed", 2);
    flagged.error = true;
    flagged.category = "error".into();
    rows.push(flagged);
    rows[2].files = vec!["New Session 0/receipt.png".into()];
    let key = ConversationKey::scoped("New Session 0", Some(SUPPORT.into()));
    OpenConversation {
        heading: format!(
            "session \"New Session 0\" of flow Support Chat ({SUPPORT}), owner {OWNER} (the \
             session id is used by 1 other flow too)"
        ),
        structure: "Langflow keeps no regeneration tree: a session is one flat log, shown in \
                    order and grouped by run"
            .into(),
        messages: rows.iter().map(shown).collect(),
        memory: agent_memory(&key, rows, Some(OWNER.into())),
        warnings: Vec::new(),
        views: None,
        key,
    }
}

/// Opens the selected row, delivers `view` and counts its budget as the job runner would.
fn open(state: &mut AppState, view: OpenConversation) {
    let effects = code(state, KeyCode::Enter);
    let generation = match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Sessions(SessionLoad::Open { .. }),
            }),
        ] => *generation,
        other => panic!("expected a session load, got {other:?}"),
    };
    let effects = deliver(state, generation, SessionLoaded::Opened(Ok(Arc::new(view))));
    run_budgets(state, effects);
}

fn run_budgets(state: &mut AppState, effects: Vec<Effect>) {
    for effect in effects {
        if let Effect::Load(Stamped {
            generation,
            value:
                Load::Sessions(SessionLoad::Budget {
                    view,
                    window,
                    settings,
                }),
        }) = effect
        {
            let result = view
                .memory
                .fed(window, &settings, &mut CountCache::new(100));
            deliver(
                state,
                generation,
                SessionLoaded::Budget(result.map(Box::new)),
            );
        }
    }
}

#[test]
fn langflow_sessions_loaded() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), Some("3"));
    key(&mut state, 'j');
    snapshot!("langflow_sessions_loaded", &state);
}

#[test]
fn langflow_sessions_searching() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), None);
    key(&mut state, '/');
    for c in "refund".chars() {
        key(&mut state, c);
    }
    snapshot!("langflow_sessions_searching", &state);
}

/// With a filter, the line under the list says why the selected session matched: its id, or
/// the words around the first hit in its messages, read once for the row.
#[test]
fn the_session_list_says_why_the_selected_row_matched() {
    let mut state = state(ConversationScreens::Messages);
    key(&mut state, '/');
    for c in "refund".chars() {
        key(&mut state, c);
    }
    code(&mut state, KeyCode::Enter);
    let rows = vec![
        flow_row("New Session 0", "Support Chat", SUPPORT, 16, 30),
        flow_row("Refund-desk", "Sales Chat", SALES, 2, 20),
    ];
    let effects = list_loaded(&mut state, rows, None);
    let snippet_asked = |effects: &[Effect]| {
        effects.iter().find_map(|effect| match effect {
            Effect::Load(Stamped {
                generation,
                value: Load::Snippet { key, search, .. },
            }) => Some((*generation, key.clone(), search.clone())),
            _ => None,
        })
    };
    let (generation, asked, search) = snippet_asked(&effects).expect("the snippet is read");
    assert_eq!(asked.id, "New Session 0");
    assert_eq!(
        (asked.scope.as_deref(), search.as_str()),
        (Some(SUPPORT), "refund")
    );
    let text = screen_text(&state, 80, 24);
    assert!(
        text.contains("matched in: message text (reading…)"),
        "{text}"
    );
    update(
        &mut state,
        Event::Job(JobEvent::load(
            generation,
            LoadReport::Snippet {
                key: asked,
                result: Ok(Some("Hello? Please refund me.".into())),
            },
        )),
    );
    let text = screen_text(&state, 80, 24);
    assert!(
        text.contains("matched in: text: Hello? Please refund me."),
        "{text}"
    );
    // The next row holds the filter in its id: said so, nothing read.
    assert!(snippet_asked(&key(&mut state, 'j')).is_none());
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("matched in: id"), "{text}");
    // Back on the first row, what was read is shown again without a second read.
    assert!(snippet_asked(&key(&mut state, 'k')).is_none());
    assert!(screen_text(&state, 80, 24).contains("Please refund me."));
}

#[test]
fn langflow_session_loading() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), None);
    code(&mut state, KeyCode::Enter);
    snapshot!("langflow_session_loading", &state);
}

#[test]
fn langflow_session_with_what_the_agent_is_fed() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), None);
    key(&mut state, 'j');
    open(&mut state, support_session());
    key(&mut state, 'j');
    key(&mut state, 'j');
    snapshot!("langflow_session_fed", &state);
    // The window shrinks: the oldest messages are left out and counted.
    let effects = key(&mut state, '<');
    run_budgets(&mut state, effects);
    let mut effects = Vec::new();
    for _ in 0..8 {
        effects = key(&mut state, '<');
    }
    run_budgets(&mut state, effects);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("n_messages 10"), "{text}");
    let effects = key(&mut state, '<');
    run_budgets(&mut state, effects);
    snapshot!("langflow_session_memory_off", &state);
}

#[test]
fn langflow_session_help_names_its_keys() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), None);
    open(&mut state, support_session());
    let bar = tui_support::hint_bar(&state, 120, 32);
    assert!(
        bar.contains("> n_messages +") && bar.contains("< n_messages -"),
        "{bar}"
    );
    key(&mut state, '?');
    let text = screen_text(&state, 120, 32);
    for hint in [
        "n_messages +",
        "trim preview",
        "budget +",
        "the message whole",
    ] {
        assert!(text.contains(hint), "{hint}: {text}");
    }
}

fn thread_rows() -> Vec<ListedConversation> {
    let thread = |id: &str, messages: Option<u64>, checkpoints: u64, problem: Option<&str>| {
        ListedConversation {
            id: id.to_owned(),
            title: None,
            messages,
            last_activity: Some(Utc.with_ymd_and_hms(2026, 2, 1, 10, 0, 0).unwrap()),
            deleted: false,
            problem: problem.map(str::to_owned),
            extra: Extra::from_iter([("checkpoints".to_owned(), json!(checkpoints))]),
            scope: None,
        }
    };
    vec![
        thread("weather-7", Some(4), 6, None),
        thread(
            "encrypted-2",
            None,
            3,
            Some("checkpoint is encrypted; set the key"),
        ),
    ]
}

fn lc(kind: &str, text: &str) -> LangChainMessage {
    LangChainMessage {
        class: String::new(),
        kind: kind.to_owned(),
        id: Some(format!("msg-{}", text.len())),
        content: json!(text),
        name: None,
        tool_calls: Vec::new(),
        tool_call_id: None,
        status: None,
        role: None,
        usage_metadata: None,
    }
}

fn weather_thread() -> OpenConversation {
    let mut call = lc("ai", "");
    call.tool_calls = vec![LangChainToolCall {
        id: Some("call-1".into()),
        name: "get_weather".into(),
        args: json!({"city": "Lisbon"}),
    }];
    call.usage_metadata = Some(json!({"input_tokens": 41, "output_tokens": 12}));
    let mut tool = lc(
        "tool",
        "{\"temperature\": 21, \"sky\": \"clear\", \"wind\": \"4 km/h\"}",
    );
    tool.name = Some("get_weather".into());
    tool.tool_call_id = Some("call-1".into());
    let messages = vec![
        lc("system", "You are a helpful weather assistant."),
        lc("human", "Hi, I am planning a trip to Portugal next week."),
        lc(
            "ai",
            "Great! Ask me about the weather anywhere in Portugal.",
        ),
        lc("human", "What is the weather in Lisbon today?"),
        call,
        tool,
        lc("ai", "It is 21 °C and clear in Lisbon, with a light wind."),
    ];
    // Ids as LangGraph's add_messages gives them: one per message.
    let messages: Vec<LangChainMessage> = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| LangChainMessage {
            id: Some(format!("msg-{i}")),
            ..m
        })
        .collect();
    let (messages, memory) = channel(messages);
    OpenConversation {
        key: ConversationKey::new("weather-7"),
        heading: "thread weather-7 at its latest checkpoint 1f0-5 (2026-02-01T10:00:00+00:00)"
            .into(),
        structure: "LangGraph keeps a tree of 6 checkpoints, each the whole state after a step: \
                    shown here is the latest one's messages channel"
            .into(),
        messages,
        memory,
        warnings: Vec::new(),
        views: None,
    }
}

#[test]
fn langgraph_threads_loaded() {
    let mut state = state(ConversationScreens::CheckpointThread);
    list_loaded(&mut state, thread_rows(), None);
    snapshot!("langgraph_threads_loaded", &state);
}

#[test]
fn langgraph_thread_with_its_budget() {
    let mut state = state(ConversationScreens::CheckpointThread);
    list_loaded(&mut state, thread_rows(), None);
    open(&mut state, weather_thread());
    key(&mut state, 'G');
    key(&mut state, 'k');
    // The budget drops two messages: they are marked ○ as the panel's cut says, the system
    // message it keeps above the cut ●.
    snapshot!("langgraph_thread_budget", &state);
    let text = screen_text(&state, 120, 32);
    let marks: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim_start_matches('"').strip_prefix('│'))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|mark| *mark == "●" || *mark == "○")
        .collect();
    assert_eq!(marks, ["●", "○", "○", "●", "●", "●", "●"], "{text}");
    key(&mut state, 'i');
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("\"wind\": \"4 km/h\""), "{text}");
}

#[test]
fn a_dropped_message_of_a_langgraph_thread_is_not_fed() {
    let mut state = state(ConversationScreens::CheckpointThread);
    list_loaded(&mut state, thread_rows(), None);
    open(&mut state, weather_thread());
    key(&mut state, 'j');
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("msg-1  not fed to the model"), "{text}");
    key(&mut state, 'j');
    key(&mut state, 'j');
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("msg-3  fed to the model"), "{text}");

    // T previews a trim from that cut: trim_messages as the panel cuts, keeping what it keeps.
    key(&mut state, 'T');
    let trim = state.trim.as_ref().expect("the trim preview is open");
    assert!(!trim.is_policy());
    let Some(Ok(plan)) = &trim.plan else {
        panic!("no plan: {:?}", trim.plan);
    };
    let kept: Vec<bool> = plan
        .steps
        .iter()
        .map(|step| !matches!(step, memscope::memory::trim::Step::Remove { .. }))
        .collect();
    assert_eq!(kept, [true, false, false, true, true, true, true]);
}

/// The runs of cells drawn bold in reverse video at `width`×`height`: a search's hits off the
/// selected line.
fn reversed_text(state: &AppState, width: u16, height: u16) -> Vec<String> {
    let terminal = tui_support::render(state, width, height);
    let buffer = terminal.backend().buffer();
    let mut runs = Vec::new();
    for y in 0..height {
        let mut run = String::new();
        for x in 0..width {
            let cell = &buffer[(x, y)];
            let hit = ratatui::style::Modifier::REVERSED | ratatui::style::Modifier::BOLD;
            if cell.modifier.contains(hit) {
                run.push_str(cell.symbol());
            } else if !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
    }
    runs
}

#[test]
fn slash_in_a_session_searches_its_messages_and_highlights_them() {
    let mut state = state(ConversationScreens::Messages);
    list_loaded(&mut state, langflow_rows(), None);
    key(&mut state, 'j');
    open(&mut state, support_session());
    key(&mut state, '/');
    for c in "ORDER 1182".chars() {
        key(&mut state, c);
    }
    assert!(
        state.session.is_some() && state.list.filter.is_empty(),
        "the session stays open and the list is not filtered"
    );
    // The first match from the selection on.
    assert_eq!(state.session.as_ref().unwrap().selected, 0);
    snapshot!("langflow_session_search", &state);
    code(&mut state, KeyCode::Enter);
    key(&mut state, 'n');
    assert_eq!(state.session.as_ref().unwrap().selected, 1);
    key(&mut state, 'n');
    assert_eq!(state.session.as_ref().unwrap().selected, 5);
    assert_eq!(
        state.message.as_deref(),
        Some("\"ORDER 1182\": match 3 of 3")
    );
    key(&mut state, 'N');
    assert_eq!(state.session.as_ref().unwrap().selected, 1);
    // Each hit is drawn reversed: on the three messages' lines, wide enough to hold them (the
    // one selected holds none).
    key(&mut state, 'j');
    let hits = reversed_text(&state, 200, 32);
    assert!(
        hits.len() == 3
            && hits
                .iter()
                .all(|hit| hit.eq_ignore_ascii_case("order 1182")),
        "{hits:?}"
    );
    // Esc clears the search, and the highlight with it; the session stays open.
    code(&mut state, KeyCode::Esc);
    assert!(state.session.as_ref().unwrap().search.is_none());
    assert!(reversed_text(&state, 120, 32).is_empty());
    assert_eq!(state.screen, memscope::tui::state::Screen::Session);
}
