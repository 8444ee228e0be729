use super::*;

fn chord(text: &str) -> KeyChord {
    KeyChord::parse(text).unwrap()
}

/// The contents of the `[keys]` table of `text`.
fn user_keys(text: &str) -> toml::Table {
    let mut table: toml::Table = toml::from_str(text).unwrap();
    match table.remove("keys") {
        Some(toml::Value::Table(keys)) => keys,
        other => panic!("no [keys] table: {other:?}"),
    }
}

#[test]
fn parses_and_prints_chords() {
    for text in [
        "q", "G", "?", "ctrl-c", "alt-x", "esc", "pagedown", "f1", "space", "-",
    ] {
        assert_eq!(chord(text).to_string(), text);
    }
    assert_eq!(chord("PageDown"), chord("pagedown"));
    assert!(KeyChord::parse("").is_err());
    assert!(KeyChord::parse("hyper-q").is_err());
    assert!(KeyChord::parse("f99").is_err());
}

#[test]
fn terminal_events_map_to_chords_with_shift_folded() {
    let shifted = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(KeyChord::from_event(&shifted), Some(chord("G")));
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(KeyChord::from_event(&ctrl_c), Some(chord("ctrl-c")));
    let space = KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE);
    assert_eq!(KeyChord::from_event(&space), Some(chord("space")));
    let insert = KeyEvent::new(KeyCode::Insert, KeyModifiers::NONE);
    assert_eq!(KeyChord::from_event(&insert), None);
}

#[test]
fn default_keymap_has_vim_keys_arrows_and_help() {
    let keymap = Keymap::default_keys();
    let list = KeyContext::Conversations;
    assert_eq!(keymap.lookup(list, chord("j")), Some(Action::Down));
    assert_eq!(keymap.lookup(list, chord("down")), Some(Action::Down));
    assert_eq!(keymap.lookup(list, chord("?")), Some(Action::ToggleHelp));
    assert_eq!(keymap.lookup(list, chord("ctrl-c")), Some(Action::Quit));
    let conv = KeyContext::Conversation;
    assert_eq!(keymap.lookup(conv, chord("+")), Some(Action::BudgetUp));
    assert_eq!(
        keymap.lookup(conv, chord("t")),
        Some(Action::ToggleThreadMode)
    );
    assert_eq!(keymap.lookup(list, chord("+")), None);
}

#[test]
fn every_action_is_bound_by_default() {
    let keymap = Keymap::default_keys();
    for action in Action::ALL {
        assert!(
            keymap.bindings().iter().any(|b| b.action == action),
            "{action:?} has no default key"
        );
    }
}

#[test]
fn user_table_overrides_unbinds_and_describes() {
    let user = r#"
        [keys.conversation]
        "x" = { action = "budget_up", desc = "more tokens" }
        "+" = { action = "none" }
    "#;
    let keymap = Keymap::from_toml(DEFAULT_KEYS, Some(&user_keys(user))).unwrap();
    let conv = KeyContext::Conversation;
    assert_eq!(keymap.lookup(conv, chord("x")), Some(Action::BudgetUp));
    assert_eq!(keymap.lookup(conv, chord("+")), None);
    let described = keymap
        .bindings()
        .iter()
        .find(|b| b.key == chord("x") && b.context == conv)
        .unwrap();
    assert_eq!(described.description, "more tokens");
}

#[test]
fn context_binding_shadows_global() {
    let text = r#"
        [keys.global]
        "q" = { action = "quit" }
        [keys.conversation]
        "q" = { action = "back" }
    "#;
    let keymap = Keymap::from_toml(text, None).unwrap();
    assert_eq!(
        keymap.lookup(KeyContext::Conversation, chord("q")),
        Some(Action::Back)
    );
    assert_eq!(
        keymap.lookup(KeyContext::Conversations, chord("q")),
        Some(Action::Quit)
    );
}

#[test]
fn errors_name_the_context_and_key() {
    let bad_action = "[keys.global]\n\"q\" = { action = \"explode\" }";
    assert!(matches!(
        Keymap::from_toml(bad_action, None),
        Err(KeymapError::BadKey { problem, .. }) if problem.contains("explode")
    ));
    let bad_key = "[keys.global]\n\"hyper-q\" = { action = \"quit\" }";
    assert!(matches!(
        Keymap::from_toml(bad_key, None),
        Err(KeymapError::BadKey { key, .. }) if key == "hyper-q"
    ));
    assert!(matches!(
        Keymap::from_toml("[keys.nowhere]\n", None),
        Err(KeymapError::Invalid(_))
    ));
    assert!(matches!(
        Keymap::from_toml("[other]\n", None),
        Err(KeymapError::Invalid(_))
    ));
    let unknown_field = user_keys("[keys.global]\n\"q\" = { action = \"quit\", when = 1 }");
    assert!(matches!(
        Keymap::from_toml(DEFAULT_KEYS, Some(&unknown_field)),
        Err(KeymapError::Invalid(_))
    ));
}

#[test]
fn grouped_joins_keys_of_one_action() {
    let keymap = Keymap::default_keys();
    let groups = keymap.grouped(KeyContext::Global);
    let down = groups.iter().find(|(_, desc)| *desc == "down").unwrap();
    assert!(down.0.contains('j') && down.0.contains("down"), "{down:?}");
}

