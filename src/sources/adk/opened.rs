//! An ADK session opened for a view: every stored event in order, each with the agent that
//! wrote it, grouped by invocation, marked with what ADK does with it (a transfer, a rewind,
//! what it leaves out of the contents); and its memory, the contents ADK sends the continuing
//! agent's model, recounted under each budget without reading again.

use std::sync::Arc;

use serde_json::Value as Json;

use super::contents::Reason;
use super::event::Event;
use super::read;
use super::router;
use super::session::{agent_of, contents_for, key_of, prompt_of};
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::model::{ChatMessage, Content, PromptMessage, Role, TokenUsage, ToolCall};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{LeftOutCount, SourceError, SourceOptions};
use crate::sources::opened::{
    ConversationKey, ConversationMemory, FedHistory, OpenConversation, ShownMessage, Views,
    fed_history,
};
use crate::store::Store;

/// The events of a session and the agent whose view is open (the key's, else the one ADK's
/// runner continues with): the contents its model is sent.
#[derive(Debug, Clone)]
struct AgentContents {
    events: Vec<Event>,
    agent: String,
}

impl ConversationMemory for AgentContents {
    fn fed(
        &self,
        _window: Option<u32>,
        settings: &BudgetSettings,
        cache: &mut CountCache,
    ) -> Result<FedHistory, String> {
        let agent = &self.agent;
        let built = contents_for(&self.events, agent);
        let messages = built
            .sent
            .iter()
            .map(|sent| {
                let id = self.events[sent.from[0]].id.clone();
                (id, prompt_of(sent).1)
            })
            .collect();
        let view = BudgetView::for_history(fed_history(messages), settings, cache);
        let mut counts: std::collections::BTreeMap<Reason, usize> = Default::default();
        for reason in built.left_out.values() {
            *counts.entry(*reason).or_default() += 1;
        }
        let warnings = view.warnings();
        Ok(FedHistory {
            view,
            rule: format!(
                "what ADK 2.13 sends agent {}'s model next turn: the agent's own events as \
                 stored, other agents' quoted, compactions and rewinds applied, calls paired",
                agent
            ),
            left_out: counts
                .into_iter()
                .map(|(reason, messages)| LeftOutCount {
                    reason: reason.key().to_owned(),
                    description: reason.description().to_owned(),
                    short: reason.key().replace('_', " "),
                    messages,
                })
                .collect(),
            flagged: Vec::new(),
            flagged_why: "",
            kept_above_cut: None,
            warnings,
            trim_start: None,
        })
    }
}

/// A stored event as the view shows it: its content in its author's words.
fn shown(event: &Event, left_out: Option<&Reason>) -> ShownMessage {
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for part in event.parts() {
        if let Some(t) = part.get("text").and_then(Json::as_str) {
            text.push(t.to_owned());
        } else if let Some(call) = part.get("function_call") {
            calls.push(ToolCall {
                id: call
                    .get("id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: call
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments: call.get("args").map(Json::to_string).unwrap_or_default(),
            });
        } else if let Some(response) = part.get("function_response") {
            text.push(format!(
                "{} returned {}",
                response.get("name").and_then(Json::as_str).unwrap_or("?"),
                response
                    .get("response")
                    .map(Json::to_string)
                    .unwrap_or_default()
            ));
        }
    }
    let role = match (event.author.as_str(), event.role()) {
        ("user", _) => Role::User,
        (_, Some("user")) => Role::Tool,
        _ => Role::Assistant,
    };
    let mut message = PromptMessage::new(role, Content::Text(text.join("\n")));
    message.tool_calls = calls;
    let mut marks = Vec::new();
    if let Some(target) = event.transfer_to() {
        marks.push(format!("transfers to {target}"));
    }
    if let Some(before) = event.rewinds_before() {
        marks.push(format!("rewinds to before invocation {before}"));
    }
    if event.compaction().is_some() {
        marks.push("compaction summary".to_owned());
    }
    if let Some(delta) = event.state_delta() {
        let keys: Vec<&str> = delta.keys().map(String::as_str).collect();
        marks.push(format!("state: {}", keys.join(", ")));
    }
    if let Some(reason) = left_out {
        marks.push(format!("not sent: {}", reason.description()));
    }
    let usage = event.usage.as_ref().and_then(|u| {
        Some(TokenUsage {
            input_tokens: u.get("prompt_token_count")?.as_i64()?,
            output_tokens: u
                .get("candidates_token_count")
                .and_then(Json::as_i64)
                .unwrap_or(0),
        })
    });
    ShownMessage {
        message: ChatMessage {
            id: event.id.clone(),
            message,
            created_at: read::seconds_instant(event.timestamp).map(|at| at.naive_utc()),
            usage,
        },
        run: Some(event.invocation_id.clone()).filter(|i| !i.is_empty()),
        sender: event.author.clone(),
        files: Vec::new(),
        marks,
        owner: None,
        context_id: None,
    }
}

/// The agents of a session, each a view of it (the contents its model is sent), opening on the
/// one ADK's runner continues with; none where fewer than two agents spoke.
fn views_of(events: &[Event]) -> Option<Views> {
    let names = router::agents(events);
    let default = router::continuing(events)?;
    (names.len() > 1).then_some(Views {
        noun: "agent",
        setting: "agent",
        names,
        default,
    })
}

/// The settings that name `key`: its app and user (its scope, as the list gives it, is
/// `app/user`), and the agent whose view it is.
pub fn key_options(key: &ConversationKey) -> SourceOptions {
    let (app, user) = key
        .scope
        .as_deref()
        .and_then(|scope| scope.split_once('/'))
        .unzip();
    SourceOptions::default()
        .with("app", app)
        .with("user", user)
        .with("agent", key.view.as_deref())
}

/// The session `key` names, in the view of the agent `key.view` names (else the one ADK's
/// runner continues with); its scope, as the list gives it, is `app/user`.
pub async fn open(store: &Store, key: &ConversationKey) -> Result<OpenConversation, SourceError> {
    let session = key_of(store, &key.id, &key_options(key)).await?;
    let loaded = read::events(store, &session).await?;
    let agent = agent_of(&loaded.events, key.view.as_deref())?.unwrap_or_default();
    let built = contents_for(&loaded.events, &agent);
    let messages = loaded
        .events
        .iter()
        .map(|event| shown(event, built.left_out.get(&event.index)))
        .collect();
    let mut warnings = Vec::new();
    if !loaded.unreadable.is_empty() {
        warnings.push(format!(
            "{} not JSON ADK can load: ADK fails to load this session",
            crate::format::count(loaded.unreadable.len() as u64, "event")
        ));
    }
    if loaded.pickled > 0 {
        warnings.push(format!(
            "old schema: the actions of {} are Python pickles, which memscope never loads",
            crate::format::count(loaded.pickled as u64, "event")
        ));
    }
    Ok(OpenConversation {
        key: key.clone(),
        heading: format!(
            "session {} of app {}, user {}; contents for agent {}",
            session.id,
            session.app_name,
            session.user_id,
            if agent.is_empty() {
                "(none yet)"
            } else {
                &agent
            }
        ),
        structure: "ADK keeps a session as a list of events, grouped by invocation; what a \
                    model is sent is rebuilt from them on every turn, per agent"
            .to_owned(),
        messages,
        views: views_of(&loaded.events),
        memory: Arc::new(AgentContents {
            agent,
            events: loaded.events,
        }),
        warnings,
    })
}
