//! What ADK's contents builder carries from one step to the next: an event, or what it made of
//! one (another agent's event quoted, a compaction summary, tool responses merged), with the
//! stored events it stands for. Pure.

use serde_json::{Value as Json, json};

use super::event::{Event, parts_of};

/// What an item is to the agent whose contents are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// The agent's own event, or the user's, as stored.
    Own,
    /// Another agent's event, quoted as user context.
    Quoted,
    /// A compaction's summary, standing for the events it compacted.
    Summary,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The stored events it stands for, by their index in the session.
    pub from: Vec<usize>,
    pub author: String,
    pub invocation_id: String,
    pub timestamp: f64,
    pub content: Option<Json>,
    pub made: Made,
    pub compaction: bool,
    /// Whether its actions ask for a tool confirmation or credentials.
    pub asks: bool,
    pub long_running: Vec<String>,
    pub live: bool,
    /// Its audio transcriptions' text: the user's, the model's.
    pub heard: Option<String>,
    pub spoken: Option<String>,
    /// The event's own quoted forms of its parts (see `Event::quoted`), while its parts are the
    /// event's.
    pub quoted: Vec<Option<String>>,
}

fn non_empty(value: Option<&Json>) -> bool {
    match value {
        None | Some(Json::Null) => false,
        Some(Json::Object(map)) => !map.is_empty(),
        Some(_) => true,
    }
}

impl Item {
    pub fn of(event: &Event) -> Item {
        Item {
            from: vec![event.index],
            author: event.author.clone(),
            invocation_id: event.invocation_id.clone(),
            timestamp: event.timestamp,
            content: event.content.clone(),
            made: Made::Own,
            compaction: event.action("compaction").is_some(),
            asks: non_empty(event.action("requested_tool_confirmations"))
                || non_empty(event.action("requested_auth_configs")),
            long_running: event.long_running_tool_ids.clone(),
            live: event.live_session_id.is_some(),
            heard: event.heard.clone().filter(|t| !t.is_empty()),
            spoken: event.spoken.clone().filter(|t| !t.is_empty()),
            quoted: event.quoted.clone(),
        }
    }

    pub fn parts(&self) -> &[Json] {
        self.content
            .as_ref()
            .and_then(|c| c.get("parts"))
            .and_then(Json::as_array)
            .map_or(&[], Vec::as_slice)
    }

    pub fn role(&self) -> Option<&str> {
        self.content
            .as_ref()
            .and_then(|c| c.get("role"))
            .and_then(Json::as_str)
    }

    pub fn calls(&self) -> Vec<(Option<&str>, Option<&str>)> {
        parts_of(self.parts(), "function_call")
    }

    pub fn responses(&self) -> Vec<(Option<&str>, Option<&str>)> {
        parts_of(self.parts(), "function_response")
    }

    pub fn has_calls(&self) -> bool {
        !self.calls().is_empty()
    }

    pub fn has_responses(&self) -> bool {
        !self.responses().is_empty()
    }

    /// The item with `parts` instead of its own.
    pub fn with_parts(&self, parts: Vec<Json>) -> Item {
        let mut item = self.clone();
        item.quoted = Vec::new();
        match item.content.as_mut() {
            Some(Json::Object(content)) => {
                content.insert("parts".to_owned(), Json::Array(parts));
            }
            _ => item.content = Some(json!({ "parts": parts })),
        }
        item
    }
}

/// The part's function call or response, when it has one.
pub fn call_of(part: &Json) -> Option<&Json> {
    part.get("function_call").filter(|c| !c.is_null())
}

pub fn response_of(part: &Json) -> Option<&Json> {
    part.get("function_response").filter(|c| !c.is_null())
}

/// A field as Python's truthiness reads an optional string: absent and empty are false.
pub fn truthy_text<'a>(value: &'a Json, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Json::as_str)
        .filter(|t| !t.is_empty())
}
