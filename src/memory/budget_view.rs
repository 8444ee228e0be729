//! The token budget of a history: what `TokenBufferMemory` would send, message by message, where
//! pruning cuts, and whether the result fits the model at all.

use serde::Serialize;

use crate::format::{count, thousands};

use crate::memory::budget::{MessageTokens, Pruned, SuffixTotals, prune};
use crate::memory::context_windows::ContextWindow;
use crate::memory::history::{History, HistoryOptions, PausedTurn};
use crate::memory::tokens::{CountCache, CounterKind, TokenCounter};

/// How a budget is computed.
#[derive(Debug, Clone)]
pub struct BudgetSettings {
    pub counter: TokenCounter,
    /// `max_token_limit`.
    pub max_tokens: i64,
    /// The model the history is sent to: its context window is the hard limit.
    pub model: String,
    /// The model's context window: `ContextWindow::of` with the configured windows.
    pub context_window: ContextWindow,
    pub options: HistoryOptions,
}

/// A history with its counts and its cut line.
#[derive(Debug, Clone)]
pub struct BudgetView {
    pub history: History,
    pub counts: Vec<MessageTokens>,
    pub totals: SuffixTotals,
    pub pruned: Pruned,
    pub max_tokens: i64,
    pub counter_kind: CounterKind,
    pub counter_description: String,
    pub counter_fields: crate::memory::tokens::CounterFields,
    /// Tokens of what is actually sent, counted with the classic formula when the configured
    /// counter says 0 for everything: the size the model really receives.
    pub sent_tokens: u64,
    pub model: String,
    pub context_window: ContextWindow,
}

impl BudgetView {
    /// Counts a history, whichever source's memory assembled it (Dify's rows through
    /// `assemble_history`, Langflow's and LangGraph's messages at their source's edge, a node's
    /// context), and finds the cut line. A budget change recounts nothing (cache hits only).
    pub fn for_history(
        history: History,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> BudgetView {
        let messages: Vec<_> = history.prompt_messages().cloned().collect();
        let counts = cache.count_messages(&settings.counter, &messages);
        Self::with_counts(history, counts, settings, cache)
    }

    /// [`Self::for_history`] with each message already counted by `settings.counter`, in the
    /// history's order: nothing is counted again.
    pub fn with_counts(
        history: History,
        counts: Vec<MessageTokens>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> BudgetView {
        let totals = SuffixTotals::new(&counts, settings.counter.list_overhead());
        let pruned = prune(&totals, settings.max_tokens);
        let sent_tokens = if settings.counter.kind() == CounterKind::Zero {
            let real = TokenCounter::for_model(CounterKind::OpenAi, &settings.model);
            let sent: Vec<_> = history
                .prompt_messages()
                .skip(pruned.first_kept)
                .cloned()
                .collect();
            cache.count_list(&real, &sent)
        } else {
            pruned.tokens_after
        };
        BudgetView {
            history,
            counts,
            totals,
            pruned,
            max_tokens: settings.max_tokens,
            counter_kind: settings.counter.kind(),
            counter_description: settings.counter.description(),
            counter_fields: settings.counter.fields(),
            sent_tokens,
            model: settings.model.clone(),
            context_window: settings.context_window.clone(),
        }
    }

    /// Moves the cut line to another budget: counts and totals are kept, so a budget key
    /// redraws within the frame.
    pub fn set_budget(&mut self, max_tokens: i64) {
        self.pruned = prune(&self.totals, max_tokens);
        self.max_tokens = max_tokens;
        // With the zero counter nothing is ever pruned: what is sent does not change.
        if self.counter_kind != CounterKind::Zero {
            self.sent_tokens = self.pruned.tokens_after;
        }
    }

    /// Puts the cut line before message `first_kept`, wherever the budget would put it: the
    /// cut of a trim, which keeps a tool call with its output.
    pub fn cut_at(&mut self, first_kept: usize) {
        let first_kept = first_kept.min(self.counts.len());
        self.pruned = Pruned {
            first_kept,
            tokens_before: self.totals.from(0),
            tokens_after: self.totals.from(first_kept),
        };
        if self.counter_kind != CounterKind::Zero {
            self.sent_tokens = self.pruned.tokens_after;
        }
    }

    /// Tokens of message `index` as part of the list (the last message may count one less).
    pub fn message_tokens(&self, index: usize) -> u32 {
        match self.counts.get(index) {
            Some(count) if index + 1 == self.counts.len() => count.last,
            Some(count) => count.inner,
            None => 0,
        }
    }

    pub fn dropped(&self) -> usize {
        self.pruned.first_kept.min(self.counts.len())
    }

    /// With the `zero` counter every count is 0, so pruning never drops anything: Dify 1.x's
    /// default (`PLUGIN_BASED_TOKEN_COUNTING_ENABLED=false`).
    pub fn zero_counter_trap(&self) -> bool {
        self.counter_kind == CounterKind::Zero
    }

    /// Whether what is sent fits the model's context window, when the window is known.
    pub fn fits_context(&self) -> Option<bool> {
        self.context_window
            .tokens()
            .map(|window| self.sent_tokens <= window)
    }

    /// Plain-words warnings an operator should read first.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.zero_counter_trap() {
            warnings.push(format!(
                "counter `zero` (Dify 1.x default: token counting disabled): every count is 0, so \
                 nothing is pruned and all {} sent, {} by the classic formula",
                match self.counts.len() {
                    1 => "1 message is".to_owned(),
                    n => format!("{} messages are", thousands(n as u64)),
                },
                count(self.sent_tokens, "token")
            ));
        }
        if let (Some(false), Some(window)) = (self.fits_context(), self.context_window.tokens()) {
            warnings.push(format!(
                "what is sent ({}) exceeds {} of {}",
                count(self.sent_tokens, "token"),
                self.context_window.subject(&self.model),
                count(window, "token")
            ));
        }
        warnings.extend(self.history.paused.iter().map(PausedTurn::describe));
        if self.pruned.tokens_after as i128 > self.max_tokens as i128 && !self.counts.is_empty() {
            warnings.push(format!(
                "the newest message alone ({}) is over the budget of {}: pruning keeps it anyway",
                count(self.pruned.tokens_after, "token"),
                thousands(self.max_tokens)
            ));
        }
        warnings
    }
}

