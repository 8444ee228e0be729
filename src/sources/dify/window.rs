//! A Dify conversation as memscope loads it: the row window `TokenBufferMemory` reads (one
//! conversation or many at once), or every row for its tree, with their files, in the neutral
//! types of the turn-tree capability (`sources/turn_trees.rs`). memscope's own schema keeps its
//! conversations in Dify's tables, so these serve it too.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::queries::ConversationInfo;
use crate::format::quoted_id;
use crate::memory::history::{MAX_ROW_WINDOW, row_window};
use crate::memory::model::{MessageFile, StoredMessage};
use crate::sources::conversation::SourceError;
use crate::sources::turn_trees::{RowWindows, TurnConversation, TurnInfo, TurnWindow};
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
fn effective_window(requested: Option<i64>, app_window: Option<i64>) -> (usize, WindowOrigin) {
    match (requested.filter(|&l| l > 0), app_window.filter(|&l| l > 0)) {
        (Some(limit), _) => (row_window(Some(limit)), WindowOrigin::Requested),
        (None, Some(limit)) => (row_window(Some(limit)), WindowOrigin::App),
        (None, None) => (MAX_ROW_WINDOW, WindowOrigin::DifyDefault),
    }
}

/// The row windows of a conversation whose app sets `app_window`, when `requested` rows are
/// asked for: the data a view picks from as its user honours the app's window or not.
fn row_windows(requested: Option<i64>, app_window: Option<i64>) -> RowWindows {
    RowWindows {
        app_honoured: effective_window(requested, app_window).0,
        app_set_aside: effective_window(requested, None).0,
    }
}

/// What a conversation deleted in Dify is shown with, first.
pub const DELETED_NOTE: &str =
    "deleted in Dify: its API and console no longer show this conversation; shown as stored";

impl From<ConversationInfo> for TurnInfo {
    fn from(info: ConversationInfo) -> Self {
        TurnInfo {
            id: info.id,
            name: info.name,
            mode: info.mode,
            app_id: info.app_id,
            app_mode: info.app_mode,
            is_deleted: info.is_deleted,
            app_window: info.memory_window,
            answered_rows_only: info.answered_rows_only,
        }
    }
}

/// The conversation `id` names: a whole id or a unique prefix of one (the list shows the first
/// eight characters), for the CLI and the TUI alike.
pub async fn conversation_info(store: &Store, id: &str) -> Result<TurnInfo, SourceError> {
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
    Ok(info.into())
}

async fn files_of(store: &Store, rows: &[StoredMessage]) -> Result<Vec<MessageFile>, SourceError> {
    let ids: Vec<String> = rows.iter().map(|m| m.id.clone()).collect();
    Ok(store.message_files(&ids).await?)
}

/// Loads what memory reads for a conversation, and where its window comes from: the window's
/// rows and their files only, so a 10,000-message conversation costs one indexed LIMIT query
/// and one batched file query.
pub async fn load_window(
    store: &Store,
    id: &str,
    requested_limit: Option<i64>,
) -> Result<(TurnWindow, WindowOrigin), SourceError> {
    let info = conversation_info(store, id).await?;
    let (window, origin) = effective_window(requested_limit, info.app_window);
    let rows_newest_first = store.history_messages(&info.id, window as i64).await?;
    let files = files_of(store, &rows_newest_first).await?;
    let loaded = TurnWindow {
        info,
        window,
        rows_newest_first,
        files,
    };
    Ok((loaded, origin))
}

/// [`load_window`] of many conversations at once, in the order of `ids` (those that do not
/// exist left out): one query for their infos and one for their rows (per 256
/// conversations), then their files in batches, however many conversations a page lists.
pub async fn load_windows(
    store: &Store,
    ids: &[String],
    requested_limit: Option<i64>,
) -> Result<Vec<TurnWindow>, SourceError> {
    let answered_rows_only = store.dify_schema().memory_skips_unanswered();
    let mut infos: FxHashMap<String, ConversationInfo> = store
        .conversation_infos(ids)
        .await?
        .into_iter()
        .map(|info| (info.id.clone(), info))
        .collect();
    let windows: Vec<(TurnInfo, usize)> = ids
        .iter()
        .filter_map(|id| infos.remove(id))
        .map(|mut info| {
            info.answered_rows_only = answered_rows_only;
            let (window, _) = effective_window(requested_limit, info.memory_window);
            (info.into(), window)
        })
        .collect();
    // One query for all: each conversation's own window is cut from the widest.
    let widest = windows.iter().map(|(_, window)| *window).max().unwrap_or(0);
    let found: Vec<String> = windows.iter().map(|(info, _)| info.id.clone()).collect();
    let mut rows = store.history_windows(&found, widest as i64).await?;
    let windows: Vec<TurnWindow> = windows
        .into_iter()
        .map(|(info, window)| {
            let mut rows_newest_first = rows.remove(&info.id).unwrap_or_default();
            rows_newest_first.truncate(window);
            TurnWindow {
                info,
                window,
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

/// A whole conversation, with the row windows memory reads of it when `requested` rows are
/// asked for.
pub async fn load_conversation(
    store: &Store,
    id: &str,
    requested: Option<i64>,
) -> Result<TurnConversation, SourceError> {
    let info = conversation_info(store, id).await?;
    let rows = store.all_messages(&info.id).await?;
    let files = store.conversation_files(&info.id).await?;
    let windows = row_windows(requested, info.app_window);
    Ok(TurnConversation {
        info,
        rows,
        files,
        windows,
    })
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

    #[test]
    fn setting_the_apps_window_aside_leaves_a_request_alone() {
        assert_eq!(
            row_windows(Some(10), Some(20)),
            RowWindows {
                app_honoured: 10,
                app_set_aside: 10
            }
        );
        assert_eq!(
            row_windows(None, Some(20)),
            RowWindows {
                app_honoured: 20,
                app_set_aside: 500
            }
        );
    }
}
