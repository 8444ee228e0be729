//! A LangGraph thread: its checkpoint tree (left) beside the selected checkpoint's messages
//! under the budget, or its node writes (`o`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::common::{Component, framed, highlighted, middle_cut, placeholder};
use crate::format::{count, display_width, one_line, thousands};
use crate::sources::checkpoint_history::{CheckpointLine, ThreadTree, TreeRow};
use crate::tui::state::checkpoints::{CheckpointPane, CheckpointsState, ShownCheckpoint};
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

/// Characters of a checkpoint id in the tree: LangGraph's ids share their start (a time), so
/// they are cut in the middle and keep their distinct end.
const ID_WIDTH: usize = 13;

pub struct CheckpointsView;

impl Component for CheckpointsView {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let Some(thread) = &state.checkpoints else {
            frame.render_widget(placeholder("No thread open.", theme.dim), area);
            return;
        };
        let tree = match (&thread.status, &thread.tree) {
            (LoadStatus::Failed(error), _) => {
                let text = format!("Could not load thread {}: {error}", thread.thread_id);
                frame.render_widget(placeholder(text, theme.error), area);
                return;
            }
            (_, Some(tree)) => tree,
            (_, None) => {
                let text = format!("Loading the checkpoints of thread {}…", thread.thread_id);
                frame.render_widget(placeholder(text, theme.dim), area);
                return;
            }
        };
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(area);
        draw_tree(thread, tree, theme, frame, left);
        match thread.pane {
            CheckpointPane::Messages => draw_messages(thread, theme, frame, right),
            CheckpointPane::Writes => draw_writes(thread, theme, frame, right),
        }
    }
}

