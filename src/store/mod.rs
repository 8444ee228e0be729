//! The memory database: connection, schema and migrations, and what every source's reads share.
//!
//! One [`Store`] (`handle.rs`) serves SQLite and PostgreSQL through the pools of `pool.rs`. Each
//! query is written once, in PostgreSQL syntax (see [`sql`]), and each method body is written
//! once and compiled for both pools by `on_pool!`. This module only declares the parts and
//! re-exports what the rest of memscope uses.

// First: `pool` defines `on_pool!`, which the modules after it use.
#[macro_use]
pub(crate) mod pool;

pub(crate) mod bad_row;
pub(crate) mod cancel;
pub(crate) mod casts;
pub mod catalog;
mod chat_memory;
mod counts;
pub(crate) mod error;
pub(crate) mod handle;
pub(crate) mod ids;
mod insert;
pub mod job_processes;
pub mod memory_bases;
mod mysql;
pub(crate) mod mysql_text;
mod mysql_url;
mod nodes;
pub(crate) mod owners;
pub mod profile;
pub mod rows;
pub(crate) mod sql;
pub(crate) mod sqlite_read_only;
pub(crate) mod sqlite_scan;
mod uploads;

pub use bad_row::BadRow;
pub use cancel::CancelFlag;
pub use catalog::Backend;
pub use chat_memory::{ChangeRecord, ChatMemorySummary, DeleteScope, MemoryChange};
pub use counts::TableCount;
pub use error::{
    StoreError, absolute_url, error_chain_text, error_text, redact_url, with_missing_colon,
};
pub use handle::{Access, SCHEMA_VERSION, Store};
pub(crate) use ids::like_escape;
pub use ids::{ID_CANDIDATES, IdMatch};
pub use nodes::{NodeExecutionBrief, NodeExecutionRecord, Offload};
pub use pool::SQLITE_MAX_PAGES_ENV;
pub(crate) use pool::sqlite_path;
pub use profile::{
    BaseChange, Capabilities, Ingestion, JobOwnership, KbHome, LockStyle, Part, Profile, dashed_id,
};
pub use sql::strip_casts;
pub use uploads::MessageUpload;
