//! Tests of the nodes pane: its rows, and the selected node's context and timeline.

use crossterm::event::KeyCode;

use crate::inspect::nodes::ContextSource;
use crate::tui::keymap::KeyContext;
use crate::tui::state::{BUDGET_STEP, LoadStatus};
use crate::tui::update::test_support::*;
use crate::tui::update::{Effect, Event, JobEvent, Load, LoadReport, Stamped, update};

#[test]
fn opening_the_nodes_pane_at_the_latest_leaf_reads_dify_s_own_thread() {
    let mut state = opened();
    let effects = update(&mut state, key('o'));
    assert!(matches!(
        &effects[..],
        [Effect::Load(Stamped { value: Load::Nodes { leaf: None, conversation_id, .. }, .. })] if conversation_id == "c1"
    ));
    assert_eq!(state.key_context(), KeyContext::Nodes);
    update(&mut state, key('o'));
    assert!(state.nodes().is_none(), "o closes the pane again");
    // Another leaf: its tree path.
    update(&mut state, key('k'));
    let effects = update(&mut state, key('o'));
    assert!(
        matches!(
            &effects[..],
            [Effect::Load(Stamped {
                value: Load::Nodes { leaf: Some(_), .. },
                ..
            })]
        ),
        "{effects:?}"
    );
}

#[test]
fn loaded_nodes_ask_for_the_first_node_s_context_and_timeline() {
    let (state, effects) = nodes_open();
    let (_, node_id, source) = context_request(&effects);
    assert_eq!((node_id.as_str(), source), ("llm1", ContextSource::Outputs));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Load(Stamped { value: Load::Timeline { node_id, .. }, .. }) if node_id == "llm1"))
    );
    assert!(state.busy());
}

#[test]
fn only_the_latest_node_context_request_is_shown() {
    let (mut state, effects) = nodes_open();
    let (stale, _, _) = context_request(&effects);
    let (latest, _, source) = context_request(&update(&mut state, key('s')));
    assert_eq!(source, ContextSource::Prompts);
    let stale_result = JobEvent::load(
        stale,
        LoadReport::NodeContext(Ok(empty_context(ContextSource::Outputs))),
    );
    update(&mut state, Event::Job(stale_result));
    assert!(
        state.nodes().unwrap().context.is_none(),
        "a stale result is dropped"
    );
    let latest_result = JobEvent::load(
        latest,
        LoadReport::NodeContext(Ok(empty_context(ContextSource::Prompts))),
    );
    update(&mut state, Event::Job(latest_result));
    let nodes = state.nodes().unwrap();
    let view = nodes.context.as_ref().unwrap();
    assert_eq!(view.context.source, ContextSource::Prompts);
    assert_eq!(nodes.context_status, LoadStatus::Loaded);
}

#[test]
fn a_failed_node_context_is_an_error_state_not_a_crash() {
    let (mut state, effects) = nodes_open();
    let (generation, _, _) = context_request(&effects);
    let failed = JobEvent::load(
        generation,
        LoadReport::NodeContext(Err("database is locked".to_owned())),
    );
    update(&mut state, Event::Job(failed));
    let nodes = state.nodes().unwrap();
    assert_eq!(
        nodes.context_status,
        LoadStatus::Failed("database is locked".to_owned())
    );
}

#[test]
fn moving_to_another_node_clears_its_view_and_loads_it() {
    let (mut state, effects) = nodes_open();
    let (generation, _, _) = context_request(&effects);
    let result = JobEvent::load(
        generation,
        LoadReport::NodeContext(Ok(empty_context(ContextSource::Outputs))),
    );
    update(&mut state, Event::Job(result));
    let effects = update(&mut state, key('j'));
    assert_eq!(context_request(&effects).1, "llm2");
    assert!(state.nodes().unwrap().context.is_none());
    assert!(
        update(&mut state, key('j')).is_empty(),
        "already the last node"
    );
}

#[test]
fn a_new_counter_recounts_the_nodes_pane_and_the_budget_moves_its_cut() {
    let (mut state, _) = nodes_open();
    let effects = update(&mut state, key('c'));
    let generation = nodes_generation(&effects);
    assert_eq!(state.nodes().unwrap().generation, generation);
    update(&mut state, key('+'));
    assert_eq!(state.settings.budget, 2000 + BUDGET_STEP);
    update(&mut state, code(KeyCode::Esc));
    assert!(state.nodes().is_none());
    assert_eq!(state.key_context(), KeyContext::Conversation);
}
