//! One module per command.

pub mod agent_sessions;
mod budget;
pub mod chat_memory;
pub mod checkpoint_prune;
mod checkpoint_trim;
pub mod conversations;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod history;
pub mod info;
pub mod mb;
pub mod nodes;
pub mod open;
pub mod shell;
mod stored_trim;
pub mod summary;
pub mod thread;
pub mod tokens;
pub mod trim;
mod trim_options;
