//! The conversation capability: what a source whose databases keep conversations answers, over
//! neutral types, so that `conversations`, `history`, `thread` and `doctor` are each written once
//! (`inspect/`) and print one JSON shape whatever the source. A source that keeps no
//! conversations returns none from [`super::MemorySource::conversations`].

use std::ops::ControlFlow;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};

use super::adapter::Part;
pub use super::opened::LeftOutCount;
use super::opened::{ConversationKey, OpenConversation, Views};
pub use super::settings::{Command, Setting, SourceOptions};
pub use super::source_error::{LIST_HINT, Refusal, SourceError, ambiguous_message};
use super::stored_figures::StoredFigures;
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::store::pool::on_pool;
use crate::store::{Store, StoreError};

/// What a source's read of its conversations gives back, or why it failed.
pub type SourceFuture<'a, T> = BoxFuture<'a, Result<T, SourceError>>;

/// What only one source has, kept under one key (`extra`) of every row, message and finding.
pub type Extra = Map<String, Json>;

/// The fields of a JSON object as an [`Extra`]; a value that is no object gives none.
pub fn extra(value: Json) -> Extra {
    match value {
        Json::Object(fields) => fields,
        _ => Extra::new(),
    }
}

/// The conversations of one kind of memory database: how they are listed, what the model is
/// fed of one, the tree one is drawn from. Implemented once per source, in its folder.
pub trait ConversationSource: Sync {
    /// What one conversation is called here, for a user: "conversation", "session", "thread".
    fn noun(&self) -> &'static str;

    /// The parts a database of the source must hold to keep conversations.
    fn requires(&self) -> &'static [Part] {
        &[]
    }

    /// The settings only this source's commands take, each with the commands it applies to.
    fn settings(&self) -> &'static [Setting];

    /// One page of the conversations, most recently active first, each also handed to `found`
    /// as it is read (a search without an index prints while it scans); `found` may stop the
    /// read early.
    fn list<'a>(
        &'a self,
        store: &'a Store,
        query: &'a ListQuery,
        found: &'a mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
    ) -> SourceFuture<'a, ListedPage>;

    /// The columns the list prints beside id, title, messages and last activity: each a key
    /// of the rows' `extra`.
    fn list_columns(&self) -> &'static [ListColumn] {
        &[]
    }

    /// What [`Self::list`]'s search reads besides the messages' text and the searched columns,
    /// so a front end can say where a row matched.
    fn list_search(&self) -> ListSearch {
        ListSearch::default()
    }

    /// Whether [`Self::list`] of `query` reads every message (a search without an index), so
    /// the CLI prints rows as they come instead of waiting for the page.
    fn list_scans(&self, store: &Store, query: &ListQuery) -> bool {
        let _ = (store, query);
        false
    }

    /// What the source's memory feeds the model of one conversation, counted under `budget`.
    fn history<'a>(
        &'a self,
        store: &'a Store,
        request: &'a HistoryRequest,
    ) -> SourceFuture<'a, SourceHistory>;

    /// The tree one conversation is drawn from (Dify's regeneration tree, LangGraph's
    /// checkpoints, a flat log as one path), with the path the model sees marked.
    fn tree<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TreeRequest,
    ) -> SourceFuture<'a, SourceTree>;

    /// One conversation opened for a view: its stored messages and its memory; `None` where
    /// the view shows the messages the model is fed, as [`Self::history`] reads them.
    fn open<'a>(
        &'a self,
        store: &'a Store,
        key: &'a ConversationKey,
    ) -> Option<SourceFuture<'a, OpenConversation>> {
        let _ = (store, key);
        None
    }

    /// The views of conversation `id` a user switches between, each a history of its own (an
    /// advanced session's branches); `None` where it has only the one.
    fn views<'a>(&'a self, store: &'a Store, id: &'a str) -> SourceFuture<'a, Option<Views>> {
        let _ = (store, id);
        Box::pin(async { Ok(None) })
    }

    /// The settings that name `key` as the commands take them: its scope (a Langflow
    /// session's flow, an ADK session's app and user) and its view (a branch, an agent).
    fn key_options(&self, key: &ConversationKey) -> SourceOptions {
        let _ = key;
        SourceOptions::default()
    }

    /// Why a trim of one conversation is only ever previewed here, in the source's words, where
    /// the source has more to say than that its history is a view computed at read time.
    fn trim_refusal(&self) -> Option<&'static str> {
        None
    }

    /// How many conversations the database keeps, and the entries they hold.
    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>>;

    /// What the source says of how it stores its conversations, for `info` (a checkpoint
    /// saver's figures); `None` where the census says all.
    fn stored_figures<'a>(
        &'a self,
        store: &'a Store,
    ) -> Option<BoxFuture<'a, Result<StoredFigures, StoreError>>> {
        let _ = store;
        None
    }

    /// The whole id `given` names (a unique prefix of one, where the source takes prefixes),
    /// or why none is; what `history` and `thread` fail with for it.
    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String>;
}

