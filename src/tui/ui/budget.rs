//! The token budget panel: what `TokenBufferMemory` would send for the selected thread, where
//! pruning cuts, and whether the model can take it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};

use super::{one_line, placeholder, short_id};
use crate::inspect::budget::BudgetView;
use crate::memory::tokens::is_loaded;
use crate::tui::state::{AppState, ConversationState, LoadStatus};
use crate::tui::theme::Theme;

pub fn draw(
    state: &AppState,
    conversation: &ConversationState,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let settings = &state.settings;
    let app_window = conversation
        .loaded
        .as_ref()
        .and_then(|l| l.conversation.info.memory_window);
    let window = settings.window(app_window);
    let window_note = match (app_window, settings.app_window) {
        (Some(_), true) => "app's window",
        (Some(_), false) => "Dify's 500, app's window ignored",
        (None, _) => "Dify's default",
    };
    let updating = if conversation.budget_status.is_loading() {
        " · counting…"
    } else {
        ""
    };
    let title = format!(
        " Budget · {} · {} · max {} · rows {window} ({window_note}){updating} ",
        settings.model(),
        settings.counter,
        settings.budget
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.dim)
        .title_style(theme.title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(view) = &conversation.budget else {
        let text = match &conversation.budget_status {
            LoadStatus::Failed(error) => format!("Could not count tokens: {error}"),
            _ if !is_loaded(settings.counter().encoding()) => {
                format!("Loading the {} tokenizer…", settings.counter().encoding())
            }
            _ => "Counting tokens…".to_owned(),
        };
        frame.render_widget(placeholder(text, theme.dim), inner);
        return;
    };
    let summary = summary_lines(view, theme);
    let [text_area, gauge_area, rows_area] = Layout::vertical([
        Constraint::Length(summary.len() as u16),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(summary).wrap(Wrap { trim: true }), text_area);
    let ratio = if view.max_tokens > 0 {
        (view.pruned.tokens_after as f64 / view.max_tokens as f64).min(1.0)
    } else {
        1.0
    };
    let over = view.pruned.tokens_after as i128 > i128::from(view.max_tokens);
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(format!(
                "{} / {} tokens kept",
                view.pruned.tokens_after, view.max_tokens
            ))
            .gauge_style(if over { theme.error } else { theme.gauge }),
        gauge_area,
    );
    draw_rows(view, theme, frame, rows_area);
}

fn summary_lines<'a>(view: &BudgetView, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = vec![Line::styled(
        format!(
            "{} messages, {} tokens before pruning; {} dropped, {} sent",
            view.counts.len(),
            view.pruned.tokens_before,
            view.dropped(),
            view.counts.len() - view.dropped()
        ),
        theme.text,
    )];
    let history = &view.history;
    let popped = if history.popped.is_some() {
        " (newest popped as the request's placeholder)"
    } else {
        ""
    };
    lines.push(Line::styled(
        format!(
            "row window {}: {} rows loaded, thread of {} rows{popped}",
            history.window,
            history.rows_given.min(history.window),
            history.thread.len()
        ),
        theme.dim,
    ));
    if view.zero_counter_trap() {
        lines.push(Line::styled(
            format!(
                "counter zero (Dify 1.x default): every count is 0, so NOTHING is pruned; the model \
                 receives all {} messages, {} tokens by the classic formula",
                view.counts.len(),
                view.sent_tokens
            ),
            theme.warning,
        ));
    }
    let fit = match (view.fits_context(), view.context_window) {
        (Some(true), Some(window)) => Line::styled(
            format!(
                "fits {}'s context window ({} of {window} tokens)",
                view.model, view.sent_tokens
            ),
            theme.ok,
        ),
        (Some(false), Some(window)) => Line::styled(
            format!(
                "does NOT fit {}'s context window: {} of {window} tokens",
                view.model, view.sent_tokens
            ),
            theme.error,
        ),
        _ => Line::styled(
            format!(
                "context window of {} unknown: {} tokens sent",
                view.model, view.sent_tokens
            ),
            theme.dim,
        ),
    };
    lines.push(fit);
    lines
}

/// The history around the cut line: message tokens and the total from each message on, which
/// is what pruning compares with the budget.
fn draw_rows(view: &BudgetView, theme: &Theme, frame: &mut Frame, area: Rect) {
    let height = usize::from(area.height);
    if height == 0 {
        return;
    }
    let width = usize::from(area.width);
    let messages = &view.history.messages;
    if messages.is_empty() {
        frame.render_widget(
            placeholder("The history is empty: nothing is sent.", theme.dim),
            area,
        );
        return;
    }
    let cut = view.dropped();
    let start = cut
        .saturating_sub(height / 2)
        .min(messages.len().saturating_sub(height - 1));
    let mut lines = vec![Line::styled(
        one_line("   #  role       tokens  from here  message", width),
        theme.title,
    )];
    for (index, message) in messages.iter().enumerate().skip(start) {
        if lines.len() >= height {
            break;
        }
        if index == cut && cut > 0 {
            lines.push(Line::styled(
                one_line(
                    &format!("──── cut: {cut} messages above are dropped ────"),
                    width,
                ),
                theme.error,
            ));
        }
        let text = format!(
            "{index:>4}  {:<9} {:>6}  {:>9}  {} {}",
            message.message.role.as_str(),
            view.message_tokens(index),
            view.totals.from(index),
            short_id(&message.source_id),
            message.message.content.text()
        );
        let style = if index < cut { theme.dim } else { theme.text };
        lines.push(Line::from(Span::styled(one_line(&text, width), style)));
    }
    lines.truncate(height);
    frame.render_widget(Paragraph::new(lines), area);
}
