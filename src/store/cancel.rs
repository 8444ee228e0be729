//! A flag that stops an in-process job at its next check: a sync between batches, a scan of
//! every message at its next row. Cloned into the job; whoever holds a clone can cancel it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Stops an in-process job at its next check.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
