//! Token budgets over a message list: per-message counts that add up exactly to what a counter
//! would say of the whole list, and Dify's pruning loop computed from them.

use serde::{Deserialize, Serialize};

/// One message's share of a list's token count.
///
/// Counters are exact when summed: the total of a list is the `inner` of every message but the
/// last, plus the `last` of the last message, plus the counter's per-list overhead. The two
/// differ only for counters that tokenize the list as one joined string, where the separator
/// after a message may merge with its final characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MessageTokens {
    pub inner: u32,
    pub last: u32,
}

impl MessageTokens {
    /// A count that does not depend on the message's position.
    pub const fn flat(tokens: u32) -> Self {
        MessageTokens {
            inner: tokens,
            last: tokens,
        }
    }
}

/// Token totals of every suffix of a list, so a pruning loop or a budget gauge asks in O(1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuffixTotals {
    /// `totals[i]`: tokens of `messages[i..]`, overhead included. Empty lists count 0.
    totals: Vec<u64>,
}

impl SuffixTotals {
    pub fn new(counts: &[MessageTokens], list_overhead: u32) -> Self {
        let n = counts.len();
        let mut totals = vec![0u64; n + 1];
        if n > 0 {
            let mut running = u64::from(list_overhead) + u64::from(counts[n - 1].last);
            totals[n - 1] = running;
            for i in (0..n - 1).rev() {
                running += u64::from(counts[i].inner);
                totals[i] = running;
            }
        }
        SuffixTotals { totals }
    }

    pub fn len(&self) -> usize {
        self.totals.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tokens of the list from message `start` on (0 past the end).
    pub fn from(&self, start: usize) -> u64 {
        self.totals.get(start).copied().unwrap_or(0)
    }
}

/// What Dify's pruning loop keeps of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pruned {
    /// Index of the first kept message: everything before it is dropped.
    pub first_kept: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// Dify's loop (`TokenBufferMemory`, reference §1.4): while the list counts more than `limit`
/// tokens and holds more than one message, drop message 0. Never empties a non-empty list, and
/// a count equal to the limit is kept.
pub fn prune(totals: &SuffixTotals, limit: i64) -> Pruned {
    let n = totals.len();
    let tokens_before = totals.from(0);
    let over = |start: usize| i128::from(totals.from(start)) > i128::from(limit);
    let mut first_kept = 0;
    while n - first_kept > 1 && over(first_kept) {
        first_kept += 1;
    }
    Pruned {
        first_kept,
        tokens_before,
        tokens_after: totals.from(first_kept),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn flat(counts: &[u32]) -> Vec<MessageTokens> {
        counts.iter().copied().map(MessageTokens::flat).collect()
    }

    #[test]
    fn totals_use_last_for_the_final_message() {
        let counts = [
            MessageTokens { inner: 5, last: 4 },
            MessageTokens { inner: 7, last: 6 },
        ];
        let totals = SuffixTotals::new(&counts, 3);
        assert_eq!(totals.from(0), 5 + 6 + 3);
        assert_eq!(totals.from(1), 6 + 3);
        assert_eq!(totals.from(2), 0);
    }

    #[test]
    fn empty_list_prunes_to_nothing() {
        let totals = SuffixTotals::new(&[], 3);
        assert_eq!(
            prune(&totals, 0),
            Pruned {
                first_kept: 0,
                tokens_before: 0,
                tokens_after: 0
            }
        );
    }

    #[test]
    fn equal_to_limit_is_kept() {
        let totals = SuffixTotals::new(&flat(&[10, 10]), 0);
        assert_eq!(prune(&totals, 20).first_kept, 0);
        assert_eq!(prune(&totals, 19).first_kept, 1);
    }

    #[test]
    fn last_message_survives_any_limit() {
        let totals = SuffixTotals::new(&flat(&[10, 10, 500]), 3);
        let pruned = prune(&totals, 1);
        assert_eq!(pruned.first_kept, 2);
        assert_eq!(pruned.tokens_after, 503);
    }

    #[test]
    fn negative_limit_keeps_only_the_last() {
        let totals = SuffixTotals::new(&flat(&[0, 0, 0]), 0);
        assert_eq!(prune(&totals, -1).first_kept, 2);
    }

    proptest! {
        #[test]
        fn pruning_never_empties_and_keeps_more_as_budget_grows(
            counts in prop::collection::vec(0u32..5000, 1..60),
            overhead in 0u32..10,
            limit in 0i64..100_000,
            extra in 0i64..10_000,
        ) {
            let totals = SuffixTotals::new(&flat(&counts), overhead);
            let small = prune(&totals, limit);
            let large = prune(&totals, limit + extra);
            prop_assert!(small.first_kept < counts.len());
            prop_assert!(large.first_kept <= small.first_kept);
            prop_assert!(small.first_kept == counts.len() - 1 || small.tokens_after as i64 <= limit);
        }

        #[test]
        fn matches_the_naive_loop(
            counts in prop::collection::vec(0u32..300, 0..40),
            limit in -5i64..3000,
        ) {
            let mut list: Vec<u32> = counts.clone();
            let count = |l: &[u32]| l.iter().map(|&c| u64::from(c)).sum::<u64>() + if l.is_empty() { 0 } else { 3 };
            while list.len() > 1 && i128::from(count(&list)) > i128::from(limit) {
                list.remove(0);
            }
            let totals = SuffixTotals::new(&flat(&counts), 3);
            let pruned = prune(&totals, limit);
            prop_assert_eq!(counts.len() - pruned.first_kept.min(counts.len()), list.len());
            prop_assert_eq!(pruned.tokens_after, count(&list));
        }
    }
}
