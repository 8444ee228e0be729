//! memscope: a terminal inspector and admin console for the memory of LLM applications.
//!
//! `memory` is the semantics (pure, no IO); everything else depends on it, never the reverse.

pub mod cli;
pub mod config;
pub mod demo;
pub mod inspect;
pub mod kb;
pub mod memory;
pub mod sources;
pub mod storage;
pub mod store;
pub mod summarize;
pub mod sync;
pub mod tui;
