//! Rows drawn cell by cell, for tables whose cells hold widgets (gauges): a header line, then
//! the window of rows that keeps the selected one visible.

use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Span;

use crate::tui::theme::Theme;

/// One visible row: its index among all rows and the areas of its cells.
pub struct RowCells {
    pub index: usize,
    pub area: Rect,
    pub cells: Rc<[Rect]>,
}

/// Draws `header` in the first line of `area` and lays out the rows below it: at most as many
/// as fit, scrolled so that `selected` is visible.
pub fn layout_rows(
    header: &[&str],
    columns: &[Constraint],
    rows: usize,
    selected: usize,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> Vec<RowCells> {
    let split = |area: Rect| Layout::horizontal(columns.to_vec()).spacing(1).split(area);
    let [header_area, rows_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    for (text, cell) in header.iter().zip(split(header_area).iter()) {
        frame.render_widget(Span::styled(*text, theme.title), *cell);
    }
    let visible = usize::from(rows_area.height);
    let offset = selected.saturating_sub(visible.saturating_sub(1));
    (offset..rows.min(offset + visible))
        .enumerate()
        .map(|(line, index)| {
            let area = Rect {
                y: rows_area.y + line as u16,
                height: 1,
                ..rows_area
            };
            RowCells {
                index,
                area,
                cells: split(area),
            }
        })
        .collect()
}
