//! The turn-tree capability: a source whose conversations are question-and-answer rows whose
//! parent links form regeneration trees (Dify's, and memscope's own schema in Dify's tables)
//! loads a conversation whole, for its tree, or the newest rows its memory reads (its row
//! window), of one conversation or of a page's at once. The TUI's conversation screen and `trim
//! --conversation` read them through it; the thread over those rows is `memory/thread_view.rs`.
//! How many rows memory reads is the source's rule: it comes back as data, never as a function.

use super::conversation::{SourceError, SourceFuture};
use crate::format::quoted_id;
use crate::memory::model::{MessageFile, StoredMessage};
use crate::memory::thread_view::memory_rows_newest_first;
use crate::memory::tree::{MessageTree, NodeIndex};
use crate::store::Store;

/// The conversations of a source whose rows form regeneration trees.
pub trait TurnTrees: Sync {
    /// The conversation `id` names (a whole id or a unique prefix): every row and file, and the
    /// row windows memory reads of it when `requested` rows are asked for (0 or less: none).
    fn conversation<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        requested: Option<i64>,
    ) -> SourceFuture<'a, TurnConversation>;

    /// What memory reads of the conversation `id` names: its window's rows and their files.
    fn window<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        requested: Option<i64>,
    ) -> SourceFuture<'a, TurnWindow>;

    /// [`TurnTrees::window`] of many conversations at once, in the order of `ids`, those that do
    /// not exist left out.
    fn windows<'a>(
        &'a self,
        store: &'a Store,
        ids: &'a [String],
        requested: Option<i64>,
    ) -> SourceFuture<'a, Vec<TurnWindow>>;
}

/// A conversation as the views name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInfo {
    pub id: String,
    pub name: String,
    /// The conversation's mode; a row answered in another says so.
    pub mode: String,
    pub app_id: String,
    /// The app's mode; `None` where the app's row is gone.
    pub app_mode: Option<String>,
    /// Deleted in the app, which hides it.
    pub is_deleted: bool,
    /// The app's own memory window, when it sets one.
    pub app_window: Option<i64>,
    /// Memory reads only the answered rows (an older schema's history query).
    pub answered_rows_only: bool,
}

/// How many rows memory reads of a conversation under the limit asked for, as its source rules:
/// with the app's own window honoured, and with it set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowWindows {
    pub app_honoured: usize,
    pub app_set_aside: usize,
}

impl RowWindows {
    pub fn rows(&self, honour_app: bool) -> usize {
        if honour_app {
            self.app_honoured
        } else {
            self.app_set_aside
        }
    }
}

/// A whole conversation: every row (for the tree) and every file.
#[derive(Debug, Clone)]
pub struct TurnConversation {
    pub info: TurnInfo,
    /// Oldest first, ties broken by id (the reverse of the history query's order).
    pub rows: Vec<StoredMessage>,
    pub files: Vec<MessageFile>,
    pub windows: RowWindows,
}

impl TurnConversation {
    pub fn tree(&self) -> MessageTree {
        MessageTree::build(&self.rows)
    }

    /// The newest `window` rows, newest first: what the history query would return.
    pub fn window_newest_first(&self, window: usize) -> Vec<StoredMessage> {
        memory_rows_newest_first(&self.rows, self.info.answered_rows_only, window)
    }

    pub fn find(&self, tree: &MessageTree, id: &str) -> Result<NodeIndex, SourceError> {
        tree.find(id).ok_or_else(|| {
            SourceError::not_found(format!(
                "no message {} in conversation {}",
                quoted_id(id),
                self.info.id
            ))
            .with_hint(format!(
                "`memscope thread {}` lists its messages",
                self.info.id
            ))
        })
    }

    /// The rows of the true tree path from `leaf` up to its root, newest first.
    pub fn path_newest_first(&self, tree: &MessageTree, leaf: NodeIndex) -> Vec<StoredMessage> {
        tree.path_to_root(leaf)
            .nodes
            .iter()
            .rev()
            .map(|&node| self.rows[tree.row(node)].clone())
            .collect()
    }
}

/// The newest rows of a conversation, as its memory queries them, with their files.
#[derive(Debug, Clone)]
pub struct TurnWindow {
    pub info: TurnInfo,
    pub window: usize,
    /// At most `window` rows, newest first.
    pub rows_newest_first: Vec<StoredMessage>,
    pub files: Vec<MessageFile>,
}
