//! A conversation as memscope loads it, and its thread: Dify's extraction, the true tree path,
//! and where the two differ.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::{AmbiguousId, InspectError};
use crate::memory::history::{MAX_ROW_WINDOW, row_window};
use crate::memory::model::{MessageFile, StoredMessage, ThreadNode};
use crate::memory::thread::{ExtractionMode, ThreadComparison, compare_with_tree, extract_thread};
use crate::memory::tree::{MessageTree, NodeIndex};
use crate::sources::dify::queries::ConversationInfo;
use crate::store::Store;

/// Where the row window in effect comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowOrigin {
    /// `--message-limit` or the config's `history.message_limit`.
    Requested,
    /// The app's memory window (`MemoryConfig.window.size`).
    App,
    /// Neither: Dify's 500.
    DifyDefault,
}

/// The `message_limit` memory is called with, and why: an explicit limit (> 0) wins, then the
/// app's window, then Dify's default of 500 rows.
pub fn effective_window(requested: Option<i64>, app_window: Option<i64>) -> (usize, WindowOrigin) {
    match (requested.filter(|&l| l > 0), app_window.filter(|&l| l > 0)) {
        (Some(limit), _) => (row_window(Some(limit)), WindowOrigin::Requested),
        (None, Some(limit)) => (row_window(Some(limit)), WindowOrigin::App),
        (None, None) => (MAX_ROW_WINDOW, WindowOrigin::DifyDefault),
    }
}

/// The newest rows of a conversation, as `TokenBufferMemory` queries them, with their files.
#[derive(Debug, Clone)]
pub struct WindowedRows {
    pub info: ConversationInfo,
    pub window: usize,
    pub window_source: WindowOrigin,
    /// At most `window` rows, newest first.
    pub rows_newest_first: Vec<StoredMessage>,
    pub files: Vec<MessageFile>,
}

/// The conversation `id` names: a whole id or a unique prefix of one (the list shows the first
/// eight characters), for the CLI and the TUI alike.
pub(crate) async fn conversation_info(
    store: &Store,
    id: &str,
) -> Result<ConversationInfo, InspectError> {
    let unknown = || InspectError::UnknownConversation {
        id: id.to_owned(),
        url: store.url().to_owned(),
    };
    let found = store.resolve_conversation_id(id).await?;
    let Some(full) = AmbiguousId::check("conversation", id, found)? else {
        return Err(unknown());
    };
    let mut info = store.conversation_info(&full).await?.ok_or_else(unknown)?;
    info.answered_rows_only = store.profile().answered_rows_only();
    Ok(info)
}

async fn files_of(store: &Store, rows: &[StoredMessage]) -> Result<Vec<MessageFile>, InspectError> {
    let ids: Vec<String> = rows.iter().map(|m| m.id.clone()).collect();
    Ok(store.message_files(&ids).await?)
}

/// Loads what memory reads for a conversation: the window's rows and their files only, so a
/// 10,000-message conversation costs one indexed LIMIT query and one batched file query.
pub async fn load_window(
    store: &Store,
    id: &str,
    requested_limit: Option<i64>,
) -> Result<WindowedRows, InspectError> {
    let info = conversation_info(store, id).await?;
    let (window, window_source) = effective_window(requested_limit, info.memory_window);
    let rows_newest_first = store.history_messages(&info.id, window as i64).await?;
    let files = files_of(store, &rows_newest_first).await?;
    Ok(WindowedRows {
        info,
        window,
        window_source,
        rows_newest_first,
        files,
    })
}

/// [`load_window`] of many conversations at once, in the order of `ids` (those that do not
/// exist left out): one query for their infos and one for their rows (per 256
/// conversations), then their files in batches, however many conversations a page lists.
pub async fn load_windows(
    store: &Store,
    ids: &[String],
    requested_limit: Option<i64>,
) -> Result<Vec<WindowedRows>, InspectError> {
    let answered_rows_only = store.profile().answered_rows_only();
    let mut infos: FxHashMap<String, ConversationInfo> = store
        .conversation_infos(ids)
        .await?
        .into_iter()
        .map(|info| (info.id.clone(), info))
        .collect();
    let windows: Vec<(ConversationInfo, usize, WindowOrigin)> = ids
        .iter()
        .filter_map(|id| infos.remove(id))
        .map(|mut info| {
            info.answered_rows_only = answered_rows_only;
            let (window, source) = effective_window(requested_limit, info.memory_window);
            (info, window, source)
        })
        .collect();
    // One query for all: each conversation's own window is cut from the widest.
    let widest = windows
        .iter()
        .map(|(_, window, _)| *window)
        .max()
        .unwrap_or(0);
    let found: Vec<String> = windows.iter().map(|(info, ..)| info.id.clone()).collect();
    let mut rows = store.history_windows(&found, widest as i64).await?;
    let windows: Vec<WindowedRows> = windows
        .into_iter()
        .map(|(info, window, window_source)| {
            let mut rows_newest_first = rows.remove(&info.id).unwrap_or_default();
            rows_newest_first.truncate(window);
            WindowedRows {
                info,
                window,
                window_source,
                rows_newest_first,
                files: Vec::new(),
            }
        })
        .collect();
    let message_ids: Vec<String> = windows
        .iter()
        .flat_map(|w| w.rows_newest_first.iter().map(|m| m.id.clone()))
        .collect();
    let mut files_by_message: FxHashMap<String, Vec<MessageFile>> = FxHashMap::default();
    for file in store.message_files(&message_ids).await? {
        files_by_message
            .entry(file.message_id.clone())
            .or_default()
            .push(file);
    }
    Ok(windows
        .into_iter()
        .map(|mut window| {
            window.files = window
                .rows_newest_first
                .iter()
                .filter_map(|m| files_by_message.remove(&m.id))
                .flatten()
                .collect();
            // As the single conversation's file query orders them.
            window.files.sort_by(|a, b| a.message_id.cmp(&b.message_id));
            window
        })
        .collect())
}

