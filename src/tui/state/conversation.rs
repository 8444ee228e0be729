//! An open conversation: the loaded message tree, its layout, the selection and its thread,
//! and the demo of Dify's extraction.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::load::LoadStatus;
use super::nodes::NodesState;
use super::screen::Screen;
use super::screen_unit::{Around, ScreenUnit};
use super::search::MessageSearch;
use super::tree_view::{ThreadMarks, TreeLines};
use crate::format::short_id;
use crate::memory::budget_view::BudgetView;
use crate::memory::model::StoredMessage;
use crate::memory::thread::ExtractionTrace;
use crate::memory::thread_view::{ThreadMode, ThreadNodes};
use crate::memory::tree::{MessageTree, NodeIndex};
use crate::sources::opened::ConversationKey;
use crate::sources::turn_trees::TurnConversation;
use crate::tui::keymap::KeyContext;

/// A loaded conversation with its tree, shared with background jobs.
#[derive(Debug)]
pub struct Loaded {
    pub conversation: TurnConversation,
    pub tree: MessageTree,
    /// The tree's lines with nothing collapsed: built with the tree, off the UI thread.
    pub expanded_lines: Arc<TreeLines>,
}

impl Loaded {
    pub fn new(conversation: TurnConversation) -> Loaded {
        let tree = conversation.tree();
        let expanded_lines = Arc::new(TreeLines::build(&tree, |_| false));
        Loaded {
            conversation,
            tree,
            expanded_lines,
        }
    }

    pub fn message(&self, node: NodeIndex) -> &StoredMessage {
        &self.conversation.rows[self.tree.row(node)]
    }

    /// The rows memory would load if `leaf` were the newest message: in Dify's modes, the
    /// rows up to it, newest first, at most `window`; in tree mode, the tree path alone.
    pub fn budget_rows(
        &self,
        leaf: NodeIndex,
        mode: ThreadMode,
        window: usize,
    ) -> Vec<StoredMessage> {
        match mode {
            ThreadMode::Tree => self.conversation.path_newest_first(&self.tree, leaf),
            ThreadMode::Dify | ThreadMode::Fixed => self.conversation.rows[..=self.tree.row(leaf)]
                .iter()
                .rev()
                .take(window)
                .cloned()
                .collect(),
        }
    }
}

/// The extraction demo: Dify's walk replayed one examined row at a time.
#[derive(Debug, Clone)]
pub struct DemoState {
    pub trace: ExtractionTrace,
    /// Steps shown so far (1 = the first row examined).
    pub shown: usize,
}

impl DemoState {
    pub fn current(&self) -> Option<&crate::memory::thread::ExtractionStep> {
        self.trace.steps.get(self.shown.checked_sub(1)?)
    }

    /// Ids kept so far.
    pub fn thread_so_far(&self) -> impl Iterator<Item = &str> {
        self.trace.steps[..self.shown]
            .iter()
            .filter(|s| s.decision != crate::memory::thread::StepDecision::Skipped)
            .map(|s| s.id.as_str())
    }
}

/// The open conversation.
#[derive(Debug, Clone)]
pub struct ConversationState {
    pub id: String,
    pub status: LoadStatus,
    pub loaded: Option<Arc<Loaded>>,
    pub generation: u64,
    pub selected: NodeIndex,
    /// Position of the selection among the visible tree lines.
    pub cursor: usize,
    pub collapsed: FxHashSet<NodeIndex>,
    /// The visible tree lines under `collapsed`, rebuilt only when it changes.
    pub lines: Arc<TreeLines>,
    pub mode: ThreadMode,
    pub thread: Option<ThreadNodes>,
    /// Each node's mark: on the thread, or on one side of the divergence.
    pub marks: ThreadMarks,
    pub budget: Option<BudgetView>,
    pub budget_status: LoadStatus,
    pub budget_generation: u64,
    pub demo: Option<DemoState>,
    /// The newest row when last loaded: polling compares against it.
    pub newest_id: Option<String>,
    /// Open when the nodes pane is shown instead of the tree.
    pub nodes: Option<NodesState>,
    /// A search in the messages (`/`), over the tree's lines with nothing collapsed.
    pub search: Option<MessageSearch>,
    /// Where esc goes: the list, or the doctor's findings it was opened from.
    pub back_to: Screen,
}

