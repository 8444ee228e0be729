//! The conversation list, whatever the database keeps: one keyset page of the rows
//! `conversations` prints, with the columns the source adds, and its loading, searching, empty
//! and error states.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Row;

use super::common::{Component, framed, heading, placeholder, selectable_table, short_id};
use crate::format::{display_width, one_line, thousands};
use crate::inspect::listing::cells;
use crate::inspect::search_match::{matched_field, what_search_reads};
use crate::sources::conversation::{ListColumn, ListedConversation};
use crate::tui::state::{AppState, ListState, LoadStatus, key_of};
use crate::tui::theme::Theme;

pub struct ConversationList;

/// A source's columns no wider than this keep their width where there is room; wider ones
/// share what is left.
const NARROW_COLUMN: usize = 13;

/// How the page's rows are told apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arrangement {
    /// By title, the id shortened in the last column: every id on the page is a random UUID,
    /// which says nothing to a reader, and rows have titles (Dify's conversations).
    ByTitle,
    /// By the whole id first, then the title where rows have one (a Langflow session, a
    /// LangGraph thread: ids their application chose).
    ById { titled: bool },
}

impl Arrangement {
    fn of(rows: &[ListedConversation]) -> Arrangement {
        let titled = rows.iter().any(|row| row.title.is_some());
        let random_ids = rows
            .iter()
            .all(|row| uuid::Uuid::try_parse(&row.id).is_ok());
        match titled && random_ids {
            true => Arrangement::ByTitle,
            false => Arrangement::ById { titled },
        }
    }
}

impl Component for ConversationList {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let list = &state.list;
        let inner = framed(&title(state), theme, frame, area);
        let reads = what_search_reads(state.list_search, &state.list_columns);
        if let Some((text, style)) = in_place_of_rows(list, &reads, theme) {
            frame.render_widget(placeholder(text, style), inner);
            return;
        }
        let inner = with_reason(why_matched(state), theme, frame, inner);
        let columns = &state.list_columns;
        let arrangement = Arrangement::of(&list.rows);
        let tokens = state.list_counts_tokens();
        let all_cells: Vec<Vec<String>> = list.rows.iter().map(|row| cells(row, columns)).collect();

        let mut names = Vec::new();
        let mut widths = Vec::new();
        match arrangement {
            Arrangement::ByTitle => names.push("Title".to_owned()),
            Arrangement::ById { titled } => {
                names.push(heading(state.noun));
                if titled {
                    names.push("Title".to_owned());
                    widths.push(Constraint::Fill(2));
                }
            }
        }
        widths.insert(0, Constraint::Fill(3));
        names.extend(columns.iter().map(|column| heading(column.header)));
        // A narrow column (Dify's mode: "advanced-chat" its longest) is whole where there is
        // room; on a narrow terminal what tells rows apart keeps that room, down to the heading.
        widths.extend(
            columns
                .iter()
                .map(|column| match column.width <= NARROW_COLUMN {
                    true if inner.width >= 100 => Constraint::Length(column.width as u16),
                    true => {
                        let shrunk = column.width.min(8).max(column.header.chars().count());
                        Constraint::Length(shrunk as u16)
                    }
                    false => Constraint::Fill(2),
                }),
        );
        // The count is never cut: "unreadable" where a row could not be read is its widest.
        let messages = all_cells
            .iter()
            .map(|cells| display_width(&cells[2 + columns.len()]));
        let messages = messages.max().unwrap_or(0).max(6) as u16;
        names.extend(["Msgs", "Last activity"].map(str::to_owned));
        widths.extend([Constraint::Length(messages), Constraint::Length(16)]);
        if tokens {
            names.push("Tokens".to_owned());
            widths.push(Constraint::Length(7));
        }
        if arrangement == Arrangement::ByTitle {
            names.push("Id".to_owned());
            widths.push(Constraint::Length(8));
        }
        let header = Row::new(names).style(theme.title);

