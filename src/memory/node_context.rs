//! Node-level memory of a chatflow's LLM nodes (reference §3): the design-A file in object
//! storage, design B's `outputs["context"]`, and the prompts a node actually sent
//! (`process_data["prompts"]`), each parsed into prompt messages.
//!
//! Pure and total: any bytes parse. What cannot be read becomes a per-item [`NodeProblem`] and
//! the rest of the context still shows.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::history::{PopRule, thread_workflow_run_ids};
use super::model::{Content, ContentPart, PromptMessage, Role, StoredMessage, ToolCall};
use super::thread::ExtractionMode;

/// Something in a node's memory that cannot be read. `what` names the document (a file path or
/// an execution's column), so a report line stands on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum NodeProblem {
    #[error("{what} is not JSON: {error}")]
    NotJson { what: String, error: String },
    #[error("{what} is not a JSON object")]
    NotAnObject { what: String },
    #[error("{what}: `{key}` is {found}, not a list")]
    NotAList {
        what: String,
        key: String,
        found: String,
    },
    #[error("{what}: item {index} has an unknown role `{role}`")]
    UnknownRole {
        what: String,
        index: usize,
        role: String,
    },
    #[error("{what}: item {index} cannot be read: {error}")]
    BadItem {
        what: String,
        index: usize,
        error: String,
    },
    #[error("{what} holds neither `turns` nor `messages`")]
    UnknownLayout { what: String },
    #[error("{what}: the turn of run {run_id} cannot be read: {error}")]
    BadTurn {
        what: String,
        run_id: String,
        error: String,
    },
    #[error("{what}: the parent links of entry {message_id} form a cycle")]
    ParentCycle { what: String, message_id: String },
    #[error(
        "the offloaded {column} of execution {execution_id} are missing: upload {file_id} ({location})"
    )]
    MissingOffloadFile {
        execution_id: String,
        column: String,
        file_id: String,
        location: String,
    },
    #[error("cannot read {path}: {error}")]
    UnreadableFile { path: String, error: String },
    #[error("message {message_id} points to workflow run {run_id}, which does not exist")]
    DanglingRun { message_id: String, run_id: String },
}

/// One message of a node's context, with where it came from: a workflow run id (design-A
/// turns), a message id (the seed's `messages` list) or a list position (`context[3]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeMessage {
    pub message: PromptMessage,
    pub source: String,
}

/// Messages parsed from one document, and what could not be parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedMessages {
    /// Whether the document holds the list at all: `context` is absent on Dify main, where
    /// node memory does not exist.
    pub found: bool,
    pub messages: Vec<NodeMessage>,
    pub problems: Vec<NodeProblem>,
}

impl ParsedMessages {
    fn failed(problem: NodeProblem) -> Self {
        ParsedMessages {
            found: false,
            messages: Vec::new(),
            problems: vec![problem],
        }
    }

    pub fn prompt_messages(&self) -> Vec<PromptMessage> {
        self.messages.iter().map(|m| m.message.clone()).collect()
    }
}

/// One turn of the conversation's thread that ran the workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadTurn {
    pub message_id: String,
    pub workflow_run_id: String,
}

/// The thread's turns oldest first, exactly as node memory derives them (reference §3.2):
/// [`thread_workflow_run_ids`], each run id paired with its message.
pub fn thread_turns(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Vec<ThreadTurn> {
    let message_of_run: HashMap<&str, &str> = rows_newest_first
        .iter()
        .filter_map(|row| Some((row.workflow_run_id.as_deref()?, row.id.as_str())))
        .collect();
    thread_workflow_run_ids(rows_newest_first, extraction, pop_rule)
        .into_iter()
        .map(|run_id| ThreadTurn {
            message_id: message_of_run
                .get(run_id)
                .copied()
                .unwrap_or_default()
                .to_owned(),
            workflow_run_id: run_id.to_owned(),
        })
        .collect()
}

fn parse_json(bytes: &[u8], what: &str) -> Result<Value, NodeProblem> {
    serde_json::from_slice(bytes).map_err(|error| NodeProblem::NotJson {
        what: what.to_owned(),
        error: error.to_string(),
    })
}

fn as_object<'v>(value: &'v Value, what: &str) -> Result<&'v Map<String, Value>, NodeProblem> {
    value.as_object().ok_or_else(|| NodeProblem::NotAnObject {
        what: what.to_owned(),
    })
}

