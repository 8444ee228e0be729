//! The rows of a Dify conversation, built turn by turn: apps, conversations, messages with
//! their parent links and token counts, and uploaded files.

use chrono::NaiveDateTime;

use crate::demo::files::{FileRoot, WriteFileError};
use crate::demo::ids::{DemoRng, seconds};
use crate::demo::text::estimate_tokens;
use crate::memory::model::{StoredMessage, UUID_NIL};
use crate::store::rows::{
    AppRow, Batch, ConversationRow, MessageFileRow, MessageRow, UploadFileRow,
};

/// Dify reads at most this many rows when no memory window is set.
const DEFAULT_ROW_LIMIT: usize = 500;

/// Tokens of the system prompt every demo app sends.
const SYSTEM_PROMPT_TOKENS: i64 = 120;

pub(crate) fn app(
    rng: &mut DemoRng,
    tenant_id: &str,
    name: &str,
    mode: &str,
    memory_window: Option<i64>,
    created_at: NaiveDateTime,
) -> AppRow {
    AppRow {
        id: rng.uuid(),
        tenant_id: tenant_id.to_owned(),
        name: name.to_owned(),
        mode: mode.to_owned(),
        memory_window,
        created_at,
    }
}

/// Where a new row hangs in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parent {
    /// `parent_message_id` NULL: a first turn, or a regenerated first turn.
    Root,
    /// The row at this index in the conversation.
    Row(usize),
    /// `parent_message_id` = UUID_NIL: a legacy or service-API row; Dify's walk links it to the
    /// chronologically previous row.
    Nil,
}

/// Builds one conversation's rows in chronological order, one row per user turn and its answer.
pub(crate) struct ConversationBuilder {
    app_id: String,
    conversation: ConversationRow,
    rows: Vec<MessageRow>,
    /// Per row: the row its history continues from, and the tokens the turn adds to later prompts.
    lineage: Vec<(Option<usize>, i64)>,
    window: usize,
    clock: NaiveDateTime,
}

impl ConversationBuilder {
    pub(crate) fn new(
        rng: &mut DemoRng,
        app: &AppRow,
        name: &str,
        invoke_from: &str,
        started_at: NaiveDateTime,
    ) -> Self {
        let is_chatflow = app.mode == "advanced-chat";
        let conversation = ConversationRow {
            id: rng.uuid(),
            app_id: app.id.clone(),
            name: name.to_owned(),
            mode: app.mode.clone(),
            model_provider: (!is_chatflow).then(|| "openai".to_owned()),
            model_id: (!is_chatflow).then(|| "gpt-4o".to_owned()),
            status: "normal".to_owned(),
            invoke_from: Some(invoke_from.to_owned()),
            // End users reach apps through the API; accounts through the console.
            from_source: match invoke_from {
                "service-api" | "web-app" => "api",
                _ => "console",
            }
            .to_owned(),
            dialogue_count: 0,
            created_at: started_at,
            updated_at: started_at,
        };
        let window = app
            .memory_window
            .and_then(|size| usize::try_from(size).ok())
            .filter(|&size| size > 0)
            .map_or(DEFAULT_ROW_LIMIT, |size| size.min(DEFAULT_ROW_LIMIT));
        ConversationBuilder {
            app_id: app.id.clone(),
            conversation,
            rows: Vec::new(),
            lineage: Vec::new(),
            window,
            clock: started_at,
        }
    }

    pub(crate) fn conversation_id(&self) -> &str {
        &self.conversation.id
    }

