//! What a memory-base view shows: bases with their status and mismatches, sessions with pending
//! against threshold, recent jobs, and KB search. The CLI prints these; a TUI lists them and
//! calls [`crate::sync::Syncer`] for the actions.

use serde::Serialize;

use chrono::Utc;

use crate::format::{noun, thousands};
use crate::kb::embedder::Embedder;
use crate::kb::store::{SearchHit, VectorStore};
use crate::memory::memory_base::{Mismatch, ThresholdUnit, kb_name, threshold_reached};
use crate::store::memory_bases::{JobInfo, MemoryBaseInfo, MemoryBaseSessionInfo, job_status};
use crate::store::rows::MemoryBaseRow;
use crate::store::{BaseChange, Store, StoreError};
use crate::sync::{MbSettings, SyncError, Syncer};

/// A memory base as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaseStatus {
    #[serde(flatten)]
    pub base: MemoryBaseInfo,
    pub kb_path: std::path::PathBuf,
    pub status: BaseState,
    pub mismatches: Vec<Mismatch>,
}

impl BaseStatus {
    /// A base with what its check found: syncing while a job is active, else mismatch or ok.
    pub fn new(
        base: MemoryBaseInfo,
        kb_path: std::path::PathBuf,
        mismatches: Vec<Mismatch>,
    ) -> BaseStatus {
        let status = if base.active_jobs > 0 {
            BaseState::Syncing
        } else if !mismatches.is_empty() {
            BaseState::Mismatch
        } else {
            BaseState::Ok
        };
        BaseStatus {
            base,
            kb_path,
            status,
            mismatches,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseState {
    /// A job is queued or running.
    Syncing,
    /// The KB disagrees with the database: offer Regenerate.
    Mismatch,
    Ok,
}

impl BaseState {
    pub fn as_str(self) -> &'static str {
        match self {
            BaseState::Syncing => "syncing",
            BaseState::Mismatch => "mismatch",
            BaseState::Ok => "ok",
        }
    }
}

/// A tracked session with its pending count in its base's unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStatus {
    #[serde(flatten)]
    pub session: MemoryBaseSessionInfo,
    pub pending: i64,
    /// Messages after the cursor that a sync would ingest (error messages never are), whatever
    /// the threshold counts.
    pub pending_messages: i64,
    pub threshold: i64,
    pub unit: &'static str,
    /// Pending reached the threshold: an automatic check would sync it.
    pub due: bool,
}

impl SessionStatus {
    /// Pending over threshold, capped at 1, for a gauge.
    pub fn ratio(&self) -> f64 {
        if self.threshold <= 0 {
            return if self.pending > 0 { 1.0 } else { 0.0 };
        }
        (self.pending as f64 / self.threshold as f64).min(1.0)
    }

    /// Pending against the threshold, named by what the unit counts: `13/20 bot replies`.
    pub fn pending_label(&self) -> String {
        let counted = ThresholdUnit::parse(self.unit).map_or(self.unit, counted);
        format!(
            "{}/{} {counted}",
            crate::format::thousands(self.pending),
            crate::format::thousands(self.threshold)
        )
    }
}

/// What a threshold unit counts, in the words a pending count is shown with: the `messages`
/// unit counts only the bot's replies (a sync then ingests every message after the cursor,
/// the user's too), `runs` counts completed flow runs.
pub fn counted(unit: ThresholdUnit) -> &'static str {
    match unit {
        ThresholdUnit::Messages => "bot replies",
        ThresholdUnit::Runs => "runs",
    }
}

/// A base's status with its mismatch check.
pub async fn base_status<E: Embedder>(
    syncer: &Syncer<E>,
    base: MemoryBaseInfo,
) -> Result<BaseStatus, SyncError> {
    let report = syncer.check(&base).await?;
    Ok(BaseStatus::new(base, report.kb_path, report.mismatches))
}

/// Every memory base with its status.
pub async fn bases<E: Embedder>(syncer: &Syncer<E>) -> Result<Vec<BaseStatus>, SyncError> {
    let mut out = Vec::new();
    for base in syncer.store.memory_bases().await? {
        out.push(base_status(syncer, base).await?);
    }
    Ok(out)
}