/// A JSON value's kind, for messages such as "`context` is a string, not a list".
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The list under `key`: `Ok(None)` when the key is absent.
fn list_at<'v>(
    object: &'v Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<&'v Vec<Value>>, NodeProblem> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(NodeProblem::NotAList {
            what: what.to_owned(),
            key: key.to_owned(),
            found: kind_of(other).to_owned(),
        }),
    }
}

/// An optional string field: absent and null read as `None`.
fn opt_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` is {}, not a string", kind_of(other))),
    }
}

fn string_or_empty(object: &Map<String, Value>, key: &str) -> Result<String, String> {
    Ok(opt_string(object, key)?.unwrap_or_default())
}

/// Per-item failures: a role Dify does not know, or anything else wrong with the item.
enum ItemError {
    UnknownRole(String),
    Bad(String),
}

impl ItemError {
    fn into_problem(self, what: &str, index: usize) -> NodeProblem {
        let what = what.to_owned();
        match self {
            ItemError::UnknownRole(role) => NodeProblem::UnknownRole { what, index, role },
            ItemError::Bad(error) => NodeProblem::BadItem { what, index, error },
        }
    }
}

impl From<String> for ItemError {
    fn from(error: String) -> Self {
        ItemError::Bad(error)
    }
}

fn role_of(object: &Map<String, Value>) -> Result<Role, ItemError> {
    match object.get("role") {
        Some(Value::String(role)) => {
            Role::parse(role).ok_or_else(|| ItemError::UnknownRole(role.clone()))
        }
        Some(other) => Err(ItemError::Bad(format!(
            "`role` is {}, not a string",
            kind_of(other)
        ))),
        None => Err(ItemError::Bad("no `role`".to_owned())),
    }
}

fn item_object(item: &Value) -> Result<&Map<String, Value>, ItemError> {
    item.as_object()
        .ok_or_else(|| ItemError::Bad(format!("{}, not an object", kind_of(item))))
}

/// A file part labelled by what an operator recognises it by. `kind` is Dify's file or content
/// type; `custom` and unknown kinds are sent as documents.
fn file_part(kind: &str, source: String) -> ContentPart {
    match kind {
        "image" => ContentPart::Image { source },
        "audio" => ContentPart::Audio { source },
        "video" => ContentPart::Video { source },
        _ => ContentPart::Document { source },
    }
}

/// The first non-empty string among `keys`.
fn first_label(object: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .filter_map(|key| object.get(*key)?.as_str())
        .find(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A node-memory file reference `{type, transfer_method, upload_file_id?, tool_file_id?, url?}`.
fn file_reference(value: &Value) -> Result<ContentPart, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("a file reference is {}", kind_of(value)))?;
    let kind = opt_string(object, "type")?.unwrap_or_default();
    let source = first_label(
        object,
        &[
            "filename",
            "upload_file_id",
            "tool_file_id",
            "url",
            "remote_url",
        ],
    )
    .unwrap_or_else(|| "file without a reference".to_owned());
    Ok(file_part(&kind, source))
}

fn file_references(object: &Map<String, Value>, key: &str) -> Result<Vec<ContentPart>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(files)) => files.iter().map(file_reference).collect(),
        Some(other) => Err(format!("`{key}` is {}, not a list", kind_of(other))),
    }
}

/// Files first, then the text: Dify's current order. Plain text when there are no files.
fn files_then_text(mut files: Vec<ContentPart>, text: String) -> Content {
    if files.is_empty() {
        return Content::Text(text);
    }
    files.push(ContentPart::Text { text });
    Content::Parts(files)
}

/// A pydantic dump of a content part: `{type: "text", data}` or a multimodal part whose data
/// was blanked (`file_ref`) or truncated, labelled by file name, reference or URL.
fn content_part(value: &Value) -> Result<ContentPart, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("a content part is {}", kind_of(value)))?;
    let kind = opt_string(object, "type")?.ok_or("a content part has no `type`")?;
    if kind == "text" {
        let text = match opt_string(object, "data")? {
            Some(text) => text,
            None => string_or_empty(object, "text")?,
        };
        return Ok(ContentPart::Text { text });
    }
    let source = first_label(object, &["filename", "file_ref", "url"])
        .unwrap_or_else(|| format!("{kind} data (blanked)"));
    Ok(file_part(&kind, source))
}

fn content(value: Option<&Value>) -> Result<Content, String> {
    match value {
        None | Some(Value::Null) => Ok(Content::default()),
        Some(Value::String(text)) => Ok(Content::Text(text.clone())),
        Some(Value::Array(parts)) => Ok(Content::Parts(
            parts.iter().map(content_part).collect::<Result<_, _>>()?,
        )),
        Some(other) => Err(format!(
            "`content` is {}, not a string or a list",
            kind_of(other)
        )),
    }
}

/// Arguments as the model produced them: JSON text, or an object some writers store parsed.
fn arguments_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// `[{id, type: "function", function: {name, arguments}}]`, or the flat `{id, name, arguments}`.
fn tool_calls(object: &Map<String, Value>) -> Result<Vec<ToolCall>, String> {
    let calls = match object.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(calls)) => calls,
        Some(other) => return Err(format!("`tool_calls` is {}, not a list", kind_of(other))),
    };
    calls
        .iter()
        .map(|call| {
            let call = call
                .as_object()
                .ok_or_else(|| format!("a tool call is {}", kind_of(call)))?;
            let function = match call.get("function") {
                Some(Value::Object(function)) => function,
                _ => call,
            };
            Ok(ToolCall {
                id: string_or_empty(call, "id")?,
                name: string_or_empty(function, "name")?,
                arguments: arguments_text(function.get("arguments")),
            })
        })
        .collect()
}

/// One item of `outputs["context"]`: a pydantic dump of a PromptMessage.
fn context_message(item: &Value) -> Result<PromptMessage, ItemError> {
    let object = item_object(item)?;
    let role = role_of(object)?;
    Ok(PromptMessage {
        role,
        content: content(object.get("content"))?,
        name: opt_string(object, "name")?,
        tool_calls: tool_calls(object)?,
        tool_call_id: opt_string(object, "tool_call_id")?,
    })
}

/// One item of `process_data["prompts"]` (PromptMessageUtil): `{role, text, files[],
/// tool_calls?}`, image and audio data saved truncated.
fn prompt_message(item: &Value) -> Result<PromptMessage, ItemError> {
    let object = item_object(item)?;
    let role = role_of(object)?;
    let files = match object.get("files") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(files)) => files
            .iter()
            .map(|file| {
                let file = file
                    .as_object()
                    .ok_or_else(|| format!("a file is {}", kind_of(file)))?;
                let kind = opt_string(file, "type")?.unwrap_or_default();
                Ok(file_part(&kind, format!("{kind} data (truncated)")))
            })
            .collect::<Result<_, String>>()?,
        Some(other) => {
            return Err(ItemError::Bad(format!(
                "`files` is {}, not a list",
                kind_of(other)
            )));
        }
    };
    let mut message = PromptMessage::new(
        role,
        files_then_text(files, string_or_empty(object, "text")?),
    );
    message.tool_calls = tool_calls(object)?;
    Ok(message)
}

