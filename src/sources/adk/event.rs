//! One stored ADK event as the session services load it: `event_data` (`Event.model_dump(
//! exclude_none=True, mode="json")`) on the JSON layouts, or the separate columns of the old
//! database schema (whose pickled `actions` memscope never loads). Pure: no IO.

use serde_json::{Map, Value as Json};

use super::pyrepr::{self, Py};

/// Function-call names ADK keeps out of every model's contents: its framework's own calls, the
/// credential request and the tool confirmation (`utils/_function_call_names.py`).
pub const FRAMEWORK_CALLS: [&str; 3] = [
    "adk_framework",
    "adk_request_credential",
    "adk_request_confirmation",
];

/// The prefix of the call ids ADK makes up for a model that gave none; stripped on the way to a
/// Gemini model.
pub const CLIENT_ID_PREFIX: &str = "adk-";

/// An event as ADK holds it after loading.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its position in the session as loaded (oldest first).
    pub index: usize,
    pub id: String,
    pub invocation_id: String,
    pub author: String,
    pub branch: Option<String>,
    pub timestamp: f64,
    /// `{role, parts}`, as stored.
    pub content: Option<Json>,
    /// `actions`, as stored (`{}` when it was a pickle memscope does not load).
    pub actions: Map<String, Json>,
    pub isolation_scope: Option<String>,
    pub node_path: Option<String>,
    pub long_running_tool_ids: Vec<String>,
    pub usage: Option<Json>,
    pub live_session_id: Option<String>,
    pub error_code: Option<String>,
    pub transcription: bool,
    /// The text of its audio transcriptions, the user's (`input_transcription`) and the
    /// model's (`output_transcription`), in a live session.
    pub heard: Option<String>,
    pub spoken: Option<String>,
    /// What ADK prints of each part when another agent's event is quoted: a call's arguments
    /// (`str` of them sorted) or a response's result (`str` of it), from the stored text, whose
    /// dicts keep their stored order; `None` for other parts.
    pub quoted: Vec<Option<String>>,
}

fn text(value: &Json, key: &str) -> Option<String> {
    value.get(key).and_then(Json::as_str).map(str::to_owned)
}

