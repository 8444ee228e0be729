//! Spreading counts over threads: a shared cursor hands out batches in order, so a slow batch
//! never holds up the others, and results land in place.

use std::sync::{Mutex, PoisonError};

/// `out[i] = f(&items[i])` for every item, on up to `threads` threads (the caller's among
/// them), `batch` items at a time. `out` must be as long as `items`.
pub fn map_in_place<T: Sync, R: Send>(
    items: &[T],
    out: &mut [R],
    threads: usize,
    batch: usize,
    f: impl Fn(&T) -> R + Sync,
) {
    assert_eq!(items.len(), out.len(), "one result per item");
    let work = Mutex::new(items.chunks(batch.max(1)).zip(out.chunks_mut(batch.max(1))));
    let worker = || {
        loop {
            let next = work.lock().unwrap_or_else(PoisonError::into_inner).next();
            let Some((items, out)) = next else { break };
            for (item, slot) in items.iter().zip(out) {
                *slot = f(item);
            }
        }
    };
    let helpers = threads.clamp(1, items.len().max(1)) - 1;
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(worker);
        }
        worker();
    });
}
