//! The nodes pane: which nodes ran in the conversation, in the order they first ran, with the
//! thread run holding each one's latest context and that context's size.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::context::{ContextSource, succeeded};
use super::thread::node_contexts;
use crate::inspect::InspectError;
use crate::memory::budget_view::BudgetSettings;
use crate::memory::names::Unknown;
use crate::memory::tokens::CountCache;
use crate::sources::node_context::{ExecutionDocs, NodeThread, parse_execution};
use crate::storage::ObjectStore;
use crate::store::{NodeExecutionBrief, Store};

/// One node of the nodes pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSummary {
    pub node_id: String,
    pub node_type: String,
    pub title: String,
    /// Executions in the whole conversation, regenerated turns included.
    pub executions: usize,
    /// Executions in the thread's runs.
    pub on_thread: usize,
    /// The thread's newest run that executed the node: where its latest context is.
    pub latest_run: Option<String>,
}

/// The node `typed` names among a conversation's nodes: the one with that id, else the one
/// with that title. A title several nodes share, or a name none has, fails (the latter listing
/// the nodes, id and title, nearest first).
pub fn resolve_node<'a>(
    nodes: &'a [NodeSummary],
    typed: &str,
) -> Result<&'a NodeSummary, InspectError> {
    if let Some(node) = nodes.iter().find(|n| n.node_id == typed) {
        return Ok(node);
    }
    match nodes
        .iter()
        .filter(|n| n.title == typed)
        .collect::<Vec<_>>()[..]
    {
        [node] => Ok(node),
        [] => {
            let valid = nodes.iter().map(|n| {
                let label = format!("{} ({})", n.node_id, n.title);
                (label, vec![n.node_id.clone(), n.title.clone()])
            });
            Err(Unknown::by_names("node in this conversation", typed, valid).into())
        }
        ref many => Err(InspectError::AmbiguousTitle {
            title: typed.to_owned(),
            ids: many.iter().map(|n| n.node_id.clone()).collect(),
        }),
    }
}

/// Every node execution of the conversation's runs (all turns, not only the thread).
pub async fn load_conversation_executions(
    store: &Store,
    conversation_id: &str,
) -> Result<Vec<NodeExecutionBrief>, InspectError> {
    Ok(node_contexts(store)?
        .conversation_executions(store, conversation_id)
        .await?)
}

/// The nodes with executions, in the order they first ran.
pub fn summarize_nodes(thread: &NodeThread, executions: &[NodeExecutionBrief]) -> Vec<NodeSummary> {
    let thread_position: HashMap<String, usize> = thread
        .turns
        .iter()
        .enumerate()
        .map(|(position, t)| (t.workflow_run_id.to_lowercase(), position))
        .collect();
    let mut nodes: Vec<NodeSummary> = Vec::new();
    // Per node: its index in `nodes` and the thread position of its latest run.
    let mut seen: HashMap<&str, (usize, Option<usize>)> = HashMap::new();
    for execution in executions {
        let (index, latest) = seen.entry(&execution.node_id).or_insert_with(|| {
            nodes.push(NodeSummary {
                node_id: execution.node_id.clone(),
                node_type: execution.node_type.clone(),
                title: execution.title.clone(),
                executions: 0,
                on_thread: 0,
                latest_run: None,
            });
            (nodes.len() - 1, None)
        });
        let node = &mut nodes[*index];
        node.executions += 1;
        if let Some(&position) = thread_position.get(&execution.workflow_run_id.to_lowercase()) {
            node.on_thread += 1;
            if latest.is_none_or(|latest| position > latest) {
                *latest = Some(position);
                node.latest_run = Some(execution.workflow_run_id.clone());
            }
        }
    }
    nodes
}

/// The size of a node's newest context on the thread, for the nodes pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LatestContext {
    /// `outputs`, or `prompts` where the node keeps no context.
    pub source: ContextSource,
    pub messages: usize,
    pub tokens: u64,
}

/// Each node's executions in its latest thread run: one indexed lookup per node, then every
/// offloaded output of all nodes read at once.
pub async fn load_latest_executions(
    store: &Store,
    storage: &ObjectStore,
    nodes: &[NodeSummary],
) -> Result<BTreeMap<String, Vec<ExecutionDocs>>, InspectError> {
    let wanted: Vec<(String, String)> = nodes
        .iter()
        .filter_map(|node| Some((node.latest_run.clone()?, node.node_id.clone())))
        .collect();
    let each = node_contexts(store)?
        .executions_in_each(store, storage, &wanted)
        .await?;
    Ok(wanted
        .into_iter()
        .zip(each)
        .map(|((_, node_id), docs)| (node_id, docs))
        .collect())
}

/// Counts a node's latest context: design B's when the node keeps one, else what it sent.
pub fn latest_context(
    executions: &[ExecutionDocs],
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> Option<LatestContext> {
    let parsed = parse_execution(succeeded(executions).or(executions.last())?);
    let (source, list) = if parsed.outputs.context.found {
        (ContextSource::Outputs, parsed.outputs.context)
    } else if parsed.prompts.found {
        (ContextSource::Prompts, parsed.prompts)
    } else {
        return None;
    };
    let messages = list.prompt_messages();
    Some(LatestContext {
        source,
        messages: messages.len(),
        tokens: cache.count_list(&settings.counter, &messages),
    })
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;

    use super::*;
    use crate::inspect::nodes::fixtures::thread;

    fn brief(run: usize, node_id: &str, second: i64) -> NodeExecutionBrief {
        NodeExecutionBrief {
            id: format!("{node_id}-{run}"),
            workflow_run_id: format!("run-{run}"),
            node_id: node_id.into(),
            node_type: "llm".into(),
            title: node_id.to_uppercase(),
            status: "succeeded".into(),
            index: 1,
            created_at: NaiveDateTime::default() + chrono::TimeDelta::seconds(second),
        }
    }

    #[test]
    fn nodes_are_listed_in_first_run_order_with_their_latest_thread_run() {
        // Run 9 is a regenerated sibling, not on the thread of runs 1 and 2.
        let executions = [
            brief(1, "writer", 1),
            brief(1, "researcher", 0),
            brief(2, "researcher", 5),
            brief(9, "researcher", 9),
            brief(9, "writer", 9),
        ];
        let nodes = summarize_nodes(&thread(2), &executions);
        let rows: Vec<(&str, usize, usize, Option<&str>)> = nodes
            .iter()
            .map(|n| {
                (
                    n.node_id.as_str(),
                    n.executions,
                    n.on_thread,
                    n.latest_run.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("writer", 2, 1, Some("run-1")),
                ("researcher", 3, 2, Some("run-2")),
            ]
        );
    }
}
