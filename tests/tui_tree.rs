//! The tree screen (`t` in an open session): what `memscope thread` prints, drawn as a tree
//! with the path the model is sent marked, the selected node beside it and what the source says
//! of the whole below; loading, failed and a node shown whole, at both sizes, compared with insta
//! snapshots. The state is driven through `update` as the app drives it; the tree is delivered
//! by hand as the job runner would deliver it.

#[macro_use]
mod tui_support;

use tui_support::{code, key};

use std::sync::Arc;

use crossterm::event::KeyCode;
use memscope::inspect::document::DocumentHead;
use memscope::inspect::tree::{ThreadDocument, ThreadNode};
use memscope::sources::conversation::extra;
use memscope::sources::langflow::conversation::LangflowSessions;
use memscope::tui::keymap::Keymap;
use memscope::tui::state::ConversationScreens;
use memscope::tui::state::{AppState, Overlay, Screen};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, SessionLoad, SessionLoaded, Stamped, start, update,
};
use serde_json::json;

fn state() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        tui_support::settings(),
        "sqlite:///data/sessions.db".to_owned(),
        true,
    );
    state.conversation_screens = ConversationScreens::Messages;
    state.keeps(&LangflowSessions);
    start(&mut state);
    state
}

fn node(id: &str, parent: Option<&str>, depth: usize, sent: bool, text: &str) -> ThreadNode {
    ThreadNode {
        id: id.to_owned(),
        parent: parent.map(str::to_owned),
        depth,
        on_thread: sent,
        text: text.to_owned(),
        group: None,
        extra: extra(json!({ "kind": if depth == 0 { "invocation" } else { "event" } })),
    }
}

/// Two invocations of a coordinator and a specialist; the second was undone by a rewind, so
/// the model is sent none of it.
fn document() -> ThreadDocument {
    let mut nodes = vec![
        node(
            "inv-1",
            None,
            0,
            true,
            "invocation inv-1: coordinator → specialist",
        ),
        node(
            "e1",
            Some("inv-1"),
            1,
            true,
            "[user] My invoice shows a charge twice.",
        ),
        node(
            "e2",
            Some("inv-1"),
            1,
            true,
            "[coordinator] calls transfer_to_agent({\"agent_name\":\"specialist\"})",
        ),
        node(
            "e3",
            Some("inv-1"),
            1,
            true,
            "[specialist] (quoted) The second charge is a pending hold; it drops off in three days, and nothing needs to be refunded.",
        ),
        node(
            "inv-2",
            None,
            0,
            false,
            "invocation inv-2: coordinator (undone by a rewind)",
        ),
        node(
            "e4",
            Some("inv-2"),
            1,
            false,
            "[user] Refund it anyway.  (rewound)",
        ),
    ];
    nodes[3].extra = extra(json!({ "kind": "event", "author": "specialist", "sent_as": "quoted" }));
    ThreadDocument {
        head: DocumentHead { version: 1, source: "adk" },
        id: "escalation".to_owned(),
        title: None,
        thread: vec!["inv-1".into(), "e1".into(), "e2".into(), "e3".into()],
        nodes,
        extra: Default::default(),
        header: vec![
            "session escalation (app billing, user alice; SqliteSessionService): 2 invocations, 4 events".to_owned(),
            "marked: the events agent coordinator's model is sent next turn".to_owned(),
        ],
        footer: vec![
            "state as the app sees it (session keys, app: and user: keys; temp: keys are never stored):".to_owned(),
            "  app:region = \"eu\"".to_owned(),
        ],
    }
}

/// Opens session `s` with `:conv`, then its tree with `t`; returns the tree load's generation.
fn tree_asked(state: &mut AppState) -> u64 {
    key(state, ':');
    for c in "conv escalation".chars() {
        key(state, c);
    }
    code(state, KeyCode::Enter);
    assert_eq!(state.screen, Screen::Session);
    let effects = key(state, 't');
    assert_eq!(state.screen, Screen::Tree);
    match &effects[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Sessions(SessionLoad::Tree { key }),
            }),
        ] => {
            assert_eq!(key.id, "escalation");
            *generation
        }
        other => panic!("expected the tree's load: {other:?}"),
    }
}

fn deliver(state: &mut AppState, generation: u64, result: Result<ThreadDocument, String>) {
    let report = SessionLoaded::Tree(result.map(Arc::new));
    update(state, Event::Job(JobEvent::load(generation, report)));
}

#[test]
fn a_session_tree_loading_then_drawn_with_the_path_the_model_is_sent() {
    let mut state = state();
    let generation = tree_asked(&mut state);
    snapshot!("tree_loading", &state);
    // A tree asked for earlier (the session was left and opened again) is dropped.
    deliver(&mut state, generation - 1, Ok(document()));
    assert!(state.tree.as_ref().unwrap().document.is_none());
    deliver(&mut state, generation, Ok(document()));
    key(&mut state, 'j');
    key(&mut state, 'j');
    key(&mut state, 'j');
    snapshot!("tree_loaded", &state);
    // `L`: the newest node the model is sent; enter shows it whole, with what its source says.
    key(&mut state, 'G');
    key(&mut state, 'L');
    assert_eq!(state.tree.as_ref().unwrap().selected, 3);
    code(&mut state, KeyCode::Enter);
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("enter shows the node whole: {:?}", state.overlay);
    };
    assert!(detail.text.contains("refunded."), "uncut: {}", detail.text);
    assert!(
        detail.text.contains("\"sent_as\": \"quoted\""),
        "{}",
        detail.text
    );
    snapshot!("tree_node_whole", &state);
    code(&mut state, KeyCode::Esc);
    // The tab comes back on the tree; esc goes back to the session.
    key(&mut state, '3');
    key(&mut state, '1');
    assert_eq!(state.screen, Screen::Tree);
    code(&mut state, KeyCode::Esc);
    assert_eq!(state.screen, Screen::Session);
}

#[test]
fn a_tree_that_cannot_be_read_says_why() {
    let mut state = state();
    let generation = tree_asked(&mut state);
    deliver(
        &mut state,
        generation,
        Err("session escalation is under 2 apps: billing/alice, sales/bob".to_owned()),
    );
    snapshot!("tree_failed", &state);
}

#[test]
fn state_longer_than_its_pane_says_where_it_is_printed_whole() {
    let mut state = state();
    let generation = tree_asked(&mut state);
    let mut long = document();
    long.footer
        .extend((0..40).map(|n| format!("  user:key{n} = \"value {n}\"")));
    deliver(&mut state, generation, Ok(long));
    let text = tui_support::screen_text(&state, 120, 32);
    assert!(text.contains("  app:region = \"eu\""), "{text}");
    assert!(
        text.contains("more lines: `memscope thread escalation` prints"),
        "{text}"
    );
    assert!(!text.contains("user:key39"), "{text}");
}
