//! The status line and its log (`!`), the first-run footer, a long database path, the budget
//! panel's model line, and searching a conversation and the list.

use super::*;

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
        JobEvent::load(generation, LoadReport::List(Ok(page(rows)))),
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
