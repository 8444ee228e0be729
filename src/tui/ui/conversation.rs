//! The conversation screen: the message tree (only the visible lines are built), the selected
//! message's detail or the extraction demo, and the budget panel.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::common::{Component, framed, highlighted, pane_block, placeholder, short_id};
use super::{budget, nodes};
use crate::format::{count, one_line};
use crate::memory::history::PAUSED_STATUS;
use crate::memory::thread::{StepDecision, ThreadComparison};
use crate::tui::state::tree_view::Mark;
use crate::tui::state::{AppState, ConversationState, DemoState, LoadStatus, Loaded};
use crate::tui::theme::Theme;

pub struct ConversationView;

impl Component for ConversationView {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let Some(conversation) = &state.conversation else {
            frame.render_widget(placeholder("No conversation open.", theme.dim), area);
            return;
        };
        if let Some(nodes) = &conversation.nodes {
            nodes::draw(state, nodes, theme, frame, area);
            return;
        }
        let loaded = match (&conversation.status, &conversation.loaded) {
            (LoadStatus::Failed(error), _) => {
                let text = format!("Could not load conversation {}: {error}", conversation.id);
                frame.render_widget(placeholder(text, theme.error), area);
                return;
            }
            (_, Some(loaded)) => loaded,
            (_, None) => {
                let text = format!("Loading conversation {}…", conversation.id);
                frame.render_widget(placeholder(text, theme.dim), area);
                return;
            }
        };
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(area);
        // A short terminal gives the budget more of the column: its cut line and sent rows
        // matter more than the message detail's blank lines.
        let detail = if area.height < 30 { 35 } else { 45 };
        let [top, bottom] = Layout::vertical([
            Constraint::Percentage(detail),
            Constraint::Percentage(100 - detail),
        ])
        .areas(right);
        draw_tree(conversation, loaded, theme, frame, left);
        match &conversation.demo {
            Some(demo) => draw_demo(demo, theme, frame, top),
            None => draw_detail(conversation, loaded, theme, frame, top),
        }
        budget::draw(state, conversation, theme, frame, bottom);
    }
}

