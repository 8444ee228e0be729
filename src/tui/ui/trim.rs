//! The trim-preview overlay (policy form, plan with struck-through removals, modified messages,
//! the summary in place, totals and a gauge).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::common::{placeholder, popup};
use crate::format::{display_width, fit, one_line, thousands};
use crate::memory::model::PromptMessage;
use crate::memory::trim::{Step, TrimPlan};
use crate::tui::state::trim::TrimState;
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

/// Width of the policy form column.
const FORM_WIDTH: u16 = 36;

/// The trim preview, over the whole body.
pub fn draw_overlay(
    state: &AppState,
    trim: &TrimState,
    theme: &Theme,
    frame: &mut Frame,
    body: Rect,
) {
    let area = body;
    let title = format!(" Trim preview · {} · esc closes ", trim.source.describe());
    let inner = popup(title, theme, frame, area);
    let [form_area, plan_area] =
        Layout::horizontal([Constraint::Length(FORM_WIDTH), Constraint::Min(20)]).areas(inner);
    let form_area = form_area.inner(ratatui::layout::Margin::new(1, 0));
    let lines = super::form::form_lines(&trim.form, theme, usize::from(form_area.width));
    let [fields_area, notes_area] = Layout::vertical([
        Constraint::Length(lines.len() as u16 + 1),
        Constraint::Min(0),
    ])
    .areas(form_area);
    frame.render_widget(Paragraph::new(lines), fields_area);
    let mut lines = vec![Line::from(vec![
        Span::styled("summary by ", theme.dim),
        Span::styled(state.summarizer.label.clone(), theme.text),
    ])];
    if !trim.source.applies() {
        lines.push(Line::styled(
            "preview only: a view computed at read time",
            theme.warning,
        ));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), notes_area);
    match (&trim.status, &trim.plan) {
        (LoadStatus::Failed(error), _) => {
            let text = format!("Could not read the history: {error}");
            frame.render_widget(placeholder(text, theme.error), plan_area);
        }
        (LoadStatus::Loading, _) => {
            frame.render_widget(
                placeholder("Reading and counting the history…", theme.dim),
                plan_area,
            );
        }
        (_, Some(Err(error))) => {
            let text = format!("This form's values make no plan: {error}");
            frame.render_widget(placeholder(text, theme.error), plan_area);
        }
        (_, Some(Ok(plan))) => draw_plan(state, trim, plan, theme, frame, plan_area),
        (_, None) => {}
    }
}

fn draw_plan(
    state: &AppState,
    trim: &TrimState,
    plan: &TrimPlan,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let pending_prompt = plan
        .summary
        .as_ref()
        .filter(|s| s.text.is_none() && !state.summarizer.offline)
        .map(|s| s.prompt.as_str());
    let prompt_height = if pending_prompt.is_some() {
        area.height / 3
    } else {
        0
    };
    let [totals_area, gauge_area, list_area, prompt_area] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(prompt_height),
    ])
    .areas(area);
    let trimmed = plan.removed().next().is_some() || plan.modified().next().is_some();
    let (limit, unit, meaning) = trim.gauge_limit(trimmed);
    let kept = plan.kept_len() as u64;
    let after = if unit == "messages" && trim.is_policy() {
        kept
    } else {
        plan.tokens_after
    };
    let engine = if trim.is_policy() {
        "policy"
    } else {
        "trim_messages"
    };
    let mut status = vec![
        Span::styled(engine, theme.title),
        Span::styled(
            format!(
                " · messages {} → {} · tokens {} → {} · {} removed · {} modified",
                thousands(trim.messages_before() as u64),
                thousands(kept),
                thousands(plan.tokens_before),
                thousands(plan.tokens_after),
                thousands(plan.removed().count() as u64),
                thousands(plan.modified().count() as u64),
            ),
            theme.text,
        ),
    ];
    match &trim.summary_status {
        Some(LoadStatus::Loading) => status.push(Span::styled(" · summarizing…", theme.warning)),
        Some(LoadStatus::Failed(error)) => {
            status.push(Span::styled(
                format!(" · summary failed: {error}"),
                theme.error,
            ));
        }
        _ => {}
    }
    frame.render_widget(
        Paragraph::new(Line::from(status)).wrap(Wrap { trim: true }),
        totals_area,
    );
    let ratio = if limit == 0 {
        if after == 0 { 0.0 } else { 1.0 }
    } else {
        (after as f64 / limit as f64).min(1.0)
    };
    super::budget::labelled_bar(
        ratio,
        after > limit,
        &format!(
            "{} / {} {unit} {meaning}",
            thousands(after),
            thousands(limit)
        ),
        theme,
        frame,
        gauge_area,
    );
    let width = usize::from(list_area.width);
    let height = usize::from(list_area.height);
    let scroll = trim.scroll.min(plan.steps.len().saturating_sub(1));
    let lines: Vec<Line> = plan
        .steps
        .iter()
        .skip(scroll)
        .take(height)
        .map(|step| step_line(state, trim, plan, step, theme, width))
        .collect();
    frame.render_widget(Paragraph::new(lines), list_area);
    if let Some(prompt) = pending_prompt {
        let [heading, text] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(prompt_area);
        frame.render_widget(
            Line::styled(
                format!(
                    "Prompt that would be sent to {} (S sends it):",
                    state.summarizer.label
                ),
                theme.title,
            ),
            heading,
        );
        frame.render_widget(
            Paragraph::new(prompt.to_owned())
                .style(theme.dim)
                .wrap(Wrap { trim: false }),
            text,
        );
    }
}

