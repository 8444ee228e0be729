//! The nodes pane of a chatflow conversation: its nodes, the selected node's context from one
//! source with the live budget, and the node's timeline over the thread.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, SparklineBar};

use super::budget::{self, BudgetOf, Panel};
use super::common::{framed, pane_block, placeholder, short_id};
use crate::format::one_line;
use crate::inspect::nodes::{ContextSource, NodeContextView, Timeline, TimelineTurn};
use crate::tui::state::{AppState, LoadStatus, NodeRow, NodesState};
use crate::tui::theme::Theme;

/// Lines of the timeline panel's sparkline.
const SPARKLINE_HEIGHT: u16 = 2;
/// Height of the timeline panel, borders included.
const TIMELINE_HEIGHT: u16 = 8;
/// At most this many lines of context header (source, run, empty state, per-item errors).
const MAX_HEADER_LINES: usize = 6;

pub fn draw(state: &AppState, nodes: &NodesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(area);
    draw_list(nodes, theme, frame, left);
    let Some(node) = nodes.selected_node() else {
        frame.render_widget(pane_block(" Node context ", theme), right);
        return;
    };
    let header = header_lines(nodes, theme);
    let header_height = (header.len().min(MAX_HEADER_LINES) + 2) as u16;
    let [header_area, budget_area, timeline_area] = Layout::vertical([
        Constraint::Length(header_height),
        Constraint::Min(5),
        Constraint::Length(TIMELINE_HEIGHT),
    ])
    .areas(right);
    let title = format!(" {} · {} ", node.title, nodes.source.describe());
    let inner = framed(&title, theme, frame, header_area);
    frame.render_widget(Paragraph::new(header), inner);
    let panel = Panel {
        view: nodes.context.as_ref().map(|view| &view.budget),
        status: &nodes.context_status,
        of: BudgetOf::NodeContext,
    };
    budget::draw_panel(state, &panel, theme, frame, budget_area);
    draw_timeline(nodes, theme, frame, timeline_area);
}

