//! A Dify conversation as memscope loads it: the row window `TokenBufferMemory` reads (one
//! conversation or many at once), or every row for its tree, with their files. memscope's own
//! schema keeps its conversations in Dify's tables, so these serve it too.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::queries::ConversationInfo;
use crate::format::quoted_id;
use crate::memory::history::{MAX_ROW_WINDOW, row_window};
use crate::memory::model::{MessageFile, StoredMessage};
use crate::memory::thread_view::memory_rows_newest_first;
use crate::memory::tree::{MessageTree, NodeIndex};
use crate::sources::conversation::SourceError;
use crate::store::{IdMatch, Store};

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

/// The `message_limit` memory is called with, and why: an explicit limit (> 0) wins, then the
/// app's window, then Dify's default of 500 rows.
pub fn effective_window(requested: Option<i64>, app_window: Option<i64>) -> (usize, WindowOrigin) {
    match (requested.filter(|&l| l > 0), app_window.filter(|&l| l > 0)) {
        (Some(limit), _) => (row_window(Some(limit)), WindowOrigin::Requested),
        (None, Some(limit)) => (row_window(Some(limit)), WindowOrigin::App),
        (None, None) => (MAX_ROW_WINDOW, WindowOrigin::DifyDefault),
    }
}

/// What a conversation deleted in Dify is shown with, first.
pub const DELETED_NOTE: &str =
    "deleted in Dify: its API and console no longer show this conversation; shown as stored";

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
pub async fn conversation_info(store: &Store, id: &str) -> Result<ConversationInfo, SourceError> {
    let unknown = || {
        SourceError::not_found(format!(
            "no conversation {} in {}",
            quoted_id(id),
            store.url()
        ))
    };
    let full = match store.resolve_conversation_id(id).await? {
        IdMatch::One(full) => full,
        IdMatch::Unknown => return Err(unknown()),
        IdMatch::Ambiguous(candidates) => {
            return Err(SourceError::ambiguous("conversation", id, candidates));
        }
    };
    let mut info = store.conversation_info(&full).await?.ok_or_else(unknown)?;
    info.answered_rows_only = store.dify_schema().memory_skips_unanswered();
    Ok(info)
}

async fn files_of(store: &Store, rows: &[StoredMessage]) -> Result<Vec<MessageFile>, SourceError> {
    let ids: Vec<String> = rows.iter().map(|m| m.id.clone()).collect();
    Ok(store.message_files(&ids).await?)
}

/// Loads what memory reads for a conversation: the window's rows and their files only, so a
/// 10,000-message conversation costs one indexed LIMIT query and one batched file query.
pub async fn load_window(
    store: &Store,
    id: &str,
    requested_limit: Option<i64>,
) -> Result<WindowedRows, SourceError> {
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
) -> Result<Vec<WindowedRows>, SourceError> {
    let answered_rows_only = store.dify_schema().memory_skips_unanswered();
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

pub async fn load_conversation(store: &Store, id: &str) -> Result<LoadedConversation, SourceError> {
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
