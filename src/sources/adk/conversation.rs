//! Google ADK's sessions through the conversation capability: one conversation per session
//! (named by its id; by its app and user too where several share the id), whose history is
//! exactly the contents ADK 2.13 sends an agent's model on the next turn (`contents.rs`), for the
//! agent its runner would pick (`router.rs`) or the one asked for. ADK keeps no token window of
//! its own: the budget's cut is memscope's panel, as for every source.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::contents;
use super::item::Made;
use super::list;
use super::opened;
use super::read::{self, Layout, Loaded};
use super::router;
use super::session::{agent_of, contents_for, key_of, prompt_of};
use super::tree;
use crate::memory::budget_view::BudgetView;
use crate::memory::history::{History, HistoryMessage, Side};
use crate::memory::model::Role;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{
    Census, Command, ConversationSource, Extra, HistoryRequest, LeftOutCount, ListColumn,
    ListQuery, ListedConversation, ListedPage, MessageFacts, Setting, SourceError, SourceFuture,
    SourceHistory, SourceOptions, SourceTree, TreeRequest,
};
use crate::sources::opened::{ConversationKey, OpenConversation};
use crate::store::{Store, StoreError};

/// The sessions of an ADK session database.
pub struct AdkSessions;

const SETTINGS: &[Setting] = &[
    Setting {
        flag: "app",
        commands: &[Command::Conversations, Command::History, Command::Thread],
        help: "the ADK app the session is under (needed when several share its id)",
    },
    Setting {
        flag: "user",
        commands: &[Command::Conversations, Command::History, Command::Thread],
        help: "the ADK user the session is under (needed when several share its id)",
    },
    Setting {
        flag: "agent",
        commands: &[Command::History, Command::Thread],
        help: "whose view of the session: the agent whose model is sent it (default: the agent \
               ADK's runner continues with)",
    },
];

