//! Every screen drawn into a TestBackend at two sizes, in its loading, empty, error and loaded
//! states, compared with insta snapshots. The state is driven through `update` exactly as the
//! app drives it, with job results delivered by hand.

#[macro_use]
mod tui_support;

use tui_support::{key, render, run_budgets, screen_text};

use std::sync::Arc;

use chrono::NaiveDateTime;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::inspect::conversation::LoadedConversation;
use memscope::inspect::nodes::{
    ContextSource, ExecutionDocs, FullColumn, LatestContext, MemoryFileRead, NodeContextView,
    NodeSources, NodeSummary, NodeThread, node_context, timeline,
};
use memscope::memory::model::StoredMessage;
use memscope::memory::models::ContextWindow;
use memscope::memory::node_context::ThreadTurn;
use memscope::memory::tokens::CountCache;
use memscope::sources::dify::queries::{ConversationInfo, ConversationSummary};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Loaded, NodeRow, Settings};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, LoadReport, LoadedNodes, Stamped, start, update,
};
use serde_json::json;

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
        is_deleted: false,
        answered_rows_only: false,
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
        JobEvent::load(generation, LoadReport::List(Ok(rows))),
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
        JobEvent::load(generation, LoadReport::List(Ok(Vec::new()))),
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
        ConversationSummary {
            is_deleted: true,
            ..summary(4, "Old complaint", 3)
        },
        summary(2, "Shipping delay", 12),
    ];
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::List(Ok(rows))),
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

/// The refund conversation's thread as node memory reads it: three turns, each with a run.
fn node_thread(app_mode: &str) -> Arc<NodeThread> {
    let info = refund_conversation(Vec::new()).conversation.info.clone();
    Arc::new(NodeThread {
        info: memscope::sources::dify::queries::ConversationInfo {
            app_mode: Some(app_mode.to_owned()),
            ..info
        },
        leaf: None,
        turns: [0x11, 0x12, 0x14]
            .into_iter()
            .map(|n| ThreadTurn {
                message_id: id(n),
                workflow_run_id: id(n + 0x100),
                app_mode: None,
            })
            .collect(),
        dangling: Vec::new(),
        archived: Vec::new(),
    })
}

fn node_rows() -> Vec<NodeRow> {
    let node = |node_id: &str, title: &str, latest: Option<LatestContext>| NodeRow {
        summary: NodeSummary {
            node_id: node_id.to_owned(),
            node_type: "llm".to_owned(),
            title: title.to_owned(),
            executions: 4,
            on_thread: 3,
            latest_run: Some(id(0x114)),
        },
        latest,
    };
    vec![
        node(
            "1733817600001",
            "Classify",
            Some(LatestContext {
                source: ContextSource::Outputs,
                messages: 5,
                tokens: 41,
            }),
        ),
        node("1733817600002", "Answer", None),
    ]
}

/// The classifier's executions, one per turn: the context grows, the last one holds an item
/// with an unknown role.
fn node_executions() -> Vec<ExecutionDocs> {
    let turn = |user: &str, assistant: &str| {
        vec![
            json!({"role": "user", "content": user}),
            json!({"role": "assistant", "content": assistant}),
        ]
    };
    let mut context = Vec::new();
    [
        (0x11, "refund 4411", "refund"),
        (0x12, "blue kettle", "item"),
    ]
    .into_iter()
    .chain([(0x14, "how long?", "timing")])
    .map(|(n, user, assistant)| {
        context.extend(turn(user, assistant));
        let mut sent = context.clone();
        if n == 0x14 {
            sent.push(json!({"role": "robot", "content": "?"}));
        }
        ExecutionDocs {
            id: id(n + 0x200),
            workflow_run_id: id(n + 0x100),
            status: "succeeded".to_owned(),
            outputs: FullColumn {
                text: Some(json!({"text": assistant, "context": sent}).to_string()),
                ..FullColumn::default()
            },
            process_data: FullColumn {
                text: Some(json!({"prompts": context}).to_string()),
                ..FullColumn::default()
            },
        }
    })
    .collect()
}

/// Design A's file: the second turn was answered differently, the third is missing.
fn memory_file() -> MemoryFileRead {
    MemoryFileRead::Read {
        path: "node_memory/app/conversation/1733817600001.json".to_owned(),
        bytes: json!({"version": 1, "turns": {
            id(0x111): {"user_content": "refund 4411", "assistant_content": "refund"},
            id(0x112): {"user_content": "blue kettle", "assistant_content": "a kettle"},
        }})
        .to_string()
        .into_bytes(),
    }
}

