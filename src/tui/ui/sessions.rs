//! The conversation list of a database whose conversations are sessions or threads: Langflow's
//! (flow, session) pairs with their owner, LangGraph's threads with their checkpoints.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Row;

use super::common::{Component, framed, placeholder, selectable_table};
use super::conversations::{text_reason, with_reason};
use crate::format::thousands;
use crate::inspect::search_match::id_holds;
use crate::inspect::sessions::ConversationRow;
use crate::store::ConversationShape;
use crate::tui::state::{AppState, LoadStatus, PAGE_SIZE};
use crate::tui::theme::Theme;

pub struct SessionList;

/// The list's columns for a shape: their headers, widths, and each row's cells.
struct Columns {
    headers: &'static [&'static str],
    widths: &'static [Constraint],
    cells: fn(&ConversationRow) -> Vec<String>,
}

const FLOW_SESSIONS: Columns = Columns {
    headers: &["Session", "Flow", "Msgs", "Last activity", "Owner"],
    widths: &[
        Constraint::Fill(3),
        Constraint::Fill(2),
        Constraint::Length(6),
        Constraint::Length(16),
        Constraint::Fill(1),
    ],
    cells: |row| {
        vec![
            row.key.id.clone(),
            row.flow_name
                .clone()
                .or_else(|| row.key.flow_id.clone())
                .unwrap_or_else(|| "(no flow)".to_owned()),
            row.messages.map(thousands).unwrap_or_default(),
            row.last_activity.clone().unwrap_or_default(),
            row.owner.clone().unwrap_or_else(|| "(none)".to_owned()),
        ]
    },
};

const THREADS: Columns = Columns {
    headers: &["Thread", "Msgs", "Checkpoints", "Last activity"],
    widths: &[
        Constraint::Fill(3),
        Constraint::Length(6),
        Constraint::Length(11),
        Constraint::Fill(2),
    ],
    cells: |row| {
        vec![
            row.key.id.clone(),
            match (&row.messages, &row.problem) {
                (Some(n), _) => thousands(*n),
                (None, Some(_)) => "unread".to_owned(),
                (None, None) => String::new(),
            },
            row.checkpoints.map(thousands).unwrap_or_default(),
            row.last_activity.clone().unwrap_or_default(),
        ]
    },
};

impl Component for SessionList {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let list = &state.sessions;
        let (what, columns) = match state.shape {
            ConversationShape::CheckpointThreads => ("Threads", &THREADS),
            _ => ("Sessions of every flow", &FLOW_SESSIONS),
        };
        let filter = &state.list.filter;
        let matching = if filter.is_empty() {
            String::new()
        } else {
            format!(" matching {filter:?}")
        };
        let loading = match list.loading_offset {
            Some(offset) => format!(" · loading page {}…", offset / PAGE_SIZE as u64 + 1),
            None => String::new(),
        };
        let title = format!(
            " {what}{matching} · page {}{loading} ",
            list.page_number(PAGE_SIZE as u64)
        );
        let inner = framed(&title, theme, frame, area);
        let empty = match &list.status {
            LoadStatus::Loading if list.rows.is_empty() => Some((
                if filter.is_empty() {
                    "Loading conversations…".to_owned()
                } else {
                    format!("Searching ids and message text for {filter:?}…")
                },
                theme.dim,
            )),
            LoadStatus::Failed(error) => Some((
                format!("Could not load conversations: {error}\n\nr: try again"),
                theme.error,
            )),
            _ if list.rows.is_empty() && filter.is_empty() => {
                Some(("No conversations in this database.".to_owned(), theme.dim))
            }
            _ if list.rows.is_empty() => Some((
                format!("No conversation matches {filter:?}. esc clears the filter."),
                theme.dim,
            )),
            _ => None,
        };
        if let Some((text, style)) = empty {
            frame.render_widget(placeholder(text, style), inner);
            return;
        }
        let inner = with_reason(why_matched(state), theme, frame, inner);
        let header = Row::new(columns.headers.iter().copied()).style(theme.title);
        let rows = list.rows.iter().map(|row| {
            let style = if row.problem.is_some() {
                theme.warning
            } else {
                theme.text
            };
            let cells = (columns.cells)(row).into_iter().map(Span::raw).collect();
            (cells, style)
        });
        selectable_table(
            header,
            rows,
            columns.widths,
            list.selected,
            theme,
            frame,
            inner,
        );
    }
}

/// Why the selected session or thread matched the filter: its id, or the words around the
/// first hit in its messages.
fn why_matched(state: &AppState) -> Option<String> {
    let filter = &state.list.filter;
    if filter.trim().is_empty() {
        return None;
    }
    let row = state.sessions.selected_row()?;
    Some(match id_holds(&row.key.id, filter) {
        true => "matched in: id".to_owned(),
        false => text_reason(&state.list, &row.key),
    })
}
