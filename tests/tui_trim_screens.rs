//! The chat memories tab and the trim preview drawn into a TestBackend at two sizes, compared
//! with insta snapshots; the state is driven through `update` with job results delivered by hand.

#[macro_use]
mod tui_support;

use tui_support::{render, settings};

use std::sync::Arc;

use chrono::NaiveDateTime;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::format::display_width;
use memscope::inspect::trim::{TrimCounter, TrimSession, row_message};
use memscope::memory::model::{PromptMessage, ToolCall};
use memscope::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter};
use memscope::memory::trim::ChatMemoryPolicy;
use memscope::store::ChatMemorySummary;
use memscope::store::rows::{ChatMemoryMessageRow, ChatMemoryRow};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Overlay};
use memscope::tui::update::chat_memories::{MemoryLoad, MemoryLoaded, MemoryPage};
use memscope::tui::update::trim::sessions;
use memscope::tui::update::{Effect, Event, JobEvent, Load, Stamped, update};
use ratatui::style::Modifier;

const POLICY: &str = r#"{"limit_type":"messages","max_messages":9,"strategy":"drop_middle",
    "keep_first":2,"clear_tool_results":true,"summarization":{"enabled":true}}"#;

fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

fn time() -> NaiveDateTime {
    chrono::DateTime::from_timestamp(1_750_000_000, 0)
        .unwrap()
        .naive_utc()
}

fn counter() -> TokenCounter {
    TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase)
}

fn memories() -> Vec<ChatMemorySummary> {
    let summary = |n: u32, label: &str, chat: &str, policy: &str, count: i64| ChatMemorySummary {
        id: id(n),
        memory_node_id: id(100 + n),
        chat_id: chat.to_owned(),
        label: label.to_owned(),
        policy: policy.to_owned(),
        created_at: time(),
        updated_at: time(),
        message_count: count,
    };
    vec![
        summary(1, "Support Chat History", "user-1042-session-7", POLICY, 12),
        summary(
            2,
            "Session Context",
            "ext-chat-8812",
            r#"{"trim_mode":"threshold","trigger":500,"target":100}"#,
            480,
        ),
    ]
}

/// A support chat with a tool call and its result near the end.
fn rows() -> Vec<ChatMemoryMessageRow> {
    let texts = [
        ("user", "Hi, my order 1042 arrived damaged."),
        (
            "assistant",
            "Sorry to hear that. Can you send a photo of the box?",
        ),
        (
            "user",
            "Here it is. The corner is crushed and the lamp inside is cracked.",
        ),
        (
            "assistant",
            "Thanks. I can offer a refund or a replacement.",
        ),
        ("user", "A replacement please, to the same address in Lyon."),
        (
            "assistant",
            "Noted: replacement to Lyon. It ships within two days.",
        ),
        ("user", "Can you also check order 1043?"),
        ("assistant", ""),
        (
            "tool",
            "{\"order\":1043,\"status\":\"shipped\",\"carrier\":\"DHL\",\"eta\":\"Friday\"}",
        ),
        (
            "assistant",
            "Order 1043 shipped with DHL and arrives Friday.",
        ),
        ("user", "Great, thanks!"),
        ("assistant", "You're welcome. Anything else?"),
    ];
    texts
        .iter()
        .enumerate()
        .map(|(i, (role, text))| ChatMemoryMessageRow {
            id: id(1000 + i as u32),
            chat_memory_id: id(1),
            seq: i as i64,
            role: (*role).to_owned(),
            content: serde_json::json!(text).to_string(),
            tool_calls: (i == 7).then(|| {
                serde_json::to_string(&[ToolCall {
                    id: "call_1".into(),
                    name: "order_status".into(),
                    arguments: "{\"order\":1043}".into(),
                }])
                .unwrap()
            }),
            tool_call_id: (i == 8).then(|| "call_1".to_owned()),
            files: (i == 2).then(|| {
                r#"[{"url":"https://f.example/box.jpg","file_name":"box.jpg","content_type":"image/jpeg"}]"#
                    .to_owned()
            }),
            workflow_request_id: Some(format!("request-{}", i / 2)),
            is_summary: false,
            created_at: time(),
        })
        .collect()
}