impl ConversationState {
    pub fn new(
        id: String,
        generation: u64,
        mode: ThreadMode,
        back_to: Screen,
    ) -> ConversationState {
        ConversationState {
            id,
            status: LoadStatus::Loading,
            loaded: None,
            generation,
            selected: 0,
            cursor: 0,
            collapsed: FxHashSet::default(),
            lines: Arc::default(),
            mode,
            thread: None,
            marks: ThreadMarks::default(),
            budget: None,
            budget_status: LoadStatus::Loading,
            budget_generation: 0,
            demo: None,
            newest_id: None,
            nodes: None,
            search: None,
            back_to,
        }
    }

    /// Whether row `id` reaches the model by the cut the budget panel shows: its question or
    /// answer below the cut, or the newest row standing for the request itself. `None` while
    /// the budget is counted, and during the extraction demo, which marks its own walk. What
    /// the tree marks (● sent, ○ not), as a session's list does.
    pub fn is_fed(&self, id: &str) -> Option<bool> {
        if self.demo.is_some() || self.budget_status != LoadStatus::Loaded {
            return None;
        }
        let budget = self.budget.as_ref()?;
        let history = &budget.history;
        Some(
            history.popped.as_deref() == Some(id)
                || history
                    .messages
                    .iter()
                    .skip(budget.dropped())
                    .any(|message| message.source_id == id),
        )
    }

    pub fn is_collapsed(&self, node: NodeIndex) -> bool {
        self.collapsed.contains(&node)
    }

    /// Rebuilds the visible lines after `collapsed` changed (nothing collapsed: the loaded
    /// tree's own lines, shared).
    pub fn relayout(&mut self, loaded: &Loaded) {
        self.lines = if self.collapsed.is_empty() {
            loaded.expanded_lines.clone()
        } else {
            Arc::new(TreeLines::build(&loaded.tree, |n| {
                self.collapsed.contains(&n)
            }))
        };
    }
}

impl ScreenUnit for ConversationState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        match self.nodes {
            Some(_) => KeyContext::Nodes,
            None => KeyContext::Conversation,
        }
    }

    fn busy(&self) -> bool {
        self.status.is_loading()
            || self.budget_status.is_loading()
            || self.nodes.as_ref().is_some_and(NodesState::is_loading)
    }

    /// The conversation's name, the selected message, then the extraction demo or the nodes
    /// pane and its node where they are open.
    fn breadcrumbs(&self, _around: &Around) -> Vec<String> {
        let name = self
            .loaded
            .as_ref()
            .map(|l| l.conversation.info.name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| short_id(&self.id).into_owned());
        let mut crumbs = vec![name];
        if let Some(loaded) = self.loaded.as_ref().filter(|l| !l.tree.is_empty()) {
            crumbs.push(short_id(loaded.tree.id(self.selected)).into_owned());
        }
        if self.demo.is_some() {
            crumbs.push("extraction demo".to_owned());
        }
        if let Some(nodes) = &self.nodes {
            crumbs.push("nodes".to_owned());
            if let Some(node) = nodes.selected_node() {
                crumbs.push(node.title.clone());
            }
        }
        crumbs
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        if let Some(nodes) = &self.nodes {
            let row = nodes.rows.get(nodes.selected)?;
            return Some(("node id", row.summary.node_id.clone()));
        }
        let loaded = self.loaded.as_ref()?;
        (!loaded.tree.is_empty()).then(|| ("message id", loaded.tree.id(self.selected).to_owned()))
    }

    fn back_to(&self) -> Option<Screen> {
        Some(self.back_to)
    }

    fn exported(&self) -> Option<(ConversationKey, Option<String>)> {
        Some((ConversationKey::new(self.id.clone()), None))
    }
}
