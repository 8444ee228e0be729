//! `thread` of an ADK session: its invocations, each with its events in order (which agent spoke
//! when, its calls and responses, the transfers between agents, the rewinds and what they undid,
//! the compactions), each event's state delta and stored usage beside memscope's count of its
//! content, and the session's state as the app sees it. The events the continuing agent's
//! model is sent (or the asked agent's) are the marked path, each said to be quoted or
//! summarised where the model is not sent it as stored.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json, json};

use super::contents::Reason;
use super::event::Event;
use super::item::Made;
use super::read::{self, Layout};
use super::router;
use super::session::{agent_of, contents_for, key_of};
use crate::memory::tokens::Encoding;
use crate::sources::conversation::{SourceError, SourceTree, TreeNode, TreeRequest};
use crate::store::Store;

/// One line of text: what an event says, cut to a readable length.
fn said(event: &Event) -> String {
    let mut pieces = Vec::new();
    for part in event.parts() {
        if let Some(text) = part.get("text").and_then(Json::as_str) {
            if part.get("thought").and_then(Json::as_bool).unwrap_or(false) {
                continue;
            }
            pieces.push(crate::format::one_line(text, 60));
        } else if let Some(call) = part.get("function_call") {
            pieces.push(format!(
                "calls {}({})",
                call.get("name").and_then(Json::as_str).unwrap_or("?"),
                crate::format::one_line(
                    &call.get("args").map(Json::to_string).unwrap_or_default(),
                    40
                )
            ));
        } else if let Some(response) = part.get("function_response") {
            pieces.push(format!(
                "{} returned {}",
                response.get("name").and_then(Json::as_str).unwrap_or("?"),
                crate::format::one_line(
                    &response
                        .get("response")
                        .map(Json::to_string)
                        .unwrap_or_default(),
                    40
                )
            ));
        }
    }
    pieces.join("; ")
}

