//! What an LLM node sends and keeps, in the JSON shapes Dify stores: prompt messages with
//! their images and tool calls, `outputs` with its `context`, `process_data` with its
//! `prompts`, and token usage with its prices.

use serde_json::{Value, json};

use crate::demo::ids::DemoRng;
use crate::demo::text::{estimate_tokens, json_tool_output};
use crate::memory::model::{Role, ToolCall};

/// How Dify's PromptMessageUtil saves image data in `process_data`: 10 characters, a marker, the
/// last 10.
const SAVED_IMAGE_DATA: &str = "data:image...[TRUNCATED]...VORK5CYII=";

/// Row outputs longer than this are offloaded in the demo's offloaded turn.
pub(super) const TRUNCATED_TEXT_CHARS: usize = 120;

/// An uploaded image as the LLM nodes reference it.
#[derive(Clone)]
pub(super) struct ImageRef {
    pub(super) upload_file_id: String,
    pub(super) name: String,
}

impl ImageRef {
    /// A file reference as node memory and `sys.files` keep it.
    pub(super) fn reference(&self) -> Value {
        json!({
            "type": "image",
            "transfer_method": "local_file",
            "upload_file_id": self.upload_file_id,
        })
    }
}

/// One prompt message as an LLM node sent or received it.
#[derive(Clone)]
pub(super) struct Said {
    pub(super) role: Role,
    pub(super) text: String,
    pub(super) image: Option<ImageRef>,
    tool_calls: Vec<ToolCall>,
    pub(super) tool_call_id: Option<String>,
}

