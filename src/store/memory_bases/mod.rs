//! Langflow's memory bases in the database, in parts: the bases themselves (`bases.rs`), the
//! sessions they track (`sessions.rs`), what a session has pending (`pending.rs`), the messages
//! an ingestion reads (`messages.rs`), ingestion jobs with a dedupe key (`jobs.rs`), the one
//! transaction that commits a finished ingestion (`commit.rs`) and the per-(base, session) lock
//! (`lock.rs`).

mod bases;
mod commit;
mod jobs;
mod lock;
mod messages;
mod pending;
mod sessions;

pub use bases::{LangflowKbRow, MemoryBaseInfo, MemoryBaseUpdate};
pub use commit::IngestionCommit;
pub use jobs::{JobCreation, JobInfo, job_status};
pub use lock::SessionLock;
pub use messages::PendingMessage;
pub use sessions::{CapturedRun, MemoryBaseSessionInfo};
pub(crate) use sessions::{RECORD_RUN_SQL, TRACK_SESSION_SQL};
