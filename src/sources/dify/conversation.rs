//! Dify's conversations through the conversation capability: regeneration trees of
//! question-and-answer rows, listed by app, whose history is `TokenBufferMemory`'s. memscope's
//! own schema keeps its conversations in Dify's tables and answers the same.

use std::ops::ControlFlow;

use futures_util::future::BoxFuture;

use super::{history, listing, thread_tree};
use crate::sources::adapter::Part;
use crate::sources::conversation::{
    Census, Command, ConversationSource, HistoryRequest, ListColumn, ListQuery, ListSearch,
    ListedConversation, ListedPage, Setting, SourceFuture, SourceHistory, SourceTree, TreeRequest,
};
use crate::store::{Store, StoreError};

/// The conversations of a Dify database (and of memscope's own schema).
pub struct DifyConversations;

const SETTINGS: &[Setting] = &[
    Setting {
        flag: "app",
        commands: &[Command::Conversations],
        help: "only the conversations of this app (its id)",
    },
    Setting {
        flag: "include-deleted",
        commands: &[Command::Conversations],
        help: "list conversations deleted in Dify too",
    },
    Setting {
        flag: "message-limit",
        commands: &[Command::History],
        help: "the rows memory reads (Dify's message_limit)",
    },
    Setting {
        flag: "mode",
        commands: &[Command::Thread],
        help: "the thread shown: Dify's extraction, with the parent fix, or the tree path",
    },
    Setting {
        flag: "leaf",
        commands: &[Command::Thread],
        help: "the message whose thread is followed (default: the newest)",
    },
];

const COLUMNS: &[ListColumn] = &[
    ListColumn {
        header: "app",
        key: "app",
        width: 24,
        brief: true,
        searched: true,
    },
    ListColumn {
        header: "mode",
        key: "mode",
        width: 13,
        brief: true,
        searched: false,
    },
];

/// The conversations and the entries they hold.
const CENSUS: &str = "SELECT (SELECT COUNT(*) FROM conversations), (SELECT COUNT(*) FROM messages)";

impl ConversationSource for DifyConversations {
    fn noun(&self) -> &'static str {
        "conversation"
    }

    fn requires(&self) -> &'static [Part] {
        &[Part::Conversations]
    }

    fn settings(&self) -> &'static [Setting] {
        SETTINGS
    }

    fn list_columns(&self) -> &'static [ListColumn] {
        COLUMNS
    }

    /// The search reads names, app names, and ids by their start (a UUID typed in part).
    fn list_search(&self) -> ListSearch {
        ListSearch {
            titles: true,
            id_prefix: true,
        }
    }

    fn list_scans(&self, store: &Store, query: &ListQuery) -> bool {
        let search = query.search.as_deref().filter(|s| !s.is_empty());
        store.search_path(search).is_scan()
    }

    fn list<'a>(
        &'a self,
        store: &'a Store,
        query: &'a ListQuery,
        found: &'a mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
    ) -> SourceFuture<'a, ListedPage> {
        Box::pin(listing::list(store, query, found))
    }

    fn history<'a>(
        &'a self,
        store: &'a Store,
        request: &'a HistoryRequest,
    ) -> SourceFuture<'a, SourceHistory> {
        Box::pin(history::history(store, request))
    }

    fn tree<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TreeRequest,
    ) -> SourceFuture<'a, SourceTree> {
        Box::pin(thread_tree::tree(store, request))
    }

    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String> {
        Box::pin(async move { Ok(super::window::conversation_info(store, given).await?.id) })
    }

    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>> {
        Box::pin(Census::read(store, CENSUS, "message"))
    }
}
