//! The conversation list of a database whose conversations are sessions or threads: the page
//! `conversations` prints (Langflow's (flow, session) pairs with their owner, LangGraph's
//! threads with their checkpoints, any source's log), with the columns its source adds.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Row;

use super::common::{Component, framed, heading, placeholder, selectable_table};
use super::conversations::{NARROW_COLUMN, in_place_of_rows, text_reason, with_reason};
use crate::inspect::listing::{cells, headers};
use crate::inspect::search_match::id_holds;
use crate::tui::state::{AppState, key_of};
use crate::tui::theme::Theme;

pub struct SessionList;

impl Component for SessionList {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let list = &state.list;
        let columns = &state.list_columns;
        let filter = &list.filter;
        let matching = if filter.is_empty() {
            String::new()
        } else {
            format!(" matching {filter:?}")
        };
        let loading = match list.target_page() {
            Some(page) => format!(" · loading page {page}…"),
            None => String::new(),
        };
        let title = format!(
            " {}s{matching} · page {}{loading} ",
            heading(state.noun),
            list.page_number()
        );
        let inner = framed(&title, theme, frame, area);
        if let Some((text, style)) = in_place_of_rows(list, "ids and message text ", theme) {
            frame.render_widget(placeholder(text, style), inner);
            return;
        }
        let inner = with_reason(why_matched(state), theme, frame, inner);
        // A source whose conversations have no titles gets no empty column for them.
        let titled = list.rows.iter().any(|row| row.title.is_some());
        let shown = |index: usize| index != 1 || titled;
        let mut widths = vec![Constraint::Fill(3), Constraint::Fill(2)];
        widths.extend(
            columns
                .iter()
                .map(|column| match column.width <= NARROW_COLUMN {
                    true => Constraint::Length(column.width as u16),
                    false => Constraint::Fill(1),
                }),
        );
        widths.extend([Constraint::Length(10), Constraint::Length(16)]);
        let mut names: Vec<String> = headers(columns).into_iter().map(heading).collect();
        names[0] = heading(state.noun);
        let names = names.into_iter().enumerate().filter(|(i, _)| shown(*i));
        let header = Row::new(names.map(|(_, name)| name)).style(theme.title);
        let rows = list.rows.iter().map(|row| {
            let style = if row.problem.is_some() {
                theme.warning
            } else {
                theme.text
            };
            let cells = cells(row, columns)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| shown(*i))
                .map(|(_, cell)| Span::raw(cell))
                .collect();
            (cells, style)
        });
        let widths: Vec<Constraint> = widths
            .into_iter()
            .enumerate()
            .filter(|(i, _)| shown(*i))
            .map(|(_, width)| width)
            .collect();
        selectable_table(header, rows, &widths, list.selected, theme, frame, inner);
    }
}

/// Why the selected session or thread matched the filter: its id, or the words around the
/// first hit in its messages.
fn why_matched(state: &AppState) -> Option<String> {
    let filter = &state.list.filter;
    if filter.trim().is_empty() {
        return None;
    }
    let row = state.list.selected_row()?;
    Some(match id_holds(&row.id, filter) {
        true => "matched in: id".to_owned(),
        false => text_reason(&state.list, &key_of(row)),
    })
}
