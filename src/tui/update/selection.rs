//! The moving keys over a list of rows.

use crate::tui::action::Action;

/// Where the moving keys (up, down, page up and down, top, bottom) take the selection
/// `current` of a list of `len` rows; `None` for any other key.
pub(super) fn moved(current: usize, len: usize, action: Action) -> Option<usize> {
    let last = len.saturating_sub(1);
    Some(match action {
        Action::Up => current.saturating_sub(1),
        Action::Down => (current + 1).min(last),
        Action::PageUp => current.saturating_sub(10),
        Action::PageDown => (current + 10).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return None,
    })
}
