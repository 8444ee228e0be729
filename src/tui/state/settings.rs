//! The counting settings: model, counter, encoding, budget and history window, and the
//! budget's bounds.

use std::collections::BTreeMap;

use crate::config::Resolved;
use crate::memory::budget_view::BudgetSettings;
use crate::memory::context_windows::ContextWindow;
use crate::memory::history::HistoryOptions;
use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};
use crate::sources::turn_trees::RowWindows;

/// How much one `+`/`-` changes the budget.
pub const BUDGET_STEP: i64 = 250;

/// The largest budget: beyond any model's context window.
pub const MAX_BUDGET: i64 = 10_000_000;

/// A budget as typed on the command line or read from the config: 0 to [`MAX_BUDGET`] tokens.
pub fn parse_budget(text: &str) -> Result<i64, String> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(n) if (0..=MAX_BUDGET).contains(&n) => Ok(n),
        Ok(n) if n < 0 => Err(format!("budget {n} is below 0")),
        _ if text
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
            && !text.is_empty() =>
        {
            Err(format!(
                "budget {text} is above the largest, {MAX_BUDGET} tokens"
            ))
        }
        _ => Err(format!("budget {text:?} is not a whole number of tokens")),
    }
}

/// Models the model key cycles through (the configured one is added first if missing).
pub const MODELS: [&str; 6] = [
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-3-5-sonnet-20241022",
];

/// How budgets are computed; the keys of the budget panel change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub models: Vec<String>,
    pub model_index: usize,
    pub counter: CounterKind,
    /// `None`: the model's own encoding.
    pub encoding: Option<Encoding>,
    pub budget: i64,
    /// `history.message_limit` from the config (0 or less: none requested).
    pub message_limit: i64,
    /// Whether the app's memory window is honoured; off shows Dify's 500-row default.
    pub app_window: bool,
    /// `[tokens.context_windows]`: context windows by exact model name.
    pub context_windows: BTreeMap<String, u64>,
}

impl Settings {
    /// The configured settings; unknown counter or encoding names fall back to the defaults,
    /// which the status bar reports as a warning.
    pub fn from_config(resolved: &Resolved) -> (Settings, Vec<String>) {
        let tokens = &resolved.config.tokens;
        let mut warnings = Vec::new();
        let counter = tokens.counter.parse().unwrap_or_else(|_| {
            warnings.push(format!(
                "unknown counter {:?}: using openai",
                tokens.counter
            ));
            CounterKind::OpenAi
        });
        let encoding = match tokens.encoding.as_str() {
            "" => None,
            name => name.parse().map_or_else(
                |_| {
                    warnings.push(format!("unknown encoding {name:?}: using the model's"));
                    None
                },
                Some,
            ),
        };
        let mut models: Vec<String> = MODELS.iter().map(|m| (*m).to_owned()).collect();
        let model_index = models
            .iter()
            .position(|m| *m == tokens.model)
            .unwrap_or_else(|| {
                models.insert(0, tokens.model.clone());
                0
            });
        let budget = parse_budget(&tokens.budget.to_string()).unwrap_or_else(|e| {
            warnings.push(format!("[tokens] {e}: using 2000"));
            2000
        });
        let settings = Settings {
            models,
            model_index,
            counter,
            encoding,
            budget,
            message_limit: resolved.config.history.message_limit,
            app_window: true,
            context_windows: tokens.context_windows.clone(),
        };
        (settings, warnings)
    }

    pub fn model(&self) -> &str {
        &self.models[self.model_index]
    }

    pub fn counter(&self) -> TokenCounter {
        match self.encoding {
            Some(encoding) => TokenCounter::with_encoding(self.counter, encoding),
            None => TokenCounter::for_model(self.counter, self.model()),
        }
    }

    pub fn budget_settings(&self) -> BudgetSettings {
        BudgetSettings {
            counter: self.counter(),
            max_tokens: self.budget,
            model: self.model().to_owned(),
            context_window: ContextWindow::of(self.model(), &self.context_windows),
            options: HistoryOptions::default(),
        }
    }

    /// The row window of a conversation whose source rules `windows` (loaded under
    /// `message_limit`): its app's own, or set aside as `W` chose.
    pub fn window(&self, windows: RowWindows) -> usize {
        windows.rows(self.app_window)
    }
}
