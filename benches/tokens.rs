//! Token counting throughput: the deterministic mixed 10 MB corpus on one thread, per fast
//! encoding (tiktoken-rs as the baseline), and recounting a 10,000-message list with and
//! without the count cache. Also what building a tokenizer costs, per encoding, and the same
//! for tiktoken-rs.
//!
//! Time is the benchmark thread's CPU time, not wall time: the machines this runs on are
//! shared, and wall time there measures the neighbours' load as much as the tokenizer.

use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memscope::memory::model::{PromptMessage, Role};
use memscope::memory::tokens::{
    CountCache, CounterKind, Encoding, TokenCounter, Tokenizer, corpus, preload,
};

const CORPUS_BYTES: usize = 10_000_000;
const LIST_MESSAGES: usize = 10_000;

/// CPU time of the calling thread, in nanoseconds, from Linux's scheduler statistics.
struct ThreadCpuTime;

fn thread_cpu_nanos() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("this benchmark needs Linux's /proc/thread-self/schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|runtime| runtime.parse().ok())
        .expect("schedstat starts with the thread's run time in ns")
}

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_nanos()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_nanos() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, nanos: &u64) -> f64 {
        *nanos as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as wall time's are, so its formatter reads them right.
        static WALL_TIME: WallTime = WallTime;
        WALL_TIME.formatter()
    }
}

fn count_corpus(c: &mut Criterion<ThreadCpuTime>) {
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
    let tiktoken = tiktoken_rs::cl100k_base_singleton();
    group.bench_function("tiktoken_rs_cl100k_base", |b| {
        b.iter(|| {
            black_box(&messages)
                .iter()
                .map(|message| tiktoken.encode_ordinary(message).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

fn conversation() -> Vec<PromptMessage> {
    let messages: Vec<PromptMessage> = corpus::mixed_messages(7, LIST_MESSAGES * 1_000)
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

fn recount_list(c: &mut Criterion<ThreadCpuTime>) {
    let messages = conversation();
    let counter = TokenCounter::for_model(CounterKind::Plugin, "gpt-4o");
    preload(counter.encoding());
    let mut cache = CountCache::default();
    cache.suffix_totals(&counter, &messages);
    let misses_when_warm = cache.stats().misses;

    let mut group = c.benchmark_group("recount_10k_messages");
    group.sample_size(10);
    group.bench_function("cache_hit", |b| {
        b.iter(|| cache.suffix_totals(&counter, black_box(&messages)))
    });
    group.bench_function("uncached", |b| {
        b.iter(|| counter.count_list(black_box(&messages)))
    });
    group.finish();
    assert_eq!(
        cache.stats().misses,
        misses_when_warm,
        "the cached recount must not tokenize"
    );
}

/// Building a tokenizer and counting a first short text with it: what a process pays before
/// its first count. tiktoken-rs's constructors parse and hash the whole rank file each time.
fn build_tokenizer(c: &mut Criterion<ThreadCpuTime>) {
    let mut group = c.benchmark_group("build_tokenizer");
    group.sample_size(10);
    for encoding in Encoding::ALL {
        group.bench_function(encoding.name(), |b| {
            b.iter(|| Tokenizer::new(encoding).count(black_box("hello world")))
        });
    }
    group.bench_function("tiktoken_rs_o200k_base", |b| {
        b.iter(|| {
            tiktoken_rs::o200k_base()
                .expect("tiktoken-rs builds o200k_base")
                .encode_ordinary(black_box("hello world"))
                .len()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = count_corpus, recount_list, build_tokenizer
}
criterion_main!(benches);