        let rows = list.rows.iter().zip(all_cells).map(|(row, whole)| {
            let deleted = if row.deleted { "✗ " } else { "" };
            let title = row.title.as_deref().filter(|title| !title.is_empty());
            let title = title.unwrap_or("(unnamed)");
            let mut spans = match arrangement {
                Arrangement::ByTitle => vec![Span::raw(format!("{deleted}{title}"))],
                Arrangement::ById { titled } => {
                    let mut first = vec![Span::raw(format!("{deleted}{}", row.id))];
                    if titled {
                        first.push(Span::raw(title.to_owned()));
                    }
                    first
                }
            };
            spans.extend(own_cells(&whole, columns));
            spans.extend(whole[2 + columns.len()..].iter().cloned().map(Span::raw));
            if tokens {
                let counted = list.thread_tokens.get(&row.id);
                spans.push(Span::raw(
                    counted.map_or_else(|| "…".to_owned(), |t| thousands(*t)),
                ));
            }
            if arrangement == Arrangement::ByTitle {
                spans.push(Span::raw(short_id(&row.id).into_owned()));
            }
            let style = match (row.deleted, &row.problem) {
                (true, _) => theme.dim,
                (false, Some(_)) => theme.warning,
                (false, None) => theme.text,
            };
            (spans, style)
        });
        selectable_table(header, rows, &widths, list.selected, theme, frame, inner);
    }
}

/// The list's title: what the rows are, the filter, the page, and a page on its way.
fn title(state: &AppState) -> String {
    let list = &state.list;
    let filter = if list.filter.is_empty() {
        String::new()
    } else {
        format!(" matching {:?}", list.filter)
    };
    let deleted = if list.include_deleted {
        " · ✗ deleted in Dify, shown"
    } else {
        ""
    };
    let going = match list.target_page() {
        Some(target) => format!(" · loading page {target}…"),
        None => String::new(),
    };
    format!(
        " {}s{filter}{deleted} · page {}{going} ",
        heading(state.noun),
        list.page_number()
    )
}

/// The cells of the source's own columns, an empty one named: `(no app)`.
fn own_cells(whole: &[String], columns: &[ListColumn]) -> Vec<Span<'static>> {
    let own = whole[2..2 + columns.len()].iter().zip(columns);
    own.map(|(cell, column)| match cell.is_empty() {
        true => Span::raw(format!("(no {})", column.header)),
        false => Span::raw(cell.clone()),
    })
    .collect()
}

/// `area` with `reason` (why the selected row matched) on its last line; the rest is returned.
fn with_reason(reason: Option<String>, theme: &Theme, frame: &mut Frame, area: Rect) -> Rect {
    let Some(reason) = reason else {
        return area;
    };
    let [table, footer] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    let width = usize::from(footer.width);
    frame.render_widget(Line::styled(one_line(&reason, width), theme.dim), footer);
    table
}

/// Why the selected row matched the filter: the field that holds it, as the source's search
/// reads them, or the words around its first hit in the messages, once read.
fn why_matched(state: &AppState) -> Option<String> {
    let list = &state.list;
    if list.filter.trim().is_empty() {
        return None;
    }
    let row = list.selected_row()?;
    let field = matched_field(row, &state.list_columns, state.list_search, &list.filter);
    if let Some(field) = field {
        return Some(format!("matched in: {field}"));
    }
    let key = key_of(row);
    let snippet = list
        .snippet
        .as_ref()
        .filter(|s| s.key == key && s.filter == list.filter);
    Some(match snippet.and_then(|s| s.text.as_ref()) {
        Some(Ok(Some(text))) => format!("matched in: text: {text}"),
        Some(Ok(None)) => "matched in: message text".to_owned(),
        Some(Err(error)) => format!("matched in: message text (could not read it: {error})"),
        None => "matched in: message text (reading…)".to_owned(),
    })
}

/// What the list shows in place of its rows, if anything: loading, a search running (and what
/// it reads), a failure, or nothing there.
fn in_place_of_rows(list: &ListState, reads: &str, theme: &Theme) -> Option<(String, Style)> {
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

/// What a running search shows: what it reads, what it has found so far, newest first, and how
/// to stop it.
fn searching_text(list: &ListState, reads: &str) -> String {
    let mut text = format!("Searching {reads} for {:?}… esc stops", list.filter);
    if !list.found_so_far.is_empty() {
        text.push_str(&format!("\n\n{} found so far:", list.found_so_far.len()));
        for row in &list.found_so_far {
            let title = row.title.as_deref().filter(|title| !title.is_empty());
            text.push_str(&format!("\n{}", title.unwrap_or(&row.id)));
        }
    }
    text
}
