//! What the screens' components share: the [`Component`] trait, the selectable table, popups
//! and the confirmation, and the cutting of text to a cell.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

pub(crate) use crate::format::{SHORT_ID_WIDTH, middle_cut, short_id};
use crate::format::{display_width, one_line};
use crate::tui::keymap::KeyContext;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// `text` as spans in `style`, every occurrence of `query` (ignoring case) in bold with reverse
/// video switched (so a hit shows on the selected line too): a search's matches. No query: one
/// span.
pub(crate) fn highlighted(text: &str, query: Option<&str>, style: Style) -> Vec<Span<'static>> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return vec![Span::styled(text.to_owned(), style)];
    };
    let hit = match style.add_modifier.contains(Modifier::REVERSED) {
        true => style.remove_modifier(Modifier::REVERSED),
        false => style.add_modifier(Modifier::REVERSED),
    }
    .add_modifier(Modifier::BOLD);
    let mut spans = Vec::new();
    let mut at = 0;
    for range in crate::tui::state::search::find(text, query) {
        if range.start > at {
            spans.push(Span::styled(text[at..range.start].to_owned(), style));
        }
        spans.push(Span::styled(text[range.clone()].to_owned(), hit));
        at = range.end;
    }
    if at < text.len() || spans.is_empty() {
        spans.push(Span::styled(text[at..].to_owned(), style));
    }
    spans
}

/// A screen: draws itself.
pub trait Component {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect);
}

/// A list's table: the header, the rows, the selected row highlighted and kept in view.
pub(crate) fn selectable_table<'a>(
    header: Row<'a>,
    rows: impl IntoIterator<Item = (Vec<Span<'a>>, Style)>,
    widths: &[Constraint],
    selected: usize,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    // The table's own column layout (one column of spacing, the "> " mark reserved): each
    // value longer than its column ends in …, so a cut is always visible (`i` shows it whole).
    let columns = Layout::horizontal(widths.iter().copied())
        .spacing(1)
        .split(Rect::new(0, 0, area.width.saturating_sub(2), 1));
    let rows = rows.into_iter().map(|(cells, style)| {
        let cells = cells.into_iter().zip(columns.iter()).map(|(span, column)| {
            let text = one_line(&span.content, usize::from(column.width));
            Cell::from(Span::styled(text, span.style))
        });
        Row::new(cells).style(style)
    });
    let table = Table::new(rows, widths.iter().copied())
        .header(header)
        .row_highlight_style(theme.selected)
        .highlight_symbol("> ");
    let mut table_state = TableState::default().with_selected(Some(selected));
    frame.render_stateful_widget(table, area, &mut table_state);
}

/// A bordered, titled popup over `area` (cleared first); returns the area inside the border.
pub(crate) fn popup(title: String, theme: &Theme, frame: &mut Frame, area: Rect) -> Rect {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(one_line(&title, usize::from(area.width.saturating_sub(2))))
        .border_style(theme.title)
        .title_style(theme.title);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    inner
}

/// `spans` on one line of `width` characters: what does not fit is cut, and the cut ends in `…`.
pub(crate) fn fit_line(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let total: usize = spans.iter().map(|span| span.content.chars().count()).sum();
    if total <= width {
        return Line::from(spans);
    }
    let mut room = width.saturating_sub(1);
    let mut kept = Vec::new();
    let mut style = Style::default();
    for span in spans {
        if room == 0 {
            break;
        }
        style = span.style;
        let length = span.content.chars().count();
        if length <= room {
            room -= length;
            kept.push(span);
        } else {
            let cut: String = span.content.chars().take(room).collect();
            kept.push(Span::styled(cut, span.style));
            room = 0;
        }
    }
    if width > 0 {
        kept.push(Span::styled("…", style));
    }
    Line::from(kept)
}

/// The keys of `context` on one line, as the hint bar names them: popups show their own keys.
pub(crate) fn context_hints(state: &AppState, context: KeyContext, theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (keys, desc) in state.keymap.grouped(context) {
        spans.push(Span::styled(format!("{keys} "), theme.title));
        spans.push(Span::styled(format!("{desc}  "), theme.dim));
    }
    Line::from(spans)
}

/// The confirmation every write asks for: the question and the confirm keys.
pub(crate) fn confirm_popup(
    state: &AppState,
    question: &str,
    theme: &Theme,
    frame: &mut Frame,
    body: Rect,
) {
    let area = body.centered(Constraint::Percentage(70), Constraint::Length(8));
    let inner = popup(" Confirm ".to_owned(), theme, frame, area);
    let [question_area, keys] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(question.to_owned())
            .style(theme.text)
            .wrap(Wrap { trim: true }),
        question_area,
    );
    let hints = context_hints(state, KeyContext::Confirm, theme);
    frame.render_widget(fit_line(hints.spans, usize::from(keys.width)), keys);
}

/// `word` with its first letter in capitals: a column's heading.
pub(crate) fn heading(word: &str) -> String {
    let mut letters = word.chars();
    letters
        .next()
        .map(|first| first.to_uppercase().chain(letters).collect())
        .unwrap_or_default()
}

/// A one-line placeholder for loading, empty and error states.
pub(crate) fn placeholder<'a>(
    text: impl Into<String>,
    style: ratatui::style::Style,
) -> Paragraph<'a> {
    Paragraph::new(text.into())
        .style(style)
        .wrap(Default::default())
}

/// A pane of a screen: a dim border under its title.
pub(crate) fn pane_block<'a>(title: &str, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .title(title.to_owned())
        .border_style(theme.dim)
        .title_style(theme.title)
}

/// Draws a pane's border over `area`, its title cut to the border with `…`; returns the area
/// inside it.
pub(crate) fn framed(title: &str, theme: &Theme, frame: &mut Frame, area: Rect) -> Rect {
    let block = pane_block(&fitted_title(title, area.width), theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    inner
}

/// A pane's title within a border `width` columns wide: whole, with a space each side as far
/// as they fit, otherwise cut, ending in `…`.
fn fitted_title(title: &str, width: u16) -> String {
    let room = usize::from(width).saturating_sub(2);
    let inner = title.trim();
    match room.checked_sub(display_width(inner)) {
        Some(2..) => format!(" {inner} "),
        Some(1) => format!(" {inner}"),
        _ => one_line(inner, room),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_wider_than_its_pane_ends_in_an_ellipsis() {
        assert_eq!(fitted_title(" Nodes · 3 turns ", 40), " Nodes · 3 turns ");
        assert_eq!(fitted_title(" Nodes · 3 turns ", 18), " Nodes · 3 turns");
        assert_eq!(fitted_title(" Nodes · 3 turns ", 17), "Nodes · 3 turns");
        assert_eq!(fitted_title(" Nodes · 3 turns ", 12), "Nodes · 3…");
        assert_eq!(fitted_title(" 日本語のタイトル ", 10), "日本語…");
    }

    #[test]
    fn a_line_too_wide_is_cut_with_an_ellipsis() {
        let spans = || {
            vec![
                Span::raw(" q"),
                Span::raw(" quit "),
                Span::raw(" ?"),
                Span::raw(" help "),
            ]
        };
        let text =
            |line: Line| -> String { line.spans.iter().map(|s| s.content.as_ref()).collect() };
        assert_eq!(text(fit_line(spans(), 20)), " q quit  ? help ");
        assert_eq!(text(fit_line(spans(), 10)), " q quit  …");
        assert_eq!(text(fit_line(spans(), 1)), "…");
        assert_eq!(text(fit_line(spans(), 0)), "");
    }
}
