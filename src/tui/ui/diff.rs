//! Two texts side by side in a detail popup: each row of the diff wrapped into its column, the
//! shorter side padded, the rows where the texts differ in the warning colour.

use ratatui::text::{Line, Span};

use crate::tui::state::TextComparison;
use crate::tui::theme::Theme;

/// The lines of `comparison` at `width` columns: its heading, the two sides' titles, the rows.
pub(super) fn comparison_lines(
    comparison: &TextComparison,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let column = width.saturating_sub(3).max(2) / 2;
    let pair = |left: String, right: String, style| {
        Line::from(vec![
            Span::styled(format!("{left:<column$}"), style),
            Span::styled(" │ ", theme.dim),
            Span::styled(right, style),
        ])
    };
    let mut lines = vec![
        Line::styled(String::new(), theme.text),
        Line::styled(comparison.heading.clone(), theme.title),
        pair(
            comparison.left_title.clone(),
            comparison.right_title.clone(),
            theme.title,
        ),
    ];
    for row in &comparison.rows {
        let style = if row.changed {
            theme.warning
        } else {
            theme.text
        };
        let left = wrap(&row.left, column);
        let right = wrap(&row.right, column);
        for index in 0..left.len().max(right.len()) {
            let side = |lines: &[String]| lines.get(index).cloned().unwrap_or_default();
            lines.push(pair(side(&left), side(&right), style));
        }
    }
    lines
}

/// `text` in lines of at most `width` characters, broken at spaces where it can be; an empty
/// changed side shows as a dash, so a missing run is visible.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_inclusive(' ') {
            let mut word = word.to_owned();
            // The space that ends a word may stand past the width: it is trimmed at the break.
            while line.chars().count() + word.trim_end().chars().count() > width {
                if line.is_empty() {
                    let head: String = word.chars().take(width).collect();
                    word = word.chars().skip(width).collect();
                    lines.push(head);
                } else {
                    lines.push(std::mem::take(&mut line).trim_end().to_owned());
                }
            }
            line.push_str(&word);
        }
        lines.push(line.trim_end().to_owned());
    }
    if text.is_empty() {
        return vec!["—".to_owned()];
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_splits_long_words() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), ["—"]);
    }
}
