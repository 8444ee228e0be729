//! A Dify chatflow (advanced-chat) with two LLM nodes: workflow runs and node executions per
//! turn, node memory in both stored designs, and the rows an operator's `doctor` should flag.

use chrono::NaiveDateTime;
use serde_json::{Map, Value, json};

use super::dify::{ConversationBuilder, Parent, app, upload, user_upload_file};
use super::files::{FileRoot, TINY_PNG, WriteFileError};
use super::ids::{DemoRng, base_time, seconds};
use super::text::{estimate_tokens, json_tool_output, prose};
use super::chapter::{CHATFLOW_STREAM, Chapter, Setting, Story};
use crate::memory::model::{Role, StoredMessage, ToolCall};
use crate::store::rows::{
    AppRow, Batch, NodeExecutionOffloadRow, NodeExecutionRow, UploadFileRow, WorkflowRunRow,
};

struct Node {
    id: &'static str,
    node_type: &'static str,
    title: &'static str,
}

const START: Node = Node {
    id: "1733817600000",
    node_type: "start",
    title: "Start",
};
/// Keeps node-scoped memory in the design-A file (`turns` keyed by workflow run).
const RESEARCHER: Node = Node {
    id: "1733817600001",
    node_type: "llm",
    title: "Research",
};
/// Keeps node-scoped memory in the seed's `messages` list file.
const WRITER: Node = Node {
    id: "1733817600002",
    node_type: "llm",
    title: "Write reply",
};
const ANSWER: Node = Node {
    id: "answer",
    node_type: "answer",
    title: "Answer",
};

const RESEARCHER_SYSTEM: &str = "You are a travel researcher. Collect concrete facts (times, \
     prices, opening hours) for the traveller's request. Use web_search when unsure.";
const WRITER_SYSTEM: &str = "You write friendly, concise travel plans from the research notes \
     you are given. Never invent facts that are not in the notes.";

/// How Dify's PromptMessageUtil saves image data in `process_data`: 10 characters, a marker, the
/// last 10.
const SAVED_IMAGE_DATA: &str = "data:image...[TRUNCATED]...VORK5CYII=";

/// Row outputs longer than this are offloaded in the demo's offloaded turn.
const TRUNCATED_TEXT_CHARS: usize = 120;

/// An uploaded image as the LLM nodes reference it.
#[derive(Clone)]
struct ImageRef {
    upload_file_id: String,
    name: String,
}

impl ImageRef {
    /// A file reference as node memory and `sys.files` keep it.
    fn reference(&self) -> Value {
        json!({
            "type": "image",
            "transfer_method": "local_file",
            "upload_file_id": self.upload_file_id,
        })
    }
}

/// One prompt message as an LLM node sent or received it.
#[derive(Clone)]
struct Said {
    role: Role,
    text: String,
    image: Option<ImageRef>,
    tool_calls: Vec<ToolCall>,
    tool_call_id: Option<String>,
}

