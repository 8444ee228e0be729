//! The chat memories tab: the list of memories, or one memory's messages a page at a time.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Row;

use super::common::{Component, framed, placeholder, selectable_table, short_id};
use crate::format::{display_width, thousands};
use crate::inspect::trim::row_message;
use crate::store::ChatMemorySummary;
use crate::tui::state::chat_memories::{
    ChatMemoriesState, MESSAGE_PAGE, MemoryView, policy_summary,
};
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

/// The most a label or a chat id takes of the list before the policy: more is cut with `…`.
const IDENTIFYING_WIDTH: usize = 24;

pub struct ChatMemoriesView;

impl Component for ChatMemoriesView {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let memories = &state.chat_memories;
        match &memories.open {
            Some(open) => draw_memory(memories, open, theme, frame, area),
            None => draw_list(memories, theme, frame, area),
        }
    }
}

/// Draws the loading, error or empty state of a list of `what.0` (`what.1` when empty);
/// `false` when there are rows to draw.
fn drew_state(
    status: &LoadStatus,
    empty: bool,
    what: (&str, &str),
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> bool {
    let (text, style) = match status {
        LoadStatus::Loading if empty => (format!("Loading {}…", what.0), theme.dim),
        LoadStatus::Failed(error) => (
            format!("Could not load the {}: {error}\n\nr: try again", what.0),
            theme.error,
        ),
        _ if empty => (what.1.to_owned(), theme.dim),
        _ => return false,
    };
    frame.render_widget(placeholder(text, style), area);
    true
}

fn draw_list(memories: &ChatMemoriesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let title = format!(" Chat memories · {} ", memories.rows.len());
    let inner = framed(&title, theme, frame, area);
    let empty = "No chat memories in this database. `memscope chat-memory add` creates one.";
    let what = ("chat memories", empty);
    if drew_state(
        &memories.status,
        memories.rows.is_empty(),
        what,
        theme,
        frame,
        inner,
    ) {
        return;
    }
    let header =
        Row::new(["Label", "Node", "Chat id", "Policy", "Msgs", "Tokens"]).style(theme.title);
    let rows = memories.rows.iter().map(|row| {
        let tokens = memories
            .tokens
            .get(&row.id)
            .map_or_else(|| "…".to_owned(), |t| thousands(*t));
        let cells = vec![
            Span::raw(row.label.clone()),
            Span::raw(short_id(&row.memory_node_id).into_owned()),
            Span::raw(row.chat_id.clone()),
            Span::raw(policy_summary(&row.policy)),
            Span::raw(thousands(row.message_count)),
            Span::raw(tokens),
        ];
        (cells, theme.text)
    });
    // The label and the chat id tell memories apart: they keep the room they need (up to a
    // point) before the policy, which `i` shows whole.
    let room = |header: &str, cell: fn(&ChatMemorySummary) -> &str| {
        let widest = memories.rows.iter().map(|row| display_width(cell(row)));
        let widest = widest.chain([display_width(header)]).max().unwrap_or(0);
        Constraint::Length(widest.min(IDENTIFYING_WIDTH) as u16)
    };
    let widths = [
        room("Label", |row| &row.label),
        Constraint::Length(8),
        room("Chat id", |row| &row.chat_id),
        Constraint::Fill(1),
        Constraint::Length(5),
        Constraint::Length(7),
    ];
    selectable_table(
        header,
        rows,
        &widths,
        memories.selected,
        theme,
        frame,
        inner,
    );
}

fn draw_memory(
    memories: &ChatMemoriesState,
    open: &MemoryView,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let summary = memories.rows.iter().find(|r| r.id == open.id);
    let total = summary.map_or(0, |r| r.message_count);
    let label = summary.map_or_else(|| short_id(&open.id).into_owned(), |r| r.label.clone());
    let first = if open.rows.is_empty() {
        0
    } else {
        open.offset + 1
    };
    let last = open.offset + open.rows.len() as i64;
    let title = format!(" {label} · messages {first}–{last} of {total} · page of {MESSAGE_PAGE} ");
    let inner = framed(&title, theme, frame, area);
    let [about, list] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
    if let Some(memory) = &open.memory {
        let lines = vec![
            Line::from(vec![
                Span::styled("chat ", theme.dim),
                Span::styled(memory.chat_id.clone(), theme.text),
                Span::styled("  node ", theme.dim),
                Span::styled(memory.memory_node_id.clone(), theme.text),
            ]),
            Line::from(vec![
                Span::styled("policy ", theme.dim),
                Span::styled(policy_summary(&memory.policy), theme.text),
            ]),
        ];
        frame.render_widget(ratatui::widgets::Paragraph::new(lines), about);
    }
    let what = ("messages", "This memory has no messages.");
    if drew_state(&open.status, open.rows.is_empty(), what, theme, frame, list) {
        return;
    }
    let header = Row::new(["Seq", "Role", "Files", "Tokens", "Content"]).style(theme.title);
    let rows = open.rows.iter().enumerate().map(|(i, row)| {
        let message = row_message(row);
        let files = row
            .files
            .as_deref()
            .and_then(|f| serde_json::from_str::<serde_json::Value>(f).ok())
            .map(|v| v.get("files").unwrap_or(&v).as_array().map_or(0, Vec::len))
            .unwrap_or(0);
        let role = if row.is_summary {
            "summary".to_owned()
        } else {
            row.role.clone()
        };
        let text = super::trim::message_text(&message);
        let text = if row.is_summary {
            format!("Σ {text}")
        } else {
            text
        };
        let cells = vec![
            Span::raw(row.seq.to_string()),
            Span::raw(role),
            Span::raw(if files == 0 {
                String::new()
            } else {
                format!("{files} {}", crate::format::noun(files as u64, "file"))
            }),
            Span::raw(
                open.tokens
                    .get(i)
                    .map_or_else(String::new, |t| thousands(*t)),
            ),
            Span::raw(text),
        ];
        let style = if row.is_summary {
            theme.warning
        } else {
            theme.text
        };
        (cells, style)
    });
    let widths = [
        Constraint::Length(5),
        Constraint::Length(9),
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Fill(1),
    ];
    selectable_table(header, rows, &widths, open.selected, theme, frame, list);
}
