//! Memory's history windows of many conversations at once: a list page's token column reads
//! one window per listed conversation, and one query per page (not several per conversation)
//! keeps it from trailing the rows.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use super::columns::MessageRecord;
use super::conversations::ConversationInfo;
use crate::memory::model::StoredMessage;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::ids::{IN_LIST_LEN, canonical_uuids, in_list_query, padded};
use crate::store::pool::on_pool;

static CONVERSATION_INFOS_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        concat!(
            conversation_info_select!("a.memory_window::bigint"),
            "WHERE c.id IN "
        ),
        "",
    )
});

static CONVERSATION_INFOS_WITHOUT_WINDOW_SQL: LazyLock<String> = LazyLock::new(|| {
    in_list_query(
        concat!(conversation_info_select!("NULL::bigint"), "WHERE c.id IN "),
        "",
    )
});

/// The newest `$N+1` rows of each conversation, newest first, ranked as the history query
/// orders them; `$filter` narrows the rows ranked (Dify's answered-only era).
fn history_windows_sql(filter: &str) -> String {
    in_list_query(
        &format!(
            concat!(
                "SELECT ",
                message_columns!(),
                " FROM (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.conversation_id \
                 ORDER BY m.created_at DESC, m.id DESC) AS newest_rank \
                 FROM messages m WHERE {}m.conversation_id IN "
            ),
            filter
        ),
        &format!(
            ") m WHERE m.newest_rank <= ${} \
             ORDER BY m.conversation_id, m.created_at DESC, m.id DESC",
            IN_LIST_LEN + 1
        ),
    )
}

static HISTORY_WINDOWS_SQL: LazyLock<String> = LazyLock::new(|| history_windows_sql(""));

static ANSWERED_HISTORY_WINDOWS_SQL: LazyLock<String> =
    LazyLock::new(|| history_windows_sql("m.answer <> '' AND "));

impl Store {
    /// The conversations among `ids` that exist, with their apps, in no particular order.
    pub async fn conversation_infos(
        &self,
        ids: &[String],
    ) -> Result<Vec<ConversationInfo>, StoreError> {
        let ids = canonical_uuids(ids.iter().map(String::as_str));
        let query = if self.catalog.has_column("apps", "memory_window") {
            &CONVERSATION_INFOS_SQL
        } else {
            &CONVERSATION_INFOS_WITHOUT_WINDOW_SQL
        };
        self.rows_for_ids(query.as_str(), &ids, None).await
    }

    /// [`Store::history_messages`] of each of `conversation_ids` at once: the newest `limit`
    /// rows of each, newest first, keyed by conversation (absent: no rows).
    pub async fn history_windows(
        &self,
        conversation_ids: &[String],
        limit: i64,
    ) -> Result<FxHashMap<String, Vec<StoredMessage>>, StoreError> {
        let ids = canonical_uuids(conversation_ids.iter().map(String::as_str));
        let query = if self.dify_schema().memory_skips_unanswered() {
            &ANSWERED_HISTORY_WINDOWS_SQL
        } else {
            &HISTORY_WINDOWS_SQL
        };
        let mut windows: FxHashMap<String, Vec<StoredMessage>> = FxHashMap::default();
        for chunk in ids.chunks(IN_LIST_LEN) {
            let records: Vec<MessageRecord> = on_pool!(self.pool, query.as_str(), |pool, sql| {
                let mut query = sqlx::query_as(sql);
                for id in padded(chunk) {
                    query = query.bind(id);
                }
                query.bind(limit.max(0)).fetch_all(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
            for record in records {
                let message = StoredMessage::from(record);
                windows
                    .entry(message.conversation_id.clone())
                    .or_default()
                    .push(message);
            }
        }
        Ok(windows)
    }
}
