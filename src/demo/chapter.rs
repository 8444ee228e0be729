//! What every part of the demo story shares: the stories it points at, what one part
//! contributes, the setting each part is written in, and the random streams of the parts.

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
pub(super) struct Chapter {
    pub(super) batch: Batch,
    pub(super) stories: Vec<Story>,
}

/// The directories and shared ids every part of the story works with.
pub(super) struct Setting<'a> {
    pub(super) seed: u64,
    pub(super) tenant_id: &'a str,
    pub(super) storage_root: &'a Path,
    pub(super) kb_root: &'a Path,
}

/// The random streams of the story parts; bulk chunks use streams from [`super::bulk::FIRST_STREAM`].
pub(super) const TENANT_STREAM: u64 = 0;
pub(super) const DIFY_STREAM: u64 = 1;
pub(super) const CHATFLOW_STREAM: u64 = 2;
pub(super) const CHAT_MEMORY_STREAM: u64 = 3;
pub(super) const LANGFLOW_STREAM: u64 = 4;
/// The LangGraph file's story draws from this stream and the two after it.
pub(super) const LANGGRAPH_STREAM: u64 = 5;
/// The OpenAI Agents file's story draws from this stream and the one after it.
pub(super) const OPENAI_AGENTS_STREAM: u64 = 8;
/// The Google ADK file's story draws from this stream and the one after it.
pub(super) const ADK_STREAM: u64 = 10;

/// A story whose id is a conversation's.
pub(super) fn conversation_story(
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
