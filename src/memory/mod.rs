//! The memory semantics: threads, trees, history, tokens and budgets. Pure code: no IO, no UI.

pub mod agent_history;
pub mod agent_session;
pub mod budget;
pub mod budget_view;
pub mod context_windows;
pub mod documents;
pub mod history;
pub mod instant;
pub mod memory_base;
pub mod model;
pub mod names;
pub mod node_context;
pub mod thread;
pub mod thread_view;
pub mod tokens;
pub mod tree;
pub mod trim;
pub mod wire;
