//! `conversations`, `thread` and `history` on a LangGraph checkpoint database: one conversation
//! per thread, the thread's checkpoint tree (read without decoding a checkpoint), and the
//! `messages` channel at a checkpoint with its token budget and the cut of the trim LangGraph's
//! documentation recommends.

use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::Value as Json;

use super::page::Page;
use crate::cli::args::{ConversationsArgs, HistoryArgs, ThreadArgs, ThreadMode};
use crate::cli::context::{Context, context_window_of, counter_from};
use crate::cli::output::{CliError, CliResult, ExitCode, emit, table};
use crate::format::{count, one_line, thousands};
use crate::sources::langgraph::checkpoint_tree::{CheckpointLine, ThreadTree};
use crate::inspect::sessions::SessionError;
use crate::sources::langgraph::decode::budget::{MessagesBudget, RECOMMENDED_TRIM};
use crate::sources::langgraph::decode::message::{LangChainMessage, LangChainToolCall};
use crate::sources::langgraph::decode::tree::CheckpointTree;
use crate::memory::models::ContextWindowFields;
use crate::memory::tokens::CounterFields;
use crate::sources::langgraph::saver::{LangGraphDb, LangGraphError};
use crate::sources::langgraph::threads::ThreadRow;
use crate::store::{CancelFlag, Store};

const LIST_HEADERS: [&str; 4] = ["thread", "messages", "checkpoints", "last activity"];

fn list_cells(t: &ThreadRow) -> [String; 4] {
    [
        one_line(&t.id, 36),
        t.messages
            .map_or_else(|| "unreadable".to_owned(), |n| thousands(n as u64)),
        thousands(t.checkpoints),
        t.last_activity.clone().unwrap_or_default(),
    ]
}

/// Why each listed thread's messages could not be counted, in full.
fn unreadable_lines(threads: &[ThreadRow]) -> String {
    threads
        .iter()
        .filter_map(|t| {
            Some(format!(
                "\nunreadable: thread {}: {}",
                t.id,
                t.error.as_deref()?
            ))
        })
        .collect()
}

fn render_page(page: &Page<ThreadRow>) -> String {
    let mut out = page.render(&LIST_HEADERS, |t| list_cells(t).to_vec());
    out += &unreadable_lines(page.conversations);
    out
}

