//! A thread's `messages` channel under the trim LangGraph's documentation recommends, as a
//! budget view: what the model is fed of a thread.

use super::decode::budget::RECOMMENDED_TRIM;
use crate::memory::budget::Pruned;
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::model::Role;
use crate::memory::tokens::CountCache;
use crate::sources::checkpoint_history::MessagesBudget;
use crate::sources::opened::fed_history;

/// A thread's channel under a budget.
#[derive(Debug, Clone)]
pub struct ThreadBudget {
    pub view: BudgetView,
    /// The rule that chose the messages and the cut, in words.
    pub rule: String,
    /// Ids of the messages of the channel, oldest first.
    pub fed: Vec<String>,
    /// The system message the trim keeps above the cut.
    pub kept_above_cut: Option<usize>,
    pub warnings: Vec<String>,
    /// The channel as the trim cut it: where a trim preview starts.
    pub trimmed: MessagesBudget,
}

/// The channel under LangGraph's recommended trim, as a budget view: the trim keeps a leading
/// system message and the newest messages from a human one on, so the cut sits before the
/// first kept message after the system one, and the system message is kept above it.
pub fn checkpoint_budget(
    trimmed: MessagesBudget,
    ids: Vec<String>,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> ThreadBudget {
    let history = fed_history(
        ids.iter()
            .cloned()
            .zip(trimmed.prompt.iter().cloned())
            .collect(),
    );
    // The trim counted every message already, with the same counter.
    let mut view = BudgetView::with_counts(history, trimmed.counts.clone(), settings, cache);
    let system_kept = trimmed.kept.first() == Some(&true)
        && trimmed.prompt.first().map(|m| m.role) == Some(Role::System);
    let first_after_system = trimmed
        .kept
        .iter()
        .enumerate()
        .skip(usize::from(system_kept))
        .find(|(_, kept)| **kept)
        .map_or(trimmed.kept.len(), |(index, _)| index);
    // Nothing dropped between the system message and the rest: no cut at all.
    let first_kept = match system_kept && first_after_system == 1 {
        true => 0,
        false => first_after_system,
    };
    let kept_above_cut = (system_kept && first_kept > 0).then_some(0);
    view.pruned = Pruned {
        first_kept,
        tokens_before: trimmed.tokens_before,
        tokens_after: trimmed.tokens_after,
    };
    if view.counter_kind != crate::memory::tokens::CounterKind::Zero {
        view.sent_tokens = trimmed.tokens_after;
    }
    ThreadBudget {
        rule: format!("the whole channel, cut by {RECOMMENDED_TRIM}"),
        fed: ids,
        kept_above_cut,
        warnings: view.warnings(),
        view,
        trimmed,
    }
}
