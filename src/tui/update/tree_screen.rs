//! `t` in an open session: its tree as `memscope thread` reads it (in the session's scope and
//! view), loaded on a worker; the moving keys choose a node, `L` goes to the newest node the model
//! is sent, enter shows a node whole, esc goes back to the session.

use std::sync::Arc;

use super::effect::{Effect, Load};
use super::selection::moved;
use super::session_effects::SessionLoad;
use crate::format::one_line;
use crate::inspect::tree::{ThreadDocument, ThreadNode};
use crate::tui::action::Action;
use crate::tui::state::tree_screen::TreeScreenState;
use crate::tui::state::{AppState, Detail, LoadStatus, Overlay, Screen};

/// Opens the tree of the open session, in the view it shows.
pub(super) fn open(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(session) = state.session.as_ref() else {
        return;
    };
    let key = session.key.clone();
    let generation = state.generation();
    state.tree = Some(TreeScreenState::new(key.clone(), generation));
    state.screen = Screen::Tree;
    state.conversations_screen = Screen::Tree;
    effects.push(Effect::load(
        generation,
        Load::Sessions(SessionLoad::Tree { key }),
    ));
}

pub(super) fn action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let Some(tree) = state.tree.as_mut() else {
        state.screen = Screen::Conversations;
        return;
    };
    if let Some(selected) = moved(tree.selected, tree.nodes().len(), action) {
        tree.selected = selected;
        return;
    }
    match action {
        Action::Back => super::back::go_back(state),
        Action::JumpLatest => match tree.last_on_path() {
            Some(newest) => tree.selected = newest,
            None => state.message = Some("the model is sent no node of this tree".to_owned()),
        },
        Action::Refresh => {
            let key = tree.key.clone();
            let generation = state.generation();
            if let Some(tree) = state.tree.as_mut() {
                tree.generation = generation;
                tree.status = LoadStatus::Loading;
            }
            effects.push(Effect::load(
                generation,
                Load::Sessions(SessionLoad::Tree { key }),
            ));
        }
        _ => {}
    }
}

/// The tree arrived (or could not be read): the selection stays where it was, within the nodes.
pub(super) fn loaded(state: &mut AppState, result: Result<Arc<ThreadDocument>, String>) -> bool {
    let Some(tree) = state.tree.as_mut() else {
        return false;
    };
    let selected = tree.selected;
    tree.status.settle(&mut tree.document, result);
    let count = tree.nodes().len();
    tree.selected = selected.min(count.saturating_sub(1));
    true
}

/// The selected node whole: where it sits, whether the model is sent it, its line uncut and
/// everything its source says of it.
pub(super) fn detail(tree: &TreeScreenState) -> Option<Detail> {
    let node = tree.selected_node()?;
    Some(Detail {
        title: format!(" {} ", one_line(&node.id, 60)),
        text: node_whole(node),
        scroll: 0,
        under: Box::new(Overlay::None),
        comparisons: Vec::new(),
    })
}

fn node_whole(node: &ThreadNode) -> String {
    let mut text = format!("id      {}\n", node.id);
    if let Some(parent) = &node.parent {
        text += &format!("parent  {parent}\n");
    }
    if let Some(group) = &node.group {
        text += &format!("in      {group}\n");
    }
    text += match node.on_thread {
        true => "on the path the model is sent\n",
        false => "not sent to the model\n",
    };
    text += &format!("\n{}\n", node.text);
    if !node.extra.is_empty() {
        let extra = serde_json::to_string_pretty(&node.extra).unwrap_or_default();
        text += &format!("\n{extra}\n");
    }
    text
}
