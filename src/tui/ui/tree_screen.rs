//! An open session's tree: its nodes as `memscope thread` draws them (indented by depth, under
//! their group's heading, ● on the path the model is sent, ○ off it), the selected node beside
//! them, and what the source says of the whole (an ADK session's state, say) below that.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::common::{Component, framed, placeholder};
use crate::format::{count, one_line};
use crate::inspect::tree::{ThreadDocument, ThreadNode};
use crate::tui::state::tree_screen::TreeScreenState;
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

pub struct TreeScreen;

impl Component for TreeScreen {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let Some(tree) = &state.tree else {
            frame.render_widget(placeholder("No tree open.", theme.dim), area);
            return;
        };
        let document = match (&tree.status, &tree.document) {
            (LoadStatus::Failed(error), _) => {
                let text = format!("Could not read the tree of {}: {error}", tree.key.id);
                frame.render_widget(placeholder(text, theme.error), area);
                return;
            }
            (_, Some(document)) => document,
            (_, None) => {
                let text = format!("Reading the tree of {}…", tree.key.id);
                frame.render_widget(placeholder(text, theme.dim), area);
                return;
            }
        };
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(area);
        let width = usize::from(right.width.saturating_sub(2)).max(1);
        let footer_height = wrapped_height(&document.footer, width);
        let whole = match footer_height {
            0 => 0,
            lines => (lines as u16 + 2).min(right.height / 2),
        };
        let [node, about] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(whole)]).areas(right);
        draw_nodes(tree, document, theme, frame, left);
        draw_node(tree.selected_node(), theme, frame, node);
        if whole > 0 {
            let title = format!(" Of the whole {} ", state.noun);
            let inner = framed(&title, theme, frame, about);
            draw_whole(document, &tree.key.id, theme, frame, inner);
        }
    }
}

/// How many lines `lines` take wrapped at `width` columns.
fn wrapped_height(lines: &[String], width: usize) -> usize {
    lines
        .iter()
        .map(|line| line.chars().count().div_ceil(width).max(1))
        .sum()
}

/// What the source says of the whole tree, wrapped; where it is longer than the pane, its last
/// line says how much is left and where it is printed whole.
fn draw_whole(document: &ThreadDocument, id: &str, theme: &Theme, frame: &mut Frame, area: Rect) {
    let width = usize::from(area.width).max(1);
    let room = usize::from(area.height);
    let mut lines: Vec<Line> = Vec::new();
    let mut used = 0;
    for (at, line) in document.footer.iter().enumerate() {
        let height = wrapped_height(std::slice::from_ref(line), width);
        let rest = wrapped_height(&document.footer[at..], width);
        if used + rest > room {
            let more = format!("… {rest} more lines: `memscope thread {id}` prints them");
            if used + height + wrapped_height(std::slice::from_ref(&more), width) > room {
                lines.push(Line::styled(more, theme.dim));
                break;
            }
        }
        used += height;
        lines.push(Line::styled(line.clone(), theme.text));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// The header lines, wrapped (they say what is marked), then the nodes around the selected one,
/// each cut to the pane with `…` (enter shows one whole).
fn draw_nodes(
    tree: &TreeScreenState,
    document: &ThreadDocument,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let sent = document.nodes.iter().filter(|n| n.on_thread).count();
    let title = format!(
        " {} · {} sent to the model (●) ",
        count(document.nodes.len() as u64, "node"),
        sent
    );
    let inner = framed(&title, theme, frame, area);
    let width = usize::from(inner.width).max(1);
    let header_height = wrapped_height(&document.header, width);
    let [header, body] = Layout::vertical([
        Constraint::Length((header_height as u16).min(inner.height / 2)),
        Constraint::Min(1),
    ])
    .areas(inner);
    let header_lines: Vec<Line> = document
        .header
        .iter()
        .map(|line| Line::styled(line.clone(), theme.dim))
        .collect();
    frame.render_widget(
        Paragraph::new(header_lines).wrap(Wrap { trim: false }),
        header,
    );
    if document.nodes.is_empty() {
        frame.render_widget(placeholder("No nodes.", theme.dim), body);
        return;
    }
    let height = usize::from(body.height);
    // A node takes at most two lines (its group's heading and its own): a third of the height
    // before the selection keeps it in view.
    let first = tree.selected.saturating_sub(height / 3);
    let mut group = first
        .checked_sub(1)
        .and_then(|i| document.nodes.get(i))
        .map(|n| n.group.clone());
    let mut lines: Vec<Line> = Vec::new();
    for (index, node) in document.nodes.iter().enumerate().skip(first) {
        if lines.len() >= height {
            break;
        }
        if group.as_ref() != Some(&node.group) {
            if let Some(heading) = &node.group {
                let heading = format!("── {heading} ──");
                lines.push(Line::styled(one_line(&heading, width), theme.title));
            }
            group = Some(node.group.clone());
        }
        let marker = if node.on_thread { "●" } else { "○" };
        let text = format!("{marker} {}{}", "  ".repeat(node.depth), node.text);
        let style = match (index == tree.selected, node.on_thread) {
            (true, _) => theme.selected,
            (false, true) => theme.text,
            (false, false) => theme.dim,
        };
        lines.push(Line::styled(one_line(&text, width), style));
    }
    frame.render_widget(Paragraph::new(lines), body);
}

/// The selected node: its id, whether the model is sent it, its line whole and what its source
/// says of it (enter shows it all).
fn draw_node(node: Option<&ThreadNode>, theme: &Theme, frame: &mut Frame, area: Rect) {
    let inner = framed(" Node (enter: whole) ", theme, frame, area);
    let Some(node) = node else {
        frame.render_widget(placeholder("Nothing selected.", theme.dim), inner);
        return;
    };
    let label = |name: &str| Span::styled(format!("{name:<8}"), theme.title);
    let sent = match node.on_thread {
        true => "sent to the model",
        false => "not sent to the model",
    };
    let mut lines = vec![
        Line::from(vec![label("id"), Span::styled(node.id.clone(), theme.text)]),
        Line::from(vec![label("path"), Span::styled(sent, theme.text)]),
    ];
    if let Some(parent) = &node.parent {
        lines.push(Line::from(vec![
            label("parent"),
            Span::styled(parent.clone(), theme.text),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(node.text.clone(), theme.text));
    for (key, value) in &node.extra {
        if value.is_null() {
            continue;
        }
        let shown = match value.as_str() {
            Some(text) => text.to_owned(),
            None => value.to_string(),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{key}: "), theme.title),
            Span::styled(shown, theme.text),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
