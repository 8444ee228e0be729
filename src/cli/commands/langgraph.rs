//! `conversations`, `thread` and `history` on a LangGraph checkpoint database: one conversation
//! per thread, the thread's checkpoint tree (read without decoding a checkpoint), and the
//! `messages` channel at a checkpoint with its token budget and the cut of the trim LangGraph's
//! documentation recommends.

use serde::Serialize;
use serde_json::Value as Json;

use super::page::Page;
use crate::cli::args::{ConversationsArgs, HistoryArgs, ThreadArgs, ThreadMode};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliError, CliResult, ExitCode, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::langgraph_thread::{CheckpointLine, ThreadTree};
use crate::memory::langgraph::budget::{MessagesBudget, RECOMMENDED_TRIM};
use crate::memory::langgraph::message::{LangChainMessage, LangChainToolCall};
use crate::memory::models::ContextWindowFields;
use crate::memory::tokens::CounterFields;
use crate::sources::langgraph::saver::LangGraphDb;
use crate::sources::langgraph::threads::ThreadRow;
use crate::store::Store;

fn render_page(page: &Page<ThreadRow>) -> String {
    page.render(
        &["thread", "messages", "checkpoints", "last activity"],
        |t| {
            vec![
                one_line(&t.id, 36),
                t.messages.map_or_else(
                    || format!("unread: {}", one_line(t.error.as_deref().unwrap_or(""), 40)),
                    |n| thousands(n as u64),
                ),
                thousands(t.checkpoints),
                t.last_activity.clone().unwrap_or_default(),
            ]
        },
    )
}

pub async fn conversations(
    context: &Context,
    store: &Store,
    args: &ConversationsArgs,
) -> CliResult {
    if args.app.is_some() || args.include_deleted {
        return Err(CliError::failure(
            "--app and --include-deleted are Dify's: a LangGraph database lists one \
             conversation per thread",
        ));
    }
    let db = LangGraphDb::open(store)?;
    // Pages continue at an offset, printed as the cursor.
    let offset = match args.after.as_deref() {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| {
            CliError::failure(format!(
                "`{text}` is not a cursor printed by `conversations`"
            ))
        })?,
    };
    let page = db
        .thread_page(args.search.as_deref(), offset, args.limit as usize)
        .await?;
    let next = page
        .has_more
        .then(|| (offset + page.threads.len()).to_string());
    emit(
        context.global.json,
        &Page {
            conversations: &page.threads,
            next,
        },
        render_page,
    )?;
    Ok(ExitCode::Ok)
}

fn node_line(node: &CheckpointLine) -> String {
    format!(
        "{}{} {} step {} {}{}{}",
        "  ".repeat(node.depth),
        if node.on_thread { "*" } else { "-" },
        node.id,
        node.step.map_or("?".to_owned(), |s| s.to_string()),
        node.source.as_deref().unwrap_or("?"),
        if node.nodes.is_empty() {
            String::new()
        } else {
            format!(" by {}", node.nodes.join(", "))
        },
        if node.latest { "  (latest)" } else { "" },
    )
}

fn render_thread(report: &ThreadTree) -> String {
    let mut out = format!(
        "thread {}: {} checkpoints, {} on the path to {}\n* marks the path\n\n",
        report.thread_id,
        report.nodes.len(),
        report.thread.len(),
        report.leaf.as_deref().unwrap_or("(none)"),
    );
    for node in &report.nodes {
        out += &node_line(node);
        out.push('\n');
    }
    for subgraph in &report.subgraphs {
        out += &format!(
            "\nsubgraph {} (node {}, from {}):\n",
            subgraph.namespace,
            subgraph.node,
            subgraph.root_checkpoint.as_deref().unwrap_or("?")
        );
        for node in &subgraph.nodes {
            out += &node_line(node);
            out.push('\n');
        }
    }
    out
}

pub async fn thread(context: &Context, store: &Store, args: &ThreadArgs) -> CliResult {
    if args.mode != ThreadMode::Dify {
        return Err(CliError::failure(
            "--mode is Dify's: a LangGraph thread's path is its parent links",
        ));
    }
    let db = LangGraphDb::open(store)?;
    let tree = db.tree(&args.conversation).await?;
    let report = ThreadTree::of(&args.conversation, &tree, args.leaf.as_deref())
        .map_err(|e| CliError::not_found(format!("thread {}: {e}", args.conversation)))?;
    emit(context.global.json, &report, render_thread)?;
    Ok(ExitCode::Ok)
}

/// One message of the state, with LangChain's fields and its place in the budget.
#[derive(Serialize)]
struct Line {
    index: usize,
    /// LangChain's type: `human`, `ai`, `system`, `tool`.
    #[serde(rename = "type")]
    kind: String,
    class: String,
    id: Option<String>,
    name: Option<String>,
    /// The content as stored: a string or a list of blocks.
    content: Json,
    /// The text a counter reads.
    text: String,
    tool_calls: Vec<LangChainToolCall>,
    tool_call_id: Option<String>,
    status: Option<String>,
    usage_metadata: Option<Json>,
    tokens: u32,
    tokens_from_here: u64,
    kept: bool,
}