/// One message of a budget, as reports print it.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetLine {
    pub index: usize,
    pub source_id: String,
    pub side: crate::memory::history::Side,
    pub role: crate::memory::model::Role,
    pub tokens: u32,
    /// Tokens of the history if it started at this message: the cut line is the first message
    /// where this is within the budget.
    pub tokens_from_here: u64,
    pub kept: bool,
    pub message: crate::memory::model::PromptMessage,
}

impl BudgetView {
    pub fn lines(&self) -> Vec<BudgetLine> {
        self.history
            .messages
            .iter()
            .enumerate()
            .map(|(index, m)| BudgetLine {
                index,
                source_id: m.source_id.clone(),
                side: m.side,
                role: m.message.role,
                tokens: self.message_tokens(index),
                tokens_from_here: self.totals.from(index),
                kept: index >= self.dropped(),
                message: m.message.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::history::assemble_history;
    use crate::memory::model::{StoredMessage, UUID_NIL};
    use chrono::NaiveDate;

    fn row(
        id: &str,
        parent: Option<&str>,
        query: &str,
        answer: &str,
        second: u32,
    ) -> StoredMessage {
        let at = NaiveDate::from_ymd_opt(2026, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, second);
        StoredMessage::turn(id, "c", parent, query, answer, at.unwrap())
    }

    fn settings(counter: CounterKind, max_tokens: i64) -> BudgetSettings {
        BudgetSettings {
            counter: TokenCounter::for_model(counter, "gpt-4o"),
            max_tokens,
            model: "gpt-4o".into(),
            context_window: ContextWindow::Exact(128_000),
            options: HistoryOptions::default(),
        }
    }

    /// The budget of Dify's rows, newest first, as its memory assembles them.
    fn dify_budget(
        rows: &[StoredMessage],
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> BudgetView {
        BudgetView::for_history(
            assemble_history(rows, &[], &settings.options),
            settings,
            cache,
        )
    }

    fn rows() -> Vec<StoredMessage> {
        let long = "word ".repeat(400);
        vec![
            row("3", Some("2"), "third question", "third answer", 3),
            row("2", Some("1"), &long, &long, 2),
            row("1", Some(UUID_NIL), "first", "first answer", 1),
        ]
    }

    #[test]
    fn pruning_drops_the_oldest_until_the_budget_holds() {
        let mut cache = CountCache::default();
        let view = dify_budget(&rows(), &settings(CounterKind::OpenAi, 100), &mut cache);
        assert_eq!(view.counts.len(), 6);
        assert_eq!(
            view.dropped(),
            4,
            "the two long messages and the first turn go"
        );
        assert!(view.pruned.tokens_after <= 100);
        assert_eq!(view.sent_tokens, view.pruned.tokens_after);
        let lines = view.lines();
        assert!(!lines[3].kept && lines[4].kept);
        assert_eq!(lines[4].tokens_from_here, view.pruned.tokens_after);
        assert!(view.warnings().is_empty(), "{:?}", view.warnings());
    }

    #[test]
    fn the_zero_counter_prunes_nothing_and_says_so() {
        let mut cache = CountCache::default();
        let view = dify_budget(&rows(), &settings(CounterKind::Zero, 100), &mut cache);
        assert_eq!(view.dropped(), 0);
        assert_eq!(view.pruned.tokens_after, 0);
        assert!(
            view.sent_tokens > 800,
            "real size is counted: {}",
            view.sent_tokens
        );
        assert!(view.zero_counter_trap());
        assert!(view.warnings()[0].contains("nothing is pruned"));
    }

    #[test]
    fn a_budget_change_recounts_nothing() {
        let mut cache = CountCache::default();
        let first = dify_budget(&rows(), &settings(CounterKind::OpenAi, 100), &mut cache);
        let misses = cache.stats().misses;
        let second = BudgetView::for_history(
            first.history.clone(),
            &settings(CounterKind::OpenAi, 100_000),
            &mut cache,
        );
        assert_eq!(cache.stats().misses, misses);
        assert_eq!(second.dropped(), 0);
        let mut moved = first.clone();
        moved.set_budget(100_000);
        assert_eq!(moved.pruned, second.pruned);
        assert_eq!(moved.sent_tokens, second.sent_tokens);
    }

    #[test]
    fn context_window_overflow_is_reported() {
        let mut cache = CountCache::default();
        let mut s = settings(CounterKind::OpenAi, i64::MAX);
        s.model = "gpt-4".into();
        s.context_window = ContextWindow::Exact(8_192);
        let long = "lorem ipsum dolor ".repeat(4000);
        let rows = vec![row("1", None, &long, &long, 1)];
        let view = dify_budget(&rows, &s, &mut cache);
        assert_eq!(view.fits_context(), Some(false));
        assert!(view.warnings().iter().any(|w| w.contains("context window")));
    }
}