/// How many conversations a database keeps, and how many entries they hold in the source's own
/// unit (Dify's and Langflow's messages, LangGraph's checkpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Census {
    pub conversations: u64,
    pub entries: u64,
    /// What an entry is, singular: "message".
    pub unit: &'static str,
}

impl Census {
    /// The counts `sql` reads: one row of two columns, the conversations and the entries.
    pub async fn read(
        store: &Store,
        sql: &'static str,
        unit: &'static str,
    ) -> Result<Census, StoreError> {
        let (conversations, entries): (i64, i64) = on_pool!(store.pool, sql, |pool, sql| {
            sqlx::query_as(sql).fetch_one(pool).await
        })
        .map_err(|e| store.query_failed(e))?;
        Ok(Census {
            conversations: u64::try_from(conversations).unwrap_or_default(),
            entries: u64::try_from(entries).unwrap_or_default(),
            unit,
        })
    }

    /// "3 sessions with 41 messages", naming a conversation `noun`.
    pub fn describe(&self, noun: &str) -> String {
        format!(
            "{} with {}",
            crate::format::count(self.conversations, noun),
            crate::format::count(self.entries, self.unit)
        )
    }
}

/// What the list is asked for.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Keep the conversations whose id or message text contains it (any case).
    pub search: Option<String>,
    /// Where the page starts: the `next` of the page before, as the source printed it.
    pub after: Option<String>,
    pub limit: u32,
    pub options: SourceOptions,
}

/// One conversation of the list, whatever the source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedConversation {
    /// What `history` and `thread` take.
    pub id: String,
    pub title: Option<String>,
    /// Stored entries in the source's own unit (Dify's message rows, Langflow's rows, a
    /// LangGraph thread's state messages); `None` when they could not be read.
    pub messages: Option<u64>,
    #[serde(serialize_with = "rfc3339")]
    pub last_activity: Option<DateTime<Utc>>,
    /// Deleted in the app, which hides it; listed only when asked for, shown as stored.
    pub deleted: bool,
    /// Why the row could not be read whole.
    pub problem: Option<String>,
    pub extra: Extra,
    /// What the id is unique in, where it is not on its own (a Langflow session's flow): a
    /// view opens the row with it.
    #[serde(skip)]
    pub scope: Option<String>,
}

/// What a source's list search reads of a conversation besides its messages' text and the
/// columns marked searched: the id always, the title where it says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListSearch {
    /// Titles hold the text searched for.
    pub titles: bool,
    /// Ids match by their start only, dashes left out (a UUID typed in part); otherwise
    /// anywhere in them, any case.
    pub id_prefix: bool,
}

/// A column of the list a source adds: its heading, the key of `extra` it shows, and the
/// widest it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListColumn {
    pub header: &'static str,
    pub key: &'static str,
    pub width: usize,
    /// Worth its room in a short list (the TUI's): an id the title already names is not.
    pub brief: bool,
    /// Read by the list's search, so a row may have matched there (Dify's app name).
    pub searched: bool,
}

/// A page of the list, and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedPage {
    pub conversations: Vec<ListedConversation>,
    /// Pass as `--after` for the next page; `None` on the last page.
    pub next: Option<String>,
}

/// What `history` is asked for: a conversation, the source's settings, and the budget.
#[derive(Debug, Clone)]
pub struct HistoryRequest {
    pub id: String,
    pub options: SourceOptions,
    /// What memscope's configuration sets for those settings, used where none was given.
    pub defaults: SourceOptions,
    pub budget: BudgetSettings,
    /// Whether each message's own format and extras are wanted (`raw`, `extra`): JSON prints
    /// them, the text only the table.
    pub details: bool,
}

impl HistoryRequest {
    /// `value` as the JSON a message's `raw` holds: `null` when the details are not wanted
    /// or it cannot be written as JSON.
    pub fn raw(&self, value: &impl Serialize) -> Box<RawValue> {
        let written = self
            .details
            .then(|| serde_json::value::to_raw_value(value).ok())
            .flatten();
        written.unwrap_or_else(|| RawValue::from_string("null".to_owned()).expect("null is JSON"))
    }

    /// `fields` as a message's extra, built only when the details are wanted.
    pub fn details(&self, fields: impl FnOnce() -> Json) -> Extra {
        extra_if(self.details, fields)
    }

