//! A chatflow conversation played turn by turn: its messages, each LLM node's context, and
//! the node memory files both designs keep.

use chrono::NaiveDateTime;
use serde_json::{Map, Value, json};

use super::graph::{Chatflow, RESEARCHER, RESEARCHER_SYSTEM, WRITER, WRITER_SYSTEM};
use super::llm::{ImageRef, LlmCall, Said, web_search};
use super::run::{Quirk, Run};
use crate::demo::files::{TINY_PNG, WriteFileError};
use crate::demo::ids::{DemoRng, seconds};
use crate::demo::text::estimate_tokens;
use crate::memory::model::{Role, StoredMessage};
use crate::sources::dify::demo::builder::{ConversationBuilder, Parent, upload, user_upload_file};
use crate::store::rows::Batch;

pub(super) struct TurnSpec {
    pub(super) parent: Parent,
    pub(super) query: &'static str,
    pub(super) image: Option<&'static str>,
    /// Arguments of a `web_search` call the researcher made, answered by a tool result.
    pub(super) search: Option<&'static str>,
    pub(super) research: String,
    pub(super) reply: String,
    pub(super) quirk: Quirk,
}

/// The executions of one turn that stories point at.
pub(super) struct PlayedTurn {
    pub(super) message_id: String,
    pub(super) researcher_execution: Option<String>,
    pub(super) writer_execution: Option<String>,
}

/// A chatflow conversation being played turn by turn.
pub(super) struct ChatflowConversation {
    pub(super) messages: ConversationBuilder,
    /// Per message row: each LLM node's context after that turn.
    researcher_contexts: Vec<Vec<Said>>,
    writer_contexts: Vec<Vec<Said>>,
    /// Per message row: the id of the writer's assistant entry in the seed-shaped file.
    writer_reply_ids: Vec<String>,
    researcher_turns: Map<String, Value>,
    writer_messages: Vec<Value>,
}

impl ChatflowConversation {
    pub(super) fn new(
        rng: &mut DemoRng,
        chatflow: &Chatflow,
        name: &str,
        started_at: NaiveDateTime,
    ) -> Self {
        ChatflowConversation {
            messages: ConversationBuilder::new(rng, chatflow.app, name, "web-app", started_at),
            researcher_contexts: Vec::new(),
            writer_contexts: Vec::new(),
            writer_reply_ids: Vec::new(),
            researcher_turns: Map::new(),
            writer_messages: Vec::new(),
        }
    }

    pub(super) fn play(
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
    pub(super) fn finish(
        self,
        chatflow: &Chatflow,
        batch: &mut Batch,
    ) -> Result<String, WriteFileError> {
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