    /// Appends a completed turn `gap_seconds` after the previous one and returns its index.
    ///
    /// `message_tokens` is estimated as the provider would report the prompt: system prompt, the
    /// history Dify sends (the thread's last `memory_window` turns) and the query.
    pub(crate) fn turn(
        &mut self,
        rng: &mut DemoRng,
        parent: Parent,
        query: String,
        answer: String,
        gap_seconds: i64,
    ) -> usize {
        let index = self.rows.len();
        let (parent_message_id, history_from) = match parent {
            Parent::Root => (None, None),
            Parent::Row(row) => (Some(self.rows[row].message.id.clone()), Some(row)),
            Parent::Nil => (Some(UUID_NIL.to_owned()), index.checked_sub(1)),
        };
        let history_tokens: i64 = std::iter::successors(history_from, |&row| self.lineage[row].0)
            .take(self.window)
            .map(|row| self.lineage[row].1)
            .sum();
        let query_tokens = estimate_tokens(&query);
        let answer_tokens = estimate_tokens(&answer);
        self.clock += seconds(gap_seconds);
        self.lineage
            .push((history_from, query_tokens + answer_tokens));
        self.rows.push(MessageRow {
            app_id: self.app_id.clone(),
            message: StoredMessage {
                id: rng.uuid(),
                conversation_id: self.conversation.id.clone(),
                parent_message_id,
                query,
                answer,
                message_tokens: SYSTEM_PROMPT_TOKENS + history_tokens + query_tokens,
                answer_tokens,
                status: "normal".to_owned(),
                error: None,
                invoke_from: self.conversation.invoke_from.clone(),
                workflow_run_id: None,
                created_at: self.clock,
                app_mode: None,
            },
        });
        index
    }

    pub(crate) fn row(&self, index: usize) -> &StoredMessage {
        &self.rows[index].message
    }

    pub(crate) fn row_mut(&mut self, index: usize) -> &mut StoredMessage {
        &mut self.rows[index].message
    }

    /// The row a turn's history continues from (its tree parent).
    pub(crate) fn history_parent(&self, index: usize) -> Option<usize> {
        self.lineage[index].0
    }

    /// Turns in the thread ending at `index`: Dify's `sys.dialogue_count` for that turn.
    pub(crate) fn thread_length(&self, index: usize) -> usize {
        std::iter::successors(Some(index), |&row| self.lineage[row].0).count()
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn finish(mut self, batch: &mut Batch) -> String {
        self.conversation.dialogue_count = self.rows.len() as i64;
        self.conversation.updated_at = self.clock;
        let id = self.conversation.id.clone();
        batch.conversations.push(self.conversation);
        batch.messages.append(&mut self.rows);
        id
    }
}

/// An uploaded file: the `upload_files` row plus the bytes written at its storage key.
pub(crate) fn upload(
    rng: &mut DemoRng,
    storage: &FileRoot,
    tenant_id: &str,
    name: &str,
    bytes: &[u8],
    mime_type: &str,
    created_at: NaiveDateTime,
) -> Result<UploadFileRow, WriteFileError> {
    let id = rng.uuid();
    let extension = name.rsplit('.').next().unwrap_or_default().to_owned();
    let key = format!("upload_files/{tenant_id}/{id}.{extension}");
    let size = storage.write(&key, bytes)?;
    Ok(UploadFileRow {
        id,
        tenant_id: tenant_id.to_owned(),
        storage_type: "opendal".to_owned(),
        key,
        name: name.to_owned(),
        size,
        extension,
        mime_type: Some(mime_type.to_owned()),
        created_at,
    })
}

/// A `message_files` row for a local upload owned by the user.
pub(crate) fn user_upload_file(
    rng: &mut DemoRng,
    message: &StoredMessage,
    file_type: &str,
    upload: &UploadFileRow,
) -> MessageFileRow {
    MessageFileRow {
        id: rng.uuid(),
        message_id: message.id.clone(),
        file_type: file_type.to_owned(),
        transfer_method: "local_file".to_owned(),
        url: None,
        belongs_to: Some("user".to_owned()),
        upload_file_id: Some(upload.id.clone()),
        created_at: message.created_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::ids::base_time;

    #[test]
    fn message_tokens_count_only_the_window() {
        let mut rng = DemoRng::new(1, 0);
        let app = app(&mut rng, "t", "windowed", "chat", Some(2), base_time());
        let mut conversation =
            ConversationBuilder::new(&mut rng, &app, "c", "web-app", base_time());
        let turn = "a".repeat(40); // 10 tokens
        let mut previous = conversation.turn(&mut rng, Parent::Root, turn.clone(), turn.clone(), 0);
        for _ in 0..4 {
            previous = conversation.turn(
                &mut rng,
                Parent::Row(previous),
                turn.clone(),
                turn.clone(),
                1,
            );
        }
        // System prompt + two earlier turns of 20 tokens + the 10-token query.
        assert_eq!(
            conversation.row(previous).message_tokens,
            SYSTEM_PROMPT_TOKENS + 2 * 20 + 10
        );
        assert_eq!(
            conversation.row(0).message_tokens,
            SYSTEM_PROMPT_TOKENS + 10
        );
    }
}
