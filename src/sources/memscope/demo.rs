//! Chat memories (seed 004): memory nodes keyed by chat id, each with its trim policy, holding
//! plain turns, images, tool calls with their results, and a summary of trimmed messages.
//!
//! The policy column holds JSON of this shape (keys that do not apply are left out):
//!
//! ```json
//! {
//!   "limit_type": "messages" | "tokens",
//!   "trim_mode": "continuous" | "threshold",        // messages only
//!   "max_messages": 20,                             // continuous
//!   "trigger": 500, "target": 100,                  // threshold
//!   "max_tokens": 2000, "min_messages": 5,          // tokens
//!   "strategy": "drop_oldest" | "drop_middle",
//!   "keep_first": 2,                                // drop_middle
//!   "clear_tool_results": false,
//!   "max_images": 1,
//!   "predefined_messages": [{"role": "user", "content": "..."}],
//!   "summarization": {"enabled": true, "prompt": "..."}
//! }
//! ```

use chrono::NaiveDateTime;
use serde::Serialize;
use serde_json::{Value, json};

use crate::demo::chapter::{CHAT_MEMORY_STREAM, Chapter, Setting, Story};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{json_tool_output, short_answer, short_query};
use crate::memory::model::{Role, ToolCall};
use crate::store::rows::{Batch, ChatMemoryMessageRow, ChatMemoryRow};

#[derive(Serialize)]
struct Policy {
    limit_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    trim_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_messages: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trigger: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_messages: Option<u32>,
    strategy: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    keep_first: Option<u32>,
    clear_tool_results: bool,
    max_images: u32,
    predefined_messages: Vec<Value>,
    summarization: Summarization,
}

#[derive(Serialize)]
struct Summarization {
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'static str>,
}

impl Policy {
    fn messages(trim_mode: &'static str) -> Self {
        Policy {
            limit_type: "messages",
            trim_mode: Some(trim_mode),
            max_messages: None,
            trigger: None,
            target: None,
            max_tokens: None,
            min_messages: None,
            strategy: "drop_oldest",
            keep_first: None,
            clear_tool_results: false,
            max_images: 1,
            predefined_messages: Vec::new(),
            summarization: Summarization {
                enabled: false,
                prompt: None,
            },
        }
    }

    fn to_json(&self) -> String {
        json!(self).to_string()
    }
}

/// One chat memory being filled.
struct ChatLog {
    memory: ChatMemoryRow,
    messages: Vec<ChatMemoryMessageRow>,
    clock: NaiveDateTime,
}

/// What one stored message carries besides its role and text.
#[derive(Default)]
struct Extras {
    tool_calls: Vec<ToolCall>,
    tool_call_id: Option<String>,
    files: Option<Value>,
    is_summary: bool,
}

impl ChatLog {
    fn new(
        rng: &mut DemoRng,
        memory_node_id: &str,
        chat_id: &str,
        label: &str,
        policy: &Policy,
        created_at: NaiveDateTime,
    ) -> Self {
        ChatLog {
            memory: ChatMemoryRow {
                id: rng.uuid(),
                memory_node_id: memory_node_id.to_owned(),
                chat_id: chat_id.to_owned(),
                label: label.to_owned(),
                policy: policy.to_json(),
                created_at,
                updated_at: created_at,
            },
            messages: Vec::new(),
            clock: created_at,
        }
    }

    fn push(&mut self, rng: &mut DemoRng, role: Role, text: &str, request: &str, extras: Extras) {
        self.clock += seconds(rng.between(2, 40));
        let json_list = |value: Value| value.to_string();
        self.messages.push(ChatMemoryMessageRow {
            id: rng.uuid(),
            chat_memory_id: self.memory.id.clone(),
            seq: self.messages.len() as i64,
            role: role.as_str().to_owned(),
            // `Content::Text` serialises as a bare JSON string.
            content: json!(text).to_string(),
            tool_calls: (!extras.tool_calls.is_empty())
                .then(|| json_list(json!(extras.tool_calls))),
            tool_call_id: extras.tool_call_id,
            files: extras.files.map(json_list),
            workflow_request_id: Some(request.to_owned()),
            is_summary: extras.is_summary,
            created_at: self.clock,
        });
    }

    /// A user turn and the assistant's answer, in one workflow request.
    fn exchange(&mut self, rng: &mut DemoRng, user: &str, assistant: &str, files: Option<Value>) {
        let request = rng.uuid();
        self.push(
            rng,
            Role::User,
            user,
            &request,
            Extras {
                files,
                ..Extras::default()
            },
        );
        self.push(rng, Role::Assistant, assistant, &request, Extras::default());
    }

    fn finish(mut self, batch: &mut Batch) -> String {
        self.memory.updated_at = self.clock;
        let id = self.memory.id.clone();
        batch.chat_memories.push(self.memory);
        batch.chat_memory_messages.append(&mut self.messages);
        id
    }
}

fn image_file(name: &str, size: u32) -> Value {
    json!([{
        "url": format!("https://files.example.com/chat-uploads/{name}"),
        "metadata": {},
        "file_name": name,
        "file_size": size,
        "content_type": "image/png",
    }])
}

pub(crate) fn chapter(setting: &Setting) -> Chapter {
    let mut rng = DemoRng::new(setting.seed, CHAT_MEMORY_STREAM);
    let mut batch = Batch::default();
    let created = base_time() - seconds(3 * 24 * 3600);
    let stories = vec![
        support_chats(&mut rng, created, &mut batch),
        agent_scratchpad(&mut rng, created, &mut batch),
        session_context(&mut rng, created, &mut batch),
    ];
    Chapter { batch, stories }
}

