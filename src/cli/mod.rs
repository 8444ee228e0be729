//! The headless command line: every command prints text for people or JSON for scripts.

pub mod args;
pub mod output;
