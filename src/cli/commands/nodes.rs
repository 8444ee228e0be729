//! `nodes` and `node-context`: the nodes that ran in a chatflow conversation, and what one node
//! remembers (design A or B) and actually sent, with its token budget and timeline.

use super::budget::{budget_table, short_id};
use crate::cli::args::{NodeContextArgs, NodeSource, NodesArgs, TokenArgs};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliResult, ExitCode, deleted_banner, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::nodes::report::{
    self, ContextReport, NodesReport, find_node, node_thread, nodes_report,
};
use crate::inspect::nodes::{ContextSource, load_node_sources, node_context};
use crate::memory::budget_view::BudgetSettings;
use crate::memory::history::HistoryOptions;
use crate::store::{Part, Store};

pub(super) fn settings(
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

async fn list_report(context: &Context, store: &Store, args: &NodesArgs) -> CliResult<NodesReport> {
    let settings = settings(context, &args.tokens, None)?;
    let storage = context.storage()?;
    let leaf = args.leaf.as_deref();
    Ok(nodes_report(store, &storage, &settings, &args.conversation, leaf).await?)
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

/// One node's context on a conversation's thread at `leaf`, read from `source`.
pub async fn load_context(
    context: &Context,
    store: &crate::store::Store,
    conversation: &str,
    node: &str,
    leaf: Option<&str>,
    source: ContextSource,
) -> CliResult<crate::inspect::nodes::NodeContext> {
    let thread = node_thread(store, conversation, leaf).await?;
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

async fn context_report(
    context: &Context,
    store: &Store,
    args: &NodeContextArgs,
) -> CliResult<ContextReport> {
    let settings = settings(context, &args.tokens, args.max_tokens)?;
    let storage = context.storage()?;
    Ok(report::context_report(
        store,
        &storage,
        &settings,
        &args.conversation,
        &args.node,
        args.leaf.as_deref(),
        ContextSource::from(args.source),
    )
    .await?)
}
