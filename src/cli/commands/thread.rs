//! `thread`: the message tree with a thread marked, and where Dify's extraction and the tree
//! path part ways.

use serde::Serialize;

use crate::cli::args::{ThreadArgs, ThreadMode as ModeArg};
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, deleted_banner, emit};
use crate::format::one_line;
use crate::inspect::conversation::{
    LoadedConversation, ThreadMode, ThreadView, effective_window, load_conversation, thread_view,
};
use crate::memory::history::PAUSED_STATUS;
use crate::memory::tree::MessageTree;
use crate::store::{ConversationShape, Part, Store};

#[derive(Serialize)]
struct Node {
    id: String,
    parent: Option<String>,
    depth: usize,
    /// Position among its siblings (regenerations), 1-based, and how many there are.
    sibling: (usize, usize),
    on_thread: bool,
    status: String,
    /// The app mode the message recorded (`messages.app_mode`), where the column exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    app_mode: Option<String>,
    query: String,
    answer: String,
}

#[derive(Serialize)]
pub(super) struct Report {
    conversation_id: String,
    conversation_name: String,
    /// `conversations.mode`: a message that recorded another mode is marked.
    conversation_mode: String,
    /// Deleted in Dify (hidden there); shown as stored.
    deleted: bool,
    #[serde(flatten)]
    view: ThreadView,
    nodes: Vec<Node>,
}

fn nodes(conversation: &LoadedConversation, tree: &MessageTree, view: &ThreadView) -> Vec<Node> {
    let on_thread: std::collections::HashSet<&str> =
        view.thread.iter().map(String::as_str).collect();
    tree.visible(|_| false)
        .map(|visible| {
            let row = &conversation.rows[tree.row(visible.node)];
            let (position, count) = tree.sibling_position(visible.node);
            Node {
                id: row.id.clone(),
                parent: tree.parent(visible.node).map(|p| tree.id(p).to_owned()),
                depth: visible.branch_depth,
                sibling: (position + 1, count),
                on_thread: on_thread.contains(row.id.as_str()),
                status: row.status.clone(),
                app_mode: row.app_mode.clone(),
                query: row.query.clone(),
                answer: row.answer.clone(),
            }
        })
        .collect()
}

/// Branch depths drawn as indentation; deeper lines stay at this indentation and name their
/// depth. A conversation regenerated thousands of times along one chain nests that deep, and
/// indenting every level made its output quadratic in its length (127 MB for 50,000 messages).
const MAX_INDENT_DEPTH: usize = 8;

/// Two columns a branch level, up to [`MAX_INDENT_DEPTH`]; beyond it, `│ [depth N] `.
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT_DEPTH {
        "  ".repeat(depth)
    } else {
        format!("{}│ [depth {depth}] ", "  ".repeat(MAX_INDENT_DEPTH - 1))
    }
}

fn render(report: &Report) -> String {
    let view = &report.view;
    let mut out = deleted_banner(report.deleted).to_owned();
    out += &format!(
        "conversation {} \"{}\"\nthread ({}, window {}): {}, oldest first; ● on the thread, ○ off it\n",
        report.conversation_id,
        report.conversation_name,
        view.mode.describe(),
        view.window,
        crate::format::count(view.thread.len() as u64, "message")
    );
    if report
        .nodes
        .iter()
        .any(|node| node.depth > MAX_INDENT_DEPTH)
    {
        out += &format!(
            "branches nest deeper than {MAX_INDENT_DEPTH} levels: deeper messages are drawn at that indentation with their depth\n"
        );
    }
    out.push('\n');
    for node in &report.nodes {
        let marker = if node.on_thread { '●' } else { '○' };
        let siblings = if node.sibling.1 > 1 {
            format!(" [{}/{}]", node.sibling.0, node.sibling.1)
        } else {
            String::new()
        };
        let answer = match (node.answer.is_empty(), node.status.as_str()) {
            (_, "error") => "(error)".to_owned(),
            (true, PAUSED_STATUS) => "(paused for human input, nothing answered yet)".to_owned(),
            (false, PAUSED_STATUS) => {
                format!("{} (paused for human input)", one_line(&node.answer, 40))
            }
            (true, _) => "(empty answer)".to_owned(),
            (false, _) => one_line(&node.answer, 40),
        };
        let mode = match &node.app_mode {
            Some(mode) if *mode != report.conversation_mode => format!("  [answered as {mode}]"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{}{marker} {}{siblings}  Q: {}  A: {}{mode}\n",
            indent(node.depth),
            &node.id[..node.id.len().min(8)],
            one_line(&node.query, 40),
            answer,
        ));
    }
    out.push_str(&format!("\n{}\n", view.comparison_text));
    for anomaly in &view.anomalies {
        out.push_str(&format!("anomaly: {anomaly}\n"));
    }
    out
}