    /// Setting `flag` as a number: given, else configured.
    pub fn number<T: std::str::FromStr>(&self, flag: &str) -> Result<Option<T>, SourceError> {
        given_else_configured(&self.options, &self.defaults, flag)
    }
}

/// `fields` as an extra when `wanted`; nothing, and nothing built, otherwise.
fn extra_if(wanted: bool, fields: impl FnOnce() -> Json) -> Extra {
    if wanted {
        extra(fields())
    } else {
        Extra::new()
    }
}

/// Setting `flag` as a number: as given, else as memscope's configuration sets it.
fn given_else_configured<T: std::str::FromStr>(
    given: &SourceOptions,
    configured: &SourceOptions,
    flag: &str,
) -> Result<Option<T>, SourceError> {
    match given.number(flag)? {
        Some(number) => Ok(Some(number)),
        None => configured.number(flag),
    }
}

/// What a source's memory feeds the model of one conversation, with the budget counted.
#[derive(Debug, Clone)]
pub struct SourceHistory {
    /// The conversation's id, as `conversations` lists it.
    pub id: String,
    pub title: Option<String>,
    /// The lines the text output opens with: what was read, in the source's words.
    pub header: Vec<String>,
    /// The rule that chose the messages and the cut, in words.
    pub rule: String,
    pub view: BudgetView,
    /// What the source adds to each message of `view.history`, in its order.
    pub messages: Vec<MessageFacts>,
    /// A message above the cut that is sent anyway (the system message a trim keeps).
    pub kept_above_cut: Option<usize>,
    /// Messages of the conversation not fed, with why, counted.
    pub left_out: Vec<LeftOutCount>,
    pub warnings: Vec<String>,
    pub extra: Extra,
}

/// What `thread` is asked for: a conversation and the source's settings.
#[derive(Debug, Clone)]
pub struct TreeRequest {
    pub id: String,
    pub options: SourceOptions,
    /// What memscope's configuration sets for those settings, used where none was given.
    pub defaults: SourceOptions,
    /// Whether each node's `extra` is wanted (JSON prints it; the text draws only the lines).
    pub details: bool,
}

impl TreeRequest {
    /// `fields` as a node's extra, built only when the details are wanted.
    pub fn details(&self, fields: impl FnOnce() -> Json) -> Extra {
        extra_if(self.details, fields)
    }

    /// Setting `flag` as a number: given, else configured.
    pub fn number<T: std::str::FromStr>(&self, flag: &str) -> Result<Option<T>, SourceError> {
        given_else_configured(&self.options, &self.defaults, flag)
    }
}

/// A conversation's tree, whatever it is made of, and the path the model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTree {
    pub id: String,
    pub title: Option<String>,
    /// The lines the text output opens with, in the source's words.
    pub header: Vec<String>,
    /// Every node, in the order the text output draws them.
    pub nodes: Vec<TreeNode>,
    /// The ids on the path the model sees, oldest first.
    pub thread: Vec<String>,
    /// The lines the text output closes with, in the source's words.
    pub footer: Vec<String>,
    pub extra: Extra,
}

/// One node of a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub id: String,
    pub parent: Option<String>,
    /// Branch depth, drawn as indentation.
    pub depth: usize,
    pub on_thread: bool,
    /// What the text output prints after the marker: the node in a line.
    pub line: String,
    /// The heading of the part of the tree the node is drawn under (a LangGraph subgraph);
    /// `None` for the conversation's own tree.
    pub group: Option<String>,
    pub extra: Extra,
}

/// What a message is, beside its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    Message,
    ToolCall,
    ToolResult,
    Reasoning,
    /// A compacted stretch of the conversation, opaque to memscope.
    Compaction,
    /// Any other item, shown as stored.
    Other,
}

/// What a source knows of one fed message beyond its text and role.
#[derive(Debug, Clone)]
pub struct MessageFacts {
    pub kind: MessageKind,
    pub at: Option<DateTime<Utc>>,
    /// The message in the source's own format, as the model is handed it, already JSON.
    pub raw: Box<RawValue>,
    /// The text the table prints when it differs from what is counted (an error marked).
    pub shown: Option<String>,
    pub extra: Extra,
}

/// An instant as every JSON document writes it: RFC 3339 in UTC, with `Z`.
pub fn rfc3339_text(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// Serializes an optional instant as [`rfc3339_text`] writes it, `null` without one.
pub fn rfc3339<S: serde::Serializer>(
    at: &Option<DateTime<Utc>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serializer.serialize_str(&rfc3339_text(at)),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;