/// The text memscope counts of an event's content: its texts, calls and responses as JSON.
fn counted_text(event: &Event) -> String {
    event
        .parts()
        .iter()
        .map(|part| match part.get("text").and_then(Json::as_str) {
            Some(text) => text.to_owned(),
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn delta_text(delta: &Map<String, Json>) -> String {
    delta
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::format::one_line(&v.to_string(), 30)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn tree(store: &Store, request: &TreeRequest) -> Result<SourceTree, SourceError> {
    let key = key_of(store, &request.id, &request.options).await?;
    let loaded = read::events(store, &key).await?;
    let events = &loaded.events;
    let state = read::state(store, &key).await?;
    let asked = request.options.get("agent");
    let agent = agent_of(events, asked)?;
    let built = contents_for(events, agent.as_deref().unwrap_or_default());
    // How each event reaches the agent's model: as stored, quoted, or in a summary.
    let sent_as: BTreeMap<usize, Made> = built
        .sent
        .iter()
        .flat_map(|s| s.from.iter().map(|&i| (i, s.made)))
        .collect();
    let reached: BTreeSet<usize> = sent_as.keys().copied().collect();

    let mut nodes: Vec<TreeNode> = Vec::new();
    let mut invocations: Vec<&str> = Vec::new();
    let mut transfers = Vec::new();
    let mut rewinds = Vec::new();
    let mut by_invocation: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
    for event in events {
        by_invocation
            .entry(event.invocation_id.as_str())
            .or_default()
            .push(event);
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for event in events {
        let invocation = event.invocation_id.as_str();
        if seen.insert(invocation) {
            invocations.push(invocation);
            let members = &by_invocation[invocation];
            let rewound = members
                .iter()
                .all(|e| built.left_out.get(&e.index) == Some(&Reason::Rewound));
            let agents: Vec<&str> = members
                .iter()
                .map(|e| e.author.as_str())
                .filter(|a| *a != "user")
                .fold(Vec::new(), |mut seen, a| {
                    if !seen.contains(&a) {
                        seen.push(a);
                    }
                    seen
                });
            nodes.push(TreeNode {
                id: invocation.to_owned(),
                parent: None,
                depth: 0,
                on_thread: members.iter().any(|e| reached.contains(&e.index)),
                line: format!(
                    "invocation {invocation}: {}{}",
                    if agents.is_empty() {
                        "no agent".to_owned()
                    } else {
                        agents.join(" → ")
                    },
                    if rewound { " (undone by a rewind)" } else { "" }
                ),
                group: None,
                extra: request.details(|| json!({ "kind": "invocation", "agents": agents })),
            });
        }
        // How the agent's model is sent the event comes first: the rest of the line is cut first.
        let how = match sent_as.get(&event.index) {
            Some(Made::Quoted) => " (quoted)",
            Some(Made::Summary) => " (in a summary)",
            Some(Made::Own) | None => "",
        };
        let mut line = format!("[{}]{how} {}", event.author, said(event));
        if let Some(target) = event.transfer_to() {
            line.push_str(&format!(" → transfer to {target}"));
            transfers.push(json!({ "from": event.author, "to": target, "event": event.id }));
        }
        if let Some(before) = event.rewinds_before() {
            line.push_str(&format!(" rewind to before invocation {before}"));
            rewinds.push(json!({ "event": event.id, "before_invocation": before }));
        }
        if event.compaction().is_some() {
            line.push_str(" compaction summary");
        }
        if let Some(delta) = event.state_delta() {
            line.push_str(&format!("  state Δ {}", delta_text(delta)));
        }
        // memscope's count of the content, by cl100k_base, beside the usage the model reported.
        let tokens = Encoding::Cl100kBase.count(&counted_text(event));
        let usage = event.usage.clone();
        if let Some(usage) = &usage {
            line.push_str(&format!(
                "  usage in {} out {}",
                usage
                    .get("prompt_token_count")
                    .map_or("?".to_owned(), Json::to_string),
                usage
                    .get("candidates_token_count")
                    .map_or("?".to_owned(), Json::to_string)
            ));
        }
        if !event.parts().is_empty() {
            line.push_str(&format!("  memscope counts {tokens}"));
        }
        if let Some(reason) = built.left_out.get(&event.index) {
            line.push_str(&format!("  ({})", reason.key().replace('_', " ")));
        }

        nodes.push(TreeNode {
            id: event.id.clone(),
            parent: Some(invocation.to_owned()),
            depth: 1,
            on_thread: reached.contains(&event.index),
            line,
            group: None,
            extra: request.details(|| {
                json!({
                    "kind": "event",
                    "author": event.author,
                    "branch": event.branch,
                    "at": read::seconds_instant(event.timestamp)
                        .map(|at| crate::sources::conversation::rfc3339_text(&at)),
                    "state_delta": event.state_delta(),
                    "transfer_to": event.transfer_to(),
                    "rewind_before_invocation": event.rewinds_before(),
                    "stored_usage": usage,
                    "content_tokens": tokens,
                    "left_out": built.left_out.get(&event.index).map(|r| r.key()),
                    "sent_as": sent_as.get(&event.index).map(|made| match made {
                        Made::Own => "as_stored",
                        Made::Quoted => "quoted",
                        Made::Summary => "summary",
                    }),
                })
            }),
        });
    }
    let thread: Vec<String> = events
        .iter()
        .filter(|e| reached.contains(&e.index))
        .map(|e| e.id.clone())
        .collect();
    let layout = Layout::of(store);
    let mut header = vec![format!(
        "session {} (app {}, user {}; {}): {}, {}",
        key.id,
        key.app_name,
        key.user_id,
        layout.describe(),
        crate::format::count(invocations.len() as u64, "invocation"),
        crate::format::count(events.len() as u64, "event"),
    )];
    if let Some(agent) = &agent {
        let why = match asked {
            Some(_) => "",
            None => " (ADK's runner continues with it)",
        };
        header.push(format!(
            "marked: the events agent {agent}'s model is sent next turn{why}"
        ));
    }
    let mut footer = vec![if state.is_empty() {
        "state as the app sees it: empty".to_owned()
    } else {
        "state as the app sees it (session keys, app: and user: keys; temp: keys are never stored):"
            .to_owned()
    }];
    for (name, value) in &state {
        footer.push(format!(
            "  {name} = {}",
            crate::format::one_line(&value.to_string(), 80)
        ));
    }
    if !loaded.unreadable.is_empty() {
        footer.push(format!(
            "{} not JSON ADK can load: {}",
            crate::format::count(loaded.unreadable.len() as u64, "event"),
            loaded.unreadable.join(", ")
        ));
    }
    Ok(SourceTree {
        id: key.id.clone(),
        title: None,
        header,
        nodes,
        thread,
        footer,
        extra: crate::sources::conversation::extra(json!({
            "app": key.app_name,
            "user": key.user_id,
            "service": layout.describe(),
            "agents": router::agents(events),
            "continuing_agent": agent,
            "state": state,
            "transfers": transfers,
            "rewinds": rewinds,
            "invocations": invocations,
            "pickled_actions": loaded.pickled,
        })),
    })
}
