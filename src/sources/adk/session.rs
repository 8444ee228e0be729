//! One session as every command reads it: the session an id names (within `--app` and
//! `--user`), the agent whose view is wanted, the contents ADK sends that agent's model, and
//! what each content counts as.

use serde_json::Value as Json;

use super::contents::{self, Contents, Request, Sent};
use super::event::Event;
use super::item::Made;
use super::read::{self, Key};
use super::router;
use crate::memory::model::{Content, PromptMessage, Role, ToolCall};
use crate::sources::conversation::{MessageKind, Refusal, SourceError, SourceOptions};
use crate::store::Store;

/// The one session `id` names, within `--app` and `--user` where given.
pub async fn key_of(store: &Store, id: &str, options: &SourceOptions) -> Result<Key, SourceError> {
    let app = options.get("app");
    let user = options.get("user");
    let all = read::keys_of(store, id).await?;
    let matching: Vec<Key> = all
        .iter()
        .filter(|k| app.is_none_or(|a| a == k.app_name) && user.is_none_or(|u| u == k.user_id))
        .cloned()
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.clone()),
        [] if all.is_empty() => Err(SourceError::not_found(format!(
            "no session {id} in this database"
        ))),
        [] => Err(SourceError::not_found(format!(
            "session {id} is not under {}; it is under {}",
            [
                app.map(|a| format!("app {a}")),
                user.map(|u| format!("user {u}"))
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" and "),
            names(&all)
        ))),
        many => Err(SourceError::new(
            Refusal::Ambiguous(
                many.iter()
                    .map(|k| format!("{}/{}/{}", k.app_name, k.user_id, k.id))
                    .collect(),
            ),
            format!(
                "session id {id} is ambiguous: {} sessions have it ({}); name one with --app and --user",
                many.len(),
                names(many)
            ),
        )),
    }
}

fn names(keys: &[Key]) -> String {
    keys.iter()
        .map(|k| format!("app {} user {}", k.app_name, k.user_id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The agent whose contents are built: the one asked for (among those the session knows), else
/// the one ADK's runner continues with.
pub fn agent_of(events: &[Event], asked: Option<&str>) -> Result<Option<String>, SourceError> {
    let known = router::agents(events);
    match asked {
        Some(name) if known.iter().any(|k| k == name) => Ok(Some(name.to_owned())),
        Some(name) => Err(SourceError::usage(format!(
            "no agent {name} in this session; its agents: {}",
            if known.is_empty() {
                "none (no agent has spoken)".to_owned()
            } else {
                known.join(", ")
            }
        ))),
        None => Ok(router::continuing(events)),
    }
}

/// The contents ADK sends `agent`'s model.
pub fn contents_for(events: &[Event], agent: &str) -> Contents {
    contents::build(
        events,
        &Request {
            agent,
            branch: router::branch_of(events, agent),
            keep_client_ids: false,
        },
    )
}

/// What a content is, and the prompt message its tokens are counted as.
pub fn prompt_of(sent: &Sent) -> (MessageKind, PromptMessage, Option<String>) {
    let role = match sent.content.get("role").and_then(Json::as_str) {
        Some("model") => Role::Assistant,
        _ => Role::User,
    };
    let parts = sent
        .content
        .get("parts")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Json::as_str))
        .collect();
    let calls: Vec<ToolCall> = parts
        .iter()
        .filter_map(|p| p.get("function_call"))
        .map(|call| ToolCall {
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
        })
        .collect();
    let responses: Vec<&Json> = parts
        .iter()
        .filter_map(|p| p.get("function_response"))
        .collect();
    if !responses.is_empty() {
        let mut message = PromptMessage::text(
            Role::Tool,
            responses
                .iter()
                .map(|r| r.get("response").map(Json::to_string).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        message.tool_call_id = responses[0]
            .get("id")
            .and_then(Json::as_str)
            .map(str::to_owned);
        let shown = responses
            .iter()
            .map(|r| {
                format!(
                    "{} → {}",
                    r.get("name").and_then(Json::as_str).unwrap_or("?"),
                    r.get("response").map(Json::to_string).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return (MessageKind::ToolResult, message, Some(shown));
    }
    let mut message = PromptMessage::new(role, Content::Text(text.join("\n")));
    let kind = if sent.made == Made::Summary {
        MessageKind::Compaction
    } else if !calls.is_empty() {
        MessageKind::ToolCall
    } else {
        MessageKind::Message
    };
    let shown = match (sent.made, calls.is_empty()) {
        (Made::Summary, _) => Some(format!("(compaction summary) {}", text.join(" "))),
        (Made::Quoted, _) => Some(text.iter().skip(1).copied().collect::<Vec<_>>().join(" ")),
        (_, false) => Some(
            calls
                .iter()
                .map(|c| format!("{}({})", c.name, c.arguments))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    };
    message.tool_calls = calls;
    (kind, message, shown)
}
