//! The nodes pane of a chatflow conversation: its rows, and the selected node's context and
//! timeline, each loaded by its own job.

use super::effect::{Effect, LoadedNodes};
use super::selection::moved;
use super::trim;
use crate::inspect::nodes::{NodeContextView, Timeline};
use crate::tui::action::Action;
use crate::tui::state::{AppState, ConversationState, LoadStatus, NodesState, current};

/// Keys of the open nodes pane; `false` leaves the action to the conversation (budget keys).
pub(super) fn nodes_action(
    state: &mut AppState,
    action: Action,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(nodes) = state.conversation.as_mut().and_then(|c| c.nodes.as_mut()) else {
        return false;
    };
    let target = match action {
        Action::Back | Action::ToggleNodes => {
            if let Some(conversation) = state.conversation.as_mut() {
                conversation.nodes = None;
            }
            return true;
        }
        Action::Refresh => {
            reload_nodes(state, effects);
            return true;
        }
        Action::NextSource => {
            nodes.source = nodes.source.next();
            load_node(state, false, effects);
            return true;
        }
        Action::TrimPreview => {
            trim::open_for_node(state, effects);
            return true;
        }
        _ => match moved(nodes.selected, nodes.rows.len(), action) {
            Some(target) => target,
            None => return false,
        },
    };
    if target != nodes.selected {
        nodes.selected = target;
        nodes.context = None;
        nodes.timeline = None;
        load_node(state, true, effects);
    }
    true
}

/// Asks for the nodes pane at its leaf; what is shown stays until the answer comes.
pub(super) fn reload_nodes(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let settings = state.settings.budget_settings();
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(nodes) = conversation.nodes.as_mut() else {
        return;
    };
    nodes.generation = generation;
    nodes.status = LoadStatus::Loading;
    effects.push(Effect::LoadNodes {
        generation,
        conversation_id: conversation.id.clone(),
        leaf: nodes.leaf.clone(),
        settings,
    });
}

/// Asks for the selected node's context, and its timeline when the node or thread changed.
fn load_node(state: &mut AppState, with_timeline: bool, effects: &mut Vec<Effect>) {
    let context_generation = state.generation();
    let timeline_generation = state.generation();
    let settings = state.settings.budget_settings();
    let Some(nodes) = state.conversation.as_mut().and_then(|c| c.nodes.as_mut()) else {
        return;
    };
    let (Some(thread), Some(node)) = (nodes.thread.clone(), nodes.selected_node()) else {
        return;
    };
    let node_id = node.node_id.clone();
    state.budget_panel.offset = None;
    nodes.context_generation = context_generation;
    nodes.context_status = LoadStatus::Loading;
    if with_timeline {
        nodes.timeline_generation = timeline_generation;
        nodes.timeline_status = LoadStatus::Loading;
        effects.push(Effect::LoadTimeline {
            generation: timeline_generation,
            thread: thread.clone(),
            node_id: node_id.clone(),
        });
    }
    effects.push(Effect::LoadNodeContext {
        generation: context_generation,
        thread,
        node_id,
        source: nodes.source,
        settings,
    });
}

/// The open nodes pane, when `generation` is still the latest of the load `latest` names: an
/// older result is dropped.
fn waiting_nodes(
    conversation: &mut Option<ConversationState>,
    generation: u64,
    latest: fn(&NodesState) -> u64,
) -> Option<&mut NodesState> {
    let nodes = conversation.as_mut().and_then(|c| c.nodes.as_mut());
    current(nodes, generation, latest)
}

pub(super) fn nodes_loaded(
    state: &mut AppState,
    generation: u64,
    result: Result<LoadedNodes, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| n.generation) else {
        return false;
    };
    match result {
        Ok(loaded) => {
            let selected_id = nodes.selected_node().map(|n| n.node_id.clone());
            let selected = selected_id
                .and_then(|id| loaded.rows.iter().position(|r| r.summary.node_id == id))
                .unwrap_or(0);
            nodes.selected = selected;
            nodes.rows = loaded.rows;
            nodes.thread = Some(loaded.thread);
            nodes.status = LoadStatus::Loaded;
            load_node(state, true, effects);
        }
        Err(error) => nodes.status = LoadStatus::Failed(error),
    }
    true
}

pub(super) fn context_loaded(
    state: &mut AppState,
    generation: u64,
    result: Result<Box<NodeContextView>, String>,
) -> bool {
    let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| {
        n.context_generation
    }) else {
        return false;
    };
    let result = result.map(|mut view| {
        // The budget may have changed while the job ran.
        view.budget.set_budget(state.settings.budget);
        *view
    });
    nodes.context_status.settle(&mut nodes.context, result);
    true
}

pub(super) fn timeline_loaded(
    state: &mut AppState,
    generation: u64,
    result: Result<Timeline, String>,
) -> bool {
    let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| {
        n.timeline_generation
    }) else {
        return false;
    };
    nodes.timeline_status.settle(&mut nodes.timeline, result);
    true
}

#[cfg(test)]
#[path = "nodes_tests.rs"]
mod tests;
