//! Per-message token counts, remembered so that recounting a thread only tokenizes what changed.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use crate::memory::budget::{MessageTokens, SuffixTotals};
use crate::memory::model::{Content, ContentPart, PromptMessage};

use super::counter::{CounterId, TokenCounter};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CacheKey {
    counter: CounterId,
    content: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Entries dropped to stay within capacity.
    pub evicted: u64,
}

impl CacheStats {
    /// Share of lookups answered from the cache, 0 before any lookup.
    pub fn hit_rate(&self) -> f64 {
        let lookups = self.hits + self.misses;
        if lookups == 0 {
            0.0
        } else {
            self.hits as f64 / lookups as f64
        }
    }
}

/// Counts keyed by (counter identity, 64-bit hash of what counters read from a message).
///
/// Memory is bounded by two generations of at most `capacity / 2` entries each: when the
/// young generation fills, the old one is dropped and the young one becomes old. A hit in the
/// old generation moves the entry back to the young one, so counts in use survive and
/// abandoned ones age out, without an LRU list. Two distinct messages that share a 64-bit hash
/// would share a count; at 2^-64 per pair that is accepted.
#[derive(Debug, Clone)]
pub struct CountCache {
    generation_capacity: usize,
    young: FxHashMap<CacheKey, MessageTokens>,
    old: FxHashMap<CacheKey, MessageTokens>,
    stats: CacheStats,
}

impl Default for CountCache {
    fn default() -> Self {
        CountCache::new(CountCache::DEFAULT_CAPACITY)
    }
}

impl CountCache {
    /// About 4 MB of entries: all messages of a few hundred long conversations.
    pub const DEFAULT_CAPACITY: usize = 100_000;

    /// A cache holding at most `capacity` counts (at least 2).
    pub fn new(capacity: usize) -> Self {
        CountCache {
            generation_capacity: (capacity / 2).max(1),
            young: FxHashMap::default(),
            old: FxHashMap::default(),
            stats: CacheStats::default(),
        }
    }

    pub fn count_message(
        &mut self,
        counter: &TokenCounter,
        message: &PromptMessage,
    ) -> MessageTokens {
        let key = CacheKey {
            counter: counter.id(),
            content: content_hash(message),
        };
        if let Some(&tokens) = self.young.get(&key) {
            self.stats.hits += 1;
            return tokens;
        }
        let tokens = match self.old.remove(&key) {
            Some(tokens) => {
                self.stats.hits += 1;
                tokens
            }
            None => {
                self.stats.misses += 1;
                counter.count_message(message)
            }
        };
        self.insert_young(key, tokens);
        tokens
    }

    pub fn count_messages(
        &mut self,
        counter: &TokenCounter,
        messages: &[PromptMessage],
    ) -> Vec<MessageTokens> {
        messages
            .iter()
            .map(|message| self.count_message(counter, message))
            .collect()
    }

    /// Token totals of every suffix of `messages`, for pruning and budget gauges.
    pub fn suffix_totals(
        &mut self,
        counter: &TokenCounter,
        messages: &[PromptMessage],
    ) -> SuffixTotals {
        SuffixTotals::new(
            &self.count_messages(counter, messages),
            counter.list_overhead(),
        )
    }