impl Said {
    fn new(role: Role, text: impl Into<String>) -> Self {
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

/// What makes a turn notable.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quirk {
    None,
    /// The design-A node memory file holds this answer instead of the one in
    /// `outputs["context"]`: the file was flushed from a draft the node then retried.
    StaleNodeMemory(&'static str),
    /// The researcher's outputs are offloaded to an upload file; the row keeps a truncated copy.
    OffloadedResearch,
    /// The writer's outputs column holds JSON cut off mid-string.
    CutOffWriterOutputs,
    /// Run cleanup deleted the workflow run and its node executions; the message still points
    /// at the run (#32674).
    RunCleanedUp,
}

struct TurnSpec {
    parent: Parent,
    query: &'static str,
    image: Option<&'static str>,
    /// Arguments of a `web_search` call the researcher made, answered by a tool result.
    search: Option<&'static str>,
    research: String,
    reply: String,
    quirk: Quirk,
}

/// The executions of one turn that stories point at.
struct PlayedTurn {
    message_id: String,
    researcher_execution: Option<String>,
    writer_execution: Option<String>,
}

/// The app-wide ids of the chatflow.
struct Chatflow<'a> {
    app: &'a AppRow,
    workflow_id: String,
    storage: FileRoot<'a>,
}

/// A chatflow conversation being played turn by turn.
struct ChatflowConversation {
    messages: ConversationBuilder,
    /// Per message row: each LLM node's context after that turn.
    researcher_contexts: Vec<Vec<Said>>,
    writer_contexts: Vec<Vec<Said>>,
    /// Per message row: the id of the writer's assistant entry in the seed-shaped file.
    writer_reply_ids: Vec<String>,
    researcher_turns: Map<String, Value>,
    writer_messages: Vec<Value>,
}

pub(super) fn chapter(setting: &Setting) -> Result<Chapter, WriteFileError> {
    let mut rng = DemoRng::new(setting.seed, CHATFLOW_STREAM);
    let created = base_time() - seconds(10 * 24 * 3600);
    let trip_planner = app(
        &mut rng,
        setting.tenant_id,
        "Trip Planner",
        "advanced-chat",
        Some(20),
        created,
    );
    let chatflow = Chatflow {
        app: &trip_planner,
        workflow_id: rng.uuid(),
        storage: FileRoot(setting.storage_root),
    };
    let mut batch = Batch::default();

    let started = base_time() - seconds(20 * 3600);
    let mut kyoto = ChatflowConversation::new(&mut rng, &chatflow, "Kyoto food trip", started);
    let mut played = Vec::new();
    for turn in 0..KYOTO_TURNS {
        let spec = kyoto_turn(&mut rng, turn);
        played.push(kyoto.play(&mut rng, &chatflow, spec, &mut batch)?);
    }
    let kyoto_id = kyoto.finish(&chatflow, &mut batch)?;

    let started = base_time() - seconds(8 * 3600);
    let mut packing = ChatflowConversation::new(&mut rng, &chatflow, "Packing list", started);
    let cleaned_up = packing.play(
        &mut rng,
        &chatflow,
        TurnSpec {
            parent: Parent::Root,
            query: "What should I pack for Kyoto in April? Here's my suitcase.",
            image: Some("suitcase.png"),
            search: None,
            research: "April in Kyoto: 10-20 °C, showers likely, cherry blossom crowds.".to_owned(),
            reply: "Pack layers, a light rain jacket and comfortable walking shoes.".to_owned(),
            quirk: Quirk::RunCleanedUp,
        },
        &mut batch,
    )?;
    packing.play(
        &mut rng,
        &chatflow,
        TurnSpec {
            parent: Parent::Row(0),
            query: "And for a rainy day?",
            image: None,
            search: None,
            research: "Rainy-day options: Kyoto Railway Museum, Nishiki Market (covered)."
                .to_owned(),
            reply: "Bring a compact umbrella; the covered Nishiki Market is perfect in the rain."
                .to_owned(),
            quirk: Quirk::None,
        },
        &mut batch,
    )?;
    packing.finish(&chatflow, &mut batch)?;

    let stories = vec![
        Story {
            title: "Chatflow node memory",
            table: "conversations",
            id: kyoto_id,
            demonstrates: "two LLM nodes over a regenerated thread: the Research node keeps \
                           design-A memory (turns per run), the Write reply node the seed's \
                           messages list; outputs.context holds design B",
        },
        Story {
            title: "Node memory disagreement",
            table: "workflow_node_executions",
            id: played[1].researcher_execution.clone().unwrap_or_default(),
            demonstrates: "on the Nara turn the design-A file keeps a stale draft answer while \
                           outputs.context holds the final one",
        },
        Story {
            title: "Invalid outputs JSON",
            table: "workflow_node_executions",
            id: played[2].writer_execution.clone().unwrap_or_default(),
            demonstrates: "a succeeded LLM execution whose outputs column is JSON cut off \
                           mid-string",
        },
        Story {
            title: "Offloaded node outputs",
            table: "workflow_node_executions",
            id: played[4].researcher_execution.clone().unwrap_or_default(),
            demonstrates: "outputs truncated in the row; the full JSON (with the whole \
                           context) is an upload file linked by workflow_node_execution_offload",
        },
        Story {
            title: "Orphaned workflow run",
            table: "messages",
            id: cleaned_up.message_id,
            demonstrates: "a message with a user image whose workflow_run_id has no \
                           workflow_runs row (run cleanup, #32674)",
        },
    ];
    batch.apps.push(trip_planner);
    Ok(Chapter { batch, stories })
}

const KYOTO_TURNS: usize = 5;

/// The Kyoto conversation: turn 3 is regenerated (turn 4 is its sibling), so the thread is
/// turns 1, 2, 4, 5.
fn kyoto_turn(rng: &mut DemoRng, turn: usize) -> TurnSpec {
    let vegetarian = "Make day 2 vegetarian, please.";
    let spec = |parent, query, research: String, reply: &str| TurnSpec {
        parent,
        query,
        image: None,
        search: None,
        research,
        reply: reply.to_owned(),
        quirk: Quirk::None,
    };
    match turn {
        0 => TurnSpec {
            image: Some("hotel-booking.png"),
            ..spec(
                Parent::Root,
                "Plan three days in Kyoto for a food lover. This is my hotel booking.",
                "Hotel near Shijo-Karasuma. Nishiki Market 8 min walk (opens 9:00). Pontocho \
                 alley for dinner. Fushimi Inari best before 8:00."
                    .to_owned(),
                "Day 1: Nishiki Market breakfast, Pontocho dinner. Day 2: Fushimi Inari at \
                 dawn, sake tasting in Fushimi. Day 3: Arashiyama and a kaiseki lunch.",
            )
        },
        1 => TurnSpec {
            search: Some(r#"{"query": "Kyoto to Nara train time Kintetsu"}"#),
            quirk: Quirk::StaleNodeMemory(
                "Nara is about an hour away by bus; worth a half-day trip.",
            ),
            ..spec(
                Parent::Row(0),
                "Can we add a day trip to Nara?",
                "Kintetsu limited express: 35 min from Kyoto Station, about 1,200 yen. Nara \
                 Park deer, Todai-ji opens 7:30. Mochi pounding at Nakatanidou."
                    .to_owned(),
                "Swap day 3 for Nara: 35 minutes by Kintetsu, Todai-ji in the morning, fresh \
                 mochi at Nakatanidou, back for dinner in Gion.",
            )
        },
        2 => TurnSpec {
            quirk: Quirk::CutOffWriterOutputs,
            ..spec(
                Parent::Row(1),
                vegetarian,
                "Shigetsu at Tenryu-ji serves shojin ryori (Buddhist vegetarian), 3,300 yen."
                    .to_owned(),
                "Day 2 vegetarian: shojin ryori lunch at Shigetsu, yuba tasting in the \
                 afternoon.",
            )
        },
        // The traveller regenerated the previous answer: a sibling of turn 3.
        3 => spec(
            Parent::Row(1),
            vegetarian,
            "Vegetarian options near Fushimi: Veg Out cafe by the river, tofu kaiseki at \
             Okutan (Nanzen-ji), open 11:00-16:00."
                .to_owned(),
            "Day 2 vegetarian: breakfast at Veg Out by the Kamo river, tofu kaiseki at \
             Okutan for lunch, matcha sweets in Gion.",
        ),
        _ => TurnSpec {
            quirk: Quirk::OffloadedResearch,
            ..spec(
                Parent::Row(3),
                "Summarize the whole plan as a checklist.",
                format!(
                    "Full research dossier for the checklist.\n{}\n{}",
                    prose(rng, 40),
                    json_tool_output(rng, 12)
                ),
                "Checklist: [ ] Nishiki breakfast [ ] Pontocho dinner [ ] Veg Out + Okutan \
                 [ ] Nara by Kintetsu [ ] Todai-ji 7:30 [ ] Gion dinner",
            )
        },
    }
}

impl ChatflowConversation {
    fn new(rng: &mut DemoRng, chatflow: &Chatflow, name: &str, started_at: NaiveDateTime) -> Self {
        ChatflowConversation {
            messages: ConversationBuilder::new(rng, chatflow.app, name, "web-app", started_at),
            researcher_contexts: Vec::new(),
            writer_contexts: Vec::new(),
            writer_reply_ids: Vec::new(),
            researcher_turns: Map::new(),
            writer_messages: Vec::new(),
        }
    }

    fn play(
        &mut self,
        rng: &mut DemoRng,
        chatflow: &Chatflow,
        spec: TurnSpec,
        batch: &mut Batch,
    ) -> Result<PlayedTurn, WriteFileError> {
        let parent_row = match spec.parent {
            Parent::Row(row) => Some(row),
            Parent::Root | Parent::Nil => None,
        };
        let history =
            |contexts: &[Vec<Said>]| parent_row.map_or_else(Vec::new, |row| contexts[row].clone());
        let researcher_history = history(&self.researcher_contexts);
        let writer_history = history(&self.writer_contexts);

        let gap = rng.between(60, 600);
        let row = self.messages.turn(
            rng,
            spec.parent,
            spec.query.to_owned(),
            spec.reply.clone(),
            gap,
        );
        let message = self.messages.row(row).clone();
        let run_id = rng.uuid();
        let image = match spec.image {
            Some(name) => Some(self.attach_image(rng, chatflow, row, name, batch)?),
            None => None,
        };

        let mut user = Said::new(Role::User, spec.query);
        user.image = image.clone();
        let tool_trace = match spec.search {
            Some(arguments) => web_search(rng, arguments),
            None => Vec::new(),
        };
        let research = LlmCall::new(
            RESEARCHER_SYSTEM,
            researcher_history,
            user,
            tool_trace,
            &spec.research,
        );
        let writer_user = Said::new(
            Role::User,
            format!(
                "Research notes:\n{}\n\nTraveller's message: {}",
                spec.research, spec.query
            ),
        );
        let writing = LlmCall::new(
            WRITER_SYSTEM,
            writer_history,
            writer_user.clone(),
            Vec::new(),
            &spec.reply,
        );

        let stored = self.messages.row_mut(row);
        stored.workflow_run_id = Some(run_id.clone());
        stored.message_tokens = research.usage.prompt_tokens + writing.usage.prompt_tokens;
        stored.answer_tokens = research.usage.completion_tokens + writing.usage.completion_tokens;

        let mut played = PlayedTurn {
            message_id: message.id.clone(),
            researcher_execution: None,
            writer_execution: None,
        };
        if spec.quirk != Quirk::RunCleanedUp {
            let run = Run {
                chatflow,
                run_id: &run_id,
                started_at: message.created_at,
            };
            let sys = json!({
                "sys.query": spec.query,
                "sys.files": image.iter().map(ImageRef::reference).collect::<Vec<_>>(),
                "sys.conversation_id": message.conversation_id,
                "sys.dialogue_count": self.messages.thread_length(row),
                "sys.app_id": chatflow.app.id,
                "sys.workflow_id": chatflow.workflow_id,
                "sys.workflow_run_id": run_id,
            });
            let (researcher, writer) =
                run.record(rng, &sys, &research, &writing, spec.quirk, batch)?;
            played.researcher_execution = Some(researcher);
            played.writer_execution = Some(writer);
        }

        let remembered_research = match spec.quirk {
            Quirk::StaleNodeMemory(draft) => draft.to_owned(),
            _ => spec.research.clone(),
        };
        self.researcher_turns.insert(
            run_id,
            json!({
                "user_content": spec.query,
                "user_files": image.iter().map(ImageRef::reference).collect::<Vec<_>>(),
                "assistant_content": remembered_research,
                "assistant_files": [],
            }),
        );
        self.remember_writer_turn(rng, &message, parent_row, &writer_user.text, &spec.reply);
        self.researcher_contexts.push(research.context);
        self.writer_contexts.push(writing.context);
        Ok(played)
    }

    fn attach_image(
        &self,
        rng: &mut DemoRng,
        chatflow: &Chatflow,
        row: usize,
        name: &str,
        batch: &mut Batch,
    ) -> Result<ImageRef, WriteFileError> {
        let message = self.messages.row(row);
        let file = upload(
            rng,
            &chatflow.storage,
            &chatflow.app.tenant_id,
            name,
            TINY_PNG,
            "image/png",
            message.created_at,
        )?;
        batch
            .message_files
            .push(user_upload_file(rng, message, "image", &file));
        let image = ImageRef {
            upload_file_id: file.id.clone(),
            name: name.to_owned(),
        };
        batch.upload_files.push(file);
        Ok(image)
    }

    /// The seed's node-memory shape: user and assistant entries linked by
    /// `parent_message_id`. The user entry's id is the Dify message's id and its parent the
    /// previous turn's assistant entry, so regenerated turns are siblings here too.
    fn remember_writer_turn(
        &mut self,
        rng: &mut DemoRng,
        message: &StoredMessage,
        parent_row: Option<usize>,
        user_text: &str,
        reply: &str,
    ) {
        let reply_id = rng.uuid();
        let at = |offset: i64| {
            (message.created_at + seconds(offset))
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        };
        self.writer_messages.push(json!({
            "message_id": message.id,
            "parent_message_id": parent_row.map(|row| self.writer_reply_ids[row].clone()),
            "role": "user",
            "content": user_text,
            "files": [],
            "token_count": estimate_tokens(user_text),
            "created_at": at(4),
        }));
        self.writer_messages.push(json!({
            "message_id": reply_id,
            "parent_message_id": message.id,
            "role": "assistant",
            "content": reply,
            "files": [],
            "token_count": estimate_tokens(reply),
            "created_at": at(7),
        }));
        self.writer_reply_ids.push(reply_id);
    }

    /// Writes both node memory files and returns the conversation id.
    fn finish(self, chatflow: &Chatflow, batch: &mut Batch) -> Result<String, WriteFileError> {
        let directory = format!(
            "node_memory/{}/{}",
            chatflow.app.id,
            self.messages.conversation_id()
        );
        chatflow.storage.write_json(
            &format!("{directory}/{}.json", RESEARCHER.id),
            &json!({"version": 1, "turns": self.researcher_turns}),
        )?;
        chatflow.storage.write_json(
            &format!("{directory}/{}.json", WRITER.id),
            &json!({"version": 1, "messages": self.writer_messages}),
        )?;
        Ok(self.messages.finish(batch))
    }
}

/// System prompt first, then the node's history, then the new user message.
fn prompts(system: &str, history: &[Said], user: &Said) -> Vec<Said> {
    std::iter::once(Said::new(Role::System, system))
        .chain(history.iter().cloned())
        .chain(std::iter::once(user.clone()))
        .collect()
}

/// One LLM node's call in a run.
struct LlmCall {
    /// What was sent: system prompt, the node's history, the user message.
    prompts: Vec<Said>,
    /// `outputs["context"]`: the prompts without the system prompt, any tool trace, the reply.
    context: Vec<Said>,
    reply: String,
    usage: Usage,
}

impl LlmCall {
    fn new(
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

    fn outputs(&self) -> Value {
        llm_outputs(&self.reply, &self.usage, &self.context)
    }
}

/// A `web_search` tool call and its result, as the tool trace in a context.
fn web_search(rng: &mut DemoRng, arguments: &str) -> Vec<Said> {
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
struct Usage {
    prompt_tokens: i64,
    completion_tokens: i64,
}

/// gpt-4o list prices per token, in USD.
const PROMPT_PRICE: f64 = 2.5e-6;
const COMPLETION_PRICE: f64 = 10e-6;

impl Usage {
    fn of(prompts: &[Said], reply: &str) -> Self {
        Usage {
            prompt_tokens: prompts.iter().map(|said| estimate_tokens(&said.text)).sum(),
            completion_tokens: estimate_tokens(reply),
        }
    }

    fn total(&self) -> i64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Dify's LLMUsage: prices are decimals, serialised as strings.
    fn json(&self) -> Value {
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
fn truncated_outputs(call: &LlmCall) -> Value {
    let mut shortened: String = call.reply.chars().take(TRUNCATED_TEXT_CHARS).collect();
    shortened.push_str("...");
    llm_outputs(
        &shortened,
        &call.usage,
        &call.context[..call.context.len().min(2)],
    )
}

fn process_data(prompts: &[Said], usage: &Usage) -> Value {
    json!({
        "model_mode": "chat",
        "prompts": prompts.iter().map(Said::prompt_json).collect::<Vec<_>>(),
        "usage": usage.json(),
        "finish_reason": "stop",
        "model_provider": "langgenius/openai/openai",
        "model_name": "gpt-4o",
    })
}

/// The first half of `text`, cut at a character boundary.
fn cut_in_half(text: &str) -> &str {
    let half = text.len() / 2;
    let cut = (0..=half)
        .rev()
        .find(|&index| text.is_char_boundary(index))
        .unwrap_or(0);
    &text[..cut]
}

/// The JSON columns of one node execution, and the tokens an LLM node used.
struct Io<'a> {
    inputs: String,
    process_data: Option<Value>,
    outputs: String,
    usage: Option<&'a Usage>,
}

impl<'a> Io<'a> {
    fn llm(call: &'a LlmCall, outputs: Value) -> Self {
        Io {
            inputs: "{}".to_owned(),
            process_data: Some(process_data(&call.prompts, &call.usage)),
            outputs: outputs.to_string(),
            usage: Some(&call.usage),
        }
    }
}

/// One workflow run's execution rows.
struct Run<'a> {
    chatflow: &'a Chatflow<'a>,
    run_id: &'a str,
    started_at: NaiveDateTime,
}

impl Run<'_> {
    /// Writes the run and its start, LLM and answer executions; returns the ids of the two LLM
    /// executions.
    fn record(
        &self,
        rng: &mut DemoRng,
        sys: &Value,
        research: &LlmCall,
        writing: &LlmCall,
        quirk: Quirk,
        batch: &mut Batch,
    ) -> Result<(String, String), WriteFileError> {
        let app = self.chatflow.app;
        batch.workflow_runs.push(WorkflowRunRow {
            id: self.run_id.to_owned(),
            tenant_id: app.tenant_id.clone(),
            app_id: app.id.clone(),
            workflow_id: self.chatflow.workflow_id.clone(),
            run_type: "chat".to_owned(),
            status: "succeeded".to_owned(),
            total_tokens: research.usage.total() + writing.usage.total(),
            created_at: self.started_at,
            finished_at: Some(self.started_at + seconds(8)),
        });
        let sys = sys.to_string();
        let start = Io {
            inputs: sys.clone(),
            process_data: None,
            outputs: sys,
            usage: None,
        };
        batch
            .node_executions
            .push(self.execution(rng, &START, 1, start));

        let full_research = research.outputs();
        let research_row = if quirk == Quirk::OffloadedResearch {
            truncated_outputs(research)
        } else {
            full_research.clone()
        };
        let researcher = self.execution(rng, &RESEARCHER, 2, Io::llm(research, research_row));
        if quirk == Quirk::OffloadedResearch {
            let (file, offload) = self.offload(rng, &researcher, &full_research)?;
            batch.upload_files.push(file);
            batch.node_execution_offloads.push(offload);
        }

        let mut writer = self.execution(rng, &WRITER, 3, Io::llm(writing, writing.outputs()));
        if quirk == Quirk::CutOffWriterOutputs {
            writer.outputs = writer
                .outputs
                .as_deref()
                .map(|text| cut_in_half(text).to_owned());
        }
        let answer = Io {
            inputs: "{}".to_owned(),
            process_data: None,
            outputs: json!({"answer": writing.reply, "files": []}).to_string(),
            usage: None,
        };
        let ids = (researcher.id.clone(), writer.id.clone());
        batch
            .node_executions
            .extend([researcher, writer, self.execution(rng, &ANSWER, 4, answer)]);
        Ok(ids)
    }

    fn execution(&self, rng: &mut DemoRng, node: &Node, index: i64, io: Io) -> NodeExecutionRow {
        let app = self.chatflow.app;
        NodeExecutionRow {
            id: rng.uuid(),
            tenant_id: app.tenant_id.clone(),
            app_id: app.id.clone(),
            workflow_id: self.chatflow.workflow_id.clone(),
            workflow_run_id: Some(self.run_id.to_owned()),
            index,
            node_id: node.id.to_owned(),
            node_type: node.node_type.to_owned(),
            title: node.title.to_owned(),
            inputs: Some(io.inputs),
            process_data: io.process_data.map(|data| data.to_string()),
            outputs: Some(io.outputs),
            execution_metadata: io.usage.map(|usage| {
                let usage = usage.json();
                json!({
                    "total_tokens": usage["total_tokens"],
                    "total_price": usage["total_price"],
                    "currency": "USD",
                })
                .to_string()
            }),
            status: "succeeded".to_owned(),
            error: None,
            created_at: self.started_at + seconds(index * 2),
        }
    }

    /// Stores the full outputs as an upload file and links it to the execution.
    fn offload(
        &self,
        rng: &mut DemoRng,
        execution: &NodeExecutionRow,
        outputs: &Value,
    ) -> Result<(UploadFileRow, NodeExecutionOffloadRow), WriteFileError> {
        let file = upload(
            rng,
            &self.chatflow.storage,
            &execution.tenant_id,
            &format!("{}-outputs.json", execution.id),
            outputs.to_string().as_bytes(),
            "application/json",
            execution.created_at,
        )?;
        let offload = NodeExecutionOffloadRow {
            id: rng.uuid(),
            tenant_id: execution.tenant_id.clone(),
            app_id: execution.app_id.clone(),
            node_execution_id: execution.id.clone(),
            offload_type: "outputs".to_owned(),
            file_id: file.id.clone(),
            created_at: execution.created_at,
        };
        Ok((file, offload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::tests::{SmallDemo, small};

    fn executions<'a>(demo: &'a SmallDemo, node: &Node) -> Vec<&'a NodeExecutionRow> {
        demo.batches
            .iter()
            .flat_map(|batch| &batch.node_executions)
            .filter(|execution| execution.node_id == node.id)
            .collect()
    }

    fn parse(text: Option<&str>) -> Value {
        serde_json::from_str(text.expect("column set")).expect("valid JSON")
    }

    /// The full outputs of an execution, following the offload link when there is one.
    fn full_outputs(demo: &SmallDemo, execution: &NodeExecutionRow) -> Value {
        let offload = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.node_execution_offloads)
            .find(|offload| offload.node_execution_id == execution.id);
        match offload {
            None => parse(execution.outputs.as_deref()),
            Some(offload) => {
                let upload = demo
                    .batches
                    .iter()
                    .flat_map(|batch| &batch.upload_files)
                    .find(|upload| upload.id == offload.file_id)
                    .expect("offloaded upload");
                let bytes = std::fs::read(demo.storage.path().join(&upload.key)).expect("file");
                assert_eq!(bytes.len() as i64, upload.size);
                serde_json::from_slice(&bytes).expect("full outputs JSON")
            }
        }
    }

    fn node_memory(demo: &SmallDemo, conversation_id: &str, node: &Node) -> Value {
        let app_id = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.conversations)
            .find(|conversation| conversation.id == conversation_id)
            .map(|conversation| conversation.app_id.clone())
            .expect("conversation");
        let path = demo.storage.path().join(format!(
            "node_memory/{app_id}/{conversation_id}/{}.json",
            node.id
        ));
        serde_json::from_str(&std::fs::read_to_string(path).expect("node memory file"))
            .expect("node memory JSON")
    }

    #[test]
    fn llm_nodes_store_prompts_with_system_and_context_without() {
        let demo = small();
        let cut_off = &demo.story("Invalid outputs JSON").id;
        for node in [&RESEARCHER, &WRITER] {
            let rows = executions(&demo, node);
            assert_eq!(rows.len(), 6, "5 Kyoto runs and 1 packing run");
            for execution in rows {
                let data = parse(execution.process_data.as_deref());
                assert_eq!(data["model_mode"], "chat");
                let prompts = data["prompts"].as_array().expect("prompts");
                assert_eq!(prompts[0]["role"], "system");
                assert!(prompts[1..].iter().all(|prompt| prompt["role"] != "system"));
                if &execution.id == cut_off {
                    continue;
                }
                let outputs = full_outputs(&demo, execution);
                for key in ["text", "usage", "finish_reason", "context"] {
                    assert!(outputs.get(key).is_some(), "{key} in {}", node.title);
                }
                let context = outputs["context"].as_array().expect("context list");
                assert!(context.iter().all(|item| item["role"] != "system"));
                assert_eq!(
                    context.last().map(|item| &item["content"]),
                    Some(&outputs["text"])
                );
            }
        }
        let answers = executions(&demo, &ANSWER);
        let starts = executions(&demo, &START);
        assert_eq!((answers.len(), starts.len()), (6, 6));
    }

    #[test]
    fn regenerated_turn_leaves_the_thread_and_its_context() {
        let demo = small();
        let (_, rows) = demo.conversation("Chatflow node memory");
        assert_eq!(rows.len(), KYOTO_TURNS);
        assert_eq!(rows[2].parent_message_id, rows[3].parent_message_id);
        let checklist = executions(&demo, &RESEARCHER)
            .into_iter()
            .find(|execution| execution.workflow_run_id == rows[4].workflow_run_id)
            .expect("checklist execution");
        let context = full_outputs(&demo, checklist)["context"].to_string();
        assert!(context.contains("Veg Out") && !context.contains("Shigetsu"));
        assert!(context.contains("tool_call_id") && context.contains("file_ref"));
        let start = executions(&demo, &START)
            .into_iter()
            .find(|execution| execution.workflow_run_id == rows[4].workflow_run_id)
            .expect("start execution");
        assert_eq!(parse(start.outputs.as_deref())["sys.dialogue_count"], 4);
    }

    #[test]
    fn design_a_file_disagrees_with_the_context_on_one_turn() {
        let demo = small();
        let (conversation, rows) = demo.conversation("Chatflow node memory");
        let file = node_memory(&demo, &conversation.id, &RESEARCHER);
        assert_eq!(file["version"], 1);
        let turns = file["turns"].as_object().expect("turns map");
        assert_eq!(turns.len(), KYOTO_TURNS);
        let disagreeing: Vec<&str> = executions(&demo, &RESEARCHER)
            .into_iter()
            .filter_map(|execution| {
                let run = execution.workflow_run_id.as_deref()?;
                let turn = turns.get(run)?;
                let text = full_outputs(&demo, execution)["text"].clone();
                (turn["assistant_content"] != text).then_some(run)
            })
            .collect();
        assert_eq!(
            disagreeing,
            [rows[1].workflow_run_id.as_deref().expect("run")]
        );
        let story = demo.story("Node memory disagreement");
        let execution = executions(&demo, &RESEARCHER)
            .into_iter()
            .find(|execution| execution.id == story.id)
            .expect("story execution");
        assert_eq!(execution.workflow_run_id, rows[1].workflow_run_id);
        let first = &turns[rows[0].workflow_run_id.as_deref().expect("run")];
        assert_eq!(first["user_files"][0]["transfer_method"], "local_file");
    }

    #[test]
    fn seed_shaped_file_links_entries_into_a_tree() {
        let demo = small();
        let (conversation, rows) = demo.conversation("Chatflow node memory");
        let file = node_memory(&demo, &conversation.id, &WRITER);
        let entries = file["messages"].as_array().expect("messages list");
        assert_eq!(entries.len(), 2 * KYOTO_TURNS);
        let users: Vec<&Value> = entries.iter().filter(|e| e["role"] == "user").collect();
        let ids: Vec<&str> = users
            .iter()
            .filter_map(|e| e["message_id"].as_str())
            .collect();
        let row_ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        assert_eq!(ids, row_ids, "user entries carry the Dify message ids");
        assert!(users[0]["parent_message_id"].is_null());
        assert_eq!(users[2]["parent_message_id"], users[3]["parent_message_id"]);
        for pair in entries.chunks(2) {
            assert_eq!(pair[1]["parent_message_id"], pair[0]["message_id"]);
            assert!(pair[0]["token_count"].as_i64() > Some(0));
        }
    }

    #[test]
    fn offloaded_row_keeps_a_truncated_copy() {
        let demo = small();
        let story = demo.story("Offloaded node outputs");
        let execution = executions(&demo, &RESEARCHER)
            .into_iter()
            .find(|execution| execution.id == story.id)
            .expect("execution");
        let row = parse(execution.outputs.as_deref());
        let full = full_outputs(&demo, execution);
        assert!(row["text"].as_str().expect("text").ends_with("..."));
        assert!(full["text"].as_str().expect("text").len() > TRUNCATED_TEXT_CHARS);
        let length = |outputs: &Value| outputs["context"].as_array().map(Vec::len);
        assert_eq!(length(&row), Some(2));
        assert!(length(&full) > Some(8));
        let offloads = demo
            .batches
            .iter()
            .map(|b| b.node_execution_offloads.len())
            .sum::<usize>();
        assert_eq!(offloads, 1);
    }

    #[test]
    fn exactly_one_execution_has_invalid_outputs() {
        let demo = small();
        let invalid: Vec<&str> = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.node_executions)
            .filter(|execution| {
                let outputs = execution.outputs.as_deref().unwrap_or_default();
                serde_json::from_str::<Value>(outputs).is_err()
            })
            .map(|execution| execution.id.as_str())
            .collect();
        let story = demo.story("Invalid outputs JSON");
        assert_eq!(invalid, [story.id.as_str()]);
    }

    #[test]
    fn orphaned_message_has_a_file_and_no_run() {
        let demo = small();
        let story = demo.story("Orphaned workflow run");
        let message = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.messages)
            .find(|row| row.message.id == story.id)
            .expect("message");
        let run = message.message.workflow_run_id.as_deref().expect("run id");
        let runs: Vec<&WorkflowRunRow> = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.workflow_runs)
            .collect();
        assert!(runs.iter().all(|row| row.id != run));
        assert_eq!(runs.len(), 6);
        assert!(
            demo.batches
                .iter()
                .flat_map(|batch| &batch.message_files)
                .any(|file| file.message_id == story.id)
        );
    }

    #[test]
    fn cut_in_half_respects_character_boundaries() {
        assert_eq!(cut_in_half("abcd"), "ab");
        assert_eq!(cut_in_half("é"), "");
        assert_eq!(cut_in_half("aéb"), "a");
        assert_eq!(cut_in_half(""), "");
    }
}
