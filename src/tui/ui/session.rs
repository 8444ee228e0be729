//! An open session or thread: its messages in order (grouped by run where the source records
//! runs), the selected message, and the budget panel with exactly what the model is fed. The
//! panes are drawn by functions of their own, so another pane can sit beside them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::budget::{BudgetOf, Panel, draw_panel};
use super::common::{Component, framed, highlighted, pane_block, placeholder, short_id};
use crate::format::{fit, one_line};
use crate::sources::opened::{OpenConversation, ShownMessage};
use crate::tui::state::session::SessionState;
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

pub struct SessionScreen;

impl Component for SessionScreen {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let Some(session) = &state.session else {
            frame.render_widget(placeholder("No conversation open.", theme.dim), area);
            return;
        };
        let Some(view) = loaded_view(session, theme, frame, area) else {
            return;
        };
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(area);
        let detail = if area.height < 30 { 35 } else { 45 };
        let [top, bottom] = Layout::vertical([
            Constraint::Percentage(detail),
            Constraint::Percentage(100 - detail),
        ])
        .areas(right);
        draw_messages(session, view, theme, frame, left);
        draw_message(session, view, theme, frame, top);
        draw_budget(state, session, theme, frame, bottom);
    }
}

/// The loaded view, or the loading or error state drawn over `area` in its place.
pub fn loaded_view<'a>(
    session: &'a SessionState,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> Option<&'a OpenConversation> {
    match (&session.status, &session.view) {
        (LoadStatus::Failed(error), _) => {
            let text = format!("Could not load {}: {error}", session.key.id);
            frame.render_widget(placeholder(text, theme.error), area);
            None
        }
        (_, Some(view)) => Some(view),
        (_, None) => {
            let text = format!("Loading {}…", session.key.id);
            frame.render_widget(placeholder(text, theme.dim), area);
            None
        }
    }
}

/// The messages in order: a line per run where the source records runs, and on each message
/// whether the model is fed it (● fed, ○ not) and its marks (⚑).
pub fn draw_messages(
    session: &SessionState,
    view: &OpenConversation,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let title = format!(
        " {} · {} ",
        crate::format::count(view.messages.len() as u64, "message"),
        view.heading
    );
    let title = one_line(&title, usize::from(area.width.saturating_sub(2)));
    let inner = framed(&title, theme, frame, area);
    let width = usize::from(inner.width);
    let mut lines = vec![Line::styled(one_line(&view.structure, width), theme.dim)];
    if view.messages.is_empty() {
        lines.push(Line::styled("No messages.", theme.dim));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let height = usize::from(inner.height).saturating_sub(lines.len());
    // A message takes at most two lines (its run's and its own): a third of the height before
    // the selection keeps it in view.
    let first = session.selected.saturating_sub(height / 3);
    let mut previous_run = first
        .checked_sub(1)
        .and_then(|i| view.messages.get(i))
        .map(|m| m.run.clone());
    for (index, message) in view.messages.iter().enumerate().skip(first) {
        if lines.len() > height {
            break;
        }
        if message.run.is_some() && previous_run.as_ref() != Some(&message.run) {
            let run = message.run.as_deref().unwrap_or_default();
            lines.push(Line::styled(
                one_line(&format!("── run {} ──", short_id(run)), width),
                theme.title,
            ));
        }
        previous_run = Some(message.run.clone());
        lines.push(message_line(session, index, message, theme, width));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn message_line(
    session: &SessionState,
    index: usize,
    message: &ShownMessage,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let fed = session.is_fed(&message.message.id);
    let marker = match fed {
        Some(true) => "●",
        Some(false) => "○",
        None => " ",
    };
    let time = message
        .message
        .created_at
        .map(|at| at.format("%H:%M:%S ").to_string())
        .unwrap_or_default();
    let flag = if message.marks.is_empty() { "" } else { "⚑ " };
    let files = if message.files.is_empty() {
        String::new()
    } else {
        format!(
            " [{}]",
            crate::format::count(message.files.len() as u64, "file")
        )
    };
    let prompt = &message.message.message;
    let calls: String = prompt
        .tool_calls
        .iter()
        .map(|call| format!(" → {}()", call.name))
        .collect();
    let text = format!(
        "{marker} {time}{} {flag}{}{calls}{files}",
        fit(&message.sender, 12),
        prompt.content.text()
    );
    let style = if index == session.selected {
        theme.selected
    } else if !message.marks.is_empty() {
        theme.warning
    } else if fed == Some(false) {
        theme.dim
    } else {
        theme.text
    };
    let query = session.search.as_ref().map(|s| s.query.as_str());
    Line::from(highlighted(&one_line(&text, width), query, style))
}

/// The selected message: who wrote it, where it belongs, its marks and its text (`i` shows it
/// whole, tool output included).
pub fn draw_message(
    session: &SessionState,
    view: &OpenConversation,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let block = pane_block(" Message (i: whole) ", theme);
    let Some(message) = view.messages.get(session.selected) else {
        frame.render_widget(
            placeholder("Nothing selected.", theme.dim).block(block),
            area,
        );
        return;
    };
    let label = |name: &str| Span::styled(format!("{name:<8}"), theme.title);
    let prompt = &message.message.message;
    let mut lines = vec![Line::from(vec![
        label("from"),
        Span::styled(
            format!("{} ({})", message.sender, prompt.role.as_str()),
            theme.text,
        ),
    ])];
    let fed = match session.is_fed(&message.message.id) {
        Some(true) => "fed to the model",
        Some(false) => "not fed to the model",
        None => "counting…",
    };
    let at = message
        .message
        .created_at
        .map(|at| format!("{}  ", at.format("%Y-%m-%d %H:%M:%S")))
        .unwrap_or_default();
    lines.push(Line::from(vec![
        label("id"),
        Span::styled(format!("{}  ", message.message.id), theme.text),
        Span::styled(format!("{at}{fed}"), theme.dim),
    ]));
    if let Some(owner) = &message.owner {
        lines.push(Line::from(vec![
            label("owner"),
            Span::styled(owner.clone(), theme.text),
        ]));
    }
    for mark in &message.marks {
        lines.push(Line::from(vec![
            label("⚑"),
            Span::styled(mark.clone(), theme.warning),
        ]));
    }
    if !message.files.is_empty() {
        lines.push(Line::from(vec![
            label("files"),
            Span::styled(message.files.join(", "), theme.text),
        ]));
    }
    for call in &prompt.tool_calls {
        lines.push(Line::from(vec![
            label("calls"),
            Span::styled(format!("{}({})", call.name, call.arguments), theme.text),
        ]));
    }
    let query = session.search.as_ref().map(|s| s.query.as_str());
    lines.extend(
        prompt
            .content
            .text()
            .lines()
            .map(|line| Line::from(highlighted(line, query, theme.text))),
    );
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

/// The budget panel over what the model is fed.
pub fn draw_budget(
    state: &AppState,
    session: &SessionState,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let panel = Panel {
        view: session.budget.as_ref().map(|b| &b.view),
        status: &session.budget_status,
        of: BudgetOf::Session,
    };
    draw_panel(state, &panel, theme, frame, area);
}
