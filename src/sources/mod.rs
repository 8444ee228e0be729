//! One adapter per memory source.

pub mod langgraph;
