//! Every form of the TUI in one popup: its fields, a line for what is wrong (or under way, or
//! what a field takes), and the form keys. The trim preview's policy column draws its fields the
//! same way.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::common::{context_hints, fit_line, popup};
use crate::format::one_line;
use crate::tui::keymap::KeyContext;
use crate::tui::state::AppState;
use crate::tui::state::FormPopup;
use crate::tui::state::form::{FieldValue, Form};
use crate::tui::theme::Theme;

/// A form's visible fields, the focused one highlighted.
pub(super) fn form_lines(form: &Form, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let label_width = form
        .fields
        .iter()
        .filter(|f| f.visible)
        .map(|f| f.label.chars().count())
        .max()
        .unwrap_or(0);
    form.fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.visible)
        .map(|(i, field)| {
            let focused = i == form.focused;
            let value = match &field.value {
                // The cursor where the next character goes.
                FieldValue::Text(text) if focused => {
                    let (before, after): (String, String) = {
                        let at = text.cursor();
                        let chars: Vec<char> = text.value().chars().collect();
                        (
                            chars[..at.min(chars.len())].iter().collect(),
                            chars[at.min(chars.len())..].iter().collect(),
                        )
                    };
                    format!("{before}█{after}")
                }
                FieldValue::Text(text) => text.value().to_owned(),
                value if focused => format!("‹{}›", value.display()),
                value => format!(" {}", value.display()),
            };
            let value = one_line(&value, width.saturating_sub(label_width + 3));
            let style = if focused { theme.selected } else { theme.text };
            Line::from(vec![
                Span::styled(if focused { "▸ " } else { "  " }, theme.title),
                Span::styled(format!("{:<label_width$} ", field.label), theme.dim),
                Span::styled(value, style),
            ])
        })
        .collect()
}

pub fn draw(state: &AppState, form: &FormPopup, theme: &Theme, frame: &mut Frame, body: Rect) {
    let visible = form.form.fields.iter().filter(|f| f.visible).count() as u16;
    let height = (visible + 5).max(9);
    let area = body.centered(Constraint::Percentage(70), Constraint::Length(height));
    let inner = popup(form.title.clone(), theme, frame, area);
    let [fields, note, keys] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new(form_lines(&form.form, theme, usize::from(inner.width))),
        fields,
    );
    let said = match (&form.error, &form.waiting, &form.note) {
        (Some(error), _, _) => Some((error, theme.error)),
        (None, Some(waiting), _) => Some((waiting, theme.dim)),
        (None, None, note) => note.as_ref().map(|note| (note, theme.dim)),
    };
    if let Some((message, style)) = said {
        let text = one_line(message, usize::from(note.width));
        frame.render_widget(Line::styled(text, style), note);
    }
    let hints = context_hints(state, KeyContext::Form, theme);
    frame.render_widget(fit_line(hints.spans, usize::from(keys.width)), keys);
}
