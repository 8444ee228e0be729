//! `nodes` and `node-context`: the nodes that ran in a chatflow conversation, and what one node
//! remembers (design A or B) and actually sent, with its token budget and timeline.

use serde::Serialize;

use super::budget::{BudgetFigures, budget_table, short_id};
use crate::cli::args::{NodeContextArgs, NodeSource, NodesArgs, TokenArgs};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliResult, ExitCode, deleted_banner, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::nodes::{
    ContextSource, EmptyState, LatestContext, NodeContextView, NodeSummary, NodeThread, Timeline,
    latest_context, load_conversation_executions, load_latest_executions, load_node_sources,
    load_thread, load_timeline, node_context, resolve_node, sparkline, summarize_nodes, timeline,
};
use crate::memory::budget_view::{BudgetLine, BudgetSettings};
use crate::memory::history::{HistoryOptions, PopRule};
use crate::memory::node_context::NodeProblem;
use crate::memory::thread::ExtractionMode;
use crate::memory::tokens::CountCache;
use crate::store::{Part, Store};

fn settings(
    context: &Context,
    tokens: &TokenArgs,
    max_tokens: Option<i64>,
) -> CliResult<BudgetSettings> {
    let (counter, model) = counter_from(context, tokens)?;
    Ok(BudgetSettings {
        counter,
        max_tokens: max_tokens.unwrap_or(context.resolved.config.tokens.budget),
        context_window: context_window_of(context, &model),
        model,
        options: HistoryOptions::default(),
    })
}

/// The thread as Dify's node memory derives it: current extraction and placeholder pop.
async fn thread(
    store: &crate::store::Store,
    conversation: &str,
    leaf: Option<&str>,
) -> CliResult<NodeThread> {
    Ok(load_thread(
        store,
        conversation,
        leaf,
        ExtractionMode::Dify,
        PopRule::default(),
    )
    .await?)
}

#[derive(Serialize)]
pub(super) struct NodeRow {
    #[serde(flatten)]
    node: NodeSummary,
    latest_context: Option<LatestContext>,
}

#[derive(Serialize)]
pub(super) struct NodesReport {
    conversation_id: String,
    conversation_name: String,
    /// Deleted in Dify (hidden there); shown as stored.
    deleted: bool,
    app_mode: Option<String>,
    /// Why node memory does not apply, when it does not.
    empty: Option<EmptyState>,
    thread_turns: usize,
    /// Thread turns whose run Dify archived out of the database, with its node executions
    /// (left out where there are none).
    #[serde(skip_serializing_if = "is_zero")]
    archived_turns: usize,
    counter: String,
    nodes: Vec<NodeRow>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl NodesReport {
    /// The ids of the nodes that ran, in the order listed.
    pub(super) fn node_ids(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|row| row.node.node_id.clone())
            .collect()
    }
}