/// Runs the node jobs the effects ask for, as the job runner would, over fixed sources.
fn run_node_jobs(state: &mut AppState, effects: Vec<Effect>) {
    let executions = node_executions();
    let mut cache = CountCache::new(1000);
    for effect in effects {
        match effect {
            Effect::Load(Stamped {
                generation,
                value:
                    Load::NodeContext {
                        thread,
                        node_id,
                        source,
                        settings,
                    },
            }) => {
                let sources = NodeSources {
                    node_id,
                    memory_file: memory_file(),
                    last_run: executions.last().cloned().into_iter().collect(),
                };
                let context = node_context(&thread, &sources, source);
                let view = NodeContextView::compute(context, &settings, &mut cache);
                deliver(
                    state,
                    JobEvent::load(generation, LoadReport::NodeContext(Ok(Box::new(view)))),
                );
            }
            Effect::Load(Stamped {
                generation,
                value: Load::Timeline { thread, node_id },
            }) => {
                let built = timeline(&thread, &node_id, &memory_file(), &executions);
                deliver(
                    state,
                    JobEvent::load(generation, LoadReport::Timeline(Ok(built))),
                );
            }
            _ => {}
        }
    }
}

/// Opens the nodes pane on the loaded refund conversation and returns the nodes request.
fn open_nodes(state: &mut AppState) -> u64 {
    conversation_loaded(state, refund_rows());
    match &key(state, 'o')[..] {
        [
            Effect::Load(Stamped {
                generation,
                value: Load::Nodes { .. },
            }),
        ] => *generation,
        other => panic!("expected a nodes load, got {other:?}"),
    }
}

fn nodes_loaded(state: &mut AppState, app_mode: &str, rows: Vec<NodeRow>) -> Vec<Effect> {
    let generation = open_nodes(state);
    deliver(
        state,
        JobEvent::load(
            generation,
            LoadReport::Nodes(Ok(LoadedNodes {
                thread: node_thread(app_mode),
                rows,
            })),
        ),
    )
}

#[test]
fn nodes_pane_loading() {
    let mut state = state();
    open_nodes(&mut state);
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("Loading the nodes"), "{text}");
    snapshot!("nodes_loading", &state);
}

#[test]
fn nodes_pane_error() {
    let mut state = state();
    let generation = open_nodes(&mut state);
    let error = "error returned from database: no such table: workflow_node_executions";
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::Nodes(Err(error.to_owned()))),
    );
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("Could not load the nodes"), "{text}");
    snapshot!("nodes_error", &state);
}

#[test]
fn nodes_pane_of_an_app_that_is_not_a_chatflow() {
    let mut state = state();
    let effects = nodes_loaded(&mut state, "chat", Vec::new());
    assert!(effects.is_empty(), "no node to load: {effects:?}");
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("needs a conversation id"), "{text}");
    snapshot!("nodes_not_a_chatflow", &state);
}

#[test]
fn node_context_loading() {
    let mut state = state();
    nodes_loaded(&mut state, "advanced-chat", node_rows());
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("Loading the node's context"), "{text}");
    assert!(text.contains("Loading the timeline"), "{text}");
    snapshot!("node_context_loading", &state);
}

