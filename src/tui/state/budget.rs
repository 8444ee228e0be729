//! The budget panel: how far its rows are scrolled.

use std::cell::Cell;

use crate::memory::budget_view::BudgetView;

/// The budget panel's rows (of the conversation or of the node context in front): which one
/// is first on screen. Until the user scrolls, the rows are placed so the cut line and every
/// sent row show.
#[derive(Debug, Clone, Default)]
pub struct BudgetPanelState {
    /// Whether up/down scroll the panel's rows instead of moving in the tree or node list.
    pub focused: bool,
    /// The first row entry shown, once scrolled; `None`: the cut line's default place.
    pub offset: Option<usize>,
    /// Row lines the panel had at the last draw (the panel's size is known only there).
    pub height: Cell<usize>,
}

/// A budget view's rows as the panel lists them: the messages, with the cut line as its own
/// entry before the first sent message when anything is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRows {
    /// Entries: messages plus the cut line.
    pub total: usize,
    /// The cut line's entry (0 and no line when nothing is dropped).
    pub cut: usize,
}

impl BudgetRows {
    pub fn of(view: &BudgetView) -> BudgetRows {
        let messages = view.history.messages.len();
        let cut = view.dropped();
        BudgetRows {
            total: messages + usize::from(cut > 0),
            cut,
        }
    }

    /// The first entry shown by default: the cut line and all sent rows when they fit (with the
    /// dropped rows just above), else the cut line on top and as many sent rows as fit.
    pub fn default_offset(self, height: usize) -> usize {
        let last_start = self.total.saturating_sub(height);
        if self.total - self.cut >= height {
            self.cut.min(last_start)
        } else {
            last_start
        }
    }

    /// The first entry shown for a scroll `offset` (`None`: the default), kept in range.
    pub fn offset(self, offset: Option<usize>, height: usize) -> usize {
        offset
            .unwrap_or_else(|| self.default_offset(height))
            .min(self.total.saturating_sub(height))
    }
}

impl BudgetPanelState {
    /// Moves the rows by `delta` entries (clamped), starting from what is on screen.
    pub fn scroll(&mut self, rows: BudgetRows, delta: isize) {
        let height = self.height.get();
        let current = rows.offset(self.offset, height);
        let last_start = rows.total.saturating_sub(height);
        self.offset = Some(current.saturating_add_signed(delta).min(last_start));
    }
}