fn draw_list(nodes: &NodesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let turns = nodes.thread.as_ref().map_or(0, |t| t.turns.len());
    let leaf = nodes.leaf.as_deref().map_or("newest".to_owned(), |leaf| {
        format!("leaf {}", short_id(leaf))
    });
    let title = format!(" Nodes · {leaf} · {turns} turns ");
    let inner = framed(&title, theme, frame, area);
    let message = match (&nodes.status, nodes.empty()) {
        (LoadStatus::Failed(error), _) => {
            Some((format!("Could not load the nodes: {error}"), theme.error))
        }
        (_, Some(empty)) => Some((empty.to_string(), theme.warning)),
        (LoadStatus::Loading, None) if nodes.thread.is_none() => {
            Some(("Loading the nodes…".to_owned(), theme.dim))
        }
        _ if nodes.rows.is_empty() => Some((
            "No node ran in this conversation's workflow runs.".to_owned(),
            theme.dim,
        )),
        _ => None,
    };
    if let Some((text, style)) = message {
        frame.render_widget(placeholder(text, style), inner);
        return;
    }
    let width = usize::from(inner.width);
    // Two lines a node; keep the selection in view.
    let visible = (usize::from(inner.height) / 2).max(1);
    let start = nodes.selected.saturating_sub(visible - 1);
    let lines: Vec<Line> = nodes
        .rows
        .iter()
        .enumerate()
        .skip(start)
        .take(visible)
        .flat_map(|(index, row)| node_lines(row, index == nodes.selected, width, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A node: title, type and its latest context's tokens, then its id, executions and the
/// context's length and source.
fn node_lines<'a>(row: &NodeRow, selected: bool, width: usize, theme: &Theme) -> [Line<'a>; 2] {
    let node = &row.summary;
    let (tokens, messages) =
        row.latest
            .map_or((String::new(), "no context".to_owned()), |latest| {
                (
                    format!(" · {} tok", latest.tokens),
                    format!("{} msgs ({})", latest.messages, source_name(latest.source)),
                )
            });
    let marker = if selected { "▸" } else { " " };
    let first = format!("{marker} {} ({}){tokens}", node.title, node.node_type);
    let second = format!(
        "  {} · {} runs, {} on thread · {messages}",
        node.node_id, node.executions, node.on_thread
    );
    let style = if selected { theme.selected } else { theme.text };
    [
        Line::styled(one_line(&first, width), style),
        Line::styled(one_line(&second, width), theme.dim),
    ]
}

fn source_name(source: ContextSource) -> &'static str {
    match source {
        ContextSource::Files => "memory file",
        ContextSource::Outputs => "output context",
        ContextSource::Prompts => "prompts",
    }
}

/// The source switch, where the context was read from, and why it is empty or incomplete.
fn header_lines<'a>(nodes: &NodesState, theme: &Theme) -> Vec<Line<'a>> {
    let mut sources = vec![Span::styled("source ", theme.dim)];
    for source in ContextSource::ALL {
        let style = if source == nodes.source {
            theme.selected
        } else {
            theme.dim
        };
        sources.push(Span::styled(format!(" {} ", source_name(source)), style));
    }
    let mut lines = vec![Line::from(sources)];
    match (&nodes.context_status, &nodes.context) {
        (LoadStatus::Failed(error), _) => lines.push(Line::styled(
            format!("Could not load the context: {error}"),
            theme.error,
        )),
        (_, Some(view)) => lines.extend(context_lines(view, theme)),
        (_, None) => lines.push(Line::styled("Loading the node's context…", theme.dim)),
    }
    lines
}

fn context_lines<'a>(view: &NodeContextView, theme: &Theme) -> Vec<Line<'a>> {
    let context = &view.context;
    let mut lines = Vec::new();
    if let Some(run) = &context.run_id {
        let offloaded = if context.offloaded {
            " · outputs from the offloaded upload"
        } else {
            ""
        };
        lines.push(Line::styled(
            format!(
                "run {} · execution {}{offloaded}",
                short_id(run),
                context
                    .execution_id
                    .as_deref()
                    .map_or("none".into(), short_id)
            ),
            theme.dim,
        ));
    }
    if let Some(empty) = &context.empty {
        lines.push(Line::styled(format!("empty: {empty}"), theme.warning));
    }
    lines.extend(
        context
            .problems
            .iter()
            .map(|problem| Line::styled(format!("✗ {problem}"), theme.error)),
    );
    if !context.missing_runs.is_empty() {
        lines.push(Line::styled(
            format!(
                "{} thread runs have no turn in the file (skipped, as Dify does)",
                context.missing_runs.len()
            ),
            theme.warning,
        ));
    }
    lines
}

fn draw_timeline(nodes: &NodesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(timeline) = &nodes.timeline else {
        let inner = framed(" Timeline ", theme, frame, area);
        let text = match &nodes.timeline_status {
            LoadStatus::Failed(error) => {
                (format!("Could not load the timeline: {error}"), theme.error)
            }
            _ => ("Loading the timeline…".to_owned(), theme.dim),
        };
        frame.render_widget(placeholder(text.0, text.1), inner);
        return;
    };
    let disagreements = timeline.disagreements().count();
    let title = format!(
        " Timeline · {} · {} ",
        crate::format::count(timeline.turns.len() as u64, "turn"),
        crate::format::count(disagreements as u64, "file/output disagreement")
    );
    let inner = framed(&title, theme, frame, area);
    let [spark_area, turns_area] =
        Layout::vertical([Constraint::Length(SPARKLINE_HEIGHT), Constraint::Min(0)]).areas(inner);
    frame.render_widget(sparkline(timeline, spark_area.width, theme), spark_area);
    let width = usize::from(turns_area.width);
    let lines: Vec<Line> = turn_rows(timeline, usize::from(turns_area.height))
        .map(|(number, turn)| turn_line(number, turn, width, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), turns_area);
}

/// The newest turns that fit, one bar a turn; turns where A and B disagree are flagged in the
/// error colour.
fn sparkline<'a>(timeline: &Timeline, width: u16, theme: &Theme) -> Sparkline<'a> {
    let skip = timeline.turns.len().saturating_sub(usize::from(width));
    let bars: Vec<SparklineBar> = timeline
        .turns
        .iter()
        .skip(skip)
        .map(|turn| {
            let bar = SparklineBar::from(turn.size());
            if turn.disagreement.is_some() || !turn.problems.is_empty() {
                bar.style(theme.error)
            } else {
                bar
            }
        })
        .collect();
    Sparkline::default().data(bars).style(theme.gauge)
}

/// Turns to list, numbered from 1: flagged turns first (disagreements, errors), then the
/// newest, at most `height`.
fn turn_rows(timeline: &Timeline, height: usize) -> impl Iterator<Item = (usize, &TimelineTurn)> {
    let numbered = || timeline.turns.iter().enumerate().map(|(i, t)| (i + 1, t));
    let flagged = numbered().filter(|(_, t)| is_flagged(t));
    let rest = numbered().rev().filter(|(_, t)| !is_flagged(t));
    flagged.chain(rest).take(height)
}

fn is_flagged(turn: &TimelineTurn) -> bool {
    turn.disagreement.is_some() || !turn.problems.is_empty()
}

fn turn_line<'a>(number: usize, turn: &TimelineTurn, width: usize, theme: &Theme) -> Line<'a> {
    let count = |n: Option<usize>| n.map_or("-".to_owned(), |n| crate::format::thousands(n as u64));
    let mut text = format!(
        "{number:>4} {} context {:>3} sent {:>3}",
        short_id(&turn.message_id),
        count(turn.context_messages),
        count(turn.prompt_messages),
    );
    match turn.status.as_deref() {
        Some("succeeded") => {}
        status => text.push_str(&format!(" {}", status.unwrap_or("not run"))),
    }
    let mut notes: Vec<String> = turn.disagreement.iter().map(|d| format!("⚠ {d}")).collect();
    notes.extend(turn.problems.iter().map(|p| format!("✗ {p}")));
    let style = if notes.is_empty() {
        theme.text
    } else {
        text.push_str("  ");
        text.push_str(&notes.join("; "));
        theme.warning
    };
    Line::styled(one_line(&text, width), style)
}