/// One message-limited memory node serving two chats: one over its limit, one with more images
/// than it keeps.
fn support_chats(rng: &mut DemoRng, created: NaiveDateTime, batch: &mut Batch) -> Story {
    let node = rng.uuid();
    let policy = Policy {
        max_messages: Some(20),
        predefined_messages: vec![
            json!({"role": "user", "content": "How do I reset my password?"}),
            json!({"role": "assistant", "content": "Visit Settings > Security and choose \
                   Reset password; a link arrives within a minute."}),
        ],
        ..Policy::messages("continuous")
    };
    let label = "Support Chat History";
    let mut busy = ChatLog::new(rng, &node, "user-1042-session-7", label, &policy, created);
    for _ in 0..13 {
        let (query, answer) = (short_query(rng), short_answer(rng));
        busy.exchange(rng, &query, &answer, None);
    }
    let busy_id = busy.finish(batch);

    let mut pictures = ChatLog::new(rng, &node, "user-2211-session-1", label, &policy, created);
    for (index, name) in ["error-dialog.png", "settings-page.png", "invoice.png"]
        .into_iter()
        .enumerate()
    {
        let answer = short_answer(rng);
        pictures.exchange(
            rng,
            &format!("Screenshot {} of the problem attached.", index + 1),
            &answer,
            Some(image_file(name, 48_000 + 1_000 * index as u32)),
        );
    }
    pictures.finish(batch);
    Story {
        title: "Chat memory over its message limit",
        table: "chat_memories",
        id: busy_id,
        demonstrates: "26 messages under a continuous 20-message drop-oldest policy with \
                       predefined messages; the same node's other chat holds 3 images with \
                       max_images 1",
    }
}

/// A token-limited agent memory: tool calls and bulky results, a summary of trimmed messages,
/// drop-middle keeping the opening goal.
fn agent_scratchpad(rng: &mut DemoRng, created: NaiveDateTime, batch: &mut Batch) -> Story {
    let node = rng.uuid();
    let policy = Policy {
        limit_type: "tokens",
        trim_mode: None,
        max_tokens: Some(2000),
        min_messages: Some(4),
        strategy: "drop_middle",
        keep_first: Some(2),
        clear_tool_results: true,
        max_images: 0,
        summarization: Summarization {
            enabled: true,
            prompt: Some(
                "Summarize the key points from these messages: decisions made, facts and \
                 data mentioned, user preferences. Keep it under 200 tokens.",
            ),
        },
        ..Policy::messages("continuous")
    };
    let chat_id = format!("workflow-{}", rng.uuid());
    let mut log = ChatLog::new(rng, &node, &chat_id, "Agent Scratchpad", &policy, created);
    log.exchange(
        rng,
        "Find out why checkout got slower this week and propose a fix.",
        "On it: I'll check the incident wiki and the latency dashboards first.",
        None,
    );
    let request = rng.uuid();
    log.push(
        rng,
        Role::System,
        "Summary of earlier conversation: the agent searched the incident wiki (3 hits), found \
         the inventory lock contention review, and the user asked to focus on the checkout \
         path only.",
        &request,
        Extras {
            is_summary: true,
            ..Extras::default()
        },
    );
    for (tool, arguments) in [
        (
            "knowledge_search",
            r#"{"query": "checkout latency inventory lock"}"#,
        ),
        (
            "metrics_query",
            r#"{"metric": "checkout.p99", "range": "7d"}"#,
        ),
        ("knowledge_search", r#"{"query": "row lock retry policy"}"#),
    ] {
        let request = rng.uuid();
        let call_id = format!("call_{}", rng.hex8());
        log.push(
            rng,
            Role::Assistant,
            "",
            &request,
            Extras {
                tool_calls: vec![ToolCall {
                    id: call_id.clone(),
                    name: tool.to_owned(),
                    arguments: arguments.to_owned(),
                }],
                ..Extras::default()
            },
        );
        let result = json_tool_output(rng, 6);
        log.push(
            rng,
            Role::Tool,
            &result,
            &request,
            Extras {
                tool_call_id: Some(call_id),
                ..Extras::default()
            },
        );
    }
    let request = rng.uuid();
    log.push(
        rng,
        Role::Assistant,
        "Root cause: retries hold the inventory row lock. Fix: release the lock before \
         retrying and add jitter; expected p99 drop from 840 ms to about 300 ms.",
        &request,
        Extras::default(),
    );
    Story {
        title: "Agent memory with tools and a summary",
        table: "chat_memories",
        id: log.finish(batch),
        demonstrates: "token-limited drop-middle policy (keep_first 2, min_messages 4, clear \
                       tool results, summarization on): tool calls with their results and one \
                       summary message",
    }
}

/// Messages a threshold memory holds, just under its trigger of 500.
const SESSION_CONTEXT_MESSAGES: usize = 480;

/// A high-volume chat under a threshold policy: it grows to the trigger, then trims to target.
fn session_context(rng: &mut DemoRng, created: NaiveDateTime, batch: &mut Batch) -> Story {
    let node = rng.uuid();
    let policy = Policy {
        trigger: Some(500),
        target: Some(100),
        max_images: 3,
        ..Policy::messages("threshold")
    };
    let mut log = ChatLog::new(
        rng,
        &node,
        "ext-chat-8812",
        "Session Context",
        &policy,
        created,
    );
    for _ in 0..SESSION_CONTEXT_MESSAGES / 2 {
        let (query, answer) = (short_query(rng), short_answer(rng));
        log.exchange(rng, &query, &answer, None);
    }
    Story {
        title: "Threshold memory near its trigger",
        table: "chat_memories",
        id: log.finish(batch),
        demonstrates: "480 messages under a threshold policy (trigger 500, target 100)",
    }
}

#[cfg(test)]
#[path = "demo_tests.rs"]
mod tests;
