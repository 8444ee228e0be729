//! The select lists several reads share, as macros so `concat!` builds whole query texts from
//! them, and the message record the message reads decode into.

use chrono::NaiveDateTime;
use sqlx::FromRow;

use crate::memory::model::StoredMessage;

/// The columns of a [`StoredMessage`], uuid columns read as text (a literal so `concat!` can
/// build whole query texts from it).
macro_rules! message_columns {
    () => {
        "m.id::text AS id, m.conversation_id::text AS conversation_id, \
         m.parent_message_id::text AS parent_message_id, m.query, m.answer, \
         m.message_tokens::bigint AS message_tokens, m.answer_tokens::bigint AS answer_tokens, \
         m.status, m.error, m.invoke_from, m.workflow_run_id::text AS workflow_run_id, \
         m.created_at, m.app_mode AS app_mode"
    };
}

/// Conversations with their apps, up to the `WHERE`; `$memory_window` is the app's window
/// column expression.
macro_rules! conversation_info_select {
    ($memory_window:literal) => {
        concat!(
            "SELECT c.id::text AS id, c.name, c.mode, c.status, c.from_source, \
             c.dialogue_count::bigint AS dialogue_count, c.app_id::text AS app_id, \
             a.name AS app_name, a.mode AS app_mode, ",
            $memory_window,
            " AS memory_window, c.created_at, c.updated_at, c.is_deleted AS is_deleted \
             FROM conversations c LEFT JOIN apps a ON a.id = c.app_id "
        )
    };
}

#[derive(FromRow)]
pub(super) struct MessageRecord {
    id: String,
    pub(super) conversation_id: String,
    parent_message_id: Option<String>,
    query: String,
    answer: String,
    message_tokens: i64,
    answer_tokens: i64,
    status: String,
    error: Option<String>,
    invoke_from: Option<String>,
    workflow_run_id: Option<String>,
    created_at: NaiveDateTime,
    app_mode: Option<String>,
}

impl From<MessageRecord> for StoredMessage {
    fn from(r: MessageRecord) -> Self {
        StoredMessage {
            id: r.id,
            conversation_id: r.conversation_id,
            parent_message_id: r.parent_message_id,
            query: r.query,
            answer: r.answer,
            message_tokens: r.message_tokens,
            answer_tokens: r.answer_tokens,
            status: r.status,
            error: r.error,
            invoke_from: r.invoke_from,
            workflow_run_id: r.workflow_run_id,
            created_at: r.created_at,
            app_mode: r.app_mode.filter(|mode| !mode.is_empty()),
        }
    }
}