#[test]
fn node_context_loaded_with_timeline_disagreement_and_item_error() {
    let mut state = state();
    let effects = nodes_loaded(&mut state, "advanced-chat", node_rows());
    run_node_jobs(&mut state, effects);
    for c in ":budget 8\r".chars() {
        let code = match c {
            '\r' => KeyCode::Enter,
            c => KeyCode::Char(c),
        };
        update(
            &mut state,
            Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
        );
    }
    let text = screen_text(&state, 120, 32);
    for expected in [
        "Classify",
        "1733817600001",
        "Classify (llm) · 41 tok",
        "node output context",
        "unknown role `robot`",
        "2 file/output disagreements",
        "⚠ assistant message differs",
        "cut:",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    snapshot!("node_context_loaded", &state);
    // i shows how: the two texts of each disagreeing turn side by side.
    key(&mut state, 'i');
    let text = screen_text(&state, 160, 45);
    for expected in [
        "node memory file",
        "│ the run's outputs.context",
        "assistant message differs",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    snapshot!("node_disagreement_side_by_side", &state, all_sizes);
}

#[test]
fn node_context_switches_source_and_budget() {
    let mut state = state();
    let effects = nodes_loaded(&mut state, "advanced-chat", node_rows());
    run_node_jobs(&mut state, effects);
    let effects = key(&mut state, 's');
    assert!(
        matches!(
            &effects[..],
            [Effect::Load(Stamped {
                value: Load::NodeContext {
                    source: ContextSource::Prompts,
                    ..
                },
                ..
            })]
        ),
        "only the context reloads: {effects:?}"
    );
    run_node_jobs(&mut state, effects);
    let effects = key(&mut state, 's');
    run_node_jobs(&mut state, effects);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("node memory file"), "{text}");
    assert!(
        text.contains("thread runs have no turn in the file"),
        "{text}"
    );
    assert!(
        key(&mut state, '+').is_empty(),
        "the cut moves from cached counts"
    );
    assert!(screen_text(&state, 120, 32).contains("max 280"));
    snapshot!("node_context_design_a", &state);
}

#[test]
fn node_selection_loads_the_other_node_and_esc_closes_the_pane() {
    let mut state = state();
    let effects = nodes_loaded(&mut state, "advanced-chat", node_rows());
    run_node_jobs(&mut state, effects);
    let effects = key(&mut state, 'j');
    let node_ids: Vec<&str> = effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Load(Stamped {
                value: Load::NodeContext { node_id, .. },
                ..
            })
            | Effect::Load(Stamped {
                value: Load::Timeline { node_id, .. },
                ..
            }) => Some(node_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(node_ids, ["1733817600002", "1733817600002"]);
    update(
        &mut state,
        Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
    );
    assert!(state.nodes().is_none());
    assert!(screen_text(&state, 120, 32).contains("thread: Dify's extraction"));
}

#[test]
fn bang_lists_this_sessions_messages_newest_first() {
    let mut state = state();
    list_loaded(&mut state);
    state.say(
        "trimmed Support Chat History / user-1042-session-7: 8 removed, 0 modified (change \
         4f1c2a9e); u undoes it"
            .to_owned(),
    );
    state.say(
        "nothing to undo in Session Context / ext-chat-8812: no change of it is left to revert"
            .to_owned(),
    );
    key(&mut state, 'y');
    key(&mut state, '!');
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("Messages, newest first"), "{text}");
    snapshot!("messages_popup", &state, all_sizes);
}

#[test]
fn first_run_footer_explains_the_warning_and_names_help() {
    let mut state = state();
    list_loaded(&mut state);
    state.first_run_hint = true;
    state
        .config_warnings
        .push("memory base Support memory: knowledge-base directory missing".to_owned());
    let text = screen_text(&state, 120, 32);
    assert!(
        text.contains("! reads the ⚠ warning") && text.contains("? lists every key"),
        "{text}"
    );
    snapshot!("first_run_footer", &state, all_sizes);
    let narrow = screen_text(&state, 80, 24);
    assert!(narrow.contains("? lists every key"), "{narrow}");
    // A line, not a popup: keys go where they always go, and `?` retires the line.
    key(&mut state, 'j');
    assert_eq!(state.list.selected, 1);
    key(&mut state, '?');
    assert!(!state.first_run_hint);
}

#[test]
fn a_long_database_path_is_cut_in_the_middle_so_the_status_counts_stay_whole() {
    let mut state = state();
    state.database =
        "sqlite:///tmp/tmp.ZxZrpfNUoz/data/memscope/a-rather-long-directory/memscope.db".to_owned();
    state.config_warnings.push("a warning".to_owned());
    list_loaded(&mut state);
    let text = screen_text(&state, 80, 24);
    let status = text.lines().rev().nth(1).unwrap();
    assert!(
        status.contains("…") && status.contains("memscope.db"),
        "{status}"
    );
    assert!(status.contains("⚠ warnings: 1 (! lists them)"), "{status}");
}

/// The model line says how memscope knows the window: a family guess is called one, a model of
/// no known family has none and names the setting, and a configured window is used.
#[test]
fn budget_panel_model_line_says_how_the_window_is_known() {
    let mut state = AppState::new(
        Keymap::default_keys(),
        Settings {
            models: vec![
                "gpt-4-foo".into(),
                "my-local-model".into(),
                "local-7b".into(),
            ],
            context_windows: [("local-7b".to_owned(), 50)].into(),
            ..settings()
        },
        "sqlite:///data/memscope.db".to_owned(),
        true,
    );
    start(&mut state);
    conversation_loaded(&mut state, refund_rows());
    let window = |state: &AppState| {
        let conversation = state.conversation.as_ref().unwrap();
        conversation.budget.as_ref().unwrap().context_window.clone()
    };
    let family = ContextWindow::Assumed {
        tokens: 8_192,
        family: "gpt-4",
    };
    assert_eq!(window(&state), family);
    snapshot!("budget_panel_assumed_window", &state);
    let cycle = |state: &mut AppState| {
        let effects = key(state, 'm');
        run_budgets(state, effects, &mut CountCache::new(1000));
    };
    cycle(&mut state);
    assert_eq!(window(&state), ContextWindow::Unknown);
    snapshot!("budget_panel_unknown_window", &state);
    cycle(&mut state);
    assert_eq!(window(&state), ContextWindow::Setting(50));
    snapshot!("budget_panel_configured_window", &state);
}

/// `/` in the open conversation searches its messages: the selection goes to the first match,
/// each hit is drawn reversed, and the status line counts the matches.
#[test]
fn conversation_search() {
    let mut state = state();
    conversation_loaded(&mut state, refund_rows());
    key(&mut state, '/');
    for c in "refund".chars() {
        key(&mut state, c);
    }
    tui_support::code(&mut state, KeyCode::Enter);
    key(&mut state, 'n');
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("\"refund\": match"), "{text}");
    snapshot!("conversation_search", &state);
    // The hits are reversed in bold: in the tree's lines and the selected message's detail.
    let terminal = render(&state, 120, 32);
    let buffer = terminal.backend().buffer();
    let bold = ratatui::style::Modifier::BOLD;
    let mut runs = Vec::new();
    for y in 0..32u16 {
        let mut run = String::new();
        for x in 0..120u16 {
            let cell = &buffer[(x, y)];
            if cell.modifier.contains(bold) {
                run.push_str(cell.symbol());
            } else if !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
        }
        runs.extend(Some(run).filter(|r| !r.is_empty()));
    }
    let hits = runs
        .iter()
        .filter(|run| run.eq_ignore_ascii_case("refund"))
        .count();
    assert_eq!(hits, 2, "the tree's line and the detail's query: {runs:?}");
    // A message whose answer holds it is underlined in the tree.
    let text = screen_text(&state, 120, 32);
    let row = text.lines().position(|l| l.contains("00000013")).unwrap() as u16;
    let underlined = ratatui::style::Modifier::UNDERLINED;
    assert!(buffer[(10, row)].modifier.contains(underlined));
}

