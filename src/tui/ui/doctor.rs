//! The doctor view: the scan's gauge (messages read of the count, rate, elapsed time) while it
//! runs, then its findings with their counts per kind; cancelled and failed scans say so.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, LineGauge, Row};

use super::common::{Component, SHORT_ID_WIDTH, placeholder, selectable_table, short_id};
use crate::format::{count, noun, one_line, thousands};
use crate::inspect::doctor::Finding;
use crate::tui::state::AppState;
use crate::tui::state::doctor::{DoctorState, ScanStatus};
use crate::tui::theme::Theme;
use crate::tui::update::doctor::cancelled_text;

pub struct DoctorView;

impl Component for DoctorView {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(
                " Doctor · every {} and {} of the database ",
                state.noun, state.scan_unit
            ))
            .border_style(theme.dim)
            .title_style(theme.title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let Some(doctor) = &state.doctor else {
            return;
        };
        let [status, gauge, counts, _, findings] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
        ])
        .areas(inner);
        let (text, style) = status_line(doctor, theme);
        let text = one_line(&text, usize::from(status.width));
        frame.render_widget(Line::styled(text, style), status);
        frame.render_widget(
            LineGauge::default()
                .ratio(doctor.ratio())
                .filled_symbol("█")
                .unfilled_symbol("░")
                .filled_style(theme.gauge)
                .unfilled_style(theme.dim),
            gauge,
        );
        match &doctor.status {
            ScanStatus::Finished => {
                frame.render_widget(counts_line(doctor, theme), counts);
                draw_findings(doctor, theme, frame, findings);
            }
            ScanStatus::Running => {
                let text = "Findings are listed when the scan is done. esc cancels it.";
                frame.render_widget(placeholder(text, theme.dim), findings);
            }
            ScanStatus::Cancelled | ScanStatus::Failed(_) => {
                let text = "No findings: the scan did not finish. r scans again, esc closes.";
                frame.render_widget(placeholder(text, theme.dim), findings);
            }
        }
    }
}

/// `12,345 messages/s · 3.2s`, or the elapsed time alone before the first report.
fn pace(doctor: &DoctorState, rows: &str) -> String {
    let elapsed = format!("{:.1}s", doctor.elapsed());
    match doctor.rate() {
        Some(rate) => format!("{} {rows}s/s · {elapsed}", thousands(rate.round() as u64)),
        None => elapsed,
    }
}

/// What the scan is doing or did, and its style.
fn status_line(doctor: &DoctorState, theme: &Theme) -> (String, Style) {
    let rows = doctor.unit;
    match &doctor.status {
        ScanStatus::Running => match doctor.total {
            None => (format!("Counting the {rows}s…"), theme.dim),
            Some(total) => (
                format!(
                    "Scanning {rows}s: {} of {} · {}",
                    thousands(doctor.scanned),
                    thousands(total),
                    pace(doctor, rows)
                ),
                theme.title,
            ),
        },
        ScanStatus::Finished => {
            let report = doctor.report.as_ref();
            let conversations = report.map_or(0, |r| r.conversations as u64);
            let deleted = report.map_or(0, |r| r.deleted_skipped);
            let mut text = format!(
                "Scanned {} {}, {} {} · {}",
                thousands(conversations),
                noun(conversations, doctor.noun),
                thousands(doctor.scanned),
                noun(doctor.scanned, rows),
                pace(doctor, rows)
            );
            if deleted > 0 {
                text.push_str(&format!(
                    " · {} deleted in Dify, not scanned",
                    thousands(deleted)
                ));
            }
            if report.is_some_and(|r| r.files_not_checked) {
                text.push_str(" · files not checked: no object storage configured");
            }
            (text, theme.ok)
        }
        ScanStatus::Cancelled => (
            format!("Scan {} · {}", cancelled_text(doctor), pace(doctor, rows)),
            theme.warning,
        ),
        ScanStatus::Failed(error) => (format!("Scan failed: {error}"), theme.error),
    }
}

/// `7 findings: over_budget 3 · thread_divergence 4`.
fn counts_line(doctor: &DoctorState, theme: &Theme) -> Line<'static> {
    if doctor.findings.is_empty() {
        return Line::styled("No findings.", theme.ok);
    }
    let mut spans = vec![Span::styled(
        format!("{}: ", count(doctor.findings.len() as u64, "finding")),
        theme.warning,
    )];
    for (index, (kind, count)) in doctor.counts.iter().enumerate() {
        if index > 0 {
            spans.push(Span::styled(" · ", theme.dim));
        }
        spans.push(Span::styled(format!("{kind} "), theme.text));
        spans.push(Span::styled(thousands(*count as u64), theme.title));
    }
    Line::from(spans)
}

fn draw_findings(doctor: &DoctorState, theme: &Theme, frame: &mut Frame, area: Rect) {
    if doctor.findings.is_empty() {
        return;
    }
    // "Conversation", "Session" or "Thread": what the database keeps its histories as.
    let noun = doctor.noun;
    let title: String = noun[..1].to_uppercase() + &noun[1..];
    let header = Row::new(["Kind".to_owned(), title, "Description".to_owned()]).style(theme.title);
    let rows = doctor.findings.iter().map(|finding| {
        let id = finding.conversation_id().map_or("-".into(), short_id);
        let cells = vec![
            Span::raw(finding.kind()),
            Span::raw(id.into_owned()),
            Span::raw(description(finding)),
        ];
        (cells, theme.text)
    });
    let widths = [
        // "dangling_workflow_run", the longest kind, whole.
        Constraint::Length(21),
        Constraint::Length(SHORT_ID_WIDTH as u16),
        Constraint::Fill(1),
    ];
    selectable_table(header, rows, &widths, doctor.selected, theme, frame, area);
}

/// The finding's line without the conversation the column already names.
fn description(finding: &Finding) -> String {
    let text = finding.describe();
    match finding.conversation_id() {
        Some(id) => text
            .strip_prefix(&format!("conversation {id}: "))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}
