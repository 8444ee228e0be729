//! The checkpoint-history capability: a source whose conversations are threads of checkpoints (a
//! LangGraph thread) gives a thread's tree of checkpoints (from its rows alone, none decoded)
//! and one checkpoint read whole (its messages, the writes its tasks made), with the cut the
//! source's recommended trim makes of those messages. The TUI's checkpoint viewer draws these
//! neutral types, so it knows no source's format.

use serde::Serialize;
use serde_json::Value as Json;

use super::conversation::SourceFuture;
use super::opened::TrimStart;
use crate::format::count;
use crate::memory::budget::{MessageTokens, SuffixTotals};
use crate::memory::model::PromptMessage;
use crate::memory::trim::{MessageCounter, Step, TrimError, TrimOptions, trim_messages_counted};
use crate::store::Store;

/// The root graph's namespace; a subgraph's has a name.
pub const ROOT_NAMESPACE: &str = "";

/// A checkpoint as the tree lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointLine {
    pub id: String,
    pub parent: Option<String>,
    /// Branch depth: 0 on the first line of the tree, one more for each branch taken.
    pub depth: usize,
    /// Position among its siblings (branches), 1-based, and how many there are.
    pub sibling: (usize, usize),
    pub on_thread: bool,
    pub latest: bool,
    /// `input`, `loop`, `update` or `fork`.
    pub source: Option<String>,
    pub step: Option<i64>,
    /// The nodes whose outputs made it.
    pub nodes: Vec<String>,
}

/// A subgraph namespace's checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubgraphLines {
    pub namespace: String,
    /// The node of the root graph that ran it.
    pub node: String,
    /// The root graph's checkpoint whose task ran it.
    pub root_checkpoint: Option<String>,
    pub nodes: Vec<CheckpointLine>,
}

/// A thread's checkpoint tree: `thread` runs from the first checkpoint to the leaf (the latest
/// without one). Branches (time travel, edits, forks) are siblings; a subgraph's checkpoints are
/// listed under the root checkpoint whose task ran them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadTree {
    pub thread_id: String,
    pub latest: Option<String>,
    pub leaf: Option<String>,
    /// The root graph's checkpoints from the first to the leaf.
    pub thread: Vec<String>,
    pub nodes: Vec<CheckpointLine>,
    pub subgraphs: Vec<SubgraphLines>,
}

/// One line of the tree as a pane draws it: a root checkpoint, or a subgraph's checkpoint
/// placed under the root checkpoint its task started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeRow {
    /// The subgraph (an index of [`ThreadTree::subgraphs`]), `None` on the root graph.
    pub subgraph: Option<usize>,
    /// The line's index in its namespace's `nodes`.
    pub line: usize,
}

impl ThreadTree {
    /// Every line in drawing order: each root checkpoint followed by the checkpoints of the
    /// subgraphs its tasks ran; a subgraph whose root checkpoint is not in the tree comes last.
    pub fn rows(&self) -> Vec<TreeRow> {
        let mut rows = Vec::with_capacity(self.checkpoint_count());
        let subgraph_rows = |index: usize| {
            (0..self.subgraphs[index].nodes.len()).map(move |line| TreeRow {
                subgraph: Some(index),
                line,
            })
        };
        for (line, checkpoint) in self.nodes.iter().enumerate() {
            rows.push(TreeRow {
                subgraph: None,
                line,
            });
            for (index, _) in self
                .subgraphs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.root_checkpoint.as_deref() == Some(&checkpoint.id))
            {
                rows.extend(subgraph_rows(index));
            }
        }
        for (index, subgraph) in self.subgraphs.iter().enumerate() {
            let attached = subgraph
                .root_checkpoint
                .as_deref()
                .is_some_and(|root| self.nodes.iter().any(|n| n.id == root));
            if !attached {
                rows.extend(subgraph_rows(index));
            }
        }
        rows
    }

    /// The thread's checkpoints in every namespace, as the list of threads counts them.
    pub fn checkpoint_count(&self) -> usize {
        self.nodes.len() + self.subgraphs.iter().map(|s| s.nodes.len()).sum::<usize>()
    }

    /// `12 checkpoints (3 in 1 subgraph)`: the list's count, with the part subgraphs hold.
    pub fn checkpoints_described(&self) -> String {
        let all = count(self.checkpoint_count() as u64, "checkpoint");
        match self.checkpoint_count() - self.nodes.len() {
            0 => all,
            inner => format!(
                "{all} ({} in {})",
                crate::format::thousands(inner as u64),
                count(self.subgraphs.len() as u64, "subgraph")
            ),
        }
    }

    /// The checkpoint a row names, with its namespace.
    pub fn line(&self, row: TreeRow) -> (&str, &CheckpointLine) {
        match row.subgraph {
            None => (ROOT_NAMESPACE, &self.nodes[row.line]),
            Some(index) => {
                let subgraph = &self.subgraphs[index];
                (&subgraph.namespace, &subgraph.nodes[row.line])
            }
        }
    }
}

