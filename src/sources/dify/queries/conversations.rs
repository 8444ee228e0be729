//! Conversations: the list's page and filter, one conversation with its app, a typed id or
//! prefix resolved to a conversation, and Dify's count of deleted ones.

use chrono::NaiveDateTime;
use sqlx::FromRow;

use crate::sources::adapter::Part;
use crate::sources::dify::schema::DifySchema;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::ids::{IdMatch, canonical_uuid, id_prefix_pattern};
use crate::store::pool::on_pool;

/// A position in the conversation list: the last row of the previous page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationCursor {
    pub updated_at: NaiveDateTime,
    pub id: String,
}

/// Which conversations [`Store::list_conversations`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationFilter {
    pub app_id: Option<String>,
    /// Matched case-insensitively against the conversation's name, its id (as a prefix), its
    /// app's name, and its messages' query and answer text.
    pub search: Option<String>,
    pub limit: i64,
    /// Rows strictly after this cursor in the list's order.
    pub after: Option<ConversationCursor>,
    /// List conversations deleted in Dify (`is_deleted`) too; Dify hides them.
    pub include_deleted: bool,
}

impl Default for ConversationFilter {
    fn default() -> Self {
        ConversationFilter {
            app_id: None,
            search: None,
            limit: 50,
            after: None,
            include_deleted: false,
        }
    }
}

/// One row of the conversation list.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ConversationSummary {
    pub id: String,
    pub name: String,
    pub app_id: String,
    /// `None` when the app row is missing.
    pub app_name: Option<String>,
    pub app_mode: Option<String>,
    /// The conversation's own mode.
    pub mode: String,
    pub message_count: i64,
    /// The newest message's time, or the conversation's `updated_at` when it has none.
    pub last_activity: NaiveDateTime,
    /// The list's sort key, with `id`.
    pub updated_at: NaiveDateTime,
    /// Deleted in Dify: hidden there, listed here only on request.
    pub is_deleted: bool,
}

impl ConversationSummary {
    /// The cursor for the page after this row.
    pub fn cursor(&self) -> ConversationCursor {
        ConversationCursor {
            updated_at: self.updated_at,
            id: self.id.clone(),
        }
    }
}

/// One conversation with its app.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ConversationInfo {
    pub id: String,
    pub name: String,
    pub mode: String,
    pub status: String,
    pub from_source: String,
    pub dialogue_count: i64,
    pub app_id: String,
    pub app_name: Option<String>,
    pub app_mode: Option<String>,
    /// The app's memory window (`MemoryConfig.window.size`), when set.
    pub memory_window: Option<i64>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// Deleted in Dify (`is_deleted`): its API and console no longer show it.
    pub is_deleted: bool,
    /// Memory reads only the answered rows, newest first, as Dify did before regeneration
    /// threads (set from the schema when the conversation is loaded).
    #[sqlx(skip)]
    pub answered_rows_only: bool,
}

impl Store {
    /// What the database has of Dify's schema eras, which its reads follow (`Profile::detect`
    /// gave its parts; memscope's migrations never change these columns, so the catalog read
    /// again after one agrees with the dialect's stand-ins).
    pub fn dify_schema(&self) -> DifySchema {
        if self.profile.has(Part::Conversations) {
            DifySchema::of(&self.catalog)
        } else {
            DifySchema::FULL
        }
    }

    /// Conversations newest first (`updated_at DESC, id DESC`), one page at a time (the search
    /// and its paths are in `search.rs`).
    pub async fn list_conversations(
        &self,
        filter: &ConversationFilter,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        let mut rows = Vec::new();
        self.stream_conversations(filter, |row| rows.push(row))
            .await?;
        Ok(rows)
    }

    /// The conversation `text` names: its whole id or a unique prefix (what the list shows).
    pub async fn resolve_conversation_id(&self, text: &str) -> Result<IdMatch, StoreError> {
        self.resolve_id(
            text,
            "SELECT id::text FROM conversations WHERE id::text LIKE $1 ORDER BY id::text LIMIT 6",
        )
        .await
    }

    /// `text` as a whole id (not checked: the caller's lookup says whether it exists), else the
    /// ids `prefix_sql` finds for the prefix pattern `$1` (at most [`ID_CANDIDATES`] + 1).
    pub(crate) async fn resolve_id(
        &self,
        text: &str,
        prefix_sql: &'static str,
    ) -> Result<IdMatch, StoreError> {
        if let Some(id) = canonical_uuid(text) {
            return Ok(IdMatch::One(id));
        }
        let Some(pattern) = id_prefix_pattern(text) else {
            return Ok(IdMatch::Unknown);
        };
        on_pool!(self.pool, prefix_sql, |pool, sql| {
            sqlx::query_scalar(sql).bind(&pattern).fetch_all(pool).await
        })
        .map(IdMatch::from_found)
        .map_err(|e| self.query_failed(e))
    }

    /// One conversation with its app's name, mode and memory window.
    pub async fn conversation_info(
        &self,
        conversation_id: &str,
    ) -> Result<Option<ConversationInfo>, StoreError> {
        let Some(id) = canonical_uuid(conversation_id) else {
            return Ok(None);
        };
        let query = if self.catalog.has_column("apps", "memory_window") {
            CONVERSATION_INFO_SQL
        } else {
            CONVERSATION_INFO_WITHOUT_WINDOW_SQL
        };
        on_pool!(self.pool, query, |pool, sql| {
            sqlx::query_as(sql).bind(&id).fetch_optional(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }

    /// How many conversations Dify has deleted (0 where the schema cannot mark them).
    pub async fn deleted_conversation_count(&self) -> Result<i64, StoreError> {
        on_pool!(self.pool, DELETED_CONVERSATIONS_SQL, |pool, sql| {
            sqlx::query_scalar(sql).fetch_one(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }
}

/// One conversation with its app.
macro_rules! conversation_info_sql {
    ($memory_window:literal) => {
        concat!(
            conversation_info_select!($memory_window),
            "WHERE c.id = $1::uuid"
        )
    };
}

const CONVERSATION_INFO_SQL: &str = conversation_info_sql!("a.memory_window::bigint");

/// For Dify's own database, whose `apps` keeps the window in the app config, not a column.
const CONVERSATION_INFO_WITHOUT_WINDOW_SQL: &str = conversation_info_sql!("NULL::bigint");

const DELETED_CONVERSATIONS_SQL: &str =
    "SELECT COUNT(*)::bigint FROM conversations c WHERE c.is_deleted";
