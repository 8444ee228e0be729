//! What `nodes` and `node-context` report of a chatflow conversation, computed once: the
//! commands print it, and `export` bundles it (from the command line and from the TUI's `E`).

use serde::Serialize;

use super::{
    ContextSource, EmptyState, LatestContext, NodeContextView, NodeSummary, NodeThread, Timeline,
    latest_context, load_conversation_executions, load_latest_executions, load_node_sources,
    load_thread, load_timeline, node_context, resolve_node, sparkline, summarize_nodes, timeline,
};
use crate::inspect::InspectError;
use crate::inspect::budget_figures::BudgetFigures;
use crate::memory::budget_view::{BudgetLine, BudgetSettings};
use crate::memory::history::PopRule;
use crate::memory::node_context::NodeProblem;
use crate::memory::thread::ExtractionMode;
use crate::memory::tokens::CountCache;
use crate::storage::ObjectStore;
use crate::store::Store;

#[derive(Serialize)]
pub struct NodeRow {
    #[serde(flatten)]
    pub node: NodeSummary,
    pub latest_context: Option<LatestContext>,
}

#[derive(Serialize)]
pub struct NodesReport {
    pub conversation_id: String,
    pub conversation_name: String,
    /// Deleted in Dify (hidden there); shown as stored.
    pub deleted: bool,
    pub app_mode: Option<String>,
    /// Why node memory does not apply, when it does not.
    pub empty: Option<EmptyState>,
    pub thread_turns: usize,
    /// Thread turns whose run Dify archived out of the database, with its node executions
    /// (left out where there are none).
    #[serde(skip_serializing_if = "is_zero")]
    pub archived_turns: usize,
    pub counter: String,
    pub nodes: Vec<NodeRow>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl NodesReport {
    /// The ids of the nodes that ran, in the order listed.
    pub fn node_ids(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|row| row.node.node_id.clone())
            .collect()
    }
}

#[derive(Serialize)]
pub struct ContextReport {
    pub conversation_id: String,
    /// Deleted in Dify (hidden there); shown as stored.
    pub deleted: bool,
    pub node_id: String,
    pub node_title: String,
    pub source: ContextSource,
    pub leaf: Option<String>,
    pub run_id: Option<String>,
    pub execution_id: Option<String>,
    pub offloaded: bool,
    pub empty: Option<EmptyState>,
    /// Per-item problems: the rest of the context still shows.
    pub problems: Vec<NodeProblem>,
    pub missing_runs: Vec<String>,
    #[serde(flatten)]
    pub budget: BudgetFigures,
    pub dropped: usize,
    pub warnings: Vec<String>,
    pub messages: Vec<BudgetLine>,
    pub timeline: Timeline,
    pub sparkline: String,
}

/// The thread as Dify's node memory derives it: current extraction and placeholder pop.
pub async fn node_thread(
    store: &Store,
    conversation: &str,
    leaf: Option<&str>,
) -> Result<NodeThread, InspectError> {
    load_thread(
        store,
        conversation,
        leaf,
        ExtractionMode::Dify,
        PopRule::default(),
    )
    .await
}

/// The nodes that ran in a conversation, each with its latest context counted under
/// `settings`.
pub async fn nodes_report(
    store: &Store,
    storage: &ObjectStore,
    settings: &BudgetSettings,
    conversation: &str,
    leaf: Option<&str>,
) -> Result<NodesReport, InspectError> {
    let thread = node_thread(store, conversation, leaf).await?;
    let empty = (!thread.is_chatflow()).then(|| EmptyState::NotAChatflow {
        app_mode: thread.info.app_mode.clone(),
    });
    let executions = load_conversation_executions(store, &thread.info.id).await?;
    let nodes = summarize_nodes(&thread, &executions);
    let mut latest = load_latest_executions(store, storage, &nodes).await?;
    let mut cache = CountCache::default();
    let nodes = nodes
        .into_iter()
        .map(|node| NodeRow {
            latest_context: latest
                .remove(&node.node_id)
                .and_then(|docs| latest_context(&docs, settings, &mut cache)),
            node,
        })
        .collect();
    Ok(NodesReport {
        conversation_id: thread.info.id.clone(),
        conversation_name: thread.info.name.clone(),
        deleted: thread.info.is_deleted,
        app_mode: thread.info.app_mode.clone(),
        empty,
        thread_turns: thread.turns.len(),
        archived_turns: thread.archived.len(),
        counter: settings.counter.description(),
        nodes,
    })
}

/// The conversation's node that `typed` names, by id or by unique title. A conversation that
/// is no chatflow has no nodes: its empty state says so, under the name as typed.
pub async fn find_node(
    store: &Store,
    thread: &NodeThread,
    typed: &str,
) -> Result<NodeSummary, InspectError> {
    let executions = load_conversation_executions(store, &thread.info.id).await?;
    let nodes = summarize_nodes(thread, &executions);
    if !thread.is_chatflow() {
        return Ok(NodeSummary {
            node_id: typed.to_owned(),
            node_type: String::new(),
            title: String::new(),
            executions: 0,
            on_thread: 0,
            latest_run: None,
        });
    }
    Ok(resolve_node(&nodes, typed)?.clone())
}

/// What one node of the conversation is given, read from `source` on the thread to `leaf`:
/// the context with its budget under `settings`, and its timeline.
pub async fn context_report(
    store: &Store,
    storage: &ObjectStore,
    settings: &BudgetSettings,
    conversation: &str,
    node: &str,
    leaf: Option<&str>,
    source: ContextSource,
) -> Result<ContextReport, InspectError> {
    let thread = node_thread(store, conversation, leaf).await?;
    let node = find_node(store, &thread, node).await?;
    let sources = load_node_sources(store, storage, &thread, &node.node_id).await?;
    let executions = load_timeline(store, storage, &thread, &node.node_id).await?;
    let mut cache = CountCache::default();
    let view = NodeContextView::compute(
        node_context(&thread, &sources, source),
        settings,
        &mut cache,
    );
    let timeline = timeline(&thread, &node.node_id, &sources.memory_file, &executions);
    let budget = &view.budget;
    Ok(ContextReport {
        conversation_id: thread.info.id.clone(),
        deleted: thread.info.is_deleted,
        node_id: node.node_id,
        node_title: node.title,
        source,
        leaf: thread.leaf.clone(),
        run_id: view.context.run_id.clone(),
        execution_id: view.context.execution_id.clone(),
        offloaded: view.context.offloaded,
        empty: view.context.empty.clone(),
        problems: view.context.problems.clone(),
        missing_runs: view.context.missing_runs.clone(),
        budget: BudgetFigures::of(budget),
        dropped: budget.dropped(),
        warnings: budget.warnings(),
        messages: budget.lines(),
        sparkline: sparkline(&timeline.sizes()),
        timeline,
    })
}