pub async fn conversations(
    context: &Context,
    store: &Store,
    args: &ConversationsArgs,
) -> CliResult {
    if args.app.is_some() || args.include_deleted {
        return Err(CliError::usage(
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
    let search = args.search.as_deref().filter(|s| !s.is_empty());
    if let (Some(search), false) = (search, context.global.json) {
        return print_while_searching(&db, search, offset, args.limit as usize).await;
    }
    let page = db.thread_page(search, offset, args.limit as usize).await?;
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

/// Widths of the streamed table: a row is printed before the next is known.
const STREAM_WIDTHS: [usize; 4] = [36, 10, 11, 32];

fn stream_line(cells: &[String; 4]) -> String {
    let padded: Vec<String> = cells
        .iter()
        .zip(STREAM_WIDTHS)
        .enumerate()
        .map(|(i, (cell, w))| {
            if i == 1 || i == 2 {
                format!("{cell:>w$}")
            } else {
                format!("{cell:<w$}")
            }
        })
        .collect();
    padded.join("  ").trim_end().to_owned()
}

/// A search reads every thread's latest checkpoint: each match prints as it is found (Ctrl-C
/// stops the scan), the reasons a thread could not be read after it.
async fn print_while_searching(
    db: &LangGraphDb,
    search: &str,
    offset: usize,
    limit: usize,
) -> CliResult {
    use std::io::Write;
    eprintln!("searching every thread's latest messages: matches print as found");
    let mut out = std::io::stdout();
    let (mut skipped, mut printed, mut more) = (0, 0, false);
    let mut unreadable = Vec::new();
    let mut write_error = None;
    db.scan_threads(Some(search), &CancelFlag::default(), |row| {
        if skipped < offset {
            skipped += 1;
            return ControlFlow::Continue(());
        }
        if printed == limit {
            more = true;
            return ControlFlow::Break(());
        }
        let mut text = String::new();
        if printed == 0 {
            text += &stream_line(&LIST_HEADERS.map(str::to_owned));
            text.push('\n');
        }
        text += &stream_line(&list_cells(&row));
        text.push('\n');
        printed += 1;
        if row.error.is_some() {
            unreadable.push(row);
        }
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            write_error.get_or_insert(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })
    .await?;
    let mut tail = match (printed, more) {
        (0, _) => "no conversations".to_owned(),
        (_, true) => format!("\nmore: --after {}", offset + printed),
        (_, false) => String::new(),
    };
    tail += &unreadable_lines(&unreadable);
    if !tail.is_empty() {
        tail.push('\n');
    }
    let written = match write_error {
        Some(e) => Err(e),
        None => out.write_all(tail.as_bytes()),
    };
    match written {
        // A closed pipe (`memscope … | head`) is not an error worth a message.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::Ok),
    }
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
        "thread {}: {}, {} on the path to {}\n* marks the path\n\n",
        report.thread_id,
        count(report.nodes.len() as u64, "checkpoint"),
        thousands(report.thread.len() as u64),
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

fn thread_report(
    thread_id: &str,
    tree: &CheckpointTree,
    leaf: Option<&str>,
) -> CliResult<ThreadTree> {
    ThreadTree::of(thread_id, tree, leaf).map_err(|error| {
        LangGraphError::UnknownCheckpoint {
            thread: thread_id.to_owned(),
            error,
        }
        .into()
    })
}

pub async fn thread(context: &Context, store: &Store, args: &ThreadArgs) -> CliResult {
    if args.mode != ThreadMode::Dify {
        return Err(CliError::usage(
            "--mode is Dify's: a LangGraph thread's path is its parent links",
        ));
    }
    let report = tree_report(store, &args.conversation, args.leaf.as_deref()).await?;
    emit(context.global.json, &report, render_thread)?;
    Ok(ExitCode::Ok)
}

/// A thread's checkpoint tree with the path to `leaf` (to the latest without one), as `thread`
/// prints it (`export` bundles it too).
pub(super) async fn tree_report(
    store: &Store,
    thread_id: &str,
    leaf: Option<&str>,
) -> CliResult<ThreadTree> {
    let db = LangGraphDb::open(store)?;
    let tree = db.tree(thread_id).await?;
    thread_report(thread_id, &tree, leaf)
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
pub(super) struct HistoryReport {
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
        "thread {} at checkpoint {} ({})\ncounter {}\nbudget {} tokens under {}: {} before, {} after; {} of {} dropped\n",
        r.thread_id,
        r.checkpoint_id,
        r.ts,
        r.counter,
        thousands(r.max_tokens),
        r.trim,
        thousands(r.tokens_before),
        thousands(r.tokens_after),
        thousands(r.dropped as u64),
        count((r.dropped + r.kept) as u64, "message"),
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
    let report = history_report(context, store, args).await?;
    emit(context.global.json, &report, render_history)?;
    Ok(ExitCode::Ok)
}

/// The `messages` channel at a checkpoint with its budget, as `history` prints it (`export`
/// bundles it too).
pub(super) async fn history_report(
    context: &Context,
    store: &Store,
    args: &HistoryArgs,
) -> CliResult<HistoryReport> {
    if args.flow.is_some()
        || args.n_messages.is_some()
        || args.context_id.is_some()
        || args.message_limit.is_some()
        || args.text
    {
        return Err(CliError::usage(
            "--flow, --n-messages, --context-id, --message-limit and --text are Dify's and \
             Langflow's: a LangGraph thread's history is its `messages` channel",
        ));
    }
    let db = LangGraphDb::open(store)?;
    let checkpoint = match &args.leaf {
        Some(leaf) => db
            .tree(&args.conversation)
            .await?
            .resolve(leaf)
            .map(str::to_owned)
            .map_err(|error| LangGraphError::UnknownCheckpoint {
                thread: args.conversation.clone(),
                error,
            })?,
        None => db
            .latest_checkpoint(&args.conversation)
            .await?
            .ok_or_else(|| CliError::from(SessionError::NoCheckpoint(args.conversation.clone())))?,
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
    Ok(report)
}
