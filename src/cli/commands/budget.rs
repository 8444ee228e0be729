//! A token budget as `history` and `node-context` print it: its counter and figures, and the
//! table of messages with the cut line.

use serde::Serialize;

use crate::cli::output::table;
use crate::format::{count, one_line, thousands};
use crate::memory::budget_view::{BudgetLine, BudgetView};
use crate::memory::models::{ContextWindow, ContextWindowFields};

/// A budget's counter and token figures, flattened into each report in the same place.
#[derive(Serialize)]
pub(super) struct BudgetFigures {
    /// The counter in words; `counter_kind`, `encoding` and `model` are its machine fields.
    pub(super) counter: String,
    #[serde(flatten)]
    pub(super) counter_fields: crate::memory::tokens::CounterFields,
    pub(super) model: String,
    pub(super) max_tokens: i64,
    pub(super) tokens_before: u64,
    pub(super) tokens_after: u64,
    /// What the model receives, by the classic formula when the counter is `zero`.
    pub(super) sent_tokens: u64,
    /// `context_window` with its source: `exact`, `setting`, `assumed` (and from which family)
    /// or `unknown`.
    #[serde(flatten)]
    pub(super) context_window_fields: ContextWindowFields,
    #[serde(skip)]
    pub(super) context_window: ContextWindow,
}

impl BudgetFigures {
    pub(super) fn of(view: &BudgetView) -> BudgetFigures {
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
    pub(super) fn context_line(&self, fits: Option<bool>) -> String {
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
    pub(super) fn describe(&self, dropped: usize, total: usize) -> String {
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

/// Messages with their tokens, the tokens of the history from each one on, and the cut line:
/// how conversation histories and node contexts are printed alike.
pub(super) fn budget_table(lines: &[BudgetLine], dropped: usize) -> String {
    let mut rows = Vec::new();
    for line in lines {
        if line.index == dropped && dropped > 0 {
            rows.push(vec![
                "──".into(),
                "── cut line: everything above is pruned ──".into(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        rows.push(vec![
            line.index.to_string(),
            format!("{} {}", line.role.as_str(), short_id(&line.source_id)),
            thousands(line.tokens),
            thousands(line.tokens_from_here),
            one_line(&line.message.content.text(), 60),
        ]);
    }
    table(&["#", "message", "tokens", "from here", "content"], &rows)
}

/// A UUID's first 8 characters; any other label whole.
pub(super) fn short_id(id: &str) -> &str {
    match uuid::Uuid::parse_str(id) {
        Ok(_) => &id[..8],
        Err(_) => id,
    }
}