/// Parses every item of `items`, keeping the readable ones and a problem per unreadable one.
fn parse_items(
    items: &[Value],
    what: &str,
    parse: impl Fn(&Value) -> Result<PromptMessage, ItemError>,
    source: impl Fn(usize) -> String,
) -> ParsedMessages {
    let mut parsed = ParsedMessages {
        found: true,
        ..ParsedMessages::default()
    };
    for (index, item) in items.iter().enumerate() {
        match parse(item) {
            Ok(message) => parsed.messages.push(NodeMessage {
                message,
                source: source(index),
            }),
            Err(error) => parsed.problems.push(error.into_problem(what, index)),
        }
    }
    parsed
}

/// Design B (reference §3.3, §3.4): the `context` list of an LLM execution's outputs, and the
/// reply (`text`) the node produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OutputsContext {
    pub reply: Option<String>,
    pub context: ParsedMessages,
}

/// Parses an execution's `outputs` column (or its offloaded full copy). `what` names it in
/// problems.
pub fn parse_outputs(bytes: &[u8], what: &str) -> OutputsContext {
    let value = match parse_json(bytes, what) {
        Ok(value) => value,
        Err(problem) => {
            return OutputsContext {
                reply: None,
                context: ParsedMessages::failed(problem),
            };
        }
    };
    let object = match as_object(&value, what) {
        Ok(object) => object,
        Err(problem) => {
            return OutputsContext {
                reply: None,
                context: ParsedMessages::failed(problem),
            };
        }
    };
    let reply = object
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let context = match list_at(object, "context", what) {
        Ok(Some(items)) => parse_items(items, what, context_message, |i| format!("context[{i}]")),
        Ok(None) => ParsedMessages::default(),
        Err(problem) => ParsedMessages::failed(problem),
    };
    OutputsContext { reply, context }
}

