//! A node over the thread's turns: its executions in each run, the context size a sparkline
//! plots, and where the node memory file and a run's context disagree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::context::parse_memory_read;
use super::sources::MemoryFileRead;
use super::thread::node_contexts;
use crate::inspect::InspectError;
use crate::memory::node_context::{Disagreement, NodeProblem, compare_turn, outputs_turn_text};
use crate::sources::node_context::{ExecutionDocs, NodeThread, parse_execution};
use crate::storage::ObjectStore;
use crate::store::Store;

/// One turn of a node's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineTurn {
    pub message_id: String,
    pub workflow_run_id: String,
    /// Executions of the node in this run (0: it did not run).
    pub executions: usize,
    pub execution_id: Option<String>,
    pub status: Option<String>,
    /// Messages in `outputs["context"]`, when there is one.
    pub context_messages: Option<usize>,
    /// Messages in `process_data["prompts"]`, when recorded.
    pub prompt_messages: Option<usize>,
    /// Where the node memory file and this run's context disagree.
    pub disagreement: Option<Disagreement>,
    pub problems: Vec<NodeProblem>,
}

impl TimelineTurn {
    /// The context size the sparkline plots: design B's messages, else the prompts sent.
    pub fn size(&self) -> u64 {
        self.context_messages.or(self.prompt_messages).unwrap_or(0) as u64
    }
}

/// A node's executions across the thread's turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timeline {
    pub node_id: String,
    pub turns: Vec<TimelineTurn>,
}

impl Timeline {
    pub fn sizes(&self) -> Vec<u64> {
        self.turns.iter().map(TimelineTurn::size).collect()
    }

    pub fn disagreements(&self) -> impl Iterator<Item = &TimelineTurn> {
        self.turns.iter().filter(|t| t.disagreement.is_some())
    }
}

/// The node's executions in every thread run, offloads followed: a few batched indexed
/// lookups, for a background task.
pub async fn load_timeline(
    store: &Store,
    storage: &ObjectStore,
    thread: &NodeThread,
    node_id: &str,
) -> Result<Vec<ExecutionDocs>, InspectError> {
    let run_ids = thread.run_ids();
    Ok(node_contexts(store)?
        .executions_in_runs(store, storage, &run_ids, node_id)
        .await?)
}

/// The timeline of a node over the thread, comparing each turn with the memory file. Pure.
pub fn timeline(
    thread: &NodeThread,
    node_id: &str,
    memory_file: &MemoryFileRead,
    executions: &[ExecutionDocs],
) -> Timeline {
    let file = parse_memory_read(memory_file).ok();
    let mut by_run: BTreeMap<String, Vec<&ExecutionDocs>> = BTreeMap::new();
    for execution in executions {
        by_run
            .entry(execution.workflow_run_id.to_lowercase())
            .or_default()
            .push(execution);
    }
    let turns = thread
        .turns
        .iter()
        .map(|turn| {
            let runs = by_run
                .get(&turn.workflow_run_id.to_lowercase())
                .map_or(&[][..], Vec::as_slice);
            let chosen = runs
                .iter()
                .find(|e| e.status == "succeeded")
                .or(runs.last())
                .map(|e| parse_execution(e));
            let mut problems: Vec<NodeProblem> = thread
                .run_problem(&turn.workflow_run_id)
                .into_iter()
                .collect();
            let outputs_turn = chosen.as_ref().and_then(|parsed| {
                problems.extend(parsed.problems.iter().cloned());
                problems.extend(parsed.outputs.context.problems.iter().cloned());
                problems.extend(parsed.prompts.problems.iter().cloned());
                outputs_turn_text(&parsed.outputs)
            });
            let disagreement = file.as_ref().and_then(|file| {
                compare_turn(file.turn_text(turn).as_ref(), outputs_turn.as_ref())
            });
            TimelineTurn {
                message_id: turn.message_id.clone(),
                workflow_run_id: turn.workflow_run_id.clone(),
                executions: runs.len(),
                execution_id: chosen.as_ref().map(|p| p.id.clone()),
                status: chosen.as_ref().map(|p| p.status.clone()),
                context_messages: chosen
                    .as_ref()
                    .filter(|p| p.outputs.context.found)
                    .map(|p| p.outputs.context.messages.len()),
                prompt_messages: chosen
                    .as_ref()
                    .filter(|p| p.prompts.found)
                    .map(|p| p.prompts.messages.len()),
                disagreement,
                problems,
            }
        })
        .collect();
    Timeline {
        node_id: node_id.to_owned(),
        turns,
    }
}

/// Eight-level bars for a sequence of sizes, scaled to the largest.
pub fn sparkline(sizes: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = sizes.iter().copied().max().unwrap_or(0);
    sizes
        .iter()
        .map(|&size| match max {
            0 => BARS[0],
            _ => BARS[(u128::from(size) * 7).div_ceil(u128::from(max)) as usize],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::inspect::nodes::fixtures::{docs, file, missing_file, outputs, thread};

    #[test]
    fn the_timeline_compares_each_turn_with_the_file() {
        let memory = file(json!({"version": 1, "turns": {
            "run-1": {"user_content": "q1", "assistant_content": "a1"},
            "run-2": {"user_content": "q2", "assistant_content": "draft"},
            "run-4": {"user_content": "q4", "assistant_content": "a4"},
        }}));
        let executions = vec![
            docs(1, "succeeded", outputs("q1", "a1")),
            docs(2, "succeeded", outputs("q2", "final")),
            docs(3, "succeeded", outputs("q3", "a3")),
        ];
        let built = timeline(&thread(4), "llm", &memory, &executions);
        let flags: Vec<Option<Disagreement>> =
            built.turns.iter().map(|t| t.disagreement.clone()).collect();
        assert_eq!(flags[0], None);
        assert!(matches!(
            flags[1],
            Some(Disagreement::DifferentAssistant { .. })
        ));
        assert_eq!(flags[2], Some(Disagreement::MissingInFile));
        assert_eq!(flags[3], Some(Disagreement::MissingInOutputs));
        assert_eq!(built.sizes(), [2, 2, 2, 0]);
        assert_eq!(built.turns[3].executions, 0);
        assert_eq!(built.turns[3].status, None);
        // Without a file there is nothing to disagree with.
        let alone = timeline(&thread(4), "llm", &missing_file(), &executions);
        assert_eq!(alone.disagreements().count(), 0);
    }

    #[test]
    fn sparkline_scales_to_the_largest_size() {
        assert_eq!(sparkline(&[]), "");
        assert_eq!(sparkline(&[0, 0]), "▁▁");
        assert_eq!(sparkline(&[0, 1, 2, 4, 8]), "▁▂▃▅█");
        assert_eq!(sparkline(&[u64::MAX, 1]), "█▂");
    }
}