#[derive(Serialize)]
struct HistoryReport {
    thread_id: String,
    checkpoint_id: String,
    ts: String,
    /// The trim whose cut this is.
    trim: &'static str,
    /// The counter in words; `counter_kind`, `encoding` and `model` are its machine fields.
    counter: String,
    #[serde(flatten)]
    counter_fields: CounterFields,
    model: String,
    max_tokens: i64,
    tokens_before: u64,
    tokens_after: u64,
    #[serde(flatten)]
    context_window: ContextWindowFields,
    fits_context: Option<bool>,
    dropped: usize,
    kept: usize,
    /// Entries of the channel that are no messages memscope reads, and why.
    unread: Vec<String>,
    warnings: Vec<String>,
    messages: Vec<Line>,
}

fn render_history(r: &HistoryReport) -> String {
    let mut out = format!(
        "thread {} at checkpoint {} ({})\ncounter {}\nbudget {} tokens under {}: {} before, {} after; {} of {} messages dropped\n",
        r.thread_id,
        r.checkpoint_id,
        r.ts,
        r.counter,
        thousands(r.max_tokens),
        r.trim,
        thousands(r.tokens_before),
        thousands(r.tokens_after),
        r.dropped,
        r.dropped + r.kept,
    );
    for line in r.unread.iter().chain(&r.warnings) {
        out += &format!("warning: {line}\n");
    }
    if r.messages.is_empty() {
        out += "\nno messages in this state\n";
        return out;
    }
    let mut rows = Vec::new();
    let mut previous_kept = true;
    for line in &r.messages {
        if !line.kept {
            rows.push(vec![
                line.index.to_string(),
                format!("[dropped] {}", line.kind),
                thousands(line.tokens),
                thousands(line.tokens_from_here),
                one_line(&line_text(line), 60),
            ]);
        } else {
            if !previous_kept {
                rows.push(vec![
                    "──".into(),
                    "── cut line: the dropped messages above are not sent ──".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
            rows.push(vec![
                line.index.to_string(),
                line.kind.clone(),
                thousands(line.tokens),
                thousands(line.tokens_from_here),
                one_line(&line_text(line), 60),
            ]);
        }
        previous_kept = line.kept;
    }
    out.push('\n');
    out += &table(&["#", "message", "tokens", "from here", "content"], &rows);
    out
}

/// The text, and each tool call as `name(args)`.
fn line_text(line: &Line) -> String {
    let calls = line
        .tool_calls
        .iter()
        .map(|c| format!("{}({})", c.name, c.args));
    std::iter::once(line.text.clone())
        .chain(calls)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

pub async fn history(context: &Context, store: &Store, args: &HistoryArgs) -> CliResult {
    if args.flow.is_some()
        || args.n_messages.is_some()
        || args.context_id.is_some()
        || args.message_limit.is_some()
        || args.text
    {
        return Err(CliError::failure(
            "--flow, --n-messages, --context-id, --message-limit and --text are Dify's and \
             Langflow's: a LangGraph thread's history is its `messages` channel",
        ));
    }
    let db = LangGraphDb::open(store)?;
    let checkpoint = match &args.leaf {
        Some(leaf) => leaf.clone(),
        None => db
            .tree(&args.conversation)
            .await?
            .latest()
            .map(|c| c.id.clone())
            .ok_or_else(|| {
                CliError::not_found(format!(
                    "thread {} has no checkpoint of its root graph",
                    args.conversation
                ))
            })?,
    };
    let state = db.state_at(&args.conversation, &checkpoint).await?;
    let (counter, model) = counter_from(context, &args.tokens)?;
    let max_tokens = args
        .max_tokens
        .unwrap_or(context.resolved.config.tokens.budget);
    let budget = MessagesBudget::compute(&state.messages, &counter, max_tokens)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let seen: Vec<&LangChainMessage> = state
        .messages
        .iter()
        .filter(|m| m.role().is_some())
        .collect();
    let messages = seen
        .iter()
        .enumerate()
        .map(|(index, m)| Line {
            index,
            kind: m.kind.clone(),
            class: m.class.clone(),
            id: m.id.clone(),
            name: m.name.clone(),
            content: m.content.clone(),
            text: budget.prompt[index].content.text().into_owned(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            status: m.status.clone(),
            usage_metadata: m.usage_metadata.clone(),
            tokens: budget.tokens[index],
            tokens_from_here: budget.from_here[index],
            kept: budget.kept[index],
        })
        .collect();
    let window = context_window_of(context, &model);
    let report = HistoryReport {
        thread_id: args.conversation.clone(),
        checkpoint_id: state.checkpoint_id,
        ts: state.ts,
        trim: RECOMMENDED_TRIM,
        counter: counter.description(),
        counter_fields: counter.fields(),
        model,
        max_tokens,
        tokens_before: budget.tokens_before,
        tokens_after: budget.tokens_after,
        context_window: window.fields(),
        fits_context: window.tokens().map(|w| budget.tokens_after <= w),
        dropped: budget.dropped(),
        kept: budget.kept.len() - budget.dropped(),
        unread: state
            .unread
            .iter()
            .map(|u| format!("message {}: {}", u.index, u.reason))
            .collect(),
        warnings: state.warnings,
        messages,
    };
    emit(context.global.json, &report, render_history)?;
    Ok(ExitCode::Ok)
}
