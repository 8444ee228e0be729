//! A prune of a LangGraph database's older checkpoints, from `P` to its confirmation: the
//! thread it was asked on (or every thread), how many checkpoints each thread keeps, and the
//! plan for that rule with the archive the deleted rows will go to. Each change of the rule
//! asks for a new plan; a plan another request overtook is dropped by its generation.

use std::path::PathBuf;

use super::load::LoadStatus;
use crate::format::thousands;
use crate::sources::checkpoint_prune::{ArchivedPrune, PrunePlan};

/// What `checkpoints prune` keeps by default, the one checkpoint `get_state` reads: the TUI
/// starts where the CLI does.
pub const DEFAULT_KEEP_LAST: usize = 1;

/// The most checkpoints a prune can be told to keep by typing digits.
pub const MAX_KEEP_LAST: usize = 9_999_999;

/// A plan, and where its deleted rows would be archived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPrune {
    pub plan: PrunePlan,
    /// Absolute: the confirmation names it, and the prune writes it.
    pub archive: PathBuf,
    /// The command that puts the pruned rows back from `archive`, as the source words it.
    pub restore: String,
}

/// The prune being planned or waiting for its confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneState {
    /// The thread `P` was pressed on.
    pub thread_id: String,
    /// Every thread of the database rather than `thread_id` alone.
    pub every_thread: bool,
    pub keep_last: usize,
    /// Whether the last key typed a digit: the next digit adds to the number rather than
    /// starting a new one.
    pub typing: bool,
    pub generation: u64,
    pub status: LoadStatus,
    /// The latest plan that arrived; it stays shown while the next one is made.
    pub planned: Option<PlannedPrune>,
}

impl PruneState {
    /// The prune `P` asks for on `thread_id`, before its first plan is asked for.
    pub fn new(thread_id: String) -> PruneState {
        PruneState {
            thread_id,
            every_thread: false,
            keep_last: DEFAULT_KEEP_LAST,
            typing: false,
            generation: 0,
            status: LoadStatus::Loading,
            planned: None,
        }
    }

    /// The threads the prune covers: empty for every thread, as the source's request says.
    pub fn threads(&self) -> Vec<String> {
        if self.every_thread {
            Vec::new()
        } else {
            vec![self.thread_id.clone()]
        }
    }

    /// Why the plan is empty.
    pub fn nothing_to_prune(&self) -> String {
        format!(
            "nothing to prune: {} has no checkpoint older than {}",
            self.scope(),
            kept(self.keep_last)
        )
    }

    /// Whom the prune covers, for the popup and the messages.
    pub fn scope(&self) -> String {
        if self.every_thread {
            "every thread".to_owned()
        } else {
            format!("thread {}", self.thread_id)
        }
    }
}

/// What each thread keeps: "its latest checkpoint", "its 3 newest checkpoints".
pub fn kept(keep_last: usize) -> String {
    match keep_last {
        1 => "its latest checkpoint".to_owned(),
        n => format!("its {} newest checkpoints", thousands(n as u64)),
    }
}

/// `u` on a thread, while what it undoes is looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoAsk {
    pub thread_id: String,
    pub generation: u64,
}

/// What `u` undoes on a thread: memscope's trim when it is the thread's latest checkpoint,
/// else the thread's last prune, the newest archive holding its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoPlan {
    Trim,
    Restore(ArchivedPrune),
}
