//! Demo generation throughput: one bulk batch (the unit `demo --scale large` streams 50 of) and
//! the small stories with their files.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memscope::demo::{BulkGenerator, BulkPlan, Demo, DemoOptions, Scale};

fn bulk_batch(c: &mut Criterion) {
    let plan = BulkPlan {
        conversations: BulkPlan::LARGE.conversations_per_batch,
        ..BulkPlan::LARGE
    };
    let mut group = c.benchmark_group("demo");
    group.sample_size(20);
    group.throughput(Throughput::Elements(plan.messages()));
    group.bench_function("bulk batch (messages)", |b| {
        b.iter(|| {
            BulkGenerator::new(black_box(42), "tenant", plan)
                .map(|batch| batch.messages.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

fn small_stories(c: &mut Criterion) {
    let storage = tempfile::tempdir().expect("temp dir");
    let kb = tempfile::tempdir().expect("temp dir");
    let options = DemoOptions {
        scale: Scale::Small,
        seed: 42,
        storage_root: storage.path().to_owned(),
        kb_root: kb.path().to_owned(),
    };
    let mut group = c.benchmark_group("demo");
    group.sample_size(20);
    group.bench_function("small stories with files", |b| {
        b.iter(|| {
            Demo::new(black_box(&options))
                .map(|batch| batch.expect("demo files written").len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bulk_batch, small_stories);
criterion_main!(benches);
