//! What a session has pending: its timeline of messages, where its cursor sits in it, the
//! pending count in a base's unit, and the runs no ingestion job has taken yet.

use chrono::{DateTime, Utc};

use super::bases::MemoryBaseInfo;
use super::sessions::MemoryBaseSessionInfo;
use crate::memory::instant::parse_instant;
use crate::memory::memory_base::{
    MessagePosition, SessionTimeline, ThresholdUnit, TimelineEntry, canonical_id, compare_ids,
};
use crate::store::error::StoreError;
use crate::store::handle::Store;

/// A recorded flow run no ingestion job has taken yet.
pub(super) struct UnstampedRun {
    pub(super) id: String,
    /// Its workflow job (its own id when it has none): the dedupe key's unit.
    unit: String,
    pub(super) recorded_at: DateTime<Utc>,
}

impl Store {
    /// A session's messages in (instant, id) order, read through the (flow, session) index.
    /// Timestamps are selected as text and parsed here ([`parse_stored_time`]): compared as
    /// text in SQL they order wrongly, and an odd format cannot fail the query.
    pub async fn session_timeline(
        &self,
        flow_id: &str,
        session_id: &str,
    ) -> Result<SessionTimeline, StoreError> {
        // One small integer for the flags: bit 0 output, bit 1 error (as Langflow leaves error
        // messages out: `error` set, or category `error`).
        let rows: Vec<(String, String, i32)> = on_pool!(
            self.pool,
            "SELECT m.id::text, CAST(m.timestamp AS TEXT), \
             CASE WHEN m.is_output THEN 1 ELSE 0 END \
             + CASE WHEN m.error OR m.category IS NULL OR m.category = 'error' THEN 2 ELSE 0 END \
             FROM message m WHERE m.flow_id = $1::uuid AND m.session_id = $2",
            |pool, sql| sqlx::query_as(sql)
                .bind(flow_id)
                .bind(session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let entries = rows
            .into_iter()
            .map(|(id, timestamp, flags)| {
                Ok(TimelineEntry {
                    position: MessagePosition {
                        timestamp: self.parse_stored_time(&timestamp, "message", &id)?,
                        id,
                    },
                    is_output: flags & 1 != 0,
                    is_error: flags & 2 != 0,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(SessionTimeline::new(entries))
    }

    /// A stored timestamp as an instant; `what` and `id` name its row in the error.
    pub(super) fn parse_stored_time(
        &self,
        text: &str,
        what: &str,
        id: &str,
    ) -> Result<DateTime<Utc>, StoreError> {
        parse_instant(text).map_err(|source| StoreError::BadTimestamp {
            url: self.url.clone(),
            row: format!("{what} {id}"),
            source,
        })
    }

    /// Where a session's cursor sits in its timeline; `None` when it has none. When the cursor's
    /// message was deleted (a trim, a delete), the newest message the session still has a record
    /// of takes its place: every message before the cursor was ingested, so nothing after that
    /// one was, and the session is not read again from the start.
    pub async fn cursor_position(
        &self,
        session: &MemoryBaseSessionInfo,
        timeline: &SessionTimeline,
    ) -> Result<Option<MessagePosition>, StoreError> {
        let Some(id) = session.cursor_id.as_deref() else {
            return Ok(None);
        };
        if let Some(position) = timeline.find(id) {
            return Ok(Some(position.clone()));
        }
        let recorded: Vec<String> = on_pool!(
            self.pool,
            "SELECT message_id::text FROM message_ingestion_record \
             WHERE memory_base_id = $1::uuid AND session_id = $2",
            |pool, sql| sqlx::query_scalar(sql)
                .bind(&session.memory_base_id)
                .bind(&session.session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        let recorded = recorded.iter().map(|id| canonical_id(id)).collect();
        Ok(timeline.newest_of(&recorded).cloned())
    }

    /// Output messages of a flow's session strictly after `cursor` (the `messages` unit),
    /// error messages left out.
    pub async fn pending_output_messages(
        &self,
        flow_id: &str,
        session_id: &str,
        cursor: Option<&MessagePosition>,
    ) -> Result<i64, StoreError> {
        Ok(self
            .session_timeline(flow_id, session_id)
            .await?
            .pending_outputs(cursor))
    }

    /// The pending count of a session in a base's unit.
    pub async fn pending_count(
        &self,
        base: &MemoryBaseInfo,
        session: &MemoryBaseSessionInfo,
    ) -> Result<i64, StoreError> {
        match base.unit() {
            ThresholdUnit::Runs => Ok(session.pending_runs),
            ThresholdUnit::Messages => {
                let timeline = self
                    .session_timeline(&base.flow_id, &session.session_id)
                    .await?;
                let cursor = self.cursor_position(session, &timeline).await?;
                Ok(timeline.pending_outputs(cursor.as_ref()))
            }
        }
    }

    /// The newest pending unit of a session: its latest unstamped run's workflow job (unit
    /// `runs`, when it has any), by the instant it was recorded.
    pub async fn latest_pending_run(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let runs = self.unstamped_runs(memory_base_id, session_id).await?;
        Ok(runs
            .into_iter()
            .max_by(|a, b| {
                a.recorded_at
                    .cmp(&b.recorded_at)
                    .then_with(|| compare_ids(&a.id, &b.id))
            })
            .map(|run| run.unit))
    }

    /// The session's runs not yet stamped with an ingestion job.
    pub(super) async fn unstamped_runs(
        &self,
        memory_base_id: &str,
        session_id: &str,
    ) -> Result<Vec<UnstampedRun>, StoreError> {
        let rows: Vec<(String, String, String)> = on_pool!(
            self.pool,
            "SELECT id::text, coalesce(workflow_job_id::text, id::text), CAST(recorded_at AS TEXT) \
             FROM memory_base_workflow_run \
             WHERE memory_base_id = $1::uuid AND session_id = $2 AND ingestion_job_id IS NULL",
            |pool, sql| sqlx::query_as(sql)
                .bind(memory_base_id)
                .bind(session_id)
                .fetch_all(pool)
                .await
        )
        .map_err(|e| self.query_failed(e))?;
        rows.into_iter()
            .map(|(id, unit, recorded_at)| {
                Ok(UnstampedRun {
                    recorded_at: self.parse_stored_time(&recorded_at, "workflow run", &id)?,
                    id,
                    unit,
                })
            })
            .collect()
    }
}