/// The list's filter says why the selected row matched: the field that holds the text, or the
/// words around its first hit in the messages.
#[test]
fn conversations_filter_says_why_a_row_matched() {
    let mut state = state();
    list_loaded(&mut state);
    key(&mut state, '/');
    for c in "kettle".chars() {
        key(&mut state, c);
    }
    tui_support::code(&mut state, KeyCode::Enter);
    let generation = state.list.generation;
    let rows = vec![
        summary(4, "Kettle broken", 3),
        summary(1, "Refund question", 5),
    ];
    deliver(
        &mut state,
        JobEvent::load(generation, LoadReport::List(Ok(rows))),
    );
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("matched in: title"), "{text}");
    let effects = key(&mut state, 'j');
    let asked = effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            generation,
            value: Load::Snippet { key, search, .. },
        }) => Some((*generation, key.clone(), search.clone())),
        _ => None,
    });
    let (generation, asked, search) = asked.expect("the snippet is asked for");
    assert_eq!(
        (asked.id.as_str(), search.as_str()),
        (id(1).as_str(), "kettle")
    );
    let text = screen_text(&state, 80, 24);
    assert!(
        text.contains("matched in: message text (reading…)"),
        "{text}"
    );
    let snippet = memscope::inspect::search_match::snippet("The blue kettle", &search, 160);
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            LoadReport::Snippet {
                key: asked,
                result: Ok(snippet),
            },
        ),
    );
    snapshot!("conversations_filter_matched_text", &state);
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("matched in: text: The blue kettle"), "{text}");
}