/// A message's text, its tool calls named when it has no text.
pub(super) fn message_text(message: &PromptMessage) -> String {
    let text = message.content.text();
    if !text.trim().is_empty() || message.tool_calls.is_empty() {
        return text.into_owned();
    }
    let calls: Vec<String> = message
        .tool_calls
        .iter()
        .map(|call| format!("→ {}({})", call.name, call.arguments))
        .collect();
    calls.join(" ")
}

/// One step: `  ` kept, `- ` removed (struck through), `~ ` modified, `+ ` the summary; each
/// with its reason, so NO_COLOR shows the same.
fn step_line(
    state: &AppState,
    trim: &TrimState,
    plan: &TrimPlan,
    step: &Step,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let role_of = |index: usize| {
        trim.message(index)
            .map_or("?", |m| m.role.as_str())
            .to_owned()
    };
    let text_of = |index: usize| trim.message(index).map_or(String::new(), message_text);
    let (mark, number, role, text, reason, style) = match step {
        Step::Keep { index } => (
            "  ",
            index.to_string(),
            role_of(*index),
            text_of(*index),
            String::new(),
            theme.text,
        ),
        Step::Remove { index, reason } => (
            "- ",
            index.to_string(),
            role_of(*index),
            text_of(*index),
            format!("✗ {}", reason.describe()),
            theme.dim.add_modifier(Modifier::CROSSED_OUT),
        ),
        Step::Modify {
            index,
            message,
            reason,
        } => (
            "~ ",
            index.to_string(),
            message.role.as_str().to_owned(),
            message_text(message),
            format!("~ {}", reason.describe()),
            theme.warning,
        ),
        Step::Summary => {
            let Some(slot) = &plan.summary else {
                return Line::raw("");
            };
            let (text, reason) = match (&slot.text, &slot.summarizer) {
                (Some(text), by) => (
                    text.clone(),
                    format!(
                        "+ summary of {} ({})",
                        slot.summarized.len(),
                        by.as_deref().unwrap_or("")
                    ),
                ),
                (None, _) if state.summarizer.offline => (
                    format!("(writing the summary: {}…)", state.summarizer.label),
                    format!("+ summary of {}", slot.summarized.len()),
                ),
                (None, _) => (
                    format!("(summary pending: S asks {})", state.summarizer.label),
                    format!("+ summary of {}", slot.summarized.len()),
                ),
            };
            (
                "+ ",
                String::new(),
                "summary".to_owned(),
                text,
                reason,
                theme.ok.add_modifier(Modifier::BOLD),
            )
        }
    };
    // Why a message goes matters more than its text: the reason keeps its room (cut with …
    // only in a pane too narrow for it and a few characters of text).
    const MIN_TEXT: usize = 6;
    let room = width.saturating_sub(2 + 6 + 10);
    let reason_room = if reason.is_empty() {
        0
    } else {
        (display_width(&reason) + 2).min(room.saturating_sub(MIN_TEXT))
    };
    let reason = one_line(&reason, reason_room.saturating_sub(2));
    let text_width = room.saturating_sub(reason_room).max(MIN_TEXT);
    Line::from(vec![
        Span::styled(mark, theme.title),
        Span::styled(format!("{number:>5} "), theme.dim),
        Span::styled(format!("{role:<9} "), style),
        Span::styled(fit(&text, text_width), style),
        Span::styled(format!("  {reason}"), theme.warning),
    ])
}