/// What the node sent: `process_data["prompts"]`, system prompt included.
pub fn parse_prompts(bytes: &[u8], what: &str) -> ParsedMessages {
    let value = match parse_json(bytes, what) {
        Ok(value) => value,
        Err(problem) => return ParsedMessages::failed(problem),
    };
    let object = match as_object(&value, what) {
        Ok(object) => object,
        Err(problem) => return ParsedMessages::failed(problem),
    };
    match list_at(object, "prompts", what) {
        Ok(Some(items)) => parse_items(items, what, prompt_message, |i| format!("prompts[{i}]")),
        Ok(None) => ParsedMessages::default(),
        Err(problem) => ParsedMessages::failed(problem),
    }
}

/// One design-A turn: the user's and the assistant's message of one workflow run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryTurn {
    pub user: Content,
    pub assistant: Content,
}

/// One entry of the seed's `messages` list (version 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryEntry {
    pub message_id: Option<String>,
    pub parent_message_id: Option<String>,
    pub message: PromptMessage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layout", rename_all = "snake_case")]
pub enum MemoryLayout {
    /// Design A (commit `88248ad2`): turns keyed by workflow run id.
    Turns { turns: BTreeMap<String, MemoryTurn> },
    /// The seed's shape: entries linked by `parent_message_id`.
    Messages { entries: Vec<MemoryEntry> },
    /// Nothing readable.
    Unreadable,
}

/// A node memory file `node_memory/{app_id}/{conversation_id}/{node_id}.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryFile {
    pub version: Option<i64>,
    pub layout: MemoryLayout,
    pub problems: Vec<NodeProblem>,
}

impl MemoryFile {
    fn unreadable(problem: NodeProblem) -> Self {
        MemoryFile {
            version: None,
            layout: MemoryLayout::Unreadable,
            problems: vec![problem],
        }
    }
}

fn memory_turn(value: &Value) -> Result<MemoryTurn, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("{}, not an object", kind_of(value)))?;
    Ok(MemoryTurn {
        user: files_then_text(
            file_references(object, "user_files")?,
            string_or_empty(object, "user_content")?,
        ),
        assistant: files_then_text(
            file_references(object, "assistant_files")?,
            string_or_empty(object, "assistant_content")?,
        ),
    })
}

fn memory_entry(item: &Value) -> Result<MemoryEntry, ItemError> {
    let object = item_object(item)?;
    let role = role_of(object)?;
    let text = string_or_empty(object, "content")?;
    Ok(MemoryEntry {
        message_id: opt_string(object, "message_id")?,
        parent_message_id: opt_string(object, "parent_message_id")?.filter(|p| !p.is_empty()),
        message: PromptMessage::new(
            role,
            files_then_text(file_references(object, "files")?, text),
        ),
    })
}

