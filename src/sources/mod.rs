//! One module per source of memory databases.

pub mod langflow;
