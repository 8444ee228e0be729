//! The conversation list, one for every source: the shown page, the cursors its source gave and
//! the pages around it.

use super::load::LoadStatus;
use super::screen_unit::{Around, ConversationScreens, ScreenUnit};
use crate::sources::conversation::ListedConversation;
use crate::sources::opened::ConversationKey;
use crate::tui::keymap::KeyContext;

/// Conversations per list page: a keyset page, so every page costs the same.
pub const PAGE_SIZE: u32 = 50;

/// The conversation list: one keyset page at a time, of whatever the source keeps (Dify's
/// conversations, Langflow's sessions of each flow, LangGraph's threads, any source's log).
#[derive(Debug, Clone, Default)]
pub struct ListState {
    pub status: LoadStatus,
    pub rows: Vec<ListedConversation>,
    pub selected: usize,
    /// The applied `/` filter.
    pub filter: String,
    /// Conversations deleted in Dify are listed (marked), as `x` toggles; hidden by default.
    pub include_deleted: bool,
    /// Cursors of the pages before the shown one, and the shown page's own: they describe
    /// `rows`, so the page number always matches what is on screen.
    pub previous_pages: Vec<Option<String>>,
    pub page_after: Option<String>,
    /// Where the page after the shown one starts, as the source gave it; `None` on the last.
    pub page_next: Option<String>,
    /// The page being loaded, which becomes the shown one when its rows arrive.
    pub loading_page: Option<PagePosition>,
    /// Page steps (`]` +1, `[` -1) pressed while a page loads: each is taken from the page that
    /// actually loaded, never from rows still on screen.
    pub queued_steps: i64,
    pub generation: u64,
    /// Tokens of each listed conversation's latest thread, filled in by a background job.
    pub thread_tokens: rustc_hash::FxHashMap<String, u64>,
    pub tokens_generation: u64,
    /// Rows a search that scans has found so far, shown while it runs (a scan reports each
    /// row as it finds it); emptied when the page arrives.
    pub found_so_far: Vec<ListedConversation>,
    /// Where the filter was found in the selected row's messages, when it matched their text
    /// (the row of this list, or of the session list).
    pub snippet: Option<MatchSnippet>,
    pub snippet_generation: u64,
}

/// The words around the filter's first hit in a conversation's messages: why a row matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchSnippet {
    /// The conversation: a Dify conversation's id, a Langflow session with its flow, or a
    /// LangGraph thread.
    pub key: ConversationKey,
    /// The filter it was read for.
    pub filter: String,
    /// `None` while it is read; `Ok(None)`: no message holds it any more.
    pub text: Option<Result<Option<String>, String>>,
}

/// Where a list page starts: the cursors of the pages before it and its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagePosition {
    pub previous_pages: Vec<Option<String>>,
    pub after: Option<String>,
}

impl PagePosition {
    pub fn number(&self) -> usize {
        self.previous_pages.len() + 1
    }
}

impl ListState {
    /// The selected row.
    pub fn selected_row(&self) -> Option<&ListedConversation> {
        self.rows.get(self.selected)
    }

    /// What opens the selected row.
    pub fn selected_key(&self) -> Option<ConversationKey> {
        self.selected_row().map(key_of)
    }

    pub fn has_next_page(&self) -> bool {
        self.page_next.is_some()
    }

    /// The number of the page whose rows are shown.
    pub fn page_number(&self) -> usize {
        self.previous_pages.len() + 1
    }

    /// The page the keys pressed so far lead to, while it loads: `None` when the shown page is
    /// the last one asked for.
    pub fn target_page(&self) -> Option<usize> {
        let loading = self.loading_page.as_ref()?;
        let target = loading.number() as i64 + self.queued_steps;
        Some(target.max(1) as usize)
    }

    /// The cursor the next list load starts after: the loading page's, else the shown one's.
    pub fn requested_after(&self) -> Option<String> {
        match &self.loading_page {
            Some(page) => page.after.clone(),
            None => self.page_after.clone(),
        }
    }

    /// The position `step` pages (+1 or -1) from the shown page, if there is such a page.
    pub fn step_from_shown(&self, step: i64) -> Option<PagePosition> {
        if step > 0 {
            let after = Some(self.page_next.clone()?);
            let mut previous_pages = self.previous_pages.clone();
            previous_pages.push(self.page_after.clone());
            Some(PagePosition {
                previous_pages,
                after,
            })
        } else {
            let mut previous_pages = self.previous_pages.clone();
            let after = previous_pages.pop()?;
            Some(PagePosition {
                previous_pages,
                after,
            })
        }
    }

    /// Back to the first page (a new filter, or the filter cleared).
    pub fn reset_pages(&mut self) {
        self.previous_pages.clear();
        self.page_after = None;
        self.page_next = None;
        self.loading_page = None;
        self.queued_steps = 0;
        self.selected = 0;
    }
}

/// What opens a row of the list: its id, scoped where the source scopes ids (Langflow's flow).
pub fn key_of(row: &ListedConversation) -> ConversationKey {
    ConversationKey::scoped(row.id.clone(), row.scope.clone())
}

impl ScreenUnit for ListState {
    fn key_context(&self, around: &Around) -> KeyContext {
        match around.conversation_screens {
            ConversationScreens::CheckpointThread => KeyContext::Threads,
            ConversationScreens::Messages => KeyContext::Sessions,
            ConversationScreens::TurnTree => KeyContext::Conversations,
        }
    }

    fn busy(&self) -> bool {
        self.status.is_loading()
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        let row = self.selected_row()?;
        Some(("conversation id", row.id.clone()))
    }
}
