//! A Langflow session for `thread`: its log is one path, each message under the one before it,
//! every message on the thread, oldest first in Langflow's reading order.

use serde_json::json;

use super::messages::{session_flows, session_messages};
use crate::format::{count, one_line};
use crate::memory::agent_history::LangflowMessage;
use crate::sources::conversation::{
    SourceError, SourceTree, TreeNode, TreeRequest, extra, rfc3339_text,
};
use crate::store::Store;

/// How much of a message's text its line shows.
const TEXT_WIDTH: usize = 60;

/// The session's messages of the flow the `flow` option names (the only one without it).
pub(super) async fn tree(store: &Store, request: &TreeRequest) -> Result<SourceTree, SourceError> {
    let flows = session_flows(store, &request.id).await?;
    let flow = flows.choose(request.options.get("flow"))?;
    let messages = session_messages(store, &request.id, flow.id.as_deref()).await?;
    let header = vec![
        format!(
            "session {} of flow {}: {}, oldest first",
            request.id,
            flow.label(),
            count(messages.len() as u64, "message")
        ),
        "a session's log is one path: every message is on it (●)".to_owned(),
    ];
    let nodes = messages
        .iter()
        .enumerate()
        .map(|(index, message)| node(message, index.checked_sub(1).map(|p| &messages[p]), request))
        .collect();
    Ok(SourceTree {
        id: request.id.clone(),
        title: flow.name.clone(),
        header,
        nodes,
        thread: messages.iter().map(|m| m.id.clone()).collect(),
        footer: Vec::new(),
        // Every flow that writes under this session id: each one's Agent reads only its own.
        extra: extra(json!({
            "flow": {"id": flow.id, "name": flow.name},
            "session_flows": flows.flows,
        })),
    })
}

fn node(
    message: &LangflowMessage,
    previous: Option<&LangflowMessage>,
    details: &TreeRequest,
) -> TreeNode {
    TreeNode {
        id: message.id.clone(),
        parent: previous.map(|p| p.id.clone()),
        depth: 0,
        on_thread: true,
        line: one_line(&format!("{}: {}", message.sender, message.text), TEXT_WIDTH),
        group: None,
        extra: details.details(|| {
            json!({
                "timestamp": rfc3339_text(&message.timestamp),
                "sender": message.sender,
                "sender_name": message.sender_name,
                "category": message.category,
                "error": message.error,
                "context_id": message.context_id,
                "files": message.files,
            })
        }),
    }
}