/// Every memory base with its status, each checked with its own embedder (the dimension it
/// expects comes from it).
pub async fn statuses(store: &Store, settings: &MbSettings) -> Result<Vec<BaseStatus>, BaseError> {
    let mut out = Vec::new();
    for base in store.memory_bases().await? {
        let syncer = settings.syncer(store.clone(), &base.embedding_model)?;
        out.push(base_status(&syncer, base).await?);
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error("no flow {0:?}")]
    NoFlow(String),
    #[error("{0:?} names {1} flows; use the id")]
    AmbiguousFlow(String, usize),
    #[error("flow {0} has no owner")]
    NoOwner(String),
    #[error("the flow's owner already has a memory base named {0:?}")]
    Duplicate(String),
    #[error(transparent)]
    Sync(#[from] SyncError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The one flow `key` (id or name) names.
pub async fn find_flow(store: &Store, key: &str) -> Result<String, BaseError> {
    let mut flows = store.find_flows(key).await?;
    match flows.len() {
        1 => Ok(flows.remove(0)),
        0 => Err(BaseError::NoFlow(key.to_owned())),
        n => Err(BaseError::AmbiguousFlow(key.to_owned(), n)),
    }
}

/// The largest threshold: Langflow keeps it in a 32-bit integer column.
pub const MAX_THRESHOLD: i64 = i32::MAX as i64;

/// A threshold as typed (CLI flag or TUI form): a whole number from 1 to [`MAX_THRESHOLD`].
pub fn parse_threshold(text: &str) -> Result<i64, String> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(n) if (1..=MAX_THRESHOLD).contains(&n) => Ok(n),
        Ok(n) if n < 1 => Err(format!("threshold {n} is below 1")),
        Ok(n) => Err(format!(
            "threshold {n} is above the largest, {MAX_THRESHOLD} (Langflow's column is 32-bit)"
        )),
        Err(_)
            if !text.is_empty()
                && text
                    .trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            Err(format!(
                "threshold {text} is above the largest, {MAX_THRESHOLD} (Langflow's column is 32-bit)"
            ))
        }
        Err(_) => Err(format!("threshold {text:?} is not a whole number")),
    }
}

/// What a new memory base is made of, as the user gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBaseRequest {
    pub name: String,
    /// Flow id or name.
    pub flow: String,
    pub threshold: i64,
    pub unit: ThresholdUnit,
    pub auto_capture: bool,
    /// `None`: the configured default (`[memory_bases] embedding_model`).
    pub embedding_model: Option<String>,
}

/// What a checked request resolves to: the flow, its owner and the embedder's names.
pub struct CheckedBase {
    flow_id: String,
    user_id: String,
    embedding_provider: String,
    embedding_model: String,
}

/// Creates a memory base on a flow, owned by the flow's owner, with a name unique for that
/// owner; returns its id.
pub async fn create_base(
    store: &Store,
    settings: &MbSettings,
    request: &NewBaseRequest,
) -> Result<String, BaseError> {
    store.ensure_base_change(BaseChange::Create)?;
    let checked = check_new_base(store, settings, request).await?;
    let id = uuid::Uuid::new_v4().to_string();
    store
        .create_memory_base(&MemoryBaseRow {
            id: id.clone(),
            name: request.name.clone(),
            flow_id: checked.flow_id,
            user_id: checked.user_id,
            threshold: request.threshold,
            threshold_unit: request.unit.as_str().to_owned(),
            auto_capture: request.auto_capture,
            embedding_provider: checked.embedding_provider,
            embedding_model: checked.embedding_model,
            kb_name: kb_name(&request.name, &uuid::Uuid::new_v4()),
            created_at: Utc::now(),
        })
        .await?;
    Ok(id)
}

/// Everything [`create_base`] checks before it writes: one flow by that id or name, with an
/// owner, no base of that name for the owner, an embedding model the settings can build. The
/// TUI's form runs it before asking for confirmation.
pub async fn check_new_base(
    store: &Store,
    settings: &MbSettings,
    request: &NewBaseRequest,
) -> Result<CheckedBase, BaseError> {
    let flow_id = find_flow(store, &request.flow).await?;
    let user_id = store
        .flow_owner(&flow_id)
        .await?
        .flatten()
        .ok_or_else(|| BaseError::NoOwner(request.flow.clone()))?;
    if store
        .find_memory_bases(&request.name)
        .await?
        .iter()
        .any(|b| b.user_id == user_id && b.name == request.name)
    {
        return Err(BaseError::Duplicate(request.name.clone()));
    }
    let model = request
        .embedding_model
        .as_deref()
        .unwrap_or(&settings.embedding_model);
    let embedder = settings.embedder(model)?;
    Ok(CheckedBase {
        flow_id,
        user_id,
        embedding_provider: embedder.provider().to_owned(),
        embedding_model: embedder.model().to_owned(),
    })
}

/// A base's tracked sessions with their pending counts.
pub async fn sessions<E: Embedder>(
    syncer: &Syncer<E>,
    base: &MemoryBaseInfo,
) -> Result<Vec<SessionStatus>, SyncError> {
    let mut out = Vec::new();
    // What `show` lists must not count a job whose process stopped as running.
    syncer.store.sweep_abandoned_jobs(Utc::now()).await?;
    for session in syncer.store.memory_base_sessions(&base.id).await? {
        let pending = syncer.store.pending_count(base, &session).await?;
        let timeline = syncer
            .store
            .session_timeline(&base.flow_id, &session.session_id)
            .await?;
        let cursor = syncer.store.cursor_position(&session, &timeline).await?;
        out.push(SessionStatus {
            due: threshold_reached(pending, base.threshold),
            pending,
            pending_messages: timeline.pending(cursor.as_ref()).count() as i64,
            threshold: base.threshold,
            unit: base.unit().as_str(),
            session,
        });
    }
    Ok(out)
}