impl Event {
    /// `event_data` decoded; `None` when it is not an event object ADK could load.
    pub fn decode(index: usize, stored: &str, fallback_timestamp: f64) -> Option<Event> {
        let data: Json = serde_json::from_str(stored).ok()?;
        let ordered: Py = serde_json::from_str(stored).ok()?;
        let data = &data;
        let fields = data.as_object()?;
        let quoted = match ordered.get("content").and_then(|c| c.get("parts")) {
            Some(Py::List(parts)) => parts
                .iter()
                .map(|part| {
                    if let Some(call) = part.get("function_call").filter(|c| **c != Py::None) {
                        Some(pyrepr::sorted_args(call.get("args")))
                    } else {
                        part.get("function_response")
                            .filter(|r| **r != Py::None)
                            .map(|r| {
                                r.get("response")
                                    .map_or_else(|| "None".to_owned(), pyrepr::repr)
                            })
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        let content = match fields.get("content") {
            None | Some(Json::Null) => None,
            Some(content @ Json::Object(_)) => Some(content.clone()),
            Some(_) => return None,
        };
        let actions = match fields.get("actions") {
            None | Some(Json::Null) => Map::new(),
            Some(Json::Object(actions)) => actions.clone(),
            Some(_) => return None,
        };
        Some(Event {
            index,
            id: text(data, "id").unwrap_or_default(),
            invocation_id: text(data, "invocation_id").unwrap_or_default(),
            author: text(data, "author")?,
            branch: text(data, "branch"),
            timestamp: data
                .get("timestamp")
                .and_then(Json::as_f64)
                .unwrap_or(fallback_timestamp),
            content,
            actions,
            isolation_scope: text(data, "isolation_scope"),
            node_path: data.get("node_info").and_then(|info| text(info, "path")),
            long_running_tool_ids: data
                .get("long_running_tool_ids")
                .and_then(Json::as_array)
                .map(|ids| {
                    ids.iter()
                        .filter_map(Json::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            usage: data.get("usage_metadata").filter(|u| !u.is_null()).cloned(),
            live_session_id: text(data, "live_session_id"),
            error_code: text(data, "error_code"),
            transcription: ["input_transcription", "output_transcription"]
                .iter()
                .any(|key| fields.get(*key).is_some_and(|t| !t.is_null())),
            heard: data
                .get("input_transcription")
                .and_then(|t| text(t, "text")),
            spoken: data
                .get("output_transcription")
                .and_then(|t| text(t, "text")),
            quoted,
        })
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

    /// The function calls of its parts: `(id, name)`.
    pub fn calls(&self) -> Vec<(Option<&str>, Option<&str>)> {
        parts_of(self.parts(), "function_call")
    }

    /// The function responses of its parts: `(id, name)`.
    pub fn responses(&self) -> Vec<(Option<&str>, Option<&str>)> {
        parts_of(self.parts(), "function_response")
    }

    pub fn action(&self, key: &str) -> Option<&Json> {
        self.actions.get(key).filter(|v| !v.is_null())
    }

    pub fn action_text(&self, key: &str) -> Option<&str> {
        self.action(key)
            .and_then(Json::as_str)
            .filter(|t| !t.is_empty())
    }

    /// `actions.compaction`, when it has a summary.
    pub fn compaction(&self) -> Option<&Json> {
        self.action("compaction")
            .filter(|c| c.get("compacted_content").is_some_and(|s| !s.is_null()))
    }

    pub fn transfer_to(&self) -> Option<&str> {
        self.action_text("transfer_to_agent")
    }

    pub fn rewinds_before(&self) -> Option<&str> {
        self.action_text("rewind_before_invocation_id")
    }

    /// `actions.state_delta`, when it changes anything.
    pub fn state_delta(&self) -> Option<&Map<String, Json>> {
        self.action("state_delta")
            .and_then(Json::as_object)
            .filter(|d| !d.is_empty())
    }
}

/// The `(id, name)` of every part holding `kind`.
pub fn parts_of<'a>(parts: &'a [Json], kind: &str) -> Vec<(Option<&'a str>, Option<&'a str>)> {
    parts
        .iter()
        .filter_map(|part| part.get(kind).filter(|v| !v.is_null()))
        .map(|call| {
            (
                call.get("id").and_then(Json::as_str),
                call.get("name").and_then(Json::as_str),
            )
        })
        .collect()
}

/// An event of the old database schema, as `event_data` text, from its JSON columns (each
/// given as stored text): its `actions` column is a Python pickle, which memscope never loads, so
/// the event carries no actions.
#[allow(clippy::too_many_arguments)]
pub fn from_columns(
    id: &str,
    invocation_id: &str,
    author: &str,
    branch: Option<&str>,
    timestamp: f64,
    content: Option<&str>,
    usage: Option<&str>,
    long_running: Option<&str>,
) -> String {
    let quote = |text: &str| Json::String(text.to_owned()).to_string();
    let mut data = format!(
        "{{\"id\": {}, \"invocation_id\": {}, \"author\": {}, \"timestamp\": {}, \"actions\": {{}}",
        quote(id),
        quote(invocation_id),
        quote(author),
        Json::from(timestamp)
    );
    if let Some(branch) = branch {
        data.push_str(&format!(", \"branch\": {}", quote(branch)));
    }
    for (key, value) in [
        ("content", content),
        ("usage_metadata", usage),
        ("long_running_tool_ids", long_running),
    ] {
        if let Some(value) =
            value.filter(|v| serde_json::from_str::<Json>(v).is_ok_and(|j| !j.is_null()))
        {
            data.push_str(&format!(", \"{key}\": {value}"));
        }
    }
    data.push('}');
    data
}
