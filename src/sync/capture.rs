//! `memscope capture`: records one flow invocation's messages for an application that calls
//! memscope, as Langflow's flow engine does, then runs the threshold check.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::SyncError;
use super::job::{SyncOutcome, Trigger};
use super::syncer::Syncer;
use crate::kb::embedder::Embedder;
use crate::memory::memory_base::threshold_reached;
use crate::store::CancelFlag;
use crate::store::Ingestion;
use crate::store::memory_bases::CapturedRun;
use crate::store::rows::{
    Batch, JobRow, LfMessageRow, MemoryBaseSessionRow, MemoryBaseWorkflowRunRow,
};

/// One captured message, as the caller sends it (a JSON list of these).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CapturedMessage {
    /// `User` or `Machine`.
    pub sender: String,
    #[serde(default)]
    pub sender_name: Option<String>,
    #[serde(default)]
    pub text: String,
    /// Defaults to whether the sender is `Machine`.
    #[serde(default)]
    pub is_output: Option<bool>,
    #[serde(default)]
    pub content_blocks: Option<serde_json::Value>,
    #[serde(default)]
    pub timestamp: Option<DateTime<Utc>>,
}

/// What a capture recorded and triggered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaptureReport {
    pub flow_id: String,
    pub session_id: String,
    pub run_id: String,
    pub message_ids: Vec<String>,
    /// Memory bases of the flow that recorded the run.
    pub memory_bases: Vec<String>,
    /// Syncs the threshold check started (automatic: a lost race is `skipped`).
    pub syncs: Vec<SyncOutcome>,
    /// Syncs that failed; their cursors did not move.
    pub errors: Vec<String>,
}

/// The id of a run's `index`th captured message: the same for every attempt at one run, so a
/// capture repeated after a crash finds its messages instead of adding them twice.
fn captured_message_id(session_id: &str, run_id: &str, index: usize) -> String {
    const CAPTURE_NAMESPACE: uuid::Uuid = uuid::uuid!("5d0f3c86-4c4e-4b8e-9a77-6f1d3f0a2c11");
    uuid::Uuid::new_v5(
        &CAPTURE_NAMESPACE,
        format!("{session_id}\u{0}{run_id}\u{0}{index}").as_bytes(),
    )
    .to_string()
}

/// The message rows of one run: timestamps strictly increasing in the order given, so the
/// (timestamp, id) order is the caller's order.
pub fn message_rows(
    flow_id: &str,
    session_id: &str,
    run_id: &str,
    messages: &[CapturedMessage],
    now: DateTime<Utc>,
) -> Vec<LfMessageRow> {
    let mut previous: Option<DateTime<Utc>> = None;
    messages
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let mut timestamp = m.timestamp.unwrap_or(now);
            if let Some(previous) = previous
                && timestamp <= previous
            {
                timestamp = previous + chrono::Duration::microseconds(1);
            }
            previous = Some(timestamp);
            let is_machine = m.sender == "Machine";
            LfMessageRow {
                id: captured_message_id(session_id, run_id, index),
                timestamp,
                sender: m.sender.clone(),
                sender_name: m
                    .sender_name
                    .clone()
                    .unwrap_or_else(|| if is_machine { "AI" } else { "User" }.to_owned()),
                session_id: session_id.to_owned(),
                text: m.text.clone(),
                files: "[]".to_owned(),
                error: false,
                edit: false,
                properties: "{}".to_owned(),
                category: "message".to_owned(),
                content_blocks: m
                    .content_blocks
                    .as_ref()
                    .map_or_else(|| "[]".to_owned(), |b| b.to_string()),
                flow_id: Some(flow_id.to_owned()),
                run_id: Some(run_id.to_owned()),
                is_output: m.is_output.unwrap_or(is_machine),
            }
        })
        .collect()
}