/// A whole conversation: every row (for the tree) and every file.
#[derive(Debug, Clone)]
pub struct LoadedConversation {
    pub info: ConversationInfo,
    /// Oldest first, ties broken by id (the reverse of the history query's order).
    pub rows: Vec<StoredMessage>,
    pub files: Vec<MessageFile>,
}

pub async fn load_conversation(
    store: &Store,
    id: &str,
) -> Result<LoadedConversation, InspectError> {
    let info = conversation_info(store, id).await?;
    let rows = store.all_messages(&info.id).await?;
    let files = files_of(store, &rows).await?;
    Ok(LoadedConversation { info, rows, files })
}

impl LoadedConversation {
    pub fn tree(&self) -> MessageTree {
        MessageTree::build(&self.rows)
    }

    /// The newest `window` rows, newest first: what the history query would return (only
    /// answered rows on a schema before regeneration threads, as Dify's query then read).
    pub fn window_newest_first(&self, window: usize) -> Vec<StoredMessage> {
        memory_rows_newest_first(&self.rows, self.info.answered_rows_only, window)
    }

    pub fn find(&self, tree: &MessageTree, id: &str) -> Result<NodeIndex, InspectError> {
        tree.find(id).ok_or_else(|| InspectError::UnknownMessage {
            id: id.to_owned(),
            conversation: self.info.id.clone(),
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

/// The newest `window` of `rows_oldest_first` that memory reads, newest first: every row, or
/// only the answered ones where Dify's history query filtered `answer != ''`.
pub fn memory_rows_newest_first(
    rows_oldest_first: &[StoredMessage],
    answered_only: bool,
    window: usize,
) -> Vec<StoredMessage> {
    rows_oldest_first
        .iter()
        .rev()
        .filter(|row| !answered_only || !row.answer.is_empty())
        .take(window)
        .cloned()
        .collect()
}

/// The newest `window` rows memory reads, as references into `rows_oldest_first`: what
/// [`memory_rows_newest_first`] returns, without copying a row.
fn memory_row_refs_newest_first(
    rows_oldest_first: &[StoredMessage],
    answered_only: bool,
    window: usize,
) -> Vec<&StoredMessage> {
    rows_oldest_first
        .iter()
        .rev()
        .filter(|row| !answered_only || !row.answer.is_empty())
        .take(window)
        .collect()
}

/// Dify's thread (`extracted`, indices into `window_newest_first`) against the tree path from
/// `leaf`. Where memory reads only answered rows (before regeneration threads) the rows its
/// query skipped for an empty answer are no divergence: the thread is the path's answered rows.
pub fn compare_thread<N: ThreadNode>(
    rows_oldest_first: &[StoredMessage],
    answered_rows_only: bool,
    window_newest_first: &[N],
    extracted: &[usize],
    tree: &MessageTree,
    leaf: NodeIndex,
) -> ThreadComparison {
    if answered_rows_only {
        let path = tree.path_to_root(leaf);
        let answered_path = path
            .nodes
            .iter()
            .map(|&node| &rows_oldest_first[tree.row(node)])
            .filter(|row| !row.answer.is_empty())
            .map(|row| row.id.as_str());
        let thread = extracted
            .iter()
            .rev()
            .map(|&row| window_newest_first[row].node_id());
        if answered_path.eq(thread) {
            return ThreadComparison::Same;
        }
    }
    compare_with_tree(window_newest_first, extracted, tree, leaf)
}

/// Which thread a view marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadMode {
    /// Dify's extraction as main does it (bug #39031 included).
    Dify,
    /// Dify's extraction with PR #39032's fix.
    Fixed,
    /// The true path from the chosen leaf up to its root.
    Tree,
}

impl ThreadMode {
    /// What the thread is, in the words the CLI and the TUI show.
    pub fn describe(self) -> &'static str {
        match self {
            ThreadMode::Dify => "Dify's extraction",
            ThreadMode::Fixed => "Dify's extraction with the parent fix",
            ThreadMode::Tree => "true tree path",
        }
    }
}

impl WindowOrigin {
    /// Where the row window comes from, in the words the CLI and the TUI show.
    pub fn describe(self) -> &'static str {
        match self {
            WindowOrigin::Requested => "requested",
            WindowOrigin::App => "the app's window",
            WindowOrigin::DifyDefault => "Dify's default",
        }
    }
}

/// A conversation's thread seen both ways.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadView {
    pub mode: ThreadMode,
    /// The message the tree path ends at: the chosen leaf, else the newest message.
    pub leaf: Option<String>,
    pub window: usize,
    /// The marked thread, oldest first.
    pub thread: Vec<String>,
    /// Dify's extraction over the window (in the mode's flavour: Fixed for `fixed`), oldest first.
    pub extracted: Vec<String>,
    /// The tree path from the root to the leaf.
    pub tree_path: Vec<String>,
    pub comparison: ThreadComparison,
    pub comparison_text: String,
    pub anomalies: Vec<String>,
}