#[test]
fn a_layer_takes_its_base_s_keys_unless_it_binds_them_itself() {
    let user = r#"
        [keys.session]
        "x" = { action = "budget_up", desc = "more tokens" }
        "m" = { action = "none" }
        [keys.thread]
        "+" = { action = "none" }
    "#;
    let keymap = Keymap::from_toml(DEFAULT_KEYS, Some(&user_keys(user))).unwrap();
    let (thread, flow) = (KeyContext::Thread, KeyContext::FlowSession);
    // The base's keys, a user's change to the base included, reach both layers.
    for layer in [thread, flow] {
        assert_eq!(keymap.lookup(layer, chord("T")), Some(Action::TrimPreview));
        assert_eq!(keymap.lookup(layer, chord("x")), Some(Action::BudgetUp));
        assert_eq!(keymap.lookup(layer, chord("m")), None);
    }
    // What differs by shape is each layer's own, and a layer may unbind a base key.
    assert_eq!(keymap.lookup(thread, chord("enter")), Some(Action::Open));
    assert_eq!(keymap.lookup(flow, chord("enter")), Some(Action::Details));
    assert_eq!(keymap.lookup(thread, chord(">")), None);
    assert_eq!(keymap.lookup(thread, chord("+")), None);
    assert_eq!(keymap.lookup(flow, chord("+")), Some(Action::BudgetUp));
    // The prune popup answers yes and no as every confirmation does.
    assert_eq!(
        keymap.lookup(KeyContext::Prune, chord("y")),
        Some(Action::Confirm)
    );
    assert_eq!(
        keymap.lookup(KeyContext::Prune, chord("q")),
        None,
        "a popup swallows quit"
    );
    // Each layer's hints name each key once, with the layer's description.
    let (hints, _) = keymap.hints(thread);
    let enter: Vec<_> = hints
        .iter()
        .filter(|(keys, _)| keys.contains("enter"))
        .collect();
    assert_eq!(enter, [&("t/enter".to_owned(), "checkpoint tree")]);
    // `t` opens a session's tree wherever a session is open: on a thread, its checkpoints.
    assert_eq!(keymap.lookup(flow, chord("t")), Some(Action::Open));
    assert_eq!(keymap.lookup(thread, chord("t")), Some(Action::Open));
}

#[test]
fn the_budget_keys_are_written_once_and_reach_every_view_with_a_budget() {
    let user = r#"
        [keys.budget]
        "B" = { action = "budget_down", desc = "fewer tokens" }
    "#;
    let keymap = Keymap::from_toml(DEFAULT_KEYS, Some(&user_keys(user))).unwrap();
    for view in [
        KeyContext::Conversation,
        KeyContext::Nodes,
        KeyContext::FlowSession,
        KeyContext::Thread,
        KeyContext::Session,
        KeyContext::Checkpoints,
    ] {
        assert_eq!(
            keymap.lookup(view, chord("+")),
            Some(Action::BudgetUp),
            "{view:?}"
        );
        assert_eq!(
            keymap.lookup(view, chord("B")),
            Some(Action::BudgetDown),
            "{view:?}"
        );
        assert_eq!(
            keymap.lookup(view, chord("m")),
            Some(Action::NextModel),
            "{view:?}"
        );
    }
    // A checkpoint's budget is a line, not a panel to focus.
    assert_eq!(keymap.lookup(KeyContext::Checkpoints, chord("b")), None);
    assert_eq!(
        keymap.lookup(KeyContext::Nodes, chord("b")),
        Some(Action::FocusBudget)
    );
    // The list has no budget.
    assert_eq!(keymap.lookup(KeyContext::Conversations, chord("B")), None);
}

#[test]
fn the_list_keys_are_written_once_and_reach_every_list() {
    let user = r#"
        [keys.list]
        "o" = { action = "open", desc = "open it" }
        "D" = { action = "none" }
    "#;
    let keymap = Keymap::from_toml(DEFAULT_KEYS, Some(&user_keys(user))).unwrap();
    let lists = [
        KeyContext::Conversations,
        KeyContext::Sessions,
        KeyContext::Threads,
    ];
    for list in lists {
        assert_eq!(
            keymap.lookup(list, chord("o")),
            Some(Action::Open),
            "{list:?}"
        );
        assert_eq!(keymap.lookup(list, chord("]")), Some(Action::NextPage));
        assert_eq!(keymap.lookup(list, chord("D")), None, "{list:?}");
        assert_eq!(keymap.lookup(list, chord("/")), Some(Action::Filter));
    }
    // What only one list has stays its own.
    let (conversations, sessions, threads) = (lists[0], lists[1], lists[2]);
    assert_eq!(
        keymap.lookup(conversations, chord("x")),
        Some(Action::ToggleDeleted)
    );
    assert_eq!(keymap.lookup(sessions, chord("x")), None);
    assert_eq!(keymap.lookup(threads, chord("P")), Some(Action::Prune));
    assert_eq!(keymap.lookup(sessions, chord("P")), None);
}
