//! The nodes pane of a chatflow conversation: loading, errors, an app that is no chatflow, a
//! node's context with its timeline and disagreements, switching source and budget, and
//! moving between nodes.

use super::*;

/// The refund conversation's thread as node memory reads it: three turns, each with a run.
fn node_thread(app_mode: &str) -> Arc<NodeThread> {
    let info = refund_conversation(Vec::new()).conversation.info.clone();
    Arc::new(NodeThread {
        info: memscope::inspect::nodes::NodeConversation {
            app_mode: Some(app_mode.to_owned()),
            ..info.into()
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