fn deliver(state: &mut AppState, job: impl Into<JobEvent>) -> Vec<Effect> {
    update(state, Event::Job(job.into()))
}

fn press(state: &mut AppState, code: KeyCode) -> Vec<Effect> {
    update(state, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// The tab with its list and tokens loaded.
fn list_loaded() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/memscope.db".to_owned(),
        false,
    );
    state.list.status = memscope::tui::state::LoadStatus::Loaded;
    press(&mut state, KeyCode::Char('2'));
    let generation = state.chat_memories.generation;
    let effects = deliver(
        &mut state,
        JobEvent::load(generation, MemoryLoaded::List(Ok(memories()))),
    );
    let Some(Effect::Load(Stamped {
        generation,
        value: Load::ChatMemory(MemoryLoad::Tokens { .. }),
    })) = effects.first()
    else {
        panic!("{effects:?}")
    };
    let generation = *generation;
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            MemoryLoaded::Tokens(vec![(id(1), 214), (id(2), 9_870)]),
        ),
    );
    state
}

fn memory_open() -> AppState {
    memory_open_with(rows())
}

/// The memory open on `rows`.
fn memory_open_with(rows: Vec<ChatMemoryMessageRow>) -> AppState {
    let mut state = list_loaded();
    let effects = press(&mut state, KeyCode::Enter);
    let [
        Effect::Load(Stamped {
            generation,
            value: Load::ChatMemory(MemoryLoad::Page { .. }),
        }),
    ] = effects[..]
    else {
        panic!("{effects:?}")
    };
    let messages: Vec<PromptMessage> = rows.iter().map(row_message).collect();
    let tokens = CountCache::default()
        .count_messages(&counter(), &messages)
        .iter()
        .map(|t| u64::from(t.inner))
        .collect();
    let memory = ChatMemoryRow {
        id: id(1),
        memory_node_id: id(101),
        chat_id: "user-1042-session-7".to_owned(),
        label: "Support Chat History".to_owned(),
        policy: POLICY.to_owned(),
        created_at: time(),
        updated_at: time(),
    };
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            MemoryLoaded::Page(Ok(MemoryPage {
                memory,
                rows,
                tokens,
            })),
        ),
    );
    state
}

/// `T` on the open memory, and its list delivered counted.
fn open_preview(state: &mut AppState) {
    open_preview_of(state, rows());
}

fn open_preview_of(state: &mut AppState, rows: Vec<ChatMemoryMessageRow>) {
    let effects = press(state, KeyCode::Char('T'));
    let [
        Effect::Load(Stamped {
            generation,
            value: Load::ChatMemory(MemoryLoad::TrimSource { .. }),
        }),
    ] = effects[..]
    else {
        panic!("{effects:?}")
    };
    let messages: Vec<PromptMessage> = rows.iter().map(row_message).collect();
    let tokens = TrimSession::new(
        messages.clone(),
        TrimCounter::Tokens(counter()),
        &mut CountCache::default(),
    );
    deliver(
        state,
        JobEvent::load(
            generation,
            MemoryLoaded::TrimSource(Ok((
                Arc::new(sessions(tokens, messages)),
                ChatMemoryPolicy::from_json(POLICY).unwrap(),
            ))),
        ),
    );
}

fn previewing() -> AppState {
    let mut state = memory_open();
    open_preview(&mut state);
    state
}

#[test]
fn chat_memories_list() {
    snapshot!("chat_memories_list", &list_loaded());
}

#[test]
fn chat_memory_messages_page() {
    snapshot!("chat_memory_messages_page", &memory_open());
}

#[test]
fn trim_preview_drop_middle_with_summary() {
    let state = previewing();
    let trim = state.trim.as_ref().unwrap();
    let Some(Ok(plan)) = &trim.plan else {
        panic!("{:?}", trim.plan)
    };
    assert!(plan.removed().count() > 0 && plan.modified().count() > 0);
    assert!(plan.summary.as_ref().unwrap().text.is_some());
    snapshot!("trim_preview_drop_middle_summary", &state);
    // Removed messages are struck through, not only marked.
    let terminal = render(&state, 120, 32);
    let buffer = terminal.backend().buffer();
    let struck = (0..buffer.area.height).any(|y| {
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        line.contains("over the limit")
            && (0..buffer.area.width)
                .any(|x| buffer[(x, y)].modifier.contains(Modifier::CROSSED_OUT))
    });
    assert!(struck, "a removed row is drawn CROSSED_OUT");
}

