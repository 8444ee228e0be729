//! The conversation screen: the message tree, its thread and the demo of Dify's extraction.
//! The budget panel (`budget.rs`) and the nodes pane (`nodes.rs`) open on it.

use std::sync::Arc;

use super::budget::{budget_panel_action, recompute_budget, set_budget};
use super::effect::{Effect, Load};
use super::nodes::{nodes_action, reload_nodes};
use super::{settings, trim};
use crate::memory::thread::{ExtractionMode, extract_thread_traced};
use crate::memory::thread_view::{ThreadMode, thread_nodes};
use crate::memory::tree::NodeIndex;
use crate::tui::action::Action;
use crate::tui::state::tree_view::ThreadMarks;
use crate::tui::state::{
    AppState, BUDGET_STEP, ConversationState, DemoState, LoadStatus, Loaded, NodesState, Screen,
};

pub(super) fn open_conversation(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.budget_panel = Default::default();
    let mode = state
        .conversation
        .as_ref()
        .map_or(ThreadMode::Dify, |c| c.mode);
    // Opened again from its own screen, it keeps the way back it was opened with.
    let back_to = match (state.screen, state.conversation.as_ref()) {
        (Screen::Conversation, Some(open)) => open.back_to,
        (Screen::Doctor, _) => Screen::Doctor,
        _ => Screen::Conversations,
    };
    state.conversation = Some(ConversationState::new(
        id.clone(),
        generation,
        mode,
        back_to,
    ));
    state.screen = Screen::Conversation;
    effects.push(Effect::load(generation, conversation_load(state, id)));
}

/// The load of conversation `id`, with the row windows its memory reads under `[history]
/// message_limit`.
fn conversation_load(state: &AppState, id: String) -> Load {
    let message_limit = state.settings.message_limit;
    Load::Conversation { id, message_limit }
}

/// What `W` changed: a toggle that changes nothing on this conversation says why, instead of
/// looking as if the key did nothing.
fn row_window_message(state: &AppState, loaded: &Loaded) -> String {
    let settings = &state.settings;
    let rows = settings.window(loaded.conversation.windows);
    let app_window = loaded.conversation.info.app_window.filter(|&w| w > 0);
    if settings.message_limit > 0 {
        return format!(
            "row window: {rows} rows either way, set by [history] message_limit, which comes before the app's window"
        );
    }
    match (app_window, settings.app_window) {
        (None, _) => format!(
            "row window: this app sets no memory window, so both choices read Dify's default of {rows} rows"
        ),
        (Some(window), true) => {
            format!("row window: the app's memory window, {window} → {rows} rows")
        }
        (Some(_), false) => {
            format!("row window: Dify's default of {rows} rows, the app's window set aside")
        }
    }
}

