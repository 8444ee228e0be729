//! The conversation list: one keyset page, with loading, empty and error states.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Row;

use super::common::{Component, framed, heading, placeholder, selectable_table, short_id};
use crate::format::{one_line, thousands};
use crate::inspect::listing::cells;
use crate::inspect::search_match::matched_field;
use crate::sources::conversation::ListColumn;
use crate::sources::opened::ConversationKey;
use crate::tui::state::{AppState, ListState, LoadStatus};
use crate::tui::theme::Theme;

pub struct ConversationList;

/// A source's columns no wider than this keep their width where there is room; wider ones
/// share what is left.
pub(super) const NARROW_COLUMN: usize = 13;

impl Component for ConversationList {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let list = &state.list;
        let filter = if list.filter.is_empty() {
            String::new()
        } else {
            format!(" matching {:?}", list.filter)
        };
        let going = match list.target_page() {
            Some(target) => format!(" · loading page {target}…"),
            None => String::new(),
        };
        let deleted = if list.include_deleted {
            " · ✗ deleted in Dify, shown"
        } else {
            ""
        };
        let title = format!(
            " Conversations{filter}{deleted} · page {}{going} ",
            list.page_number()
        );
        let inner = framed(&title, theme, frame, area);
        if let Some((text, style)) = in_place_of_rows(list, "", theme) {
            frame.render_widget(placeholder(text, style), inner);
            return;
        }
        let columns = &state.list_columns;
        let mut names = vec!["Name".to_owned()];
        names.extend(columns.iter().map(|column| heading(column.header)));
        names.extend(["Msgs", "Last activity", "Tokens", "Id"].map(str::to_owned));
        let header = Row::new(names).style(theme.title);
        let rows = list.rows.iter().map(|row| {
            let tokens = list
                .thread_tokens
                .get(&row.id)
                .map_or_else(|| "…".to_owned(), |t| thousands(*t));
            let title = row.title.as_deref().filter(|title| !title.is_empty());
            let name = match (title, row.deleted) {
                (None, false) => "(unnamed)".to_owned(),
                (Some(title), false) => title.to_owned(),
                (None, true) => "✗ (unnamed)".to_owned(),
                (Some(title), true) => format!("✗ {title}"),
            };
            let style = if row.deleted { theme.dim } else { theme.text };
            let whole = cells(row, columns);
            let mut spans = vec![Span::raw(name)];
            let own = whole[2..2 + columns.len()].iter().zip(columns.iter());
            spans.extend(own.map(|(cell, column)| match cell.is_empty() {
                true => Span::raw(format!("(no {})", column.header)),
                false => Span::raw(cell.clone()),
            }));
            spans.extend(whole[2 + columns.len()..].iter().cloned().map(Span::raw));
            spans.extend([Span::raw(tokens), Span::raw(short_id(&row.id).into_owned())]);
            (spans, style)
        });
        let inner = with_reason(why_matched(list, columns), theme, frame, inner);
        let mut widths = vec![Constraint::Fill(3)];
        // A narrow column (Dify's mode: "advanced-chat" its longest) is whole where there is
        // room; on a narrow terminal the name, which tells conversations apart, keeps that room.
        widths.extend(
            columns
                .iter()
                .map(|column| match column.width <= NARROW_COLUMN {
                    true if inner.width >= 100 => Constraint::Length(column.width as u16),
                    true => Constraint::Length(column.width.min(8) as u16),
                    false => Constraint::Fill(2),
                }),
        );
        widths.extend([
            Constraint::Length(6),
            Constraint::Length(16),
            Constraint::Length(7),
            Constraint::Length(8),
        ]);
        selectable_table(header, rows, &widths, list.selected, theme, frame, inner);
    }
}

/// `area` with `reason` (why the selected row matched) on its last line; the rest is returned.
pub(super) fn with_reason(
    reason: Option<String>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> Rect {
    let Some(reason) = reason else {
        return area;
    };
    let [table, footer] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    let width = usize::from(footer.width);
    frame.render_widget(Line::styled(one_line(&reason, width), theme.dim), footer);
    table
}

/// Why the selected row matched the filter: the field that holds it, or the words around its
/// first hit in the messages.
fn why_matched(list: &ListState, columns: &[ListColumn]) -> Option<String> {
    if list.filter.trim().is_empty() {
        return None;
    }
    let row = list.rows.get(list.selected)?;
    if let Some(field) = matched_field(row, columns, &list.filter) {
        return Some(format!("matched in: {field}"));
    }
    let key = ConversationKey::new(row.id.clone());
    Some(text_reason(list, &key))
}

/// Why conversation `key` matched the filter in its messages' text: the words around the first
/// hit, once read.
pub(super) fn text_reason(list: &ListState, key: &ConversationKey) -> String {
    let snippet = list
        .snippet
        .as_ref()
        .filter(|s| s.key == *key && s.filter == list.filter);
    match snippet.and_then(|s| s.text.as_ref()) {
        Some(Ok(Some(text))) => format!("matched in: text: {text}"),
        Some(Ok(None)) => "matched in: message text".to_owned(),
        Some(Err(error)) => format!("matched in: message text (could not read it: {error})"),
        None => "matched in: message text (reading…)".to_owned(),
    }
}

/// What the list shows in place of its rows, if anything: loading, a search running (what it
/// reads, `reads`, ends in a space), a failure, or nothing there.
pub(super) fn in_place_of_rows(
    list: &ListState,
    reads: &str,
    theme: &Theme,
) -> Option<(String, Style)> {
    let filter = &list.filter;
    Some(match &list.status {
        LoadStatus::Loading if list.rows.is_empty() && filter.is_empty() => {
            ("Loading conversations…".to_owned(), theme.dim)
        }
        LoadStatus::Loading if list.rows.is_empty() => (searching_text(list, reads), theme.dim),
        LoadStatus::Failed(error) => (
            format!("Could not load conversations: {error}\n\nr: try again"),
            theme.error,
        ),
        _ if list.rows.is_empty() && filter.is_empty() => {
            ("No conversations in this database.".to_owned(), theme.dim)
        }
        _ if list.rows.is_empty() => (
            format!("No conversation matches {filter:?}. esc clears the filter."),
            theme.dim,
        ),
        _ => return None,
    })
}

/// What a running search shows: what it has found so far, newest first, and how to stop it.
fn searching_text(list: &ListState, reads: &str) -> String {
    let mut text = format!("Searching {reads}for {:?}… esc stops", list.filter);
    if !list.found_so_far.is_empty() {
        text.push_str(&format!("\n\n{} found so far:", list.found_so_far.len()));
        for row in &list.found_so_far {
            text.push_str(&format!("\n{}", row.title.as_deref().unwrap_or("")));
        }
    }
    text
}
