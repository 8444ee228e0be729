//! The doctor view's scan for the job runner ([`DoctorScan`]) and what it reports
//! ([`DoctorEvent`]), beside the events and effects that carry them.

use chrono::{DateTime, Utc};

use crate::inspect::doctor::DoctorReport;
use crate::memory::tokens::TokenCounter;

/// A scan of the whole database.
#[derive(Debug, Clone)]
pub struct DoctorScan {
    pub counter: TokenCounter,
    pub budget: i64,
}

/// What the running scan reports, stamped with the job's clock.
#[derive(Debug)]
pub enum DoctorEvent {
    /// The messages were counted and the scan began.
    Started { total: u64, at: DateTime<Utc> },
    /// Messages read so far.
    Progress { scanned: u64, at: DateTime<Utc> },
    Finished {
        result: Result<Box<DoctorReport>, String>,
        at: DateTime<Utc>,
    },
}
