//! What the runner and its parts share: the slots of the jobs where a new request aborts the
//! previous one, and how a failure is reported.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    List,
    ThreadTokens,
    Conversation,
    Budget,
    Poll,
    Nodes,
    NodeContext,
    Timeline,
    MemoryList,
    MemoryTokens,
    MemoryPage,
    TrimSource,
    Summary,
}

pub(super) const SLOTS: usize = 13;

/// Logs a job failure and turns it into the text the screen shows.
pub(super) fn report(error: impl std::fmt::Display) -> String {
    let text = error.to_string();
    tracing::warn!(error = %text, "background job failed");
    text
}
