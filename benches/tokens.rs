//! Token counting throughput: the deterministic mixed 10 MB corpus on one thread, per fast
//! encoding, and recounting a 10,000-message list with and without the count cache.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memscope::memory::model::{PromptMessage, Role};
use memscope::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter, corpus, preload};

const CORPUS_BYTES: usize = 10_000_000;
const LIST_MESSAGES: usize = 10_000;

fn count_corpus(c: &mut Criterion) {
    let messages = corpus::mixed_messages(42, CORPUS_BYTES);
    let bytes: usize = messages.iter().map(String::len).sum();
    let mut group = c.benchmark_group("count_10mb_corpus");
    group
        .sample_size(10)
        .throughput(Throughput::Bytes(bytes as u64));
    for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
        preload(encoding);
        group.bench_function(encoding.name(), |b| {
            b.iter(|| {
                black_box(&messages)
                    .iter()
                    .map(|message| encoding.count(message))
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

fn conversation() -> Vec<PromptMessage> {
    let messages: Vec<PromptMessage> = corpus::mixed_messages(7, 2 * LIST_MESSAGES * 1_000)
        .into_iter()
        .take(LIST_MESSAGES)
        .enumerate()
        .map(|(i, text)| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            PromptMessage::text(role, text)
        })
        .collect();
    assert_eq!(messages.len(), LIST_MESSAGES);
    messages
}

fn recount_list(c: &mut Criterion) {
    let messages = conversation();
    let counter = TokenCounter::for_model(CounterKind::Plugin, "gpt-4o");
    preload(counter.encoding());
    let mut cache = CountCache::default();
    cache.suffix_totals(&counter, &messages);

    let mut group = c.benchmark_group("recount_10k_messages");
    group.sample_size(10);
    group.bench_function("cache_hit", |b| {
        b.iter(|| cache.suffix_totals(&counter, black_box(&messages)))
    });
    group.bench_function("uncached", |b| {
        b.iter(|| counter.count_list(black_box(&messages)))
    });
    group.finish();
    assert_eq!(cache.stats().misses, LIST_MESSAGES as u64);
}

criterion_group!(benches, count_corpus, recount_list);
criterion_main!(benches);