/// Recent ingestion jobs (running ones first), of one base or all.
pub async fn jobs<E: Embedder>(
    syncer: &Syncer<E>,
    memory_base_id: Option<&str>,
    limit: i64,
) -> Result<Vec<JobInfo>, SyncError> {
    let mut jobs = syncer.store.ingestion_jobs(memory_base_id, limit).await?;
    jobs.sort_by_key(|job| !job.is_active());
    Ok(jobs)
}

/// A job's state as both front ends name it: its status, `in_progress` as "running".
pub fn job_state(status: &str) -> String {
    match status {
        job_status::IN_PROGRESS => "running".to_owned(),
        other => other.replace('_', " "),
    }
}

/// Jobs counted by state, in words: "3 jobs: 1 running, 2 completed" (the states in the
/// order a job goes through them, none left out that a job is in).
pub fn job_counts<S: AsRef<str>>(states: &[S]) -> String {
    const ORDER: [&str; 6] = [
        "queued",
        "running",
        "completed",
        "rolled back",
        "failed",
        "cancelled",
    ];
    let mut counts: Vec<(&str, u64)> = Vec::new();
    for state in states {
        let state = state.as_ref();
        match counts.iter_mut().find(|(s, _)| *s == state) {
            Some((_, n)) => *n += 1,
            None => counts.push((state, 1)),
        }
    }
    counts.sort_by_key(|(state, _)| {
        let known = ORDER.iter().position(|o| o == state);
        (known.unwrap_or(ORDER.len()), *state)
    });
    let total = states.len() as u64;
    let jobs = format!("{} {}", thousands(total), noun(total, "job"));
    if counts.is_empty() {
        return jobs;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(state, n)| format!("{} {state}", thousands(*n)))
        .collect();
    format!("{jobs}: {}", parts.join(", "))
}

/// The `top_k` chunks of a base's KB nearest to `query`; none when the KB has no store yet. On
/// a Langflow database, the knowledge base Langflow keeps for the base, with the base's own
/// model.
pub async fn search<E: Embedder>(
    syncer: &Syncer<E>,
    base: &MemoryBaseInfo,
    query: &str,
    session_id: Option<&str>,
    top_k: usize,
) -> Result<Vec<SearchHit>, SyncError> {
    if let Some(session_id) = session_id {
        syncer.require_session(base, session_id).await?;
    }
    if syncer.store.profile().capabilities().knowledge_bases == crate::store::KbHome::AppRows {
        return syncer.search_langflow(base, query, session_id, top_k).await;
    }
    let Some(store) = VectorStore::open_existing(&syncer.kb_location(base)?).await? else {
        return Ok(Vec::new());
    };
    let mut vectors = syncer.embedder.embed(&[query.to_owned()]).await?;
    let hits = match vectors.pop() {
        Some(vector) if vector.len() == store.dimension() => {
            store.search(&vector, top_k, session_id).await
        }
        _ => Ok(Vec::new()),
    };
    store.close().await;
    Ok(hits?)
}

#[cfg(test)]
mod tests {

    #[test]
    fn thresholds_are_whole_numbers_from_1_to_langflows_32_bit_column() {
        assert_eq!(parse_threshold(" 50 "), Ok(50));
        assert_eq!(parse_threshold("1"), Ok(1));
        assert_eq!(parse_threshold("2147483647"), Ok(MAX_THRESHOLD));
        for (text, says) in [
            ("0", "threshold 0 is below 1"),
            ("-5", "threshold -5 is below 1"),
            ("2147483648", "above the largest, 2147483647"),
            ("9999999999", "above the largest, 2147483647"),
            ("99999999999999999999999", "above the largest"),
            ("fifty", "is not a whole number"),
            ("", "is not a whole number"),
        ] {
            let error = parse_threshold(text).unwrap_err();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    use super::*;

    #[test]
    fn jobs_are_counted_by_state_in_the_order_they_go_through() {
        let states: Vec<String> = ["completed", "in_progress", "completed", "failed", "queued"]
            .into_iter()
            .map(job_state)
            .collect();
        assert_eq!(
            job_counts(&states),
            "5 jobs: 1 queued, 1 running, 2 completed, 1 failed"
        );
        assert_eq!(job_counts(&["running"]), "1 job: 1 running");
        assert_eq!(job_counts::<&str>(&[]), "0 jobs");
    }

    #[test]
    fn gauges_are_capped() {
        let status = |pending, threshold| SessionStatus {
            session: MemoryBaseSessionInfo {
                id: "i".into(),
                memory_base_id: "b".into(),
                session_id: "s".into(),
                cursor_id: None,
                total_processed: 0,
                last_sync_at: None,
                pending_runs: pending,
                ingestion_records: 0,
            },
            pending,
            pending_messages: pending,
            threshold,
            unit: "runs",
            due: threshold_reached(pending, threshold),
        };
        assert_eq!(status(5, 10).ratio(), 0.5);
        assert_eq!(status(20, 10).ratio(), 1.0);
        assert_eq!(status(1, 0).ratio(), 1.0);
        assert_eq!(status(0, 0).ratio(), 0.0);
    }
}