impl Said {
    pub(super) fn new(role: Role, text: impl Into<String>) -> Self {
        Said {
            role,
            text: text.into(),
            image: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    fn tool_calls_json(&self) -> Vec<Value> {
        self.tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect()
    }

    /// A pydantic dump of the PromptMessage, as `outputs["context"]` stores it: file parts keep
    /// a `file_ref` and blank their data.
    fn context_json(&self) -> Value {
        let content = match &self.image {
            None => json!(self.text),
            Some(image) => json!([
                {
                    "type": "image",
                    "base64_data": "",
                    "url": "",
                    "mime_type": "image/png",
                    "format": "png",
                    "filename": image.name,
                    "detail": "high",
                    "file_ref": image.upload_file_id,
                },
                {"type": "text", "data": self.text},
            ]),
        };
        let mut item = json!({"role": self.role.as_str(), "content": content, "name": null});
        if !self.tool_calls.is_empty() {
            item["tool_calls"] = Value::Array(self.tool_calls_json());
        }
        if let Some(id) = &self.tool_call_id {
            item["tool_call_id"] = json!(id);
        }
        item
    }

    /// The PromptMessageUtil form `process_data["prompts"]` stores.
    fn prompt_json(&self) -> Value {
        let files: Vec<Value> = self
            .image
            .iter()
            .map(|_| json!({"type": "image", "data": SAVED_IMAGE_DATA, "detail": "high"}))
            .collect();
        let mut item = json!({"role": self.role.as_str(), "text": self.text, "files": files});
        if !self.tool_calls.is_empty() {
            item["tool_calls"] = Value::Array(self.tool_calls_json());
        }
        item
    }
}

/// System prompt first, then the node's history, then the new user message.
pub(super) fn prompts(system: &str, history: &[Said], user: &Said) -> Vec<Said> {
    std::iter::once(Said::new(Role::System, system))
        .chain(history.iter().cloned())
        .chain(std::iter::once(user.clone()))
        .collect()
}

/// One LLM node's call in a run.
pub(super) struct LlmCall {
    /// What was sent: system prompt, the node's history, the user message.
    pub(super) prompts: Vec<Said>,
    /// `outputs["context"]`: the prompts without the system prompt, any tool trace, the reply.
    pub(super) context: Vec<Said>,
    pub(super) reply: String,
    pub(super) usage: Usage,
}

impl LlmCall {
    pub(super) fn new(
        system: &str,
        mut history: Vec<Said>,
        user: Said,
        tool_trace: Vec<Said>,
        reply: &str,
    ) -> Self {
        let prompts = prompts(system, &history, &user);
        history.push(user);
        history.extend(tool_trace);
        history.push(Said::new(Role::Assistant, reply));
        LlmCall {
            usage: Usage::of(&prompts, reply),
            prompts,
            context: history,
            reply: reply.to_owned(),
        }
    }

    pub(super) fn outputs(&self) -> Value {
        llm_outputs(&self.reply, &self.usage, &self.context)
    }
}

/// A `web_search` tool call and its result, as the tool trace in a context.
pub(super) fn web_search(rng: &mut DemoRng, arguments: &str) -> Vec<Said> {
    let call_id = format!("call_{}", rng.hex8());
    let mut call = Said::new(Role::Assistant, "");
    call.tool_calls.push(ToolCall {
        id: call_id.clone(),
        name: "web_search".to_owned(),
        arguments: arguments.to_owned(),
    });
    let mut result = Said::new(Role::Tool, json_tool_output(rng, 3));
    result.tool_call_id = Some(call_id);
    vec![call, result]
}

/// An LLM call's token usage, estimated from the texts.
pub(super) struct Usage {
    pub(super) prompt_tokens: i64,
    pub(super) completion_tokens: i64,
}

/// gpt-4o list prices per token, in USD.
const PROMPT_PRICE: f64 = 2.5e-6;
const COMPLETION_PRICE: f64 = 10e-6;

impl Usage {
    pub(super) fn of(prompts: &[Said], reply: &str) -> Self {
        Usage {
            prompt_tokens: prompts.iter().map(|said| estimate_tokens(&said.text)).sum(),
            completion_tokens: estimate_tokens(reply),
        }
    }

    pub(super) fn total(&self) -> i64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Dify's LLMUsage: prices are decimals, serialised as strings.
    pub(super) fn json(&self) -> Value {
        let prompt_price = self.prompt_tokens as f64 * PROMPT_PRICE;
        let completion_price = self.completion_tokens as f64 * COMPLETION_PRICE;
        json!({
            "prompt_tokens": self.prompt_tokens,
            "prompt_unit_price": "2.5",
            "prompt_price_unit": "0.000001",
            "prompt_price": format!("{prompt_price:.7}"),
            "completion_tokens": self.completion_tokens,
            "completion_unit_price": "10",
            "completion_price_unit": "0.000001",
            "completion_price": format!("{completion_price:.7}"),
            "total_tokens": self.total(),
            "total_price": format!("{:.7}", prompt_price + completion_price),
            "currency": "USD",
            "latency": 1.8,
        })
    }
}

fn llm_outputs(text: &str, usage: &Usage, context: &[Said]) -> Value {
    json!({
        "text": text,
        "usage": usage.json(),
        "finish_reason": "stop",
        "context": context.iter().map(Said::context_json).collect::<Vec<_>>(),
    })
}

/// What stays in the row when outputs are offloaded: the text shortened and only the start of
/// the context, so readers that ignore the offload link see a clipped history.
pub(super) fn truncated_outputs(call: &LlmCall) -> Value {
    let mut shortened: String = call.reply.chars().take(TRUNCATED_TEXT_CHARS).collect();
    shortened.push_str("...");
    llm_outputs(
        &shortened,
        &call.usage,
        &call.context[..call.context.len().min(2)],
    )
}

pub(super) fn process_data(prompts: &[Said], usage: &Usage) -> Value {
    json!({
        "model_mode": "chat",
        "prompts": prompts.iter().map(Said::prompt_json).collect::<Vec<_>>(),
        "usage": usage.json(),
        "finish_reason": "stop",
        "model_provider": "langgenius/openai/openai",
        "model_name": "gpt-4o",
    })
}
