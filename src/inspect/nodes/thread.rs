//! The thread node memory reads: Dify's own walk from the newest message, or the tree path
//! from a chosen leaf, and which of its runs have no `workflow_runs` row: archived by Dify, or
//! missing.

use crate::inspect::InspectError;
use crate::inspect::conversation::{conversation_info, load_conversation};
use crate::memory::history::{MAX_ROW_WINDOW, PopRule};
use crate::memory::node_context::{NodeProblem, ThreadTurn, thread_turns};
use crate::memory::thread::ExtractionMode;
use crate::sources::dify::queries::ConversationInfo;
use crate::store::Store;

/// The only app mode with node memory: it needs a conversation id, which workflows lack.
pub const CHATFLOW_MODE: &str = "advanced-chat";

/// A conversation's thread as node memory sees it, at a leaf.
#[derive(Debug, Clone)]
pub struct NodeThread {
    pub info: ConversationInfo,
    /// The chosen leaf; `None`: the newest message, where Dify starts.
    pub leaf: Option<String>,
    /// Oldest first.
    pub turns: Vec<ThreadTurn>,
    /// Thread turns whose run has no `workflow_runs` row and no archive log either.
    pub dangling: Vec<ThreadTurn>,
    /// Thread turns whose run Dify archived out of the database (`workflow_archive_logs`).
    pub archived: Vec<ThreadTurn>,
}

impl NodeThread {
    /// Whether node memory applies: the app is a chatflow. Where the app's row is gone, the
    /// mode the newest turn recorded (`messages.app_mode`) says it instead.
    pub fn is_chatflow(&self) -> bool {
        let recorded = self.turns.last().and_then(|t| t.app_mode.as_deref());
        self.info.app_mode.as_deref().or(recorded) == Some(CHATFLOW_MODE)
    }

    pub fn last_turn(&self) -> Option<&ThreadTurn> {
        self.turns.last()
    }

    pub(super) fn run_ids(&self) -> Vec<String> {
        self.turns
            .iter()
            .map(|t| t.workflow_run_id.clone())
            .collect()
    }

    /// Why a turn's run has no execution to read: archived, or missing.
    pub(super) fn run_problem(&self, run_id: &str) -> Option<NodeProblem> {
        let find = |turns: &[ThreadTurn]| {
            turns
                .iter()
                .find(|t| t.workflow_run_id == run_id)
                .map(|t| (t.message_id.clone(), t.workflow_run_id.clone()))
        };
        find(&self.archived)
            .map(|(message_id, run_id)| NodeProblem::ArchivedRun { message_id, run_id })
            .or_else(|| {
                find(&self.dangling)
                    .map(|(message_id, run_id)| NodeProblem::DanglingRun { message_id, run_id })
            })
    }
}

/// Loads the thread node memory reads: without a leaf, Dify's own query (the newest 500 rows,
/// extraction, placeholder pop); with one, the tree path from that leaf up to its root.
pub async fn load_thread(
    store: &Store,
    conversation_id: &str,
    leaf: Option<&str>,
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Result<NodeThread, InspectError> {
    let (info, rows_newest_first) = match leaf {
        None => {
            let info = conversation_info(store, conversation_id).await?;
            let rows = store
                .history_messages(&info.id, MAX_ROW_WINDOW as i64)
                .await?;
            (info, rows)
        }
        Some(leaf) => {
            let conversation = load_conversation(store, conversation_id).await?;
            let tree = conversation.tree();
            let node = conversation.find(&tree, leaf)?;
            let rows = conversation.path_newest_first(&tree, node);
            (conversation.info, rows)
        }
    };
    let turns = thread_turns(&rows_newest_first, extraction, pop_rule);
    let run_ids: Vec<String> = turns.iter().map(|t| t.workflow_run_id.clone()).collect();
    let existing = store.existing_workflow_runs(&run_ids).await?;
    let gone: Vec<&ThreadTurn> = turns
        .iter()
        .filter(|t| !existing.contains(&t.workflow_run_id.to_lowercase()))
        .collect();
    let gone_ids: Vec<String> = gone.iter().map(|t| t.workflow_run_id.clone()).collect();
    let archived_ids = store.archived_workflow_runs(&gone_ids).await?;
    let (archived, dangling): (Vec<ThreadTurn>, Vec<ThreadTurn>) = gone
        .into_iter()
        .cloned()
        .partition(|t| archived_ids.contains(&t.workflow_run_id.to_lowercase()));
    Ok(NodeThread {
        info,
        leaf: leaf.map(str::to_owned),
        turns,
        dangling,
        archived,
    })
}
