//! Memory bases themselves: listing and finding them (with their flow, owner and totals), the
//! flows they watch, and creating, changing and deleting them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::FromRow;

use crate::memory::memory_base::ThresholdUnit;
use crate::store::error::StoreError;
use crate::store::handle::Store;
use crate::store::profile::dashed_id;
use crate::store::rows::MemoryBaseRow;

/// A memory base with its flow, owner and totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, FromRow)]
pub struct MemoryBaseInfo {
    pub id: String,
    pub name: String,
    pub flow_id: String,
    pub flow_name: Option<String>,
    pub user_id: String,
    pub username: Option<String>,
    pub threshold: i64,
    pub threshold_unit: String,
    pub auto_capture: bool,
    pub embedding_provider: String,
    pub embedding_model: String,
    pub kb_name: String,
    pub created_at: DateTime<Utc>,
    pub sessions: i64,
    pub total_processed: i64,
    pub ingestion_records: i64,
    pub active_jobs: i64,
    pub last_sync_at: Option<DateTime<Utc>>,
}

impl MemoryBaseInfo {
    /// The unit; an unknown column value counts runs, Langflow's shipped behaviour.
    pub fn unit(&self) -> ThresholdUnit {
        ThresholdUnit::parse(&self.threshold_unit).unwrap_or(ThresholdUnit::Runs)
    }
}

/// The `knowledge_base` row of a memory base in a database Langflow made.
#[derive(Debug, Clone, PartialEq, Serialize, FromRow)]
pub struct LangflowKbRow {
    pub id: String,
    pub user_id: String,
    /// The knowledge base's name (the base's `kb_name`), which names its table on remote backends.
    pub name: String,
    pub backend_type: String,
    pub storage_generation: i64,
    /// `ready` unless Langflow is migrating, detaching or deleting its storage.
    pub storage_state: String,
}

/// Fields of a memory base to change; `None` keeps the value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryBaseUpdate {
    pub name: Option<String>,
    pub threshold: Option<i64>,
    pub unit: Option<ThresholdUnit>,
    pub auto_capture: Option<bool>,
}

macro_rules! base_query {
    ($suffix:literal) => {
        concat!(
            "SELECT mb.id::text AS id, mb.name, mb.flow_id::text AS flow_id, \
             f.name AS flow_name, mb.user_id::text AS user_id, u.username, \
             mb.threshold::bigint AS threshold, mb.threshold_unit AS threshold_unit, \
             mb.auto_capture, mb.embedding_provider AS embedding_provider, mb.embedding_model, \
             mb.kb_name, mb.created_at, \
             (SELECT count(*) FROM memory_base_session s WHERE s.memory_base_id = mb.id) AS sessions, \
             (SELECT coalesce(sum(s.total_processed), 0)::bigint FROM memory_base_session s \
              WHERE s.memory_base_id = mb.id) AS total_processed, \
             (SELECT count(*) FROM message_ingestion_record r WHERE r.memory_base_id = mb.id) \
              AS ingestion_records, \
             (SELECT count(*) FROM job j WHERE j.asset_id = mb.id \
              AND j.status IN ('queued', 'in_progress')) AS active_jobs, \
             (SELECT max(s.last_sync_at) FROM memory_base_session s WHERE s.memory_base_id = mb.id) \
              AS last_sync_at \
             FROM memory_base mb LEFT JOIN flow f ON f.id = mb.flow_id \
             LEFT JOIN \"user\" u ON u.id = mb.user_id ",
            $suffix
        )
    };
}

