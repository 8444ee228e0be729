//! What every part of the demo story shares: the stories it points at, what one part
//! contributes, the setting each part is written in, and the random streams of the parts. Each
//! source's part is in its folder (`sources/<name>/demo.rs`); this file, `ids.rs`, `text.rs`
//! and `files.rs` are what they are written with, below `sources/`.

use std::path::Path;

use crate::store::rows::Batch;

/// One notable piece of the demo: where to find it and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    pub title: &'static str,
    /// The table `id` is a key of.
    pub table: &'static str,
    pub id: String,
    pub demonstrates: &'static str,
}

/// What one part of the story contributes.
pub(crate) struct Chapter {
    pub(crate) batch: Batch,
    pub(crate) stories: Vec<Story>,
}

/// The directories and shared ids every part of the story works with.
pub(crate) struct Setting<'a> {
    pub(crate) seed: u64,
    pub(crate) tenant_id: &'a str,
    pub(crate) storage_root: &'a Path,
    pub(crate) kb_root: &'a Path,
}

/// The random streams of the story parts; the bulk scale's chunks use streams from its
/// `FIRST_STREAM` on (Dify's, `sources/dify/demo/bulk.rs`).
pub(crate) const TENANT_STREAM: u64 = 0;
pub(crate) const DIFY_STREAM: u64 = 1;
pub(crate) const CHATFLOW_STREAM: u64 = 2;
pub(crate) const CHAT_MEMORY_STREAM: u64 = 3;
pub(crate) const LANGFLOW_STREAM: u64 = 4;
/// The LangGraph file's story draws from this stream and the two after it.
pub(crate) const LANGGRAPH_STREAM: u64 = 5;
/// The OpenAI Agents file's story draws from this stream and the one after it.
pub(crate) const OPENAI_AGENTS_STREAM: u64 = 8;
/// The Google ADK file's story draws from this stream and the one after it.
pub(crate) const ADK_STREAM: u64 = 10;

/// A story whose id is a conversation's.
pub(crate) fn conversation_story(
    title: &'static str,
    id: String,
    demonstrates: &'static str,
) -> Story {
    Story {
        title,
        table: "conversations",
        id,
        demonstrates,
    }
}