/// One value a task wrote, keyed to the checkpoint it started from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeWrite {
    /// The node that ran the task; `None` for a write of the state's own (an edit).
    pub node: Option<String>,
    pub task_path: String,
    pub task_id: String,
    /// Negative for the framework's special writes (errors, interrupts, ...).
    pub idx: i64,
    pub channel: String,
    /// The value as JSON, or why it cannot be read.
    pub value: Result<Json, String>,
}

/// A tool call as stored, its arguments as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredToolCall {
    pub id: Option<String>,
    pub name: String,
    pub arguments: Json,
}

/// One message of a checkpoint: what the detail shows of it as stored, and what a model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointMessage {
    /// What the source calls it: "ai (AIMessage)".
    pub label: String,
    pub name: Option<String>,
    pub id: Option<String>,
    /// The tool call a tool result answers, and the tool's status ("error").
    pub tool_call_id: Option<String>,
    pub status: Option<String>,
    /// As stored: a text, or a list of blocks.
    pub content: Json,
    pub tool_calls: Vec<StoredToolCall>,
    /// The model's token usage as stored.
    pub usage: Option<Json>,
    /// What a model sees of it; `None` for a message no model sees (a removal).
    pub prompt: Option<PromptMessage>,
}

/// One checkpoint read whole: its messages and the writes of the tasks that started from it.
#[derive(Debug, Clone)]
pub struct CheckpointState {
    pub namespace: String,
    pub checkpoint_id: String,
    pub ts: String,
    pub messages: Vec<CheckpointMessage>,
    /// What was read but not understood, a message that could not be read first.
    pub warnings: Vec<String>,
    pub writes: Vec<NodeWrite>,
}

/// The messages a model sees of a checkpoint under a budget, in the checkpoint's order.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesBudget {
    /// Each message as a model sees it.
    pub prompt: Vec<PromptMessage>,
    /// Each message's tokens as part of the whole list.
    pub tokens: Vec<u32>,
    /// Each message's counts as the counter gave them (a trim preview plans from them).
    pub counts: Vec<MessageTokens>,
    /// Tokens of the list from each message on.
    pub from_here: Vec<u64>,
    /// Whether the trim keeps each message.
    pub kept: Vec<bool>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The trim that made the cut, and the budget it was made under.
    pub options: TrimOptions,
    /// That trim as the source's users write it.
    pub rule: &'static str,
}

impl MessagesBudget {
    /// Counts `prompt` and trims it with `options`, the trim `rule` words.
    pub fn compute(
        prompt: Vec<PromptMessage>,
        counter: &dyn MessageCounter,
        options: TrimOptions,
        rule: &'static str,
    ) -> Result<MessagesBudget, TrimError> {
        let counts: Vec<MessageTokens> = prompt.iter().map(|m| counter.count_message(m)).collect();
        let plan = trim_messages_counted(&prompt, &counts, &options, counter)?;
        let mut kept = vec![false; prompt.len()];
        for step in &plan.steps {
            if let Step::Keep { index } | Step::Modify { index, .. } = step {
                kept[*index] = true;
            }
        }
        let totals = SuffixTotals::new(&counts, counter.list_overhead());
        let last = counts.len().saturating_sub(1);
        Ok(MessagesBudget {
            tokens: counts
                .iter()
                .enumerate()
                .map(|(i, c)| if i == last { c.last } else { c.inner })
                .collect(),
            from_here: (0..prompt.len()).map(|i| totals.from(i)).collect(),
            kept,
            counts,
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
            prompt,
            options,
            rule,
        })
    }

    /// Where a trim preview of this cut starts: every message, counted, and the options.
    pub fn trim_start(&self) -> TrimStart {
        TrimStart {
            messages: self.prompt.clone(),
            counts: self.counts.clone(),
            options: self.options.clone(),
        }
    }

    pub fn dropped(&self) -> usize {
        self.kept.iter().filter(|k| !**k).count()
    }
}

/// How a source's threads of checkpoints are read for a viewer.
pub trait CheckpointHistory: Sync {
    /// The tree of `thread`'s checkpoints, with the path to the latest marked.
    fn tree<'a>(&'a self, store: &'a Store, thread: &'a str) -> SourceFuture<'a, ThreadTree>;

    /// Checkpoint `checkpoint_id` of `thread` in `namespace`, read whole.
    fn checkpoint<'a>(
        &'a self,
        store: &'a Store,
        thread: &'a str,
        namespace: &'a str,
        checkpoint_id: &'a str,
    ) -> SourceFuture<'a, CheckpointState>;

    /// `checkpoint`'s messages counted with `counter` and cut under `max_tokens` by the trim
    /// the source recommends.
    fn budget(
        &self,
        checkpoint: &CheckpointState,
        counter: &dyn MessageCounter,
        max_tokens: i64,
    ) -> Result<MessagesBudget, TrimError>;
}