pub async fn run(context: &Context, args: &ThreadArgs) -> CliResult {
    let store = context.open().await?;
    if store.profile().capabilities().conversations == ConversationShape::CheckpointThreads {
        return super::langgraph::thread(context, &store, args).await;
    }
    store.require(Part::Conversations)?;
    let report = report(context, &store, args).await?;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

/// What `thread` shows of a conversation (`export` bundles it too).
pub(super) async fn report(
    context: &Context,
    store: &Store,
    args: &ThreadArgs,
) -> CliResult<Report> {
    let conversation = load_conversation(store, &args.conversation).await?;
    let tree = conversation.tree();
    let leaf = args
        .leaf
        .as_deref()
        .map(|id| conversation.find(&tree, id))
        .transpose()?;
    let (window, _) = effective_window(
        Some(context.resolved.config.history.message_limit),
        conversation.info.memory_window,
    );
    let mode = match args.mode {
        ModeArg::Dify => ThreadMode::Dify,
        ModeArg::Fixed => ThreadMode::Fixed,
        ModeArg::Tree => ThreadMode::Tree,
    };
    let view = thread_view(&conversation, &tree, leaf, mode, window);
    Ok(Report::of(&conversation, &tree, view))
}

impl Report {
    fn of(conversation: &LoadedConversation, tree: &MessageTree, view: ThreadView) -> Report {
        Report {
            conversation_id: conversation.info.id.clone(),
            conversation_name: conversation.info.name.clone(),
            conversation_mode: conversation.info.mode.clone(),
            deleted: conversation.info.is_deleted,
            nodes: nodes(conversation, tree, &view),
            view,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::StoredMessage;
    use crate::sources::dify::queries::ConversationInfo;

    fn time(seconds: i64) -> chrono::NaiveDateTime {
        chrono::DateTime::from_timestamp(1_750_000_000 + seconds, 0)
            .unwrap()
            .naive_utc()
    }

    /// A chain of `turns` where every turn was regenerated once and the chain went on from the
    /// regeneration: every turn is a branch point, so the branch depth grows with the length.
    fn regenerated_chain(turns: usize) -> LoadedConversation {
        let id = |n: usize| format!("{n:08x}-0000-4000-8000-000000000000");
        let mut rows = Vec::new();
        let mut parent: Option<String> = None;
        for turn in 0..turns {
            for attempt in 0..2 {
                let n = rows.len();
                rows.push(StoredMessage::turn(
                    id(n),
                    "conversation",
                    parent.as_deref(),
                    format!("question {turn}"),
                    format!("answer {turn}, attempt {attempt}"),
                    time(n as i64),
                ));
            }
            parent = rows.last().map(|row| row.id.clone());
        }
        let info = ConversationInfo {
            id: "conversation".to_owned(),
            name: "deep".to_owned(),
            mode: "chat".to_owned(),
            status: "normal".to_owned(),
            from_source: "api".to_owned(),
            dialogue_count: rows.len() as i64,
            app_id: "app".to_owned(),
            app_name: None,
            app_mode: Some("chat".to_owned()),
            memory_window: None,
            created_at: time(0),
            updated_at: time(0),
            is_deleted: false,
            answered_rows_only: false,
        };
        LoadedConversation {
            info,
            rows,
            files: Vec::new(),
        }
    }

    fn rendered(turns: usize) -> String {
        let conversation = regenerated_chain(turns);
        let tree = conversation.tree();
        let view = thread_view(&conversation, &tree, None, ThreadMode::Dify, 500);
        let report = Report::of(&conversation, &tree, view);
        assert_eq!(report.nodes.len(), 2 * turns);
        assert_eq!(
            report.nodes.iter().map(|n| n.depth).max(),
            Some(turns - 1),
            "the depth itself is kept in the data"
        );
        render(&report)
    }

    #[test]
    fn deep_regeneration_chains_print_bounded_lines_in_linear_size() {
        let small = rendered(500);
        let large = rendered(2_000);
        let widest = large.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest < 200, "a line is {widest} columns wide");
        // Four times the messages, at most four times the text (plus a few digits a line in
        // the longer numbers); indenting every level would make it sixteen times.
        assert!(
            large.len() <= 4 * small.len() + 4_000 * 4,
            "{} bytes for 4,000 messages against {} for 1,000",
            large.len(),
            small.len()
        );
        assert!(
            large.contains("│ [depth 1999] "),
            "deep lines name their depth"
        );
        assert!(large.contains("branches nest deeper than"));
    }

    #[test]
    fn shallow_trees_indent_two_columns_a_level_without_labels() {
        assert_eq!(indent(0), "");
        assert_eq!(indent(3), "      ");
        assert_eq!(indent(MAX_INDENT_DEPTH).len(), 2 * MAX_INDENT_DEPTH);
        assert!(indent(MAX_INDENT_DEPTH + 1).starts_with(&"  ".repeat(MAX_INDENT_DEPTH - 1)));
        let text = rendered(3);
        assert!(!text.contains("[depth"), "{text}");
        assert!(!text.contains("branches nest deeper"));
    }
}
