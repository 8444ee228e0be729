//! The tree screen: an open conversation's tree, whatever its source's tree is made of (an ADK
//! session's invocations and the agents' events in them, an advanced session's branches, a
//! Langflow session's log as one path), with the path the model sees marked. It draws what
//! `memscope thread` prints, so both front ends show one tree.

use std::sync::Arc;

use super::load::LoadStatus;
use super::screen::Screen;
use super::screen_unit::{Around, ScreenUnit};
use crate::inspect::tree::{ThreadDocument, ThreadNode};
use crate::sources::opened::ConversationKey;
use crate::tui::keymap::KeyContext;

/// The tree of the conversation `key` names, as it loads and once loaded.
#[derive(Debug, Clone)]
pub struct TreeScreenState {
    pub key: ConversationKey,
    pub status: LoadStatus,
    pub document: Option<Arc<ThreadDocument>>,
    pub generation: u64,
    /// The selected node, by its place in the document's nodes.
    pub selected: usize,
}

impl TreeScreenState {
    pub fn new(key: ConversationKey, generation: u64) -> TreeScreenState {
        TreeScreenState {
            key,
            status: LoadStatus::Loading,
            document: None,
            generation,
            selected: 0,
        }
    }

    pub fn nodes(&self) -> &[ThreadNode] {
        self.document.as_ref().map_or(&[], |d| &d.nodes)
    }

    pub fn selected_node(&self) -> Option<&ThreadNode> {
        self.nodes().get(self.selected)
    }

    /// The newest node on the path the model sees: where the conversation goes on from.
    pub fn last_on_path(&self) -> Option<usize> {
        self.nodes().iter().rposition(|node| node.on_thread)
    }
}

impl ScreenUnit for TreeScreenState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        KeyContext::Tree
    }

    fn busy(&self) -> bool {
        self.status.is_loading()
    }

    /// The open session's id, then the tree.
    fn breadcrumbs(&self, around: &Around) -> Vec<String> {
        around
            .open_session
            .map_or_else(Vec::new, |id| vec![id.to_owned(), "tree".to_owned()])
    }

    /// The session it is the tree of.
    fn back_to(&self) -> Option<Screen> {
        Some(Screen::Session)
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        let node = self.selected_node()?;
        Some(("node id", node.id.clone()))
    }
}