pub(super) fn conversation_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    if state.conversation.is_none() {
        state.screen = Screen::Conversations;
        return;
    }
    if budget_panel_action(state, action) {
        return;
    }
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    if conversation.nodes.is_some() && nodes_action(state, action, effects) {
        return;
    }
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let loaded = conversation.loaded.clone();
    match (action, loaded) {
        (Action::Back, _) => {
            if conversation.demo.take().is_some() {
                refresh_thread(state, effects);
            } else {
                super::back::go_back(state);
            }
        }
        (Action::Refresh, _) => {
            conversation.generation = generation;
            conversation.status = LoadStatus::Loading;
            let id = conversation.id.clone();
            effects.push(Effect::load(generation, conversation_load(state, id)));
        }
        (Action::BudgetUp, _) => set_budget(state, state.settings.budget + BUDGET_STEP),
        (Action::BudgetDown, _) => set_budget(state, state.settings.budget - BUDGET_STEP),
        (Action::TrimPreview, _) => trim::open_for_thread(state, effects),
        (Action::NextModel, _) => settings::next_model(state, effects),
        (Action::NextCounter, _) => settings::next_counter(state, effects),
        (Action::NextEncoding, _) => settings::next_encoding(state, effects),
        (Action::ToggleRowWindow, loaded) => {
            state.settings.app_window = !state.settings.app_window;
            // Until the conversation is read, its app's window is not known.
            if let Some(loaded) = loaded {
                let said = row_window_message(state, &loaded);
                state.say(said);
            }
            refresh_thread(state, effects);
        }
        (Action::ToggleThreadMode, _) => {
            conversation.mode = match conversation.mode {
                ThreadMode::Dify => ThreadMode::Tree,
                ThreadMode::Tree => ThreadMode::Fixed,
                ThreadMode::Fixed => ThreadMode::Dify,
            };
            refresh_thread(state, effects);
        }
        (_, None) => {}
        (Action::ToggleNodes, Some(loaded)) if !loaded.tree.is_empty() => {
            let leaf = (loaded.tree.latest_leaf() != Some(conversation.selected))
                .then(|| loaded.tree.id(conversation.selected).to_owned());
            conversation.nodes = Some(NodesState::new(leaf, generation));
            reload_nodes(state, effects);
        }
        (Action::ToggleDemo, Some(loaded)) => {
            if conversation.demo.take().is_none() {
                let window = state.settings.window(loaded.conversation.windows);
                let rows = loaded.conversation.window_newest_first(window);
                let trace = extract_thread_traced(&rows, ExtractionMode::Dify);
                conversation.demo = Some(DemoState { trace, shown: 1 });
                select_demo_row(conversation, &loaded);
            }
            refresh_thread(state, effects);
        }
        // `n` and `N` step the demo while nothing is searched (`search.rs` takes them then).
        (
            Action::DemoStep | Action::DemoStepBack | Action::SearchNext | Action::SearchPrev,
            Some(loaded),
        ) => {
            let Some(demo) = conversation.demo.as_mut() else {
                return;
            };
            demo.shown = match action {
                Action::DemoStep | Action::SearchNext => {
                    (demo.shown + 1).min(demo.trace.steps.len())
                }
                _ => demo.shown.saturating_sub(1).max(1),
            };
            select_demo_row(conversation, &loaded);
            refresh_thread(state, effects);
        }
        (Action::JumpLatest, Some(loaded)) => {
            if let Some(latest) = loaded.tree.latest_leaf() {
                select_node(conversation, &loaded, latest);
                refresh_thread(state, effects);
            }
        }
        (Action::Collapse, Some(loaded)) => {
            let node = conversation.selected;
            if !loaded.tree.children(node).is_empty() && !conversation.is_collapsed(node) {
                conversation.collapsed.insert(node);
                conversation.relayout(&loaded);
            } else if let Some(parent) = loaded.tree.parent(node) {
                select_node(conversation, &loaded, parent);
                refresh_thread(state, effects);
            }
        }
        (Action::Expand, Some(loaded)) => {
            let node = conversation.selected;
            if conversation.collapsed.remove(&node) {
                conversation.relayout(&loaded);
            }
        }
        (Action::Up | Action::Down | Action::PageUp | Action::PageDown, Some(_)) => {
            let delta: isize = match action {
                Action::Up => -1,
                Action::Down => 1,
                Action::PageUp => -10,
                _ => 10,
            };
            let target = conversation.cursor.saturating_add_signed(delta);
            move_cursor(conversation, target);
            refresh_thread(state, effects);
        }
        (Action::Top | Action::Bottom, Some(_)) => {
            let target = if action == Action::Top { 0 } else { usize::MAX };
            move_cursor(conversation, target);
            refresh_thread(state, effects);
        }
        _ => {}
    }
}

/// Puts the cursor on visible line `target` (clamped).
fn move_cursor(conversation: &mut ConversationState, target: usize) {
    let Some(last) = conversation.lines.len().checked_sub(1) else {
        return;
    };
    let position = target.min(last);
    if let Some(line) = conversation.lines.get(position) {
        conversation.cursor = position;
        conversation.selected = line.node;
    }
}