/// A conversation's thread as tree nodes: what [`ThreadView`] says, without a string per node,
/// so a view can recompute it on every key of a 50,000-message conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadNodes {
    pub mode: ThreadMode,
    /// The node the tree path ends at: the chosen leaf, else the newest row's.
    pub leaf: Option<NodeIndex>,
    pub window: usize,
    /// Dify's extraction over the window (in the mode's flavour), oldest first.
    pub extracted: Vec<NodeIndex>,
    /// The tree path from the root to the leaf.
    pub tree_path: Vec<NodeIndex>,
    pub comparison: ThreadComparison,
}

impl ThreadNodes {
    /// The marked thread, oldest first.
    pub fn thread(&self) -> &[NodeIndex] {
        match self.mode {
            ThreadMode::Tree => &self.tree_path,
            ThreadMode::Dify | ThreadMode::Fixed => &self.extracted,
        }
    }
}

/// Derives the thread's nodes. `leaf` defaults to the newest row: the message Dify starts from.
pub fn thread_nodes(
    conversation: &LoadedConversation,
    tree: &MessageTree,
    leaf: Option<NodeIndex>,
    mode: ThreadMode,
    window: usize,
) -> ThreadNodes {
    let window_rows = memory_row_refs_newest_first(
        &conversation.rows,
        conversation.info.answered_rows_only,
        window,
    );
    let extraction = match mode {
        ThreadMode::Fixed => ExtractionMode::Fixed,
        ThreadMode::Dify | ThreadMode::Tree => ExtractionMode::Dify,
    };
    let extracted_rows = extract_thread(&window_rows, extraction);
    let extracted = extracted_rows
        .iter()
        .rev()
        .filter_map(|&row| tree.find(&window_rows[row].id))
        .collect();
    let leaf = leaf.or_else(|| tree.find(&window_rows.first()?.id));
    let tree_path = leaf
        .map(|leaf| tree.path_to_root(leaf).nodes)
        .unwrap_or_default();
    let comparison = match leaf {
        Some(leaf) => compare_thread(
            &conversation.rows,
            conversation.info.answered_rows_only,
            &window_rows,
            &extracted_rows,
            tree,
            leaf,
        ),
        None => ThreadComparison::Same,
    };
    ThreadNodes {
        mode,
        leaf,
        window,
        extracted,
        tree_path,
        comparison,
    }
}

/// Derives the thread view. `leaf` defaults to the newest row: the message Dify starts from.
pub fn thread_view(
    conversation: &LoadedConversation,
    tree: &MessageTree,
    leaf: Option<NodeIndex>,
    mode: ThreadMode,
    window: usize,
) -> ThreadView {
    let nodes = thread_nodes(conversation, tree, leaf, mode, window);
    let ids = |nodes: &[NodeIndex]| -> Vec<String> {
        nodes.iter().map(|&node| tree.id(node).to_owned()).collect()
    };
    ThreadView {
        mode,
        leaf: nodes.leaf.map(|l| tree.id(l).to_owned()),
        window,
        thread: ids(nodes.thread()),
        extracted: ids(&nodes.extracted),
        tree_path: ids(&nodes.tree_path),
        comparison_text: nodes.comparison.to_string(),
        comparison: nodes.comparison,
        anomalies: tree.anomalies().iter().map(ToString::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_precedence_is_request_then_app_then_500() {
        assert_eq!(
            effective_window(Some(10), Some(20)),
            (10, WindowOrigin::Requested)
        );
        assert_eq!(effective_window(Some(0), Some(20)), (20, WindowOrigin::App));
        assert_eq!(effective_window(None, Some(9999)), (500, WindowOrigin::App));
        assert_eq!(
            effective_window(Some(-1), None),
            (500, WindowOrigin::DifyDefault)
        );
    }
}
