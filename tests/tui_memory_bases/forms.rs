//! The tab's forms and refusals: the threshold, search and create forms, auto capture, delete and
//! regenerate asking first, a read-only database's refusals, and the search.

use super::*;

/// The change of a memory base the confirmation popup asks about.
fn asked(state: &AppState) -> Option<&MemoryBaseWrite> {
    match &state.overlay {
        Overlay::Confirm(confirm) => match &confirm.write {
            PendingWrite::MemoryBase(change) => Some(change),
            _ => None,
        },
        _ => None,
    }
}

/// The tab's form in front, if any.
fn open_form(state: &AppState) -> Option<(&BaseForm, &FormPopup)> {
    match &state.overlay {
        Overlay::Form(popup) => match &popup.purpose {
            FormPurpose::MemoryBase(which) => Some((which, popup)),
            FormPurpose::ChatMemory(_) => None,
        },
        _ => None,
    }
}

fn no_form(state: &AppState) -> bool {
    open_form(state).is_none()
}

fn threshold_form(state: &AppState) -> (u64, &'static str, Option<&str>) {
    match open_form(state) {
        Some((BaseForm::Threshold { .. }, popup)) => (
            popup.form.number("threshold"),
            popup.form.choice("unit"),
            popup.error.as_deref(),
        ),
        other => panic!("the threshold form is not open: {other:?}"),
    }
}

#[test]
fn the_threshold_form_validates_before_saving() {
    let mut state = tab(false);
    key(&mut state, 't');
    assert_eq!(threshold_form(&state), (20, "messages", None));
    code(&mut state, KeyCode::Backspace);
    code(&mut state, KeyCode::Backspace);
    // Only digits type into a number: a letter is no threshold and no command either.
    typed(&mut state, "x0");
    assert_eq!(threshold_form(&state).0, 0);
    let effects = code(&mut state, KeyCode::Enter);
    assert!(mb_effects(effects).is_empty());
    assert!(threshold_form(&state).2.unwrap().contains("below 1"));
    typed(&mut state, "12");
    assert_eq!(threshold_form(&state), (12, "messages", None));
    // The unit is a choice of the same form.
    code(&mut state, KeyCode::Down);
    code(&mut state, KeyCode::Right);
    assert_eq!(threshold_form(&state).1, "runs");
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    assert!(matches!(
        &effects[..],
        [MbEffect::Update { base, update }] if base.id == "base-1" && update.threshold == Some(12)
            && update.unit == Some(ThresholdUnit::Runs) && update.auto_capture.is_none()
    ));
    assert!(no_form(&state));
}

#[test]
fn typing_in_a_form_does_not_trigger_keys() {
    let mut state = tab(false);
    key(&mut state, 't');
    typed(&mut state, "qjD");
    assert!(!state.quit);
    assert_eq!(state.memory_bases.selected, 0);
    code(&mut state, KeyCode::Esc);
    assert!(no_form(&state));
}

#[test]
fn auto_capture_toggles_the_selected_base() {
    let mut state = tab(false);
    let effects = mb_effects(key(&mut state, 'a'));
    assert!(matches!(
        &effects[..],
        [MbEffect::Update { base, update }] if base.id == "base-1" && update.auto_capture == Some(true)
    ));
    deliver(
        &mut state,
        MbEvent::Written {
            result: Ok("Research notes: auto-capture on".to_owned()),
        },
    );
    assert_eq!(
        state.message.as_deref(),
        Some("Research notes: auto-capture on")
    );
}

#[test]
fn delete_asks_first_and_no_cancels() {
    let mut state = tab(false);
    let effects = key(&mut state, 'D');
    assert!(mb_effects(effects).is_empty());
    assert!(matches!(
        asked(&state),
        Some(MemoryBaseWrite::Delete(b)) if b.id == "base-1"
    ));
    assert_eq!(state.key_context(), KeyContext::Confirm);
    assert!(
        mb_effects(key(&mut state, 'S')).is_empty(),
        "other keys do nothing while confirming"
    );
    key(&mut state, 'n');
    assert!(asked(&state).is_none());
    assert!(no_form(&state));
    assert_eq!(state.key_context(), KeyContext::MemoryBases);

    key(&mut state, 'D');
    let effects = mb_effects(key(&mut state, 'y'));
    assert!(matches!(&effects[..], [MbEffect::Delete(b)] if b.id == "base-1"));
    assert!(asked(&state).is_none());
}