/// The tree pane: one line a checkpoint, branches indented under their parent, a subgraph's
/// checkpoints under the root checkpoint its task started from. Only the lines on screen are
/// built.
pub fn draw_tree(
    thread: &CheckpointsState,
    tree: &ThreadTree,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let title = format!(
        "Thread {} · {}",
        one_line(&thread.thread_id, 24),
        count(tree.checkpoint_count() as u64, "checkpoint"),
    );
    // The legend goes first on a narrow pane: the thread and its count keep their room.
    let legend = " · ● on the path";
    let title = match display_width(&title) + display_width(legend) + 4 <= usize::from(area.width) {
        true => format!("{title}{legend}"),
        false => title,
    };
    let inner = framed(&title, theme, frame, area);
    if thread.rows.is_empty() {
        frame.render_widget(
            placeholder("This thread has no checkpoint.", theme.dim),
            inner,
        );
        return;
    }
    let height = usize::from(inner.height);
    let width = usize::from(inner.width);
    // The cursor stays in the middle, unless the tree's end is in view.
    let offset = thread
        .cursor
        .saturating_sub(height.saturating_sub(1) / 2)
        .min(thread.rows.len().saturating_sub(height));
    let lines: Vec<Line> = thread
        .rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(position, &row)| {
            let selected = position == thread.cursor;
            // The selection is marked in text too, for terminals without colour.
            let text = format!(
                "{}{}",
                if selected { "▸" } else { " " },
                tree_line(tree, row, width)
            );
            let (_, checkpoint) = tree.line(row);
            let style = if selected {
                theme.selected
            } else if checkpoint.on_thread {
                theme.thread
            } else {
                theme.dim
            };
            Line::styled(one_line(&text, width), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `● 1f0c…a2b3 step 2 loop by agent (2/2) latest`, indented by branch depth; a subgraph's
/// line names its node.
fn tree_line(tree: &ThreadTree, row: TreeRow, width: usize) -> String {
    let (_, checkpoint) = tree.line(row);
    let (indent, subgraph) = match row.subgraph {
        None => (checkpoint.depth, String::new()),
        Some(index) => {
            let root_depth = tree.subgraphs[index]
                .root_checkpoint
                .as_deref()
                .and_then(|root| tree.nodes.iter().find(|n| n.id == root))
                .map_or(0, |root| root.depth + 1);
            (
                root_depth + checkpoint.depth,
                format!("↳ {}: ", tree.subgraphs[index].node),
            )
        }
    };
    let marker = if checkpoint.on_thread { "●" } else { "○" };
    format!(
        "{}{marker} {subgraph}{}",
        "  ".repeat(indent.min(width / 4)),
        describe(checkpoint, row.subgraph.is_none())
    )
}

/// A checkpoint's id, step, source, the nodes that wrote it, its place among its siblings and,
/// on the root graph, whether it is the latest (the one `get_state` reads).
fn describe(checkpoint: &CheckpointLine, root: bool) -> String {
    let mut text = format!(
        "{} step {} {}",
        middle_cut(&checkpoint.id, ID_WIDTH),
        checkpoint.step.map_or("?".to_owned(), |s| s.to_string()),
        checkpoint.source.as_deref().unwrap_or("?"),
    );
    if !checkpoint.nodes.is_empty() {
        text += &format!(" by {}", checkpoint.nodes.join(", "));
    }
    let (position, siblings) = checkpoint.sibling;
    if siblings > 1 {
        text += &format!(" ({position}/{siblings})");
    }
    if root && checkpoint.latest {
        text += " ★ latest";
    }
    text
}

/// The shown checkpoint (a newer selection may be on its way: the title says so), or the pane
/// saying why there is none.
fn shown_or_placeholder<'a>(
    thread: &'a CheckpointsState,
    title: &str,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> Option<&'a ShownCheckpoint> {
    let (text, style) = match (&thread.shown_status, &thread.shown) {
        (LoadStatus::Failed(error), _) => (
            format!("Could not read this checkpoint: {error}"),
            theme.error,
        ),
        (_, Some(shown)) => return Some(shown),
        (_, None) => ("Reading the checkpoint…".to_owned(), theme.dim),
    };
    let inner = framed(title, theme, frame, area);
    frame.render_widget(placeholder(text, style), inner);
    None
}

/// The selected checkpoint's `messages` channel: each message's tokens, the tokens from it on,
/// and where the recommended trim cuts under the budget. The newest messages stay in view.
fn draw_messages(thread: &CheckpointsState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(shown) = shown_or_placeholder(thread, " Messages ", theme, frame, area) else {
        return;
    };
    let checkpoint = &shown.state;
    let title = format!(
        " Messages at {}{} · {} ",
        middle_cut(&checkpoint.checkpoint_id, ID_WIDTH),
        if thread.shown_status.is_loading() {
            " (reading…)"
        } else {
            ""
        },
        checkpoint.ts,
    );
    let inner = framed(&title, theme, frame, area);
    let width = usize::from(inner.width);
    let budget = match &shown.budget {
        Ok(budget) => budget,
        Err(error) => {
            frame.render_widget(placeholder(error.clone(), theme.error), inner);
            return;
        }
    };
    let tokens = format!(
        "budget {}: {} before, {} after;",
        count(shown.max_tokens, "token"),
        thousands(budget.tokens_before),
        thousands(budget.tokens_after),
    );
    let dropped = format!(
        "{} of {} dropped",
        thousands(budget.dropped() as u64),
        count(budget.kept.len() as u64, "message"),
    );
    // The numbers stay whole: on a narrow pane the line wraps before what was dropped.
    let numbers = if display_width(&tokens) + 1 + display_width(&dropped) <= width {
        vec![format!("{tokens} {dropped}")]
    } else {
        vec![tokens, dropped]
    };
    let mut lines: Vec<Line> = numbers
        .iter()
        .map(|text| Line::styled(one_line(text, width), theme.text))
        .collect();
    lines.push(Line::styled(
        one_line(&format!("cut by {}", budget.rule), width),
        theme.dim,
    ));
    for warning in &checkpoint.warnings {
        lines.push(Line::styled(
            one_line(&format!("⚠ {warning}"), width),
            theme.warning,
        ));
    }
    if budget.prompt.is_empty() {
        lines.push(Line::styled("No messages in this state.", theme.dim));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let mut rows = Vec::with_capacity(budget.prompt.len() + 1);
    // The row of the message a search went to, kept in view.
    let mut wanted = None;
    let search = thread.search.as_ref();
    for (index, message) in budget.prompt.iter().enumerate() {
        if index > 0 && budget.kept[index] && !budget.kept[index - 1] {
            rows.push(Line::styled(
                one_line("── cut line: the messages above are not sent ──", width),
                theme.warning,
            ));
        }
        let calls = message
            .tool_calls
            .iter()
            .map(|call| format!(" → {}({})", call.name, call.arguments))
            .collect::<String>();
        let text = format!(
            "{index:>3} {:<9} {:>6} {:>7}  {}{calls}",
            message.role.as_str(),
            thousands(budget.tokens[index]),
            thousands(budget.from_here[index]),
            message.content.text(),
        );
        let style = if budget.kept[index] {
            theme.text
        } else {
            theme.dim
        };
        let style = match search {
            Some(search) if search.holds(index) => style.add_modifier(Modifier::UNDERLINED),
            _ => style,
        };
        if thread.message_at == Some(index) {
            wanted = Some(rows.len());
        }
        let query = search.map(|s| s.query.as_str());
        rows.push(Line::from(highlighted(
            &one_line(&text, width),
            query,
            style,
        )));
    }
    let room = usize::from(inner.height).saturating_sub(lines.len());
    let newest = rows.len().saturating_sub(room);
    let skip = wanted.map_or(newest, |row| row.saturating_sub(room / 2).min(newest));
    lines.extend(rows.into_iter().skip(skip));
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The writes of the tasks that started from the selected checkpoint: the node, the channel
/// and the value (`i` shows them whole).
fn draw_writes(thread: &CheckpointsState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(shown) = shown_or_placeholder(thread, " Node writes ", theme, frame, area) else {
        return;
    };
    let checkpoint = &shown.state;
    let title = format!(
        " Node writes from {} · {} ",
        middle_cut(&checkpoint.checkpoint_id, ID_WIDTH),
        thousands(checkpoint.writes.len() as u64),
    );
    let inner = framed(&title, theme, frame, area);
    if checkpoint.writes.is_empty() {
        frame.render_widget(
            placeholder(
                "No task that started from this checkpoint wrote anything: it is where its \
                 branch ends, or the thread stopped here.",
                theme.dim,
            ),
            inner,
        );
        return;
    }
    let width = usize::from(inner.width);
    let lines: Vec<Line> = checkpoint
        .writes
        .iter()
        .take(usize::from(inner.height))
        .map(|write| {
            let node = write.node.as_deref().unwrap_or("update_state");
            let (value, style) = match &write.value {
                Ok(value) => (value.to_string(), theme.text),
                Err(error) => (format!("unreadable: {error}"), theme.error),
            };
            let text = format!("{node} → {}: {value}", write.channel);
            Line::styled(one_line(&text, width), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