impl<E: Embedder> Syncer<E> {
    /// Records the run's messages and its workflow job, records the run for every memory base
    /// of the flow, then syncs the sessions of auto-capture bases that reached their threshold.
    pub async fn capture(
        &self,
        flow_id: &str,
        session_id: &str,
        run_id: Option<&str>,
        messages: &[CapturedMessage],
    ) -> Result<CaptureReport, SyncError> {
        let store = &self.store;
        let owner = store
            .flow_owner(flow_id)
            .await?
            .ok_or_else(|| SyncError::NotFound(format!("flow {flow_id}")))?;
        let run_id = run_id.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
        let now = Utc::now();
        let mut batch = Batch {
            lf_messages: message_rows(flow_id, session_id, &run_id, messages, now),
            ..Batch::default()
        };
        let finished = batch.lf_messages.last().map_or(now, |m| m.timestamp);
        let mut bases = store.memory_bases_of_flow(flow_id).await?;
        let as_the_app = store.profile().capabilities().ingestion == Ingestion::AppTask;
        if as_the_app {
            // The app's run hook (Langflow's) records a run for the auto-capture bases of the flow only.
            bases.retain(|b| b.auto_capture);
        }
        // Messages, job, sessions and runs go in one transaction: a capture killed midway
        // leaves nothing, and one repeated after a crash finds its messages (their ids follow
        // from the run) and records nothing twice.
        let recorded = match batch.lf_messages.first() {
            Some(first) => store.lf_message_exists(&first.id).await?,
            None => false,
        };
        if !recorded && as_the_app {
            let owner = owner
                .as_deref()
                .ok_or_else(|| SyncError::NotFound(format!("the owner of flow {flow_id}")))?;
            let base_ids: Vec<String> = bases.iter().map(|b| b.id.clone()).collect();
            store
                .lf_record_capture(&CapturedRun {
                    flow_id,
                    owner,
                    session_id,
                    run_id: &run_id,
                    messages: &batch.lf_messages,
                    memory_base_ids: &base_ids,
                    started: now,
                    finished,
                })
                .await?;
        } else if !recorded {
            if store.job(&run_id).await?.is_none() {
                batch.jobs.push(JobRow {
                    job_id: run_id.clone(),
                    flow_id: Some(flow_id.to_owned()),
                    status: "completed".to_owned(),
                    job_type: "workflow".to_owned(),
                    user_id: owner.clone(),
                    asset_id: None,
                    asset_type: None,
                    dedupe_key: None,
                    created_timestamp: now,
                    finished_timestamp: Some(finished),
                });
            }
            for base in &bases {
                if store
                    .memory_base_session(&base.id, session_id)
                    .await?
                    .is_none()
                {
                    batch.memory_base_sessions.push(MemoryBaseSessionRow {
                        id: uuid::Uuid::new_v4().to_string(),
                        memory_base_id: base.id.clone(),
                        session_id: session_id.to_owned(),
                        cursor_id: None,
                        total_processed: 0,
                        last_sync_at: None,
                    });
                }
                batch
                    .memory_base_workflow_runs
                    .push(MemoryBaseWorkflowRunRow {
                        id: uuid::Uuid::new_v4().to_string(),
                        memory_base_id: base.id.clone(),
                        session_id: session_id.to_owned(),
                        workflow_job_id: Some(run_id.clone()),
                        ingestion_job_id: None,
                        recorded_at: finished,
                    });
            }
            store.insert_batch(&batch).await?;
        }
        let mut report = CaptureReport {
            flow_id: flow_id.to_owned(),
            session_id: session_id.to_owned(),
            run_id: run_id.clone(),
            message_ids: batch.lf_messages.iter().map(|m| m.id.clone()).collect(),
            memory_bases: bases.iter().map(|b| b.id.clone()).collect(),
            syncs: Vec::new(),
            errors: Vec::new(),
        };
        for base in bases.iter().filter(|b| b.auto_capture) {
            let Some(session) = store.memory_base_session(&base.id, session_id).await? else {
                continue;
            };
            if !threshold_reached(store.pending_count(base, &session).await?, base.threshold) {
                continue;
            }
            match self
                .sync_session(
                    base,
                    session_id,
                    Trigger::Automatic,
                    Duration::ZERO,
                    None,
                    &CancelFlag::default(),
                )
                .await
            {
                Ok(outcome) => report.syncs.push(outcome),
                Err(error) => report.errors.push(format!("{}: {error}", base.name)),
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_callers_order_and_defaults() {
        let messages: Vec<CapturedMessage> = serde_json::from_str(
            r#"[{"sender": "User", "text": "hi"},
                {"sender": "Machine", "text": "hello", "content_blocks": [{"contents": []}]}]"#,
        )
        .unwrap();
        let now = Utc::now();
        let rows = message_rows("f", "s", "r", &messages, now);
        assert!(rows[0].timestamp < rows[1].timestamp);
        assert!(!rows[0].is_output);
        assert!(rows[1].is_output);
        assert_eq!(rows[1].sender_name, "AI");
        assert_eq!(rows[1].run_id.as_deref(), Some("r"));
        assert_eq!(rows[1].content_blocks, r#"[{"contents":[]}]"#);
    }
}
