//! An open LangGraph thread: its checkpoint tree (drawn from the rows alone), the selected
//! checkpoint, and that checkpoint read whole (its messages under the budget, or its node
//! writes). Moving in the tree asks for the newly selected checkpoint; a result another
//! selection overtook is dropped by its generation.

use std::path::PathBuf;
use std::sync::Arc;

use super::load::LoadStatus;
use super::screen::Screen;
use super::screen_unit::{Around, ScreenUnit};
use super::search::MessageSearch;
use crate::sources::checkpoint_history::{
    CheckpointLine, CheckpointState, MessagesBudget, ThreadTree, TreeRow,
};
use crate::sources::opened::ConversationKey;
use crate::tui::keymap::KeyContext;

/// A write to a LangGraph thread, waiting for its confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointWrite {
    /// The removal of `remove` (message ids) as a new checkpoint after `checkpoint_id`, the
    /// thread's latest: what `update_state` with `RemoveMessage`s writes.
    Trim {
        thread_id: String,
        checkpoint_id: String,
        remove: Vec<String>,
    },
    /// Deletes memscope's trim checkpoint, the thread's latest.
    Undo { thread_id: String },
    /// Deletes each thread's checkpoints but its `keep_last` newest, every deleted row
    /// archived to `archive` first.
    Prune {
        /// Empty: every thread.
        threads: Vec<String>,
        keep_last: usize,
        archive: PathBuf,
    },
    /// Puts a prune's archive back (the undo of thread `thread_id`'s last prune).
    Restore { thread_id: String, archive: PathBuf },
}

impl CheckpointWrite {
    /// Whether the write changes thread `thread_id`.
    pub fn changes(&self, thread_id: &str) -> bool {
        match self {
            CheckpointWrite::Trim { thread_id: t, .. }
            | CheckpointWrite::Undo { thread_id: t }
            | CheckpointWrite::Restore { thread_id: t, .. } => t == thread_id,
            CheckpointWrite::Prune { threads, .. } => {
                threads.is_empty() || threads.iter().any(|t| t == thread_id)
            }
        }
    }
}

/// What the pane beside the tree shows of the selected checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckpointPane {
    /// Its `messages` channel under the budget.
    #[default]
    Messages,
    /// The writes of the tasks that started from it (`o`).
    Writes,
}

/// The selected checkpoint, read and counted.
#[derive(Debug, Clone)]
pub struct ShownCheckpoint {
    pub state: Arc<CheckpointState>,
    /// The messages counted and cut; why not when the trim refused them.
    pub budget: Result<MessagesBudget, String>,
    /// The budget the cut was made under.
    pub max_tokens: i64,
}

/// The open thread.
#[derive(Debug, Clone)]
pub struct CheckpointsState {
    pub thread_id: String,
    pub status: LoadStatus,
    pub generation: u64,
    pub tree: Option<Arc<ThreadTree>>,
    /// The tree's lines in drawing order, built once with the tree.
    pub rows: Arc<Vec<TreeRow>>,
    pub cursor: usize,
    pub shown: Option<ShownCheckpoint>,
    pub shown_status: LoadStatus,
    pub shown_generation: u64,
    pub pane: CheckpointPane,
    /// Where esc goes: the list, the thread's messages or the doctor's findings it was
    /// opened from.
    pub back_to: Screen,
    /// A search in the shown checkpoint's messages (`/`), by their positions.
    pub search: Option<MessageSearch>,
    /// The message the search went to, kept in view; `None`: the newest messages are shown.
    pub message_at: Option<usize>,
}

impl CheckpointsState {
    pub fn new(thread_id: String, generation: u64, back_to: Screen) -> CheckpointsState {
        CheckpointsState {
            thread_id,
            status: LoadStatus::Loading,
            generation,
            tree: None,
            rows: Arc::default(),
            cursor: 0,
            shown: None,
            shown_status: LoadStatus::Loading,
            shown_generation: 0,
            pane: CheckpointPane::default(),
            back_to,
            search: None,
            message_at: None,
        }
    }

    /// Takes a loaded tree and puts the cursor on its latest checkpoint.
    pub fn set_tree(&mut self, tree: ThreadTree) {
        self.rows = Arc::new(tree.rows());
        self.tree = Some(Arc::new(tree));
        self.cursor = self.latest_row().unwrap_or(0);
        self.status = LoadStatus::Loaded;
    }

    /// The line of the root graph's latest checkpoint: what `get_state` reads.
    fn latest_row(&self) -> Option<usize> {
        let tree = self.tree.as_ref()?;
        self.rows
            .iter()
            .position(|&row| row.subgraph.is_none() && tree.nodes[row.line].latest)
    }

    /// The selected checkpoint with its namespace.
    pub fn selected(&self) -> Option<(&str, &CheckpointLine)> {
        let tree = self.tree.as_ref()?;
        Some(tree.line(*self.rows.get(self.cursor)?))
    }

    /// Moves the cursor by `delta` lines, kept in the tree; `true` when it moved.
    pub fn move_by(&mut self, delta: isize) -> bool {
        let last = self.rows.len().saturating_sub(1) as isize;
        let next = (self.cursor as isize).saturating_add(delta).clamp(0, last) as usize;
        let moved = next != self.cursor;
        self.cursor = next;
        moved
    }

    /// Takes the tree a poll read again: `false` when it is the one shown. Otherwise the cursor
    /// follows the latest checkpoint when it was on it, else stays on its checkpoint (the
    /// latest when that one is gone).
    pub fn refresh_tree(&mut self, tree: ThreadTree) -> bool {
        if self.tree.as_deref() == Some(&tree) {
            return false;
        }
        let on_latest = self.latest_row() == Some(self.cursor);
        let selected = self
            .selected()
            .map(|(ns, line)| (ns.to_owned(), line.id.clone()));
        self.set_tree(tree);
        if let (false, Some((namespace, id))) = (on_latest, selected) {
            let tree = self.tree.clone().expect("the tree just set");
            if let Some(row) = self.rows.iter().position(|&row| {
                let (ns, line) = tree.line(row);
                ns == namespace && line.id == id
            }) {
                self.cursor = row;
            }
        }
        true
    }

    /// Puts the cursor on the root graph's latest checkpoint; `true` when it moved.
    pub fn to_latest(&mut self) -> bool {
        match self.latest_row() {
            Some(line) if line != self.cursor => {
                self.cursor = line;
                true
            }
            _ => false,
        }
    }
}

impl ScreenUnit for CheckpointsState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        KeyContext::Checkpoints
    }

    fn busy(&self) -> bool {
        self.status.is_loading() || self.shown_status.is_loading()
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        let (_, line) = self.selected()?;
        Some(("checkpoint id", line.id.clone()))
    }

    fn back_to(&self) -> Option<Screen> {
        Some(self.back_to)
    }

    /// The thread at the selected checkpoint of its root graph, as `export --leaf` takes it.
    fn exported(&self) -> Option<(ConversationKey, Option<String>)> {
        let leaf = self
            .selected()
            .filter(|(namespace, _)| namespace.is_empty())
            .map(|(_, checkpoint)| checkpoint.id.clone());
        Some((ConversationKey::new(self.thread_id.clone()), leaf))
    }
}