    /// [`TokenCounter::count_list`], from cached counts.
    pub fn count_list(&mut self, counter: &TokenCounter, messages: &[PromptMessage]) -> u64 {
        self.suffix_totals(counter, messages).from(0)
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Counts currently held.
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every count, keeping the statistics.
    pub fn clear(&mut self) {
        self.young.clear();
        self.old.clear();
    }

    fn insert_young(&mut self, key: CacheKey, tokens: MessageTokens) {
        if self.young.len() >= self.generation_capacity {
            self.stats.evicted += self.old.len() as u64;
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, tokens);
    }
}

/// Hashes everything a counter reads from a message. Non-text parts are hashed by kind only:
/// no counter reads their source.
fn content_hash(message: &PromptMessage) -> u64 {
    let mut hasher = FxHasher::default();
    message.role.hash(&mut hasher);
    match &message.content {
        Content::Text(text) => {
            0u8.hash(&mut hasher);
            text.hash(&mut hasher);
        }
        Content::Parts(parts) => {
            1u8.hash(&mut hasher);
            parts.len().hash(&mut hasher);
            for part in parts {
                match part {
                    ContentPart::Text { text } => text.hash(&mut hasher),
                    other => std::mem::discriminant(other).hash(&mut hasher),
                }
            }
        }
    }
    message.name.hash(&mut hasher);
    message.tool_calls.len().hash(&mut hasher);
    for call in &message.tool_calls {
        call.id.hash(&mut hasher);
        call.name.hash(&mut hasher);
        call.arguments.hash(&mut hasher);
    }
    message.tool_call_id.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::Role;
    use crate::memory::tokens::counter::CounterKind;
    use crate::memory::tokens::encoding_names::Encoding;

    fn thread(n: usize) -> Vec<PromptMessage> {
        (0..n)
            .map(|i| {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                PromptMessage::text(role, format!("message number {i}, with some words"))
            })
            .collect()
    }

    fn plugin() -> TokenCounter {
        TokenCounter::for_model(CounterKind::Plugin, "gpt-4o")
    }

    #[test]
    fn recount_after_an_append_only_counts_the_new_message() {
        let counter = plugin();
        let mut cache = CountCache::default();
        let mut messages = thread(20);
        let first = cache.count_list(&counter, &messages);
        assert_eq!(first, counter.count_list(&messages));
        assert_eq!(
            cache.stats(),
            CacheStats {
                hits: 0,
                misses: 20,
                evicted: 0
            }
        );

        messages.push(PromptMessage::text(Role::User, "one more"));
        assert_eq!(
            cache.count_list(&counter, &messages),
            counter.count_list(&messages)
        );
        assert_eq!(cache.stats().hits, 20);
        assert_eq!(cache.stats().misses, 21);
    }

    #[test]
    fn an_edit_is_a_miss_and_counts_the_new_content() {
        let counter = plugin();
        let mut cache = CountCache::default();
        let mut messages = thread(3);
        cache.count_list(&counter, &messages);
        messages[1].content = Content::Text("an edited and much longer answer than before".into());
        assert_eq!(
            cache.count_list(&counter, &messages),
            counter.count_list(&messages)
        );
        assert_eq!(cache.stats().misses, 4);
    }

    #[test]
    fn counters_do_not_share_entries() {
        let messages = thread(4);
        let mut cache = CountCache::default();
        let classic = TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o");
        let cl100k = TokenCounter::with_encoding(CounterKind::Plugin, Encoding::Cl100kBase);
        for counter in [plugin(), classic, cl100k] {
            assert_eq!(
                cache.count_list(&counter, &messages),
                counter.count_list(&messages)
            );
        }
        assert_eq!(cache.stats().misses, 12);
        assert_eq!(cache.len(), 12);
    }

    #[test]
    fn same_model_family_shares_entries() {
        let messages = thread(4);
        let mut cache = CountCache::default();
        cache.count_list(
            &TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o"),
            &messages,
        );
        cache.count_list(
            &TokenCounter::for_model(CounterKind::OpenAi, "gpt-4o-mini"),
            &messages,
        );
        assert_eq!(cache.stats().hits, 4);
    }

    #[test]
    fn what_counters_read_changes_the_key() {
        let base = PromptMessage::text(Role::User, "hi");
        let mut named = base.clone();
        named.name = Some("ann".into());
        let mut as_parts = base.clone();
        as_parts.content = Content::Parts(vec![ContentPart::Text { text: "hi".into() }]);
        let mut with_image = as_parts.clone();
        if let Content::Parts(parts) = &mut with_image.content {
            parts.insert(
                0,
                ContentPart::Image {
                    source: "a.png".into(),
                },
            );
        }
        let mut as_tool = base.clone();
        as_tool.role = Role::Tool;
        let mut with_call_id = as_tool.clone();
        with_call_id.tool_call_id = Some("call_1".into());
        let variants = [base, named, as_parts, with_image, as_tool, with_call_id];
        let hashes: std::collections::HashSet<u64> = variants.iter().map(content_hash).collect();
        assert_eq!(hashes.len(), variants.len());
    }

    #[test]
    fn memory_stays_bounded_and_recent_counts_survive() {
        let counter = TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase);
        let mut cache = CountCache::new(10);
        let messages = thread(40);
        cache.count_messages(&counter, &messages);
        assert!(cache.len() <= 10, "{}", cache.len());
        assert!(cache.stats().evicted >= 30);

        let hits_before = cache.stats().hits;
        cache.count_message(&counter, &messages[39]);
        assert_eq!(cache.stats().hits, hits_before + 1);
        cache.count_message(&counter, &messages[0]);
        assert_eq!(cache.stats().hits, hits_before + 1);
    }

    #[test]
    fn old_generation_hits_are_promoted() {
        let counter = TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase);
        let mut cache = CountCache::new(4);
        let messages = thread(4);
        // Generations of 2: after four messages, 0 and 1 are old, 2 and 3 young.
        cache.count_messages(&counter, &messages);
        // Hitting 0 moves it to the young generation, so it outlives 1.
        cache.count_message(&counter, &messages[0]);
        cache.count_message(&counter, &PromptMessage::text(Role::User, "new"));
        let hits_before = cache.stats().hits;
        cache.count_message(&counter, &messages[0]);
        assert_eq!(cache.stats().hits, hits_before + 1);
    }

    #[test]
    fn clear_forgets_counts() {
        let counter = plugin();
        let mut cache = CountCache::default();
        let messages = thread(2);
        cache.count_list(&counter, &messages);
        cache.clear();
        assert!(cache.is_empty());
        cache.count_list(&counter, &messages);
        assert_eq!(cache.stats().misses, 4);
        assert!((cache.stats().hit_rate() - 0.0).abs() < f64::EPSILON);
    }
}