/// Selects `node`, opening its collapsed ancestors so it is visible.
pub(super) fn select_node(conversation: &mut ConversationState, loaded: &Loaded, node: NodeIndex) {
    let mut opened = false;
    let mut ancestor = loaded.tree.parent(node);
    // Bounded like the tree's own walks, whatever the links.
    for _ in 0..loaded.tree.len() {
        let Some(current) = ancestor else { break };
        opened |= conversation.collapsed.remove(&current);
        ancestor = loaded.tree.parent(current);
    }
    if opened {
        conversation.relayout(loaded);
    }
    conversation.selected = node;
    conversation.cursor = conversation.lines.line_of(node).unwrap_or(0);
}

fn select_demo_row(conversation: &mut ConversationState, loaded: &Loaded) {
    let examined = conversation
        .demo
        .as_ref()
        .and_then(|demo| demo.current())
        .and_then(|step| loaded.tree.find(&step.id));
    if let Some(node) = examined {
        select_node(conversation, loaded, node);
    }
}

/// Recomputes the thread marks for the selection and asks for its budget.
pub(super) fn refresh_thread(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(loaded) = conversation.loaded.clone().filter(|l| !l.tree.is_empty()) else {
        return;
    };
    let window = state.settings.window(loaded.conversation.windows);
    let thread = thread_nodes(
        &loaded.conversation.rows,
        loaded.conversation.info.answered_rows_only,
        &loaded.tree,
        Some(conversation.selected),
        conversation.mode,
        window,
    );
    let nodes = loaded.tree.len();
    // The demo marks its own walk; the divergence is for the finished views.
    conversation.marks = match &conversation.demo {
        Some(demo) => ThreadMarks::of_walk(
            nodes,
            demo.thread_so_far().filter_map(|id| loaded.tree.find(id)),
        ),
        None => ThreadMarks::of_thread(nodes, &thread),
    };
    conversation.thread = Some(thread);
    recompute_budget(state, effects);
}

/// The conversation arrived: the selection stays where it was unless it followed the latest leaf.
pub(super) fn conversation_loaded(
    state: &mut AppState,
    result: Result<Arc<Loaded>, String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Some(conversation) = state.conversation.as_mut() else {
        return false;
    };
    match result {
        Ok(loaded) => {
            let previous = conversation.loaded.take();
            let followed_latest = previous
                .as_ref()
                .is_none_or(|p| p.tree.latest_leaf() == Some(conversation.selected));
            let kept = previous
                .as_ref()
                .filter(|_| !followed_latest)
                .and_then(|p| loaded.tree.find(p.tree.id(conversation.selected)));
            let target = kept.or_else(|| loaded.tree.latest_leaf());
            // `:conv` may have named it by a prefix.
            conversation.id = loaded.conversation.info.id.clone();
            conversation.collapsed.clear();
            conversation.relayout(&loaded);
            conversation.newest_id = loaded.conversation.rows.last().map(|r| r.id.clone());
            conversation.status = LoadStatus::Loaded;
            conversation.loaded = Some(loaded.clone());
            if let Some(node) = target {
                select_node(conversation, &loaded, node);
            }
            refresh_thread(state, effects);
        }
        Err(error) => {
            // Nothing left to count: the spinner stops with the load.
            conversation.budget_status = LoadStatus::Failed(error.clone());
            conversation.status = LoadStatus::Failed(error);
        }
    }
    true
}

/// The newest message id a poll found: a new one reloads the conversation.
pub(super) fn newest(
    state: &mut AppState,
    id: String,
    newest: Option<String>,
    effects: &mut Vec<Effect>,
) -> bool {
    let generation = state.generation();
    let Some(conversation) = state
        .conversation
        .as_mut()
        .filter(|c| c.id == id && c.status == LoadStatus::Loaded && c.newest_id != newest)
    else {
        return false;
    };
    conversation.generation = generation;
    let load = conversation_load(state, id);
    effects.push(Effect::load(generation, load));
    false
}

/// A polling tick on the loaded conversation: asks for its newest message.
pub(super) fn poll(state: &AppState, effects: &mut Vec<Effect>) {
    if let Some(c) = state
        .conversation
        .as_ref()
        .filter(|c| c.status == LoadStatus::Loaded)
    {
        effects.push(Effect::PollNewest { id: c.id.clone() });
    }
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;
