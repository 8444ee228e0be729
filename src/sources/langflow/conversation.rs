//! Langflow's conversations through the conversation capability: one per (flow, session) of
//! its message log, whose history is what the Agent's chat memory reads.

use std::ops::ControlFlow;

use futures_util::future::BoxFuture;

use super::{history, listing, opened, session_tree};
use crate::sources::conversation::{
    Census, Command, ConversationSource, HistoryRequest, ListColumn, ListQuery, ListedConversation,
    ListedPage, Setting, SourceFuture, SourceHistory, SourceOptions, SourceTree, TreeRequest,
};
use crate::sources::opened::{ConversationKey, OpenConversation};
use crate::store::{Store, StoreError};

/// The sessions of a Langflow database.
pub struct LangflowSessions;

const SETTINGS: &[Setting] = &[
    Setting {
        flag: "flow",
        commands: &[Command::History, Command::Thread],
        help: "the flow whose session it is (its name or id), when several flows use the session id",
    },
    Setting {
        flag: "n-messages",
        commands: &[Command::History],
        help: "the Agent's n_messages: the newest messages its memory reads (default 100)",
    },
    Setting {
        flag: "context-id",
        commands: &[Command::History],
        help: "the context id the Agent's memory reads under",
    },
];

const COLUMNS: &[ListColumn] = &[
    ListColumn {
        header: "flow id",
        key: "flow_id",
        width: 36,
        brief: false,
        searched: false,
    },
    ListColumn {
        header: "owner",
        key: "owner_name",
        width: 24,
        brief: true,
        searched: false,
    },
];

/// The conversations and the entries they hold.
const CENSUS: &str = "SELECT (SELECT COUNT(*) FROM (SELECT DISTINCT flow_id, session_id FROM message) s), \
     (SELECT COUNT(*) FROM message)";

impl ConversationSource for LangflowSessions {
    fn noun(&self) -> &'static str {
        "session"
    }

    fn key_options(&self, key: &ConversationKey) -> SourceOptions {
        SourceOptions::default().with("flow", key.scope.as_deref())
    }

    fn settings(&self) -> &'static [Setting] {
        SETTINGS
    }

    fn list_columns(&self) -> &'static [ListColumn] {
        COLUMNS
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
        Box::pin(session_tree::tree(store, request))
    }

    fn open<'a>(
        &'a self,
        store: &'a Store,
        key: &'a ConversationKey,
    ) -> Option<SourceFuture<'a, OpenConversation>> {
        Some(Box::pin(opened::open(store, key)))
    }

    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>> {
        Box::pin(Census::read(store, CENSUS, "message"))
    }

    /// A session is named by its whole id; one in several flows is still one session.
    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String> {
        Box::pin(async move {
            let flows = super::messages::session_flows(store, given).await?;
            match flows.choose(None) {
                Err(error @ super::messages::FlowChoiceError::UnknownSession { .. }) => {
                    Err(error.into())
                }
                _ => Ok(given.to_owned()),
            }
        })
    }
}
