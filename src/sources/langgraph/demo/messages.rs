//! LangChain's messages as LangGraph's serializer stores them: a pydantic v2 object of
//! `langchain_core.messages.*` (msgpack extension 5, rebuilt with `model_validate_json`) whose
//! fields come in pydantic's order, and `add_messages`, the reducer of `MessagesState`.

use crate::sources::langgraph::decode::Value;
use crate::sources::langgraph::decode::value::{Object, Rebuild};

/// One message the demo's graphs write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    System {
        id: String,
        text: String,
    },
    Human {
        id: String,
        text: String,
        name: Option<String>,
    },
    Ai {
        id: String,
        text: String,
        tool_calls: Vec<ToolCall>,
        /// `(input, output)` tokens a model reported.
        usage: Option<(i64, i64)>,
    },
    Tool {
        id: String,
        text: String,
        name: String,
        tool_call_id: String,
    },
    /// `RemoveMessage(id)`: `add_messages` deletes the message with that id.
    Remove {
        id: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// `(name, value)` pairs of the arguments.
    pub(crate) args: Vec<(String, Value)>,
}

fn s(text: &str) -> Value {
    Value::Str(text.to_owned())
}

fn optional(text: &Option<String>) -> Value {
    text.as_deref().map_or(Value::Null, s)
}

impl Message {
    pub(crate) fn id(&self) -> &str {
        match self {
            Message::System { id, .. }
            | Message::Human { id, .. }
            | Message::Ai { id, .. }
            | Message::Tool { id, .. }
            | Message::Remove { id } => id,
        }
    }

    /// The stored value: `[module, class, fields, "model_validate_json"]` as extension 5.
    pub(crate) fn value(&self) -> Value {
        let base = |text: &str, kind: &str, name: Value, id: &str| {
            vec![
                (s("content"), s(text)),
                (s("additional_kwargs"), Value::Map(Vec::new())),
                (s("response_metadata"), Value::Map(Vec::new())),
                (s("type"), s(kind)),
                (s("name"), name),
                (s("id"), s(id)),
            ]
        };
        let (module, class, fields) = match self {
            Message::System { id, text } => (
                "system",
                "SystemMessage",
                base(text, "system", Value::Null, id),
            ),
            Message::Human { id, text, name } => (
                "human",
                "HumanMessage",
                base(text, "human", optional(name), id),
            ),
            Message::Ai {
                id,
                text,
                tool_calls,
                usage,
            } => {
                let mut fields = base(text, "ai", Value::Null, id);
                if usage.is_some() {
                    fields[2].1 = Value::Map(vec![(s("model_name"), s("demo-model"))]);
                }
                let calls = tool_calls
                    .iter()
                    .map(|call| {
                        Value::Map(vec![
                            (s("name"), s(&call.name)),
                            (
                                s("args"),
                                Value::Map(
                                    call.args.iter().map(|(k, v)| (s(k), v.clone())).collect(),
                                ),
                            ),
                            (s("id"), s(&call.id)),
                            (s("type"), s("tool_call")),
                        ])
                    })
                    .collect();
                fields.push((s("tool_calls"), Value::List(calls)));
                fields.push((s("invalid_tool_calls"), Value::List(Vec::new())));
                let usage = usage.map_or(Value::Null, |(input, output)| {
                    Value::Map(vec![
                        (s("input_tokens"), Value::Int(input)),
                        (s("output_tokens"), Value::Int(output)),
                        (s("total_tokens"), Value::Int(input + output)),
                    ])
                });
                fields.push((s("usage_metadata"), usage));
                ("ai", "AIMessage", fields)
            }
            Message::Tool {
                id,
                text,
                name,
                tool_call_id,
            } => {
                let mut fields = base(text, "tool", s(name), id);
                fields.push((s("tool_call_id"), s(tool_call_id)));
                fields.push((s("artifact"), Value::Null));
                fields.push((s("status"), s("success")));
                ("tool", "ToolMessage", fields)
            }
            Message::Remove { id } => (
                "modifier",
                "RemoveMessage",
                base("", "remove", Value::Null, id),
            ),
        };
        Value::Object(Box::new(Object {
            rebuild: Rebuild::PydanticV2,
            module: format!("langchain_core.messages.{module}"),
            class: class.to_owned(),
            data: Value::Map(fields),
            method: Some("model_validate_json".to_owned()),
        }))
    }
}

/// `add_messages(left, right)`: a message whose id is already there replaces it, a
/// `RemoveMessage` deletes its id, any other is appended.
pub(crate) fn add_messages(state: &mut Vec<Message>, update: &[Message]) {
    for message in update {
        let at = state.iter().position(|m| m.id() == message.id());
        match (message, at) {
            (Message::Remove { .. }, Some(at)) => {
                state.remove(at);
            }
            (Message::Remove { .. }, None) => {}
            (_, Some(at)) => state[at] = message.clone(),
            (_, None) => state.push(message.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(id: &str) -> Message {
        Message::Human {
            id: id.into(),
            text: id.into(),
            name: None,
        }
    }

    #[test]
    fn add_messages_appends_replaces_and_removes_by_id() {
        let mut state = vec![human("a"), human("b")];
        add_messages(
            &mut state,
            &[
                Message::Remove { id: "a".into() },
                Message::Human {
                    id: "b".into(),
                    text: "edited".into(),
                    name: None,
                },
                human("c"),
                Message::Remove { id: "gone".into() },
            ],
        );
        let ids: Vec<&str> = state.iter().map(Message::id).collect();
        assert_eq!(ids, ["b", "c"]);
        assert!(matches!(&state[0], Message::Human { text, .. } if text == "edited"));
    }
}
