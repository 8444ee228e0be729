//! Memory-base syncs: one ingestion job per (memory base, session) at a time across processes,
//! cancellation, delete, regenerate, mismatch checks, capture and the watcher.
//!
//! A job takes the session's lock (a PostgreSQL advisory lock, or a SQLite lease row it keeps
//! renewing), re-reads the cursor, fixes its scope (the messages after the cursor up to the
//! newest one now), writes their chunks under deterministic ids, and only then commits the
//! cursor, totals, ingestion records and stamped runs in one transaction. A failed or cancelled
//! job deletes its chunks and leaves the cursor alone.
//!
//! A TUI drives the same API: [`Syncer::sync_session`] with a progress channel and a
//! [`CancelFlag`], [`Syncer::cancel_job`] for jobs of other processes, and
//! [`crate::inspect::memory_bases`] to list bases, sessions and jobs.

pub mod capture;
pub mod config;
pub(crate) mod error;
mod ingest;
pub(crate) mod job;
pub(crate) mod syncer;
pub mod watch;

pub use crate::store::CancelFlag;
pub use config::{MbOverrides, MbSettings, syncer_from_config};
pub use error::SyncError;
pub use job::{JobProgress, JobReport, SessionSync, Stage, SyncOutcome, Trigger};
pub use syncer::{CheckReport, DEFAULT_LEASE, DeleteReport, SyncSettings, Syncer};