/// Parses a node memory file of either shape. `what` names it (its path) in problems.
pub fn parse_memory_file(bytes: &[u8], what: &str) -> MemoryFile {
    let value = match parse_json(bytes, what) {
        Ok(value) => value,
        Err(problem) => return MemoryFile::unreadable(problem),
    };
    let object = match as_object(&value, what) {
        Ok(object) => object,
        Err(problem) => return MemoryFile::unreadable(problem),
    };
    let version = object.get("version").and_then(Value::as_i64);
    let mut problems = Vec::new();
    let layout = if let Some(turns) = object.get("turns") {
        match turns.as_object() {
            Some(turns) => MemoryLayout::Turns {
                turns: turns
                    .iter()
                    .filter_map(|(run_id, turn)| match memory_turn(turn) {
                        Ok(turn) => Some((run_id.clone(), turn)),
                        Err(error) => {
                            problems.push(NodeProblem::BadTurn {
                                what: what.to_owned(),
                                run_id: run_id.clone(),
                                error,
                            });
                            None
                        }
                    })
                    .collect(),
            },
            None => {
                problems.push(NodeProblem::BadItem {
                    what: what.to_owned(),
                    index: 0,
                    error: format!("`turns` is {}, not an object", kind_of(turns)),
                });
                MemoryLayout::Unreadable
            }
        }
    } else {
        match list_at(object, "messages", what) {
            Ok(Some(items)) => {
                let mut entries = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    match memory_entry(item) {
                        Ok(entry) => entries.push(entry),
                        Err(error) => problems.push(error.into_problem(what, index)),
                    }
                }
                MemoryLayout::Messages { entries }
            }
            Ok(None) => {
                problems.push(NodeProblem::UnknownLayout {
                    what: what.to_owned(),
                });
                MemoryLayout::Unreadable
            }
            Err(problem) => {
                problems.push(problem);
                MemoryLayout::Unreadable
            }
        }
    };
    MemoryFile {
        version,
        layout,
        problems,
    }
}

/// The user's and the assistant's text of one turn, as the A/B comparison sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnText {
    pub user: String,
    pub assistant: String,
}

/// Design A's history at the end of `thread` (reference §3.2 and the seed's thread support).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileHistory {
    pub messages: Vec<NodeMessage>,
    /// Thread runs with no turn in the file: Dify skips them silently.
    pub missing_runs: Vec<String>,
    pub problems: Vec<NodeProblem>,
}

impl MemoryFile {
    /// The history the file gives for `thread` (oldest first). Turns: one user and one
    /// assistant message per thread run that has a turn; turns of other runs are not history.
    /// Entries: the parent chain from the newest thread message's entries up to the root.
    pub fn history(&self, thread: &[ThreadTurn], what: &str) -> FileHistory {
        let mut history = FileHistory::default();
        match &self.layout {
            MemoryLayout::Unreadable => {}
            MemoryLayout::Turns { turns } => {
                for turn in thread {
                    let run_id = &turn.workflow_run_id;
                    let Some(stored) = turns.get(run_id) else {
                        history.missing_runs.push(run_id.clone());
                        continue;
                    };
                    for (role, content) in [
                        (Role::User, &stored.user),
                        (Role::Assistant, &stored.assistant),
                    ] {
                        history.messages.push(NodeMessage {
                            message: PromptMessage::new(role, content.clone()),
                            source: run_id.clone(),
                        });
                    }
                }
            }
            MemoryLayout::Messages { entries } => {
                let chain = entry_chain(entries, thread, what);
                let on_chain: HashSet<&str> = chain
                    .indices
                    .iter()
                    .filter_map(|&i| entries[i].message_id.as_deref())
                    .collect();
                history.missing_runs = thread
                    .iter()
                    .filter(|turn| !on_chain.contains(turn.message_id.as_str()))
                    .map(|turn| turn.workflow_run_id.clone())
                    .collect();
                history.messages = chain
                    .indices
                    .iter()
                    .map(|&i| NodeMessage {
                        message: entries[i].message.clone(),
                        source: entries[i].message_id.clone().unwrap_or_default(),
                    })
                    .collect();
                history.problems.extend(chain.problem);
            }
        }
        history
    }

    /// The user and assistant text the file holds for one turn, if it holds the turn.
    pub fn turn_text(&self, turn: &ThreadTurn) -> Option<TurnText> {
        match &self.layout {
            MemoryLayout::Unreadable => None,
            MemoryLayout::Turns { turns } => {
                let stored = turns.get(&turn.workflow_run_id)?;
                Some(TurnText {
                    user: stored.user.text().into_owned(),
                    assistant: stored.assistant.text().into_owned(),
                })
            }
            MemoryLayout::Messages { entries } => {
                let user = entries.iter().find(|e| {
                    e.message.role == Role::User
                        && e.message_id.as_deref() == Some(&turn.message_id)
                })?;
                let assistant = entries.iter().find(|e| {
                    e.message.role == Role::Assistant
                        && e.parent_message_id.as_deref() == Some(&turn.message_id)
                });
                Some(TurnText {
                    user: user.message.content.text().into_owned(),
                    assistant: assistant
                        .map(|e| e.message.content.text().into_owned())
                        .unwrap_or_default(),
                })
            }
        }
    }
}

