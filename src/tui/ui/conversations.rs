//! The conversation list: one keyset page, with loading, empty and error states.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Block, Borders, Cell, Row};

use super::{Component, one_line, placeholder, selectable_table, short_id};
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

pub struct ConversationList;

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
        let block = Block::default()
            .borders(Borders::ALL)
            .title(title)
            .border_style(theme.dim)
            .title_style(theme.title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        match &list.status {
            LoadStatus::Loading if list.rows.is_empty() => {
                frame.render_widget(placeholder("Loading conversations…", theme.dim), inner);
                return;
            }
            LoadStatus::Failed(error) => {
                let text = format!("Could not load conversations: {error}\n\nr: try again");
                frame.render_widget(placeholder(text, theme.error), inner);
                return;
            }
            _ if list.rows.is_empty() => {
                let text = if list.filter.is_empty() {
                    "No conversations in this database.".to_owned()
                } else {
                    format!(
                        "No conversation matches {:?}. esc clears the filter.",
                        list.filter
                    )
                };
                frame.render_widget(placeholder(text, theme.dim), inner);
                return;
            }
            _ => {}
        }
        let header = Row::new([
            "Name",
            "App",
            "Mode",
            "Msgs",
            "Last activity",
            "Tokens",
            "Id",
        ])
        .style(theme.title);
        // The two flexible columns share what the fixed ones leave (13+6+16+7+8, six gaps and
        // the "> " mark): values longer than their share end in … (enter opens the whole).
        let flexible = usize::from(inner.width).saturating_sub(50 + 6 + 2);
        let name_width = flexible * 3 / 5;
        let app_width = flexible - name_width;
        let rows = list.rows.iter().map(|row| {
            let tokens = list
                .thread_tokens
                .get(&row.id)
                .map_or_else(|| "…".to_owned(), u64::to_string);
            let name = match (row.name.is_empty(), row.is_deleted) {
                (true, false) => "(unnamed)".to_owned(),
                (false, false) => row.name.clone(),
                (true, true) => "✗ (unnamed)".to_owned(),
                (false, true) => format!("✗ {}", row.name),
            };
            let style = if row.is_deleted {
                theme.dim
            } else {
                theme.text
            };
            Row::new([
                Cell::from(one_line(&name, name_width)),
                Cell::from(one_line(
                    row.app_name.as_deref().unwrap_or("(no app)"),
                    app_width,
                )),
                Cell::from(row.mode.clone()),
                Cell::from(row.message_count.to_string()),
                Cell::from(row.last_activity.format("%Y-%m-%d %H:%M").to_string()),
                Cell::from(tokens),
                Cell::from(short_id(&row.id).to_owned()),
            ])
            .style(style)
        });
        let widths = [
            Constraint::Fill(3),
            Constraint::Fill(2),
            // "advanced-chat", Dify's longest mode, whole.
            Constraint::Length(13),
            Constraint::Length(6),
            Constraint::Length(16),
            Constraint::Length(7),
            Constraint::Length(8),
        ];
        selectable_table(header, rows, widths, list.selected, theme, frame, inner);
    }
}
