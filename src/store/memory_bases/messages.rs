//! The messages an ingestion reads: those at given positions of a timeline, and those a base's
//! ingestion records name.

use chrono::{DateTime, Utc};
use sqlx::FromRow;

use crate::memory::memory_base::{MessagePosition, canonical_id};
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::pool::DbPool;

/// A message to ingest.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingMessage {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    pub sender: String,
    pub sender_name: String,
    pub session_id: String,
    pub text: String,
    pub content_blocks: String,
    pub flow_id: Option<String>,
    pub run_id: Option<String>,
}

impl PendingMessage {
    pub fn position(&self) -> MessagePosition {
        MessagePosition {
            timestamp: self.timestamp,
            id: self.id.clone(),
        }
    }
}

/// The columns of a [`MessageRow`], the timestamp as text.
macro_rules! message_columns {
    () => {
        "SELECT m.id::text AS id, CAST(m.timestamp AS TEXT) AS timestamp, m.sender, \
         m.sender_name, m.session_id, m.text, m.content_blocks::text AS content_blocks, \
         m.flow_id::text AS flow_id, m.run_id::text AS run_id"
    };
}

/// A message as stored, before its timestamp is parsed.
#[derive(FromRow)]
struct MessageRow {
    id: String,
    timestamp: String,
    sender: String,
    sender_name: String,
    session_id: String,
    text: String,
    content_blocks: String,
    flow_id: Option<String>,
    run_id: Option<String>,
}

impl Store {
    /// The messages at `positions`, in that order; messages deleted meanwhile are left out.
    pub async fn messages_at(
        &self,
        positions: &[MessagePosition],
    ) -> Result<Vec<PendingMessage>, StoreError> {
        let ids: Vec<&str> = positions.iter().map(|p| p.id.as_str()).collect();
        let rows: Vec<MessageRow> = match &self.pool {
            DbPool::Sqlite(pool, dialect) => {
                // Langflow's SQLite keeps ids as 32 hex digits.
                let ids: Vec<String> = ids
                    .iter()
                    .map(|id| match dialect.compact_ids() {
                        true => id.replace('-', "").to_ascii_lowercase(),
                        false => (*id).to_owned(),
                    })
                    .collect();
                sqlx::query_as(crate::store::sql::dialect_text(
                    *dialect,
                    concat!(
                        message_columns!(),
                        " FROM message m WHERE m.id IN (SELECT value FROM json_each($1))"
                    ),
                ))
                .bind(serde_json::to_string(&ids).unwrap_or_default())
                .fetch_all(pool)
                .await
            }
            DbPool::Postgres(pool, _) => {
                sqlx::query_as(concat!(
                    message_columns!(),
                    " FROM message m WHERE m.id = ANY($1::uuid[])"
                ))
                .bind(&ids)
                .fetch_all(pool)
                .await
            }
            DbPool::Mysql(..) => return Err(self.no_memory_bases_on_mysql()),
        }
        .map_err(|e| self.query_failed(e))?;
        let mut by_id: std::collections::HashMap<String, PendingMessage> = rows
            .into_iter()
            .map(|row| Ok((canonical_id(&row.id), self.pending_message(row)?)))
            .collect::<Result<_, StoreError>>()?;
        Ok(positions
            .iter()
            .filter_map(|p| by_id.remove(&canonical_id(&p.id)))
            .collect())
    }

    fn pending_message(&self, row: MessageRow) -> Result<PendingMessage, StoreError> {
        Ok(PendingMessage {
            timestamp: self.parse_stored_time(&row.timestamp, "message", &row.id)?,
            id: row.id,
            sender: row.sender,
            sender_name: row.sender_name,
            session_id: row.session_id,
            text: row.text,
            content_blocks: row.content_blocks,
            flow_id: row.flow_id,
            run_id: row.run_id,
        })
    }

    /// The messages a base's ingestion records name, in (instant, id) order, with the job
    /// that ingested each: what the KB should hold.
    pub async fn ingested_messages(
        &self,
        memory_base_id: &str,
    ) -> Result<Vec<(PendingMessage, Option<String>)>, StoreError> {
        #[derive(FromRow)]
        struct Ingested {
            #[sqlx(flatten)]
            message: MessageRow,
            job_id: Option<String>,
        }
        let rows: Vec<Ingested> = on_pool!(
            self.pool,
            concat!(
                message_columns!(),
                ", r.job_id::text AS job_id FROM message_ingestion_record r \
                 JOIN message m ON m.id = r.message_id WHERE r.memory_base_id = $1::uuid"
            ),
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let mut ingested = rows
            .into_iter()
            .map(|r| Ok((self.pending_message(r.message)?, r.job_id)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        ingested.sort_by_key(|(message, _)| message.position());
        Ok(ingested)
    }
}
