//! The thread node memory reads: Dify's own walk from the newest message, or the tree path
//! from a chosen leaf, and which of its runs have no `workflow_runs` row.

use crate::inspect::InspectError;
use crate::inspect::conversation::{conversation_info, load_conversation};
use crate::memory::history::{MAX_ROW_WINDOW, PopRule};
use crate::memory::node_context::{NodeProblem, ThreadTurn, thread_turns};
use crate::memory::thread::ExtractionMode;
use crate::store::{ConversationInfo, Store};

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
    /// Thread turns whose run has no `workflow_runs` row.
    pub dangling: Vec<ThreadTurn>,
}

impl NodeThread {
    pub fn is_chatflow(&self) -> bool {
        self.info.app_mode.as_deref() == Some(CHATFLOW_MODE)
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

    pub(super) fn dangling_problem(&self, run_id: &str) -> Option<NodeProblem> {
        self.dangling
            .iter()
            .find(|t| t.workflow_run_id == run_id)
            .map(|t| NodeProblem::DanglingRun {
                message_id: t.message_id.clone(),
                run_id: t.workflow_run_id.clone(),
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
    let dangling = turns
        .iter()
        .filter(|t| !existing.contains(&t.workflow_run_id.to_lowercase()))
        .cloned()
        .collect();
    Ok(NodeThread {
        info,
        leaf: leaf.map(str::to_owned),
        turns,
        dangling,
    })
}