#[test]
fn regenerate_is_offered_on_a_mismatch_only_and_asks_first() {
    let mut state = tab(false);
    key(&mut state, 'R');
    assert!(no_form(&state));
    assert!(state.message.as_deref().unwrap().contains("mismatch"));
    key(&mut state, 'j');
    key(&mut state, 'R');
    assert!(matches!(
        asked(&state),
        Some(MemoryBaseWrite::Regenerate(b)) if b.id == "base-2"
    ));
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    assert!(matches!(&effects[..], [MbEffect::Regenerate(b)] if b.id == "base-2"));
}

fn create_form(state: &AppState) -> &FormPopup {
    match open_form(state) {
        Some((BaseForm::Create, popup)) => popup,
        other => panic!("the create form is not open: {other:?}"),
    }
}

#[test]
fn the_create_form_validates_then_asks() {
    let mut state = tab(false);
    key(&mut state, 'n');
    assert_eq!(
        create_form(&state).form.text("flow"),
        "Research Notes",
        "the selected base's flow"
    );
    code(&mut state, KeyCode::Enter);
    assert!(
        create_form(&state)
            .error
            .as_deref()
            .unwrap()
            .starts_with("name")
    );
    typed(&mut state, "Ideas");
    // The unit is a choice and auto-capture a toggle, as in every form: no free text.
    code(&mut state, KeyCode::Tab);
    code(&mut state, KeyCode::Tab);
    typed(&mut state, "xyz");
    assert_eq!(create_form(&state).form.choice("unit"), "runs");
    code(&mut state, KeyCode::Right);
    assert_eq!(create_form(&state).form.choice("unit"), "messages");
    code(&mut state, KeyCode::Tab);
    key(&mut state, ' ');
    assert!(!create_form(&state).form.toggle("auto"));
    key(&mut state, ' ');

    // The flow is checked against the database before anything is asked; a refusal keeps
    // everything typed.
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    let [MbEffect::CheckCreate(request)] = &effects[..] else {
        panic!("{effects:?}");
    };
    let request = request.clone();
    assert!(create_form(&state).waiting.is_some());
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request: request.clone(),
            result: Err("no flow named \"Research Notes\"".to_owned()),
        },
    );
    let form = create_form(&state);
    assert!(form.error.as_deref().unwrap().contains("no flow"));
    assert_eq!(form.form.text("name"), "Ideas", "what was typed stays");
    assert_eq!(form.form.choice("unit"), "messages");
    code(&mut state, KeyCode::Enter);
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request: request.clone(),
            result: Ok(()),
        },
    );
    let Some(MemoryBaseWrite::Create(asked)) = asked(&state) else {
        panic!("a checked form asks for confirmation");
    };
    assert_eq!(asked.name, "Ideas");
    assert_eq!(asked.unit, ThresholdUnit::Messages);
    assert_eq!(asked.threshold, 50);
    assert!(asked.auto_capture);
    // "No" goes back to the form as typed.
    key(&mut state, 'n');
    assert_eq!(create_form(&state).form.text("name"), "Ideas");
    code(&mut state, KeyCode::Enter);
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request,
            result: Ok(()),
        },
    );
    let effects = mb_effects(key(&mut state, 'y'));
    assert!(matches!(&effects[..], [MbEffect::Create(r)] if r.name == "Ideas"));
    // Refused at the last moment: the form is back with the reason.
    deliver(
        &mut state,
        MbEvent::Created {
            result: Err("memory base \"Ideas\" already exists".to_owned()),
        },
    );
    let form = create_form(&state);
    assert!(form.error.as_deref().unwrap().contains("already exists"));
    assert_eq!(form.form.text("name"), "Ideas");
    snapshot!("mb_create_form_refused", &state, all_sizes);
}

#[test]
fn a_read_only_database_refuses_every_write_with_a_reason() {
    let mut state = tab(true);
    for c in ['s', 'S', 'a', 't', 'n', 'D'] {
        state.message = None;
        let effects = mb_effects(key(&mut state, c));
        assert!(effects.is_empty(), "{c}: {effects:?}");
        assert!(no_form(&state), "{c}");
        let message = state.message.clone().unwrap_or_default();
        assert!(message.starts_with("read-only database"), "{c}: {message}");
    }
}

