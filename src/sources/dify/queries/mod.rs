//! Dify's reads, as the CLI, the TUI and `doctor` make them, by what they are for:
//! conversations (`conversations.rs`) and their search (`search.rs`), a conversation's messages
//! and what hangs off them (`messages.rs`), many conversations' history windows at once
//! (`windows.rs`) and `doctor`'s whole-database scans (`scans.rs`; on MySQL its scan of every
//! message is sorted in parts at once, `mysql_scan.rs`). `columns.rs` holds the select
//! lists they share; the ids and `IN` lists every source's reads share are the store's
//! (`store/ids.rs`). Every query has an index behind it (see the migrations and
//! `assets/schema.md`). memscope's own schema keeps its conversations in Dify's tables, so
//! these reads serve it too.

// First: the select-list macros the other reads build their texts from.
#[macro_use]
mod columns;
mod conversations;
mod messages;
mod mysql_scan;
mod scans;
pub mod search;
mod windows;

pub use conversations::{
    ConversationCursor, ConversationFilter, ConversationInfo, ConversationSummary,
};
pub use scans::{BadNodeJson, DanglingRunRef};