async fn history(store: &Store, request: &HistoryRequest) -> Result<SourceHistory, SourceError> {
    let key = key_of(store, &request.id, &request.options).await?;
    let layout = Layout::of(store);
    let Loaded {
        events,
        unreadable,
        pickled,
    } = read::events(store, &key).await?;
    let agent = agent_of(&events, request.options.get("agent"))?;
    let agent_name = agent.clone().unwrap_or_default();
    let built = contents_for(&events, &agent_name);

    let mut messages = Vec::with_capacity(built.sent.len());
    let mut facts = Vec::with_capacity(built.sent.len());
    for sent in &built.sent {
        let (kind, message, shown) = prompt_of(sent);
        let event_ids: Vec<&str> = sent.from.iter().map(|&i| events[i].id.as_str()).collect();
        messages.push(HistoryMessage {
            side: match message.role {
                Role::User => Side::Query,
                _ => Side::Answer,
            },
            message,
            source_id: event_ids.first().copied().unwrap_or_default().to_owned(),
        });
        facts.push(MessageFacts {
            kind,
            at: read::seconds_instant(sent.timestamp),
            raw: request.raw(&sent.content),
            shown,
            extra: request.details(|| {
                json!({
                    "author": events.get(sent.from[0]).map(|e| e.author.as_str()),
                    "made": match sent.made {
                        Made::Own => "as_stored",
                        Made::Quoted => "quoted",
                        Made::Summary => "compaction_summary",
                    },
                    "events": event_ids,
                })
            }),
        });
    }
    let ids: Vec<String> = messages.iter().map(|m| m.source_id.clone()).collect();
    let history = History {
        window: ids.len(),
        rows_given: events.len(),
        thread: ids,
        popped: None,
        paused: Vec::new(),
        messages,
    };
    let view = BudgetView::for_history(history, &request.budget, &mut CountCache::default());

    let mut counts: BTreeMap<contents::Reason, usize> = BTreeMap::new();
    for reason in built.left_out.values() {
        *counts.entry(*reason).or_default() += 1;
    }
    let mut left_out: Vec<LeftOutCount> = counts
        .into_iter()
        .map(|(reason, messages)| LeftOutCount {
            reason: reason.key().to_owned(),
            description: reason.description().to_owned(),
            short: reason.key().replace('_', " "),
            messages,
        })
        .collect();
    if !unreadable.is_empty() {
        left_out.push(LeftOutCount {
            reason: "unreadable".to_owned(),
            description: "stored events that are not JSON ADK can load".to_owned(),
            short: "unreadable".to_owned(),
            messages: unreadable.len(),
        });
    }
    let mut warnings = Vec::new();
    if !unreadable.is_empty() {
        warnings.push(format!(
            "{} not JSON ADK can load ({}): ADK fails to load this session; memscope shows the rest",
            crate::format::count(unreadable.len() as u64, "event"),
            unreadable.join(", ")
        ));
    }
    if pickled > 0 {
        warnings.push(format!(
            "old schema: the actions of {} are Python pickles, which memscope never loads; \
             transfers, state changes, compactions and rewinds in them are not seen",
            crate::format::count(pickled as u64, "event"),
        ));
    }
    if !built.unanswered.is_empty() {
        warnings.push(format!(
            "{} stored without a response ({}): ADK drops {} from the contents",
            crate::format::count(built.unanswered.len() as u64, "tool call"),
            built
                .unanswered
                .iter()
                .map(|(_, id)| id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if built.unanswered.len() == 1 {
                "it"
            } else {
                "them"
            },
        ));
    }
    warnings.extend(view.warnings());

    let agent_line = match (&agent, request.options.get("agent")) {
        (Some(agent), Some(_)) => format!("contents for agent {agent}"),
        (Some(agent), None) => {
            format!("contents for agent {agent}, whom ADK's runner continues with")
        }
        (None, _) => "no agent has spoken yet".to_owned(),
    };
    let mut header = vec![format!(
        "session {} (app {}, user {}; {}): {} stored; {agent_line}",
        key.id,
        key.app_name,
        key.user_id,
        layout.describe(),
        crate::format::count(events.len() as u64, "event"),
    )];
    if view.history.messages.is_empty() {
        header.push("nothing to send: the model is handed only the new turn's input".to_owned());
    }
    Ok(SourceHistory {
        id: key.id.clone(),
        title: None,
        header,
        rule: "what ADK 2.13 sends the agent's model on the next turn: every event since the \
               last rewind, the agent's own as stored, other agents' quoted as user context, \
               compacted stretches as their summaries, calls paired with their responses and \
               ADK's own call ids removed (as for Gemini); ADK keeps no token window, so the cut \
               is memscope's budget"
            .to_owned(),
        view,
        messages: facts,
        kept_above_cut: None,
        left_out,
        warnings,
        extra: Extra::from_iter([
            ("app".to_owned(), json!(key.app_name)),
            ("user".to_owned(), json!(key.user_id)),
            ("agent".to_owned(), json!(agent)),
            ("agents".to_owned(), json!(router::agents(&events))),
            ("service".to_owned(), json!(layout.describe())),
            ("stored_events".to_owned(), json!(events.len())),
            ("pickled_actions".to_owned(), json!(pickled)),
        ]),
    })
}

const CENSUS: &str = "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM events)";

impl ConversationSource for AdkSessions {
    fn noun(&self) -> &'static str {
        "session"
    }

    fn settings(&self) -> &'static [Setting] {
        SETTINGS
    }

    fn list_columns(&self) -> &'static [ListColumn] {
        list::COLUMNS
    }

    fn list<'a>(
        &'a self,
        store: &'a Store,
        query: &'a ListQuery,
        found: &'a mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
    ) -> SourceFuture<'a, ListedPage> {
        Box::pin(list::list(store, query, found))
    }

    fn history<'a>(
        &'a self,
        store: &'a Store,
        request: &'a HistoryRequest,
    ) -> SourceFuture<'a, SourceHistory> {
        Box::pin(history(store, request))
    }

    fn tree<'a>(
        &'a self,
        store: &'a Store,
        request: &'a TreeRequest,
    ) -> SourceFuture<'a, SourceTree> {
        Box::pin(tree::tree(store, request))
    }

    fn open<'a>(
        &'a self,
        store: &'a Store,
        key: &'a ConversationKey,
    ) -> Option<SourceFuture<'a, OpenConversation>> {
        Some(Box::pin(opened::open(store, key)))
    }

    fn key_options(&self, key: &ConversationKey) -> SourceOptions {
        opened::key_options(key)
    }

    fn trim_refusal(&self) -> Option<&'static str> {
        Some(
            "memscope only previews trims of an ADK session: ADK rebuilds what each model is sent \
             from every event of the session, and deleting events would break its invocations \
             (a call from its response, a transfer from the turn it hands over); `trim preview \
             --conversation SESSION` (with --app and --user where several share its id) shows \
             what a trim would keep",
        )
    }

    fn census<'a>(&'a self, store: &'a Store) -> BoxFuture<'a, Result<Census, StoreError>> {
        Box::pin(Census::read(store, CENSUS, "event"))
    }

    fn resolve<'a>(&'a self, store: &'a Store, given: &'a str) -> SourceFuture<'a, String> {
        Box::pin(async move {
            key_of(store, given, &SourceOptions::default())
                .await
                .map(|key| key.id)
        })
    }
}