impl Store {
    /// Every memory base, by owner then name.
    pub async fn memory_bases(&self) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("ORDER BY u.username, mb.name, mb.id"),
            |pool, sql| sqlx::query_as(sql).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The memory bases whose id or name is `key` (names are unique per user only).
    pub async fn find_memory_bases(&self, key: &str) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("WHERE mb.id::text = $1 OR mb.name = $2 ORDER BY u.username, mb.id"),
            |pool, sql| sqlx::query_as(sql)
                .bind(dashed_id(key))
                .bind(key)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The memory bases watching a flow.
    pub async fn memory_bases_of_flow(
        &self,
        flow_id: &str,
    ) -> Result<Vec<MemoryBaseInfo>, StoreError> {
        on_pool!(
            self.pool,
            base_query!("WHERE mb.flow_id = $1::uuid ORDER BY mb.name, mb.id"),
            |pool, sql| sqlx::query_as(sql).bind(flow_id).fetch_all(pool).await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// The knowledge-base row of a base in a database Langflow made: Langflow links them by
    /// owner and name.
    pub async fn langflow_knowledge_base(
        &self,
        base: &MemoryBaseInfo,
    ) -> Result<Option<LangflowKbRow>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT kb.id::text AS id, kb.user_id::text AS user_id, kb.name, kb.backend_type, \
             kb.storage_generation::bigint AS storage_generation, kb.storage_state \
             FROM knowledge_base kb \
             WHERE kb.user_id = $1::uuid AND kb.name = $2",
            |pool, sql| sqlx::query_as(sql)
                .bind(&base.user_id)
                .bind(&base.kb_name)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// A flow's owner (`None` when the flow does not exist).
    pub async fn flow_owner(&self, flow_id: &str) -> Result<Option<Option<String>>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT user_id::text FROM flow WHERE id = $1::uuid",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(flow_id)
                .fetch_optional(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    /// A flow id by id or name.
    pub async fn find_flows(&self, key: &str) -> Result<Vec<String>, StoreError> {
        on_pool!(
            self.pool,
            "SELECT id::text FROM flow WHERE id::text = $1 OR name = $2 ORDER BY id",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(dashed_id(key))
                .bind(key)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))
    }

    pub async fn create_memory_base(&self, base: &MemoryBaseRow) -> Result<(), StoreError> {
        self.ensure_writable()?;
        on_pool!(
            self.pool,
            "INSERT INTO memory_base (id, name, flow_id, user_id, threshold, threshold_unit, \
             auto_capture, embedding_provider, embedding_model, kb_name, created_at) \
             VALUES ($1::uuid, $2, $3::uuid, $4::uuid, $5, $6, $7, $8, $9, $10, $11)",
            |pool, sql| sqlx::query(sql)
                .bind(&base.id)
                .bind(&base.name)
                .bind(&base.flow_id)
                .bind(&base.user_id)
                .bind(base.threshold as i32)
                .bind(&base.threshold_unit)
                .bind(base.auto_capture)
                .bind(&base.embedding_provider)
                .bind(&base.embedding_model)
                .bind(&base.kb_name)
                .bind(base.created_at)
                .execute(pool)
                .await
                .map(|_| ())
        )
        .map_err(|e| self.query_failed(e))?;
        Ok(())
    }

    /// Changes a memory base; returns whether it exists.
    pub async fn update_memory_base(
        &self,
        id: &str,
        update: &MemoryBaseUpdate,
    ) -> Result<bool, StoreError> {
        // Name, threshold and auto-capture are what Langflow's own update changes, in place.
        self.ensure_writable_in_place()?;
        let result = if self.catalog.has_column("memory_base", "threshold_unit") {
            on_pool!(
                self.pool,
                "UPDATE memory_base SET name = coalesce($2, name), \
                 threshold = coalesce($3, threshold), auto_capture = coalesce($4, auto_capture), \
                 threshold_unit = coalesce($5, threshold_unit) WHERE id = $1::uuid",
                |pool, sql| sqlx::query(sql)
                    .bind(dashed_id(id))
                    .bind(&update.name)
                    .bind(update.threshold.map(|t| t as i32))
                    .bind(update.auto_capture)
                    .bind(update.unit.map(ThresholdUnit::as_str))
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            )
        } else {
            if update.unit.is_some_and(|unit| unit != ThresholdUnit::Runs) {
                return Err(StoreError::Lacks {
                    url: self.url.clone(),
                    explanation: format!(
                        "{}, whose memory-base thresholds always count flow runs",
                        self.profile.describe()
                    ),
                });
            }
            on_pool!(
                self.pool,
                "UPDATE memory_base SET name = coalesce($2, name), \
                 threshold = coalesce($3, threshold), auto_capture = coalesce($4, auto_capture) \
                 WHERE id = $1::uuid",
                |pool, sql| sqlx::query(sql)
                    .bind(dashed_id(id))
                    .bind(&update.name)
                    .bind(update.threshold.map(|t| t as i32))
                    .bind(update.auto_capture)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            )
        }
        .map_err(|e| self.query_failed(e))?;
        Ok(result > 0)
    }

    /// Deletes a memory base with its sessions, ingestion records, runs and sync leases, in one
    /// transaction. Its jobs stay, as history.
    pub async fn delete_memory_base(&self, id: &str) -> Result<bool, StoreError> {
        self.ensure_writable()?;
        const STATEMENTS: [&str; 5] = [
            "DELETE FROM message_ingestion_record WHERE memory_base_id = $1::uuid",
            "DELETE FROM memory_base_workflow_run WHERE memory_base_id = $1::uuid",
            "DELETE FROM memory_base_session WHERE memory_base_id = $1::uuid",
            "DELETE FROM memscope_sync_lease WHERE lock_name LIKE $1 || ':%'",
            "DELETE FROM memory_base WHERE id = $1::uuid",
        ];
        let deleted = self.run_in_one_transaction(&STATEMENTS, id).await?;
        Ok(deleted > 0)
    }
}