fn draw_tree(
    conversation: &ConversationState,
    loaded: &Loaded,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let deleted = if loaded.conversation.info.is_deleted {
        "✗ deleted in Dify · "
    } else {
        ""
    };
    let title = format!(
        " {deleted}{} · thread: {} ",
        count(loaded.tree.len() as u64, "stored row"),
        conversation.mode.describe()
    );
    let inner = framed(&title, theme, frame, area);
    if loaded.tree.is_empty() {
        frame.render_widget(
            placeholder("This conversation has no messages.", theme.dim),
            inner,
        );
        return;
    }
    let mut height = usize::from(inner.height);
    let mut lines = Vec::with_capacity(height);
    if let Some(thread) = conversation
        .thread
        .as_ref()
        .filter(|_| conversation.demo.is_none())
    {
        if !matches!(thread.comparison, ThreadComparison::Same) {
            lines.push(Line::styled(
                one_line(
                    &format!("⚑ {}", thread.comparison),
                    usize::from(inner.width),
                ),
                theme.warning,
            ));
            height = height.saturating_sub(1);
        }
    }
    // Keep the cursor in view; only the lines on screen are built.
    let offset = conversation
        .cursor
        .saturating_sub(height.saturating_sub(1) / 2);
    let width = usize::from(inner.width);
    for line in conversation.lines.window(offset, height) {
        let id = loaded.tree.id(line.node);
        let message = loaded.message(line.node);
        let fold = match (line.has_children, line.collapsed) {
            (true, true) => "▸ ",
            (true, false) => "▾ ",
            (false, _) => "  ",
        };
        let mark = conversation.marks.mark(line.node);
        let fed = conversation.is_fed(id);
        let marker = match mark {
            Mark::DifyOnly => "D",
            Mark::TreeOnly => "T",
            // On the thread but above the budget's cut (or outside the row window).
            Mark::Thread if fed == Some(false) => "○",
            Mark::Thread => "●",
            Mark::None => " ",
        };
        let (position, siblings) = loaded.tree.sibling_position(line.node);
        let sibling = if siblings > 1 {
            format!(" ({}/{siblings})", position + 1)
        } else {
            String::new()
        };
        let indent = "  ".repeat(line.branch_depth.min(width / 4));
        // A pause is the one status that changes what memory makes of a row: marked ahead of
        // the question, which the line cuts.
        let paused = if message.status == PAUSED_STATUS {
            "[paused] "
        } else {
            ""
        };
        let text = format!(
            "{indent}{fold}{marker} {} {paused}{}{sibling}",
            short_id(id),
            message.query
        );
        let style = if line.node == conversation.selected {
            theme.selected
        } else if conversation.marks.on_thread(line.node) && fed != Some(false) {
            theme.thread
        } else {
            theme.dim
        };
        // A message holding the search is underlined, its hits in the line reversed (a hit in
        // the answer shows in the detail pane).
        let search = conversation.search.as_ref();
        let style = match search.zip(loaded.expanded_lines.line_of(line.node)) {
            Some((search, position)) if search.holds(position) => {
                style.add_modifier(Modifier::UNDERLINED)
            }
            _ => style,
        };
        let query = search.map(|s| s.query.as_str());
        lines.push(Line::from(highlighted(
            &one_line(&text, width),
            query,
            style,
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_detail(
    conversation: &ConversationState,
    loaded: &Loaded,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let block = pane_block(" Message ", theme);
    if loaded.tree.is_empty() {
        frame.render_widget(
            placeholder("Nothing selected.", theme.dim).block(block),
            area,
        );
        return;
    }
    let message = loaded.message(conversation.selected);
    let label = |name: &str| Span::styled(format!("{name:<8}"), theme.title);
    let files: Vec<String> = loaded
        .conversation
        .files
        .iter()
        .filter(|f| f.message_id == message.id)
        .map(|f| format!("{} ({})", f.label(), f.file_type))
        .collect();
    let mut lines = vec![
        Line::from(vec![
            label("id"),
            Span::styled(message.id.clone(), theme.text),
        ]),
        Line::from(vec![
            label("status"),
            Span::styled(message.status.clone(), theme.text),
            Span::styled(
                format!(
                    "  {}  tokens {} in / {} out",
                    message.created_at.format("%Y-%m-%d %H:%M:%S"),
                    crate::format::thousands(message.message_tokens),
                    crate::format::thousands(message.answer_tokens)
                ),
                theme.dim,
            ),
        ]),
    ];
    if let Some(error) = &message.error {
        lines.push(Line::from(vec![
            label("error"),
            Span::styled(error.clone(), theme.error),
        ]));
    }
    if !files.is_empty() {
        lines.push(Line::from(vec![
            label("files"),
            Span::styled(files.join(", "), theme.text),
        ]));
    }
    let query = conversation.search.as_ref().map(|s| s.query.as_str());
    let mut shown = vec![label("query")];
    shown.extend(highlighted(&message.query, query, theme.text));
    lines.push(Line::from(shown));
    let answer = if message.answer.is_empty() && message.status == PAUSED_STATUS {
        Span::styled("(empty: paused for human input)", theme.warning)
    } else if message.answer.is_empty() {
        Span::styled("(empty: a placeholder or a failed run)", theme.warning)
    } else {
        Span::default()
    };
    let mut shown = vec![label("answer"), answer];
    shown.extend(highlighted(&message.answer, query, theme.text));
    lines.push(Line::from(shown));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

fn draw_demo(demo: &DemoState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let title = format!(
        " Dify's extraction, step {} of {} (space: next, N: back, esc: leave) ",
        demo.shown,
        demo.trace.steps.len()
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.warning)
        .title_style(theme.title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(current) = demo.current() else {
        frame.render_widget(
            placeholder("The window has no rows: nothing to walk.", theme.dim),
            inner,
        );
        return;
    };
    let width = usize::from(inner.width);
    let tracked = current.tracked_parent.as_deref().map_or_else(
        || "none: the walk has stopped".to_owned(),
        |p| short_id(p).into_owned(),
    );
    let mut lines = vec![
        Line::styled(
            one_line(
                &format!(
                    "row {} (newest first) is {}",
                    current.row,
                    short_id(&current.id)
                ),
                width,
            ),
            theme.text,
        ),
        Line::styled(
            one_line(&format!("now tracking parent: {tracked}"), width),
            theme.text,
        ),
    ];
    let visible = usize::from(inner.height).saturating_sub(lines.len());
    let first = demo.shown.saturating_sub(visible);
    for step in &demo.trace.steps[first..demo.shown] {
        let (verdict, style) = match step.decision {
            StepDecision::Kept => ("kept   ", theme.thread),
            StepDecision::Stopped => ("stopped", theme.warning),
            StepDecision::Skipped => ("skipped", theme.dim),
        };
        let text = format!(
            "{:>3} {} {verdict} {}",
            step.row,
            short_id(&step.id),
            step.reason.describe()
        );
        lines.push(Line::styled(one_line(&text, width), style));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
