//! A budget's counter and token figures, as every report of a budget carries them (flattened
//! in the same place) and prints them.

use serde::Serialize;

use crate::format::{count, thousands};
use crate::memory::budget_view::BudgetView;
use crate::memory::context_windows::{ContextWindow, ContextWindowFields};

/// A budget's counter and token figures, flattened into each report in the same place.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetFigures {
    /// The counter in words; `counter_kind`, `encoding` and `model` are its machine fields.
    pub counter: String,
    #[serde(flatten)]
    pub counter_fields: crate::memory::tokens::CounterFields,
    pub model: String,
    pub max_tokens: i64,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// What the model receives, by the classic formula when the counter is `zero`.
    pub sent_tokens: u64,
    /// `context_window` with its source: `exact`, `setting`, `assumed` (and from which family)
    /// or `unknown`.
    #[serde(flatten)]
    pub context_window_fields: ContextWindowFields,
    #[serde(skip)]
    pub context_window: ContextWindow,
}

impl BudgetFigures {
    pub fn of(view: &BudgetView) -> BudgetFigures {
        BudgetFigures {
            counter: view.counter_description.clone(),
            counter_fields: view.counter_fields.clone(),
            model: view.model.clone(),
            max_tokens: view.max_tokens,
            tokens_before: view.pruned.tokens_before,
            tokens_after: view.pruned.tokens_after,
            sent_tokens: view.sent_tokens,
            context_window_fields: view.context_window.fields(),
            context_window: view.context_window.clone(),
        }
    }

    /// What is sent against the model's context window, a guessed window said to be one, and
    /// an unknown one with how to set it.
    pub fn context_line(&self, fits: Option<bool>) -> String {
        let window = &self.context_window;
        let mut line = format!("sent: {} tokens", thousands(self.sent_tokens));
        if let (Some(tokens), Some(fits)) = (window.tokens(), fits) {
            line += &format!(
                ", {} {} of {}",
                if fits { "within" } else { "OVER" },
                window.subject(&self.model),
                thousands(tokens)
            );
        }
        if let Some(advice) = window.advice(&self.model) {
            line += &format!(" ({advice})");
        }
        line + "\n"
    }

    /// The counter line and the budget line: `dropped` of `total` messages pruned.
    pub fn describe(&self, dropped: usize, total: usize) -> String {
        format!(
            "counter {}\nbudget {} tokens: {} before pruning, {} after; {} of {} dropped\n",
            self.counter,
            thousands(self.max_tokens),
            thousands(self.tokens_before),
            thousands(self.tokens_after),
            thousands(dropped as u64),
            count(total as u64, "message")
        )
    }
}