fn render_nodes(r: &NodesReport) -> String {
    let mut out = deleted_banner(r.deleted).to_owned();
    out += &format!(
        "conversation {} \"{}\" ({} thread turns with a workflow run)\ncounter {}\n",
        r.conversation_id, r.conversation_name, r.thread_turns, r.counter
    );
    if let Some(empty) = &r.empty {
        out.push_str(&format!("{empty}\n"));
    }
    if r.archived_turns > 0 {
        out.push_str(&format!(
            "{} {} whose run Dify archived: node executions no longer in the database\n",
            r.archived_turns,
            crate::format::noun(r.archived_turns as u64, "thread turn")
        ));
    }
    let rows: Vec<Vec<String>> = r
        .nodes
        .iter()
        .map(|row| {
            let (messages, tokens) =
                row.latest_context
                    .map_or((String::new(), String::new()), |l| {
                        (
                            format!("{} ({})", l.messages, source_name(l.source)),
                            thousands(l.tokens),
                        )
                    });
            vec![
                row.node.node_id.clone(),
                row.node.node_type.clone(),
                one_line(&row.node.title, 30),
                thousands(row.node.executions as u64),
                thousands(row.node.on_thread as u64),
                messages,
                tokens,
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&table(
        &[
            "node",
            "type",
            "title",
            "executions",
            "on thread",
            "latest context",
            "tokens",
        ],
        &rows,
    ));
    out
}

fn source_name(source: ContextSource) -> &'static str {
    match source {
        ContextSource::Files => "files",
        ContextSource::Outputs => "outputs",
        ContextSource::Prompts => "prompts",
    }
}

pub async fn list(context: &Context, args: &NodesArgs) -> CliResult {
    let store = context.open_for(Part::NodeContexts).await?;
    let report = list_report(context, &store, args).await?;
    emit(context.global.json, &report, render_nodes)?;
    Ok(ExitCode::Ok)
}

/// The nodes that ran in a conversation (`export` bundles them too).
pub(super) async fn list_report(
    context: &Context,
    store: &Store,
    args: &NodesArgs,
) -> CliResult<NodesReport> {
    let settings = settings(context, &args.tokens, None)?;
    let thread = thread(store, &args.conversation, args.leaf.as_deref()).await?;
    let empty = (!thread.is_chatflow()).then(|| EmptyState::NotAChatflow {
        app_mode: thread.info.app_mode.clone(),
    });
    let executions = load_conversation_executions(store, &thread.info.id).await?;
    let nodes = summarize_nodes(&thread, &executions);
    let storage = context.storage()?;
    let mut latest = load_latest_executions(store, &storage, &nodes).await?;
    let mut cache = CountCache::default();
    let nodes = nodes
        .into_iter()
        .map(|node| NodeRow {
            latest_context: latest
                .remove(&node.node_id)
                .and_then(|docs| latest_context(&docs, &settings, &mut cache)),
            node,
        })
        .collect();
    let report = NodesReport {
        conversation_id: thread.info.id.clone(),
        conversation_name: thread.info.name.clone(),
        deleted: thread.info.is_deleted,
        app_mode: thread.info.app_mode.clone(),
        empty,
        thread_turns: thread.turns.len(),
        archived_turns: thread.archived.len(),
        counter: settings.counter.description(),
        nodes,
    };
    Ok(report)
}

#[derive(Serialize)]
pub(super) struct ContextReport {
    conversation_id: String,
    /// Deleted in Dify (hidden there); shown as stored.
    deleted: bool,
    node_id: String,
    node_title: String,
    source: ContextSource,
    leaf: Option<String>,
    run_id: Option<String>,
    execution_id: Option<String>,
    offloaded: bool,
    empty: Option<EmptyState>,
    /// Per-item problems: the rest of the context still shows.
    problems: Vec<NodeProblem>,
    missing_runs: Vec<String>,
    #[serde(flatten)]
    budget: BudgetFigures,
    dropped: usize,
    warnings: Vec<String>,
    messages: Vec<BudgetLine>,
    timeline: Timeline,
    sparkline: String,
}

fn render_context(r: &ContextReport) -> String {
    let mut out = deleted_banner(r.deleted).to_owned();
    out += &format!(
        "conversation {} node {}{}: {}\n",
        r.conversation_id,
        r.node_id,
        if r.node_title.is_empty() {
            String::new()
        } else {
            format!(" {:?}", r.node_title)
        },
        r.source.describe()
    );
    if let Some(run) = &r.run_id {
        out.push_str(&format!(
            "run {run}, execution {}{}\n",
            r.execution_id.as_deref().unwrap_or("none"),
            if r.offloaded {
                " (outputs read from the offloaded upload)"
            } else {
                ""
            }
        ));
    }
    if let Some(empty) = &r.empty {
        out.push_str(&format!("empty: {empty}\n"));
    }
    for problem in &r.problems {
        out.push_str(&format!("error: {problem}\n"));
    }
    if !r.missing_runs.is_empty() {
        out.push_str(&format!(
            "{} thread runs have no turn in the file (skipped, as Dify does)\n",
            r.missing_runs.len()
        ));
    }
    out.push_str(&r.budget.describe(r.dropped, r.messages.len()));
    for warning in &r.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out.push('\n');
    out.push_str(&budget_table(&r.messages, r.dropped));
    out.push_str(&format!(
        "\n\ntimeline ({}): {}\n",
        crate::format::count(r.timeline.turns.len() as u64, "turn"),
        r.sparkline
    ));
    let turns: Vec<Vec<String>> = r
        .timeline
        .turns
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            let mut notes: Vec<String> = turn
                .disagreement
                .iter()
                .map(|d| format!("file vs output: {d}"))
                .collect();
            notes.extend(turn.problems.iter().map(ToString::to_string));
            vec![
                (i + 1).to_string(),
                short_id(&turn.message_id).to_owned(),
                short_id(&turn.workflow_run_id).to_owned(),
                turn.status.clone().unwrap_or_else(|| "not run".to_owned()),
                turn.context_messages
                    .map_or(String::new(), |n| thousands(n as u64)),
                turn.prompt_messages
                    .map_or(String::new(), |n| thousands(n as u64)),
                one_line(&notes.join("; "), 70),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "turn", "message", "run", "status", "context", "prompts", "notes",
        ],
        &turns,
    ));
    out
}