struct Chain {
    /// Entry indices, oldest first.
    indices: Vec<usize>,
    problem: Option<NodeProblem>,
}

/// Walks the entries' parent links from the newest thread turn that has an entry: its
/// assistant reply when there is one, else its user entry.
fn entry_chain(entries: &[MemoryEntry], thread: &[ThreadTurn], what: &str) -> Chain {
    let by_id: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((e.message_id.as_deref()?, i)))
        .collect();
    let reply_to: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.message.role == Role::Assistant)
        .filter_map(|(i, e)| Some((e.parent_message_id.as_deref()?, i)))
        .collect();
    let start = thread.iter().rev().find_map(|turn| {
        let id = turn.message_id.as_str();
        by_id
            .contains_key(id)
            .then(|| reply_to.get(id).or(by_id.get(id)))?
    });
    let mut indices = Vec::new();
    let mut seen = HashSet::new();
    let mut problem = None;
    let mut current = start.copied();
    while let Some(index) = current {
        if !seen.insert(index) {
            problem = Some(NodeProblem::ParentCycle {
                what: what.to_owned(),
                message_id: entries[index].message_id.clone().unwrap_or_default(),
            });
            break;
        }
        indices.push(index);
        current = entries[index]
            .parent_message_id
            .as_deref()
            .and_then(|parent| by_id.get(parent).copied());
    }
    indices.reverse();
    Chain { indices, problem }
}

/// The turn as design B's context of that run holds it: the last user message and the reply.
pub fn outputs_turn_text(outputs: &OutputsContext) -> Option<TurnText> {
    let messages = &outputs.context.messages;
    let user = messages
        .iter()
        .rev()
        .find(|m| m.message.role == Role::User)?;
    let assistant = match &outputs.reply {
        Some(reply) => reply.clone(),
        None => messages
            .iter()
            .rev()
            .find(|m| m.message.role == Role::Assistant)
            .map(|m| m.message.content.text().into_owned())
            .unwrap_or_default(),
    };
    Some(TurnText {
        user: user.message.content.text().into_owned(),
        assistant,
    })
}

/// Where designs A and B disagree about one turn of one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "disagreement", rename_all = "snake_case")]
pub enum Disagreement {
    /// The run's context has the turn; the node memory file does not.
    MissingInFile,
    /// The file has the turn; the run has no readable context.
    MissingInOutputs,
    DifferentUser {
        file: String,
        outputs: String,
    },
    DifferentAssistant {
        file: String,
        outputs: String,
    },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::MissingInFile => f.write_str("turn missing from the node memory file"),
            Disagreement::MissingInOutputs => f.write_str("turn missing from outputs.context"),
            Disagreement::DifferentUser { .. } => f.write_str("user message differs"),
            Disagreement::DifferentAssistant { .. } => f.write_str("assistant message differs"),
        }
    }
}

/// Compares one turn as the file and the run's context hold it.
pub fn compare_turn(file: Option<&TurnText>, outputs: Option<&TurnText>) -> Option<Disagreement> {
    match (file, outputs) {
        (None, None) => None,
        (None, Some(_)) => Some(Disagreement::MissingInFile),
        (Some(_), None) => Some(Disagreement::MissingInOutputs),
        (Some(file), Some(outputs)) if file.user != outputs.user => {
            Some(Disagreement::DifferentUser {
                file: file.user.clone(),
                outputs: outputs.user.clone(),
            })
        }
        (Some(file), Some(outputs)) if file.assistant != outputs.assistant => {
            Some(Disagreement::DifferentAssistant {
                file: file.assistant.clone(),
                outputs: outputs.assistant.clone(),
            })
        }
        (Some(_), Some(_)) => None,
    }
}

#[cfg(test)]
mod tests;