/// Japanese and emoji take two columns a character: a cut text still ends in … within its
/// column, and the reason a message is removed stays on screen beside it.
#[test]
fn wide_characters_are_cut_at_their_columns() {
    let wide: Vec<ChatMemoryMessageRow> = rows()
        .into_iter()
        .map(|mut row| {
            if row.role != "tool" && row.content != "\"\"" {
                row.content = serde_json::json!(format!(
                    "注文{}について確認しました。交換品を発送いたします 📦 {}",
                    row.seq,
                    "詳細はメールでお送りします。".repeat(3)
                ))
                .to_string();
            }
            row
        })
        .collect();
    let mut state = memory_open_with(wide.clone());
    open_preview_of(&mut state, wide);
    for (width, height) in tui_support::SIZES {
        let terminal = render(&state, width, height);
        let buffer = terminal.backend().buffer();
        // A wide character's second column is a blank cell of its own: passed over.
        let lines: Vec<String> = (0..buffer.area.height)
            .map(|y| {
                let mut line = String::new();
                let mut covered = 0;
                for x in 0..buffer.area.width {
                    if covered > 0 {
                        covered -= 1;
                        continue;
                    }
                    let symbol = buffer[(x, y)].symbol();
                    line.push_str(symbol);
                    covered = display_width(symbol).saturating_sub(1);
                }
                line
            })
            .collect();
        let removed: Vec<&String> = lines.iter().filter(|l| l.contains("注文")).collect();
        assert!(!removed.is_empty(), "{}", lines.join("\n"));
        for line in &removed {
            assert!(line.contains('…'), "a cut text ends in …: {line}");
        }
        let reasons = lines
            .iter()
            .filter(|l| l.contains("注文") && l.contains("✗ over the limit"))
            .count();
        assert!(
            reasons > 0,
            "the reason stays beside a removed message at {width}x{height}:\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn trim_apply_confirmation() {
    let mut state = previewing();
    assert!(press(&mut state, KeyCode::Char('A')).is_empty());
    assert!(matches!(state.overlay, Overlay::Confirm(_)));
    snapshot!("trim_apply_confirmation", &state);
}

#[test]
fn trim_preview_with_a_remote_summarizer_shows_its_prompt() {
    let mut state = memory_open();
    state.summarizer.offline = false;
    state.summarizer.label = "gpt-4o-mini via https://api.openai.com/v1/chat/completions".into();
    open_preview(&mut state);
    let text = render(&state, 120, 32).backend().to_string();
    assert!(
        text.contains("Prompt that would be sent to gpt-4o-mini"),
        "{text}"
    );
    assert!(text.contains("summary pending: S asks"), "{text}");
    snapshot!("trim_preview_remote_prompt", &state);
}

#[test]
fn delete_form_and_its_confirmation() {
    let mut state = memory_open();
    press(&mut state, KeyCode::Char('d'));
    snapshot!("chat_memory_delete_form", &state, all_sizes);
    press(&mut state, KeyCode::Enter);
    snapshot!("chat_memory_delete_confirmation", &state, all_sizes);
}

/// Keys that act behind a popup when it lets them through: quit, tabs, the command line.
const NOT_FOR_POPUPS: [char; 6] = ['q', '1', '3', ':', 'r', 'w'];

/// Every key a popup does not bind is swallowed, and its hint bar names only its own keys.
fn assert_popup_owns_the_keyboard(state: &mut AppState, what: &str) {
    let overlay = state.overlay.clone();
    let screen = state.screen;
    for (width, height) in tui_support::ALL_SIZES {
        let hints = tui_support::hint_bar(state, width, height);
        for foreign in ["quit", "command line", "next tab", "reload"] {
            assert!(
                !hints.contains(foreign),
                "{what}: the hint bar offers {foreign:?}: {hints}"
            );
        }
        assert!(
            hints.contains("esc") || hints.contains(" no "),
            "{what}: no way out named: {hints}"
        );
    }
    for c in NOT_FOR_POPUPS {
        let effects = press(state, KeyCode::Char(c));
        assert!(!state.quit, "{what}: {c:?} quit the app");
        assert_eq!(state.overlay, overlay, "{what}: {c:?} changed the popup");
        assert_eq!(state.screen, screen, "{what}: {c:?} switched the screen");
        assert!(effects.is_empty(), "{what}: {c:?} started {effects:?}");
    }
}

#[test]
fn popups_own_the_keyboard() {
    let mut state = memory_open();
    press(&mut state, KeyCode::Char('d'));
    assert!(matches!(state.overlay, Overlay::Form(_)));
    assert_popup_owns_the_keyboard(&mut state, "delete form");
    press(&mut state, KeyCode::Enter);
    assert!(matches!(state.overlay, Overlay::Confirm(_)));
    assert_popup_owns_the_keyboard(&mut state, "delete confirmation");
    // The way out still works.
    press(&mut state, KeyCode::Esc);
    assert_eq!(state.overlay, Overlay::None);

    let mut state = previewing();
    assert_eq!(state.overlay, Overlay::Trim);
    assert_popup_owns_the_keyboard(&mut state, "trim preview");
    press(&mut state, KeyCode::Char('A'));
    assert_popup_owns_the_keyboard(&mut state, "apply confirmation");

    let mut state = memory_open();
    press(&mut state, KeyCode::Char('?'));
    assert_eq!(state.overlay, Overlay::Help);
    assert_popup_owns_the_keyboard(&mut state, "help");
    press(&mut state, KeyCode::Char('?'));
    assert_eq!(state.overlay, Overlay::None);
    // Without a popup, q quits.
    press(&mut state, KeyCode::Char('q'));
    assert!(state.quit);
}

#[test]
fn chat_memories_loading_and_error_states() {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/memscope.db".to_owned(),
        true,
    );
    press(&mut state, KeyCode::Char('2'));
    snapshot!("chat_memories_loading", &state);
    let generation = state.chat_memories.generation;
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            MemoryLoaded::List(Err("no such table: chat_memories".to_owned())),
        ),
    );
    snapshot!("chat_memories_error", &state);
}