#[test]
fn creating_and_deleting_are_not_offered_where_the_database_refuses_them() {
    let help = |state: &mut AppState| {
        key(state, '?');
        let text = screen_text(state, 120, 45);
        key(state, '?');
        text
    };
    let mut offered = tab(false);
    let hints = tui_support::hint_bar(&offered, 300, 32);
    assert!(
        hints.contains("new base") && hints.contains("delete base"),
        "{hints}"
    );
    assert!(help(&mut offered).contains("new base"));

    let mut state = tab(false);
    state.memory_bases.refused_changes = Some(RefusedChanges {
        create: "memscope does not create memory bases here; POST /api/v1/memories".into(),
        delete: "memscope does not delete memory bases here; DELETE /api/v1/memories/{id}".into(),
    });
    let hints = tui_support::hint_bar(&state, 300, 32);
    assert!(
        !hints.contains("new base") && !hints.contains("delete base"),
        "{hints}"
    );
    let help = help(&mut state);
    assert!(
        !help.contains("new base") && !help.contains("delete base"),
        "{help}"
    );
    // Typed anyway, each is refused with the way out, and nothing opens.
    for (c, says) in [
        ('n', "POST /api/v1/memories"),
        ('D', "DELETE /api/v1/memories"),
    ] {
        let effects = mb_effects(key(&mut state, c));
        assert!(effects.is_empty() && no_form(&state), "{c}");
        let message = state.message.clone().unwrap_or_default();
        assert!(message.contains(says), "{c}: {message}");
    }
    // Where there is no base, the empty tab says where one is made.
    state.memory_bases.bases.clear();
    let text = screen_text(&state, 160, 32);
    assert!(text.contains("POST /api/v1/memories"), "{text}");
}

#[test]
fn search_asks_for_hits_and_drops_stale_ones() {
    let mut state = tab(false);
    key(&mut state, '/');
    typed(&mut state, "rollout");
    let loads = mb_loads(code(&mut state, KeyCode::Enter));
    let [(generation, MbLoad::Search { query, .. })] = &loads[..] else {
        panic!("{loads:?}");
    };
    assert_eq!(query, "rollout");
    deliver(
        &mut state,
        JobEvent::load(generation - 1, MbLoaded::Hits(Ok(hits()))),
    );
    assert!(state.memory_bases.search.as_ref().unwrap().hits.is_empty());
    deliver(
        &mut state,
        JobEvent::load(*generation, MbLoaded::Hits(Ok(hits()))),
    );
    let search = state.memory_bases.search.as_ref().unwrap();
    assert_eq!(search.hits.len(), 2);
    assert_eq!(search.status, LoadStatus::Loaded);
    code(&mut state, KeyCode::Esc);
    assert!(
        state.memory_bases.search.is_none(),
        "esc closes the results"
    );
}

#[test]
fn the_search_is_the_one_form_popup_and_takes_any_text() {
    let mut state = tab(false);
    key(&mut state, '/');
    assert_eq!(state.key_context(), KeyContext::Form);
    assert!(
        matches!(open_form(&state), Some((BaseForm::Search { base }, _)) if base.id == "base-1")
    );
    // Letters that are keys elsewhere are typed: `q` does not quit, `j` does not move.
    typed(&mut state, "q j");
    assert!(!state.quit);
    assert_eq!(open_form(&state).unwrap().1.form.text("query"), "q j");
    code(&mut state, KeyCode::Esc);
    assert!(no_form(&state), "esc closes the form");
    assert!(state.memory_bases.search.is_none(), "and searches nothing");
}

/// The memory bases tab's forms take their keys from `[keys.form]`, as the chat memory forms
/// do: a user who submits with another key submits here too.
#[test]
fn the_forms_keys_are_the_configured_ones() {
    let user: toml::Table = toml::from_str(
        r#"
        [form]
        "enter" = { action = "none" }
        "f2" = { action = "confirm" }
        "#,
    )
    .unwrap();
    let mut state = tab(false);
    state.keymap = Keymap::from_toml(memscope::tui::keymap::DEFAULT_KEYS, Some(&user)).unwrap();
    key(&mut state, 't');
    code(&mut state, KeyCode::Enter);
    assert!(
        matches!(open_form(&state), Some((BaseForm::Threshold { .. }, _))),
        "enter is unbound in forms"
    );
    let effects = mb_effects(code(&mut state, KeyCode::F(2)));
    assert!(
        matches!(&effects[..], [MbEffect::Update { base, .. }] if base.id == "base-1"),
        "{effects:?}"
    );
    assert!(no_form(&state));
}
