//! The nodes pane of a chatflow conversation: its rows and the selected node's context and
//! timeline.

use std::sync::Arc;

use super::load::LoadStatus;
use crate::inspect::nodes::{
    ContextSource, EmptyState, LatestContext, NodeContextView, NodeSummary, NodeThread, Timeline,
};

/// A node of the nodes pane with the size of its latest context on the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    pub summary: NodeSummary,
    pub latest: Option<LatestContext>,
}

/// The nodes pane of a chatflow conversation at the selected leaf, and the selected node's
/// context and timeline, each loaded by its own job.
#[derive(Debug, Clone)]
pub struct NodesState {
    /// The message whose thread the pane shows; `None`: the newest, as Dify reads it.
    pub leaf: Option<String>,
    pub status: LoadStatus,
    pub generation: u64,
    pub thread: Option<Arc<NodeThread>>,
    pub rows: Vec<NodeRow>,
    pub selected: usize,
    pub source: ContextSource,
    pub context: Option<NodeContextView>,
    pub context_status: LoadStatus,
    pub context_generation: u64,
    pub timeline: Option<Timeline>,
    pub timeline_status: LoadStatus,
    pub timeline_generation: u64,
}

impl NodesState {
    pub fn new(leaf: Option<String>, generation: u64) -> NodesState {
        NodesState {
            leaf,
            status: LoadStatus::Loading,
            generation,
            thread: None,
            rows: Vec::new(),
            selected: 0,
            source: ContextSource::default(),
            context: None,
            context_status: LoadStatus::Loading,
            context_generation: 0,
            timeline: None,
            timeline_status: LoadStatus::Loading,
            timeline_generation: 0,
        }
    }

    pub fn selected_node(&self) -> Option<&NodeSummary> {
        self.rows.get(self.selected).map(|row| &row.summary)
    }

    /// Why node memory does not apply to this conversation, when it does not.
    pub fn empty(&self) -> Option<EmptyState> {
        let thread = self.thread.as_ref()?;
        if !thread.is_chatflow() {
            return Some(EmptyState::NotAChatflow {
                app_mode: thread.info.app_mode.clone(),
            });
        }
        thread.turns.is_empty().then_some(EmptyState::NoThreadRuns)
    }

    pub fn is_loading(&self) -> bool {
        self.status.is_loading()
            || (self.selected_node().is_some()
                && (self.context_status.is_loading() || self.timeline_status.is_loading()))
    }
}