#[test]
fn enter_on_a_message_shows_it_whole() {
    let mut state = memory_open();
    // The tool result: a long JSON line the page cuts.
    for _ in 0..8 {
        press(&mut state, KeyCode::Down);
    }
    let page = tui_support::screen_text(&state, 80, 24);
    assert!(
        !page.contains("\"eta\":\"Friday\""),
        "the page cuts it:\n{page}"
    );
    press(&mut state, KeyCode::Enter);
    assert!(matches!(state.overlay, Overlay::Detail(_)));
    for (width, height) in tui_support::ALL_SIZES {
        let text = tui_support::screen_text(&state, width, height);
        let flat: String = text.lines().collect::<Vec<_>>().join("");
        assert!(flat.contains("Friday"), "{width}x{height}:\n{text}");
        assert!(
            text.contains("tool call call_1"),
            "{width}x{height}:\n{text}"
        );
    }
    snapshot!("chat_memory_message_detail", &state, all_sizes);
    assert_popup_owns_the_keyboard(&mut state, "message detail");
    press(&mut state, KeyCode::Esc);
    assert_eq!(state.overlay, Overlay::None);
}

#[test]
fn the_warnings_count_opens_as_a_list() {
    let mut state = memory_open();
    state.config_warnings = vec![
        "unknown counter \"magic\": using openai".to_owned(),
        "unknown encoding \"utf9\": using the model's".to_owned(),
    ];
    let status = tui_support::screen_text(&state, 80, 24);
    assert!(status.contains("warnings: 2 (! lists them)"), "{status}");
    press(&mut state, KeyCode::Char('!'));
    let text = tui_support::screen_text(&state, 80, 24);
    assert!(text.contains("2 warnings"), "{text}");
    assert!(text.contains("1. unknown counter"), "{text}");
    assert!(text.contains("2. unknown encoding"), "{text}");
}