impl From<NodeSource> for ContextSource {
    fn from(source: NodeSource) -> Self {
        match source {
            NodeSource::Files => ContextSource::Files,
            NodeSource::Outputs => ContextSource::Outputs,
            NodeSource::Prompts => ContextSource::Prompts,
        }
    }
}

/// The conversation's node that `typed` names, by id or by unique title. A conversation that
/// is no chatflow has no nodes: its empty state says so, under the name as typed.
async fn find_node(
    store: &crate::store::Store,
    thread: &NodeThread,
    typed: &str,
) -> CliResult<NodeSummary> {
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

/// One node's context on a conversation's thread at `leaf`, read from `source`.
pub async fn load_context(
    context: &Context,
    store: &crate::store::Store,
    conversation: &str,
    node: &str,
    leaf: Option<&str>,
    source: ContextSource,
) -> CliResult<crate::inspect::nodes::NodeContext> {
    let thread = thread(store, conversation, leaf).await?;
    let node = find_node(store, &thread, node).await?;
    let sources = load_node_sources(store, &context.storage()?, &thread, &node.node_id).await?;
    Ok(node_context(&thread, &sources, source))
}

pub async fn context(context: &Context, args: &NodeContextArgs) -> CliResult {
    let store = context.open_for(Part::NodeContexts).await?;
    let report = context_report(context, &store, args).await?;
    emit(context.global.json, &report, render_context)?;
    Ok(ExitCode::Ok)
}

/// One node's context with its budget and timeline (`export` bundles each node's).
pub(super) async fn context_report(
    context: &Context,
    store: &Store,
    args: &NodeContextArgs,
) -> CliResult<ContextReport> {
    let settings = settings(context, &args.tokens, args.max_tokens)?;
    let thread = thread(store, &args.conversation, args.leaf.as_deref()).await?;
    let node = find_node(store, &thread, &args.node).await?;
    let storage = context.storage()?;
    let sources = load_node_sources(store, &storage, &thread, &node.node_id).await?;
    let executions = load_timeline(store, &storage, &thread, &node.node_id).await?;
    let source = ContextSource::from(args.source);
    let mut cache = CountCache::default();
    let view = NodeContextView::compute(
        node_context(&thread, &sources, source),
        &settings,
        &mut cache,
    );
    let timeline = timeline(&thread, &node.node_id, &sources.memory_file, &executions);
    let budget = &view.budget;
    let report = ContextReport {
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
    };
    Ok(report)
}
