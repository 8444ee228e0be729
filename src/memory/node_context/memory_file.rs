//! Design A: the node memory file in object storage, in either layout (`turns` keyed by
//! workflow run, or the seed's `messages` list linked by parent ids), and the history it gives
//! along a thread.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::items::{
    ItemError, as_object, file_references, files_then_text, item_object, list_at, opt_string,
    parse_json, role_of, string_or_empty,
};
use super::parsed::{NodeMessage, NodeProblem};
use super::turns::ThreadTurn;
use crate::memory::model::{Content, PromptMessage, Role};
use crate::memory::wire::kind_of;

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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::memory::model::{Content, ContentPart, Role};
    use crate::memory::node_context::fixtures::{bytes, texts};
    use crate::memory::node_context::turns::turn;

    fn turns_file() -> MemoryFile {
        let file = json!({"version": 1, "turns": {
            "run-1": {"user_content": "q1", "user_files": [
                {"type": "image", "transfer_method": "local_file", "upload_file_id": "up-1"}],
                "assistant_content": "a1", "assistant_files": []},
            "run-2": {"user_content": "q2", "assistant_content": "a2"},
            "run-sibling": {"user_content": "regenerated away", "assistant_content": "x"},
            "run-bad": "not a turn",
        }});
        parse_memory_file(&bytes(file), "a.json")
    }

    #[test]
    fn design_a_turns_follow_the_thread_only() {
        let file = turns_file();
        assert_eq!(file.version, Some(1));
        assert!(
            matches!(&file.problems[..], [NodeProblem::BadTurn { run_id, .. }] if run_id == "run-bad")
        );
        let thread = [
            turn("m1", "run-1"),
            turn("m3", "run-3"),
            turn("m2", "run-2"),
        ];
        let history = file.history(&thread, "a.json");
        assert_eq!(
            texts(&history.messages),
            [
                (Role::User, "q1".into()),
                (Role::Assistant, "a1".into()),
                (Role::User, "q2".into()),
                (Role::Assistant, "a2".into()),
            ]
        );
        assert!(matches!(
            &history.messages[0].message.content,
            Content::Parts(parts) if parts[0] == ContentPart::Image { source: "up-1".into() }
        ));
        assert_eq!(history.missing_runs, ["run-3"]);
        assert_eq!(
            file.turn_text(&thread[2]),
            Some(TurnText {
                user: "q2".into(),
                assistant: "a2".into()
            })
        );
        assert_eq!(file.turn_text(&thread[1]), None);
    }

    fn entry(id: &str, parent: Option<&str>, role: &str, content: &str) -> Value {
        json!({"message_id": id, "parent_message_id": parent, "role": role, "content": content,
               "files": [], "token_count": 3, "created_at": "2026-01-07T10:00:00Z"})
    }

    #[test]
    fn seed_messages_follow_the_parent_chain_of_the_thread() {
        // m2 was regenerated as m2b; the thread is m1, m2b, m3.
        let file = json!({"version": 1, "messages": [
            entry("m1", None, "user", "q1"),
            entry("r1", Some("m1"), "assistant", "a1"),
            entry("m2", Some("r1"), "user", "q2"),
            entry("r2", Some("m2"), "assistant", "a2"),
            entry("m2b", Some("r1"), "user", "q2 again"),
            entry("r2b", Some("m2b"), "assistant", "a2b"),
            entry("m3", Some("r2b"), "user", "q3"),
            entry("r3", Some("m3"), "assistant", "a3"),
            entry("x", None, "robot", "?"),
        ]});
        let file = parse_memory_file(&bytes(file), "b.json");
        assert!(matches!(
            &file.problems[..],
            [NodeProblem::UnknownRole { index: 8, .. }]
        ));
        let thread = [
            turn("m1", "run-1"),
            turn("m2b", "run-2b"),
            turn("m3", "run-3"),
        ];
        let history = file.history(&thread, "b.json");
        let contents: Vec<String> = texts(&history.messages)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(contents, ["q1", "a1", "q2 again", "a2b", "q3", "a3"]);
        assert!(history.missing_runs.is_empty());
        assert_eq!(
            file.turn_text(&thread[1]).map(|t| t.assistant),
            Some("a2b".to_owned())
        );
        // At an older leaf the newer entries are not history.
        let earlier = file.history(&thread[..2], "b.json");
        assert_eq!(earlier.messages.len(), 4);
    }

    #[test]
    fn seed_message_cycles_end_the_walk_with_a_problem() {
        let file = json!({"messages": [
            entry("m1", Some("r1"), "user", "q1"),
            entry("r1", Some("m1"), "assistant", "a1"),
        ]});
        let file = parse_memory_file(&bytes(file), "c.json");
        let history = file.history(&[turn("m1", "run-1")], "c.json");
        assert_eq!(history.messages.len(), 2);
        assert!(matches!(
            &history.problems[..],
            [NodeProblem::ParentCycle { .. }]
        ));
    }

    #[test]
    fn memory_file_document_failures() {
        type Expected = fn(&NodeProblem) -> bool;
        let cases: [(&[u8], Expected); 4] = [
            (b"\xff\xfe", |p| matches!(p, NodeProblem::NotJson { .. })),
            (b"\"text\"", |p| {
                matches!(p, NodeProblem::NotAnObject { .. })
            }),
            (b"{\"version\": 1}", |p| {
                matches!(p, NodeProblem::UnknownLayout { .. })
            }),
            (b"{\"messages\": 3}", |p| {
                matches!(p, NodeProblem::NotAList { .. })
            }),
        ];
        for (input, expected) in cases {
            let file = parse_memory_file(input, "f");
            assert_eq!(file.layout, MemoryLayout::Unreadable);
            assert!(expected(&file.problems[0]), "{:?}", file.problems);
            assert!(file.history(&[turn("m", "r")], "f").messages.is_empty());
        }
    }
}
