//! Message files kept in Dify's storage: the `upload_files.key` of each `local_file` row of
//! `message_files`, so `doctor` can check that the object is still there.

use sqlx::FromRow;

use super::error::StoreError;
use super::handle::Store;

/// A message's file uploaded to Dify's storage.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct MessageUpload {
    pub message_file_id: String,
    pub message_id: String,
    /// `None` when the message row is gone.
    pub conversation_id: Option<String>,
    /// The object key under Dify's storage.
    pub key: String,
}

const MESSAGE_UPLOADS_SQL: &str = "SELECT mf.id::text AS message_file_id, \
     mf.message_id::text AS message_id, m.conversation_id::text AS conversation_id, \
     uf.key AS key \
     FROM message_files mf JOIN upload_files uf ON uf.id = mf.upload_file_id \
     LEFT JOIN messages m ON m.id = mf.message_id \
     WHERE mf.transfer_method = 'local_file' ORDER BY mf.id";

impl Store {
    /// Every `local_file` message file with its upload's storage key; none where the database
    /// has no such tables.
    pub async fn message_uploads(&self) -> Result<Vec<MessageUpload>, StoreError> {
        if ["message_files", "upload_files", "messages"]
            .iter()
            .any(|table| !self.has_table(table))
        {
            return Ok(Vec::new());
        }
        on_pool!(self.pool, MESSAGE_UPLOADS_SQL, |pool, sql| {
            sqlx::query_as(sql).fetch_all(pool).await
        })
        .map_err(|e| self.query_failed(e))
    }
}
