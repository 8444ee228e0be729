//! The chat memories tab.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::{Component, placeholder};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

pub struct ChatMemoriesView;

impl Component for ChatMemoriesView {
    fn render(&self, _state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        // SCAFFOLD: the helper building this tab replaces this.
        frame.render_widget(placeholder("not built yet", theme.dim), area);
    }
}
