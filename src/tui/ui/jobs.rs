//! The jobs popup: running and recent sync jobs with their progress, elapsed time and errors.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, LineGauge};

use super::common::{placeholder, short_id};
use super::rows::{RowCells, layout_rows};
use crate::format::{one_line, thousands};
use crate::inspect::memory_bases::{job_counts, job_state};
use crate::sync::Stage;
use crate::tui::keymap::KeyContext;
use crate::tui::state::AppState;
use crate::tui::state::memory_bases::JobLine;
use crate::tui::theme::Theme;

/// Draws the popup over `body`.
pub fn draw_jobs(state: &AppState, theme: &Theme, frame: &mut Frame, body: Rect) {
    let area = body.centered(Constraint::Percentage(96), Constraint::Percentage(90));
    let lines = state.jobs.lines();
    let states: Vec<String> = lines.iter().map(stage).collect();
    let keys: Vec<String> = state
        .keymap
        .grouped(KeyContext::Jobs)
        .into_iter()
        .map(|(keys, desc)| format!("{keys} {desc}"))
        .collect();
    let title = format!(
        " Sync jobs · {} · {} · esc closes ",
        job_counts(&states),
        keys.join(" · ")
    );
    // The hint bar below repeats the keys; a title too long for the border ends in ….
    let title = one_line(&title, usize::from(area.width.saturating_sub(2)));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.title)
        .title_style(theme.title);
    let mut inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    if let Some(error) = &state.jobs.watcher_error {
        let footer = Rect {
            y: inner.bottom().saturating_sub(1),
            height: 1,
            ..inner
        };
        let text = one_line(&format!("⚠ {error}"), usize::from(inner.width));
        frame.render_widget(Line::styled(text, theme.warning), footer);
        inner.height = inner.height.saturating_sub(1);
    }
    if lines.is_empty() {
        let text = "No sync jobs yet. s in the memory bases tab syncs a session.";
        frame.render_widget(placeholder(text, theme.dim), inner);
        return;
    }
    let wide = area.width >= 100;
    let columns = [
        Constraint::Length(9),
        Constraint::Length(12),
        Constraint::Fill(3),
        Constraint::Fill(2),
        Constraint::Length(if wide { 22 } else { 10 }),
        Constraint::Length(8),
        Constraint::Fill(if wide { 3 } else { 1 }),
    ];
    let counts = if wide { "Msgs · chunks" } else { "Msgs" };
    let header = [
        "Job", "Status", "Session", "Progress", counts, "Elapsed", "Error",
    ];
    let selected = state.jobs.selected;
    for row in layout_rows(
        &header,
        &columns,
        lines.len(),
        selected,
        theme,
        frame,
        inner,
    ) {
        let line = &lines[row.index];
        draw_line(state, line, row.index == selected, &row, wide, theme, frame);
    }
}

/// A job's stage as its gauge labels it.
fn stage(line: &JobLine) -> String {
    match line.tracked.as_ref().map(|t| &t.progress.stage) {
        Some(Stage::Running) => "running".to_owned(),
        // Langflow's word for a finished job, as the CLI prints it.
        Some(Stage::Committed) => "completed".to_owned(),
        Some(Stage::RolledBack { .. }) => "rolled back".to_owned(),
        None => job_state(&line.status),
    }
}

fn draw_line(
    state: &AppState,
    line: &JobLine,
    selected: bool,
    row: &RowCells,
    wide: bool,
    theme: &Theme,
    frame: &mut Frame,
) {
    let area = row.area;
    let style = if selected { theme.selected } else { theme.text };
    if selected {
        frame.render_widget(Block::default().style(style), area);
    }
    let now = state.jobs.now.unwrap_or(line.started);
    let automatic = line.tracked.as_ref().is_some_and(|t| t.automatic);
    let counts = match &line.tracked {
        Some(job) if wide => format!(
            "{}/{} · {}",
            thousands(job.progress.messages_done),
            crate::format::count(job.progress.messages_total, "msg"),
            crate::format::count(job.progress.chunks_written, "chunk")
        ),
        Some(job) => format!(
            "{}/{}",
            thousands(job.progress.messages_done),
            thousands(job.progress.messages_total)
        ),
        None => "-".to_owned(),
    };
    let status_style = match line.status.as_str() {
        "failed" | "cancelled" => theme.error,
        "completed" => theme.ok,
        _ => theme.title,
    };
    let texts = [
        format!(
            "{}{}",
            if selected { "> " } else { "  " },
            short_id(&line.job_id)
        ),
        format!("{}{}", stage(line), if automatic { " ⟳" } else { "" }),
        line.session_id.clone(),
        String::new(),
        counts,
        format!("{:.1}s", line.elapsed(now)),
        line.error.clone().unwrap_or_default(),
    ];
    for (index, (text, cell)) in texts.iter().zip(row.cells.iter()).enumerate() {
        let width = usize::from(cell.width);
        match index {
            3 => {
                let ratio = match &line.tracked {
                    Some(job) => job.ratio(),
                    None if line.status == "completed" => 1.0,
                    None => 0.0,
                };
                let gauge = LineGauge::default()
                    .ratio(ratio)
                    .filled_symbol("█")
                    .unfilled_symbol("░")
                    .filled_style(theme.gauge)
                    .unfilled_style(theme.dim)
                    .style(style);
                frame.render_widget(gauge, *cell);
            }
            1 => frame.render_widget(Span::styled(one_line(text, width), status_style), *cell),
            6 => frame.render_widget(Span::styled(one_line(text, width), theme.error), *cell),
            _ => frame.render_widget(Span::styled(one_line(text, width), style), *cell),
        }
    }
}
