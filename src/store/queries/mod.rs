//! The reads the CLI, the TUI and `doctor` make, by what they are for: conversations
//! (`conversations.rs`), a conversation's messages and what hangs off them (`messages.rs`),
//! many conversations' history windows at once (`windows.rs`) and `doctor`'s whole-database
//! scans (`scans.rs`). `ids.rs` and `columns.rs` hold what the reads share. Every query has an
//! index behind it (see the migrations and `assets/schema.md`).

// First: the select-list macros the other reads build their texts from.
#[macro_use]
mod columns;
mod conversations;
mod ids;
mod messages;
mod scans;
mod windows;

pub use conversations::{
    ConversationCursor, ConversationFilter, ConversationInfo, ConversationSummary,
};
pub(crate) use ids::like_escape;
pub use ids::{ID_CANDIDATES, IdMatch};
pub(super) use ids::{IN_LIST_LEN, canonical_uuid, canonical_uuids, in_list_query};
pub use scans::{BadNodeJson, DanglingRunRef, TableCount};
