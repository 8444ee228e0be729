//! The nodes pane of a chatflow conversation: its rows, and the selected node's context and
//! timeline, each loaded by its own job.

use super::effect::{Effect, Load, LoadedNodes};
use super::selection::moved;
use super::trim;
use crate::inspect::nodes::{NodeContextView, Timeline};
use crate::tui::action::Action;
use crate::tui::state::{AppState, LoadStatus, NodesState};

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
    let load = Load::Nodes {
        conversation_id: conversation.id.clone(),
        leaf: nodes.leaf.clone(),
        settings,
    };
    effects.push(Effect::load(generation, load));
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
        let timeline = Load::Timeline {
            thread: thread.clone(),
            node_id: node_id.clone(),
        };
        effects.push(Effect::load(timeline_generation, timeline));
    }
    let context = Load::NodeContext {
        thread,
        node_id,
        source: nodes.source,
        settings,
    };
    effects.push(Effect::load(context_generation, context));
}

/// The open nodes pane, which a load's report fills.
fn open_nodes(state: &mut AppState) -> Option<&mut NodesState> {
    state.conversation.as_mut().and_then(|c| c.nodes.as_mut())
}

pub(super) fn nodes_loaded(
    state: &mut AppState,
    result: Result<LoadedNodes, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(nodes) = open_nodes(state) else {
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
    result: Result<Box<NodeContextView>, String>,
) -> bool {
    let budget = state.settings.budget;
    let Some(nodes) = open_nodes(state) else {
        return false;
    };
    let result = result.map(|mut view| {
        // The budget may have changed while the job ran.
        view.budget.set_budget(budget);
        *view
    });
    nodes.context_status.settle(&mut nodes.context, result);
    true
}

pub(super) fn timeline_loaded(state: &mut AppState, result: Result<Timeline, String>) -> bool {
    let Some(nodes) = open_nodes(state) else {
        return false;
    };
    nodes.timeline_status.settle(&mut nodes.timeline, result);
    true
}

#[cfg(test)]
#[path = "nodes_tests.rs"]
mod tests;
