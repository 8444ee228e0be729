//! The prune popup: the rule, the plan thread by thread (checkpoints deleted of those there
//! were, writes, blobs, bytes freed), the archive the rows go to and the command that puts them
//! back, whole (wrapped, never cut: they are to be read), or on a database opened read-only
//! that `--write` is needed, and the popup's keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::budget::wrapped_height;
use super::common::{context_hints, middle_cut, popup};
use crate::format::{byte_size, pad, thousands};
use crate::sources::checkpoint_prune::PrunePlan;
use crate::tui::keymap::KeyContext;
use crate::tui::state::AppState;
use crate::tui::state::prune::{PruneState, kept};
use crate::tui::theme::Theme;

/// Columns after the thread's: checkpoints ("12 of 15"), writes, blobs, bytes freed.
const FIGURES: [(&str, usize); 4] = [
    ("checkpoints", 17),
    ("writes", 9),
    ("blobs", 7),
    ("freed", 9),
];

pub(super) fn draw(
    state: &AppState,
    prune: &PruneState,
    theme: &Theme,
    frame: &mut Frame,
    body: Rect,
) {
    let width = body.width.saturating_mul(9) / 10;
    let inner_width = width.saturating_sub(2);
    let each = if prune.every_thread { "each " } else { "" };
    let latest = if prune.keep_last > 1 {
        " (the latest, the one get_state reads, always stays)"
    } else {
        ""
    };
    let mut head = vec![Line::styled(
        format!(
            "Prune {}, {each}keeping {}: the older ones are deleted with their writes{latest}.",
            prune.scope(),
            kept(prune.keep_last)
        ),
        theme.text,
    )];
    if prune.status.is_loading() {
        head.push(Line::styled("planning…", theme.dim));
    }
    let mut tail = Vec::new();
    let plan = prune
        .planned
        .as_ref()
        .filter(|p| !p.plan.threads.is_empty());
    if plan.is_some() && state.read_only {
        tail.push(Line::default());
        tail.push(Line::styled(
            "This database was opened read-only: start memscope with --write to prune (every \
             deleted row is archived first).",
            theme.text,
        ));
    } else if let Some(planned) = plan {
        tail.push(Line::default());
        tail.push(Line::styled(
            "Every deleted row is archived first, in",
            theme.text,
        ));
        tail.push(Line::styled(
            planned.archive.display().to_string(),
            theme.title,
        ));
        tail.push(Line::styled("and this puts them back:", theme.text));
        tail.push(Line::styled(planned.restore.clone(), theme.dim));
    } else if prune.planned.is_some() {
        head.push(Line::styled(prune.nothing_to_prune(), theme.dim));
    }
    // The popup's border, the line before its keys and the keys.
    let frame_rows = 4;
    let fixed = wrapped_height(&head, inner_width) + wrapped_height(&tail, inner_width);
    let room = body.height.saturating_sub(frame_rows + fixed + 1);
    let mut lines = head;
    if let Some(planned) = plan {
        lines.push(Line::default());
        lines.extend(plan_table(
            &planned.plan,
            usize::from(inner_width),
            usize::from(room),
            theme,
        ));
    }
    lines.extend(tail);
    let height = (wrapped_height(&lines, inner_width) + frame_rows).min(body.height);
    let area = body.centered(Constraint::Length(width), Constraint::Length(height));
    let inner = popup(" Prune checkpoints ".to_owned(), theme, frame, area);
    let [text, _, keys] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), text);
    frame.render_widget(context_hints(state, KeyContext::Prune, theme), keys);
}

/// The plan's threads under a header in at most `rows` lines (the ones left out counted), and
/// their totals when there are several.
fn plan_table(plan: &PrunePlan, width: usize, rows: usize, theme: &Theme) -> Vec<Line<'static>> {
    let figures: usize = FIGURES.iter().map(|(_, w)| w + 1).sum();
    let thread_width = width.saturating_sub(figures).max(8);
    let row = |thread: &str, cells: [String; 4], style: Style| {
        let mut text = pad(&middle_cut(thread, thread_width), thread_width);
        for (cell, (_, cell_width)) in cells.iter().zip(FIGURES) {
            text.push_str(&format!(" {cell:>cell_width$}"));
        }
        Line::styled(text, style)
    };
    let mut lines = vec![row(
        "thread",
        FIGURES.map(|(title, _)| title.to_owned()),
        theme.title,
    )];
    let several = plan.threads.len() > 1;
    // The header, the totals and the count of those left out take a line each.
    let shown = if plan.threads.len() + 1 + usize::from(several) <= rows {
        plan.threads.len()
    } else {
        rows.saturating_sub(3).max(1)
    };
    for thread in plan.threads.iter().take(shown) {
        let cells = thread.figures(|bytes| byte_size(bytes.max(0) as u64));
        lines.push(row(&thread.thread_id, cells, theme.text));
    }
    let left_out = plan.threads.len() - shown;
    if left_out > 0 {
        lines.push(Line::styled(
            format!("… and {} more (counted in all)", thousands(left_out as u64)),
            theme.dim,
        ));
    }
    if several {
        let cells = [
            thousands(plan.checkpoints as u64),
            thousands(plan.writes),
            thousands(plan.blobs as u64),
            byte_size(plan.bytes.max(0) as u64),
        ];
        lines.push(row("all", cells, theme.title));
    }
    lines
}
