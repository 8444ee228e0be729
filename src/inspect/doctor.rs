//! `doctor`: one pass over a memory database for the problems that make a bot forget, leak or
//! overflow, each finding naming the row an operator should look at. The scan is the doctor
//! capability of the source that made the database (`sources/doctor.rs`); this is what both
//! front ends call.

use serde::Serialize;

use super::InspectError;
use crate::sources::doctor::{ConversationDoctor, SourceScan};
use crate::sources::doctor_of;
use crate::store::{CancelFlag, Part, Store};

pub use super::doctor_finding::Finding;
pub use crate::sources::doctor::DoctorSettings;

#[derive(Debug, Clone, Default, Serialize)]
pub struct DoctorReport {
    pub conversations: usize,
    pub messages: usize,
    /// Conversations deleted in Dify, left out of the scan as Dify leaves them out.
    pub deleted_skipped: i64,
    /// Messages whose workflow run Dify archived out of the database: gone on purpose, so not
    /// a missing-run finding.
    pub archived_runs: i64,
    pub findings: Vec<Finding>,
    /// Dify's files (uploads, node memory files, offloaded outputs) were not checked: no
    /// object storage is configured for this database.
    pub files_not_checked: bool,
}

impl From<SourceScan> for DoctorReport {
    fn from(scan: SourceScan) -> Self {
        DoctorReport {
            conversations: scan.conversations,
            messages: scan.messages,
            deleted_skipped: scan.deleted_skipped,
            archived_runs: scan.archived_runs,
            findings: scan.findings.into_iter().map(Finding).collect(),
            files_not_checked: scan.files_not_checked,
        }
    }
}

/// The scan of the source that made the database, or why it keeps no conversations to scan.
fn doctor(store: &Store) -> Result<&'static dyn ConversationDoctor, InspectError> {
    let profile = store.profile();
    doctor_of(profile.source)
        .ok_or_else(|| InspectError::NoConversations(profile.lacks(Part::Conversations)))
}

/// Scans the whole database: one streaming pass over the messages, then the run and JSON checks.
pub async fn run(store: &Store, settings: &DoctorSettings) -> Result<DoctorReport, InspectError> {
    run_with_progress(store, settings, |_| {}).await
}

/// [`run`], telling `progress` how many messages the scan has read so far (unreadable rows
/// included) after each conversation.
pub async fn run_with_progress(
    store: &Store,
    settings: &DoctorSettings,
    progress: impl FnMut(u64) + Send,
) -> Result<DoctorReport, InspectError> {
    let never = CancelFlag::default();
    let report = run_until(store, settings, &never, progress).await?;
    Ok(report.unwrap_or_default())
}

/// How many messages a scan reads (checkpoints, on a LangGraph database), for a progress
/// gauge: a count, so rows written since may take a scan past it.
pub async fn messages_to_scan(store: &Store) -> Result<u64, InspectError> {
    Ok(doctor(store)?.to_scan(store).await?)
}

/// What a scan's progress counts, singular: "message", "checkpoint" on a LangGraph database.
pub fn scanned_unit(store: &Store) -> &'static str {
    doctor_of(store.profile().source).map_or("message", |doctor| doctor.unit())
}

/// [`run_with_progress`] until `stop` is cancelled, which ends the scan of the messages at its
/// next row and gives `None` (the checks running beside it are dropped).
pub async fn run_until(
    store: &Store,
    settings: &DoctorSettings,
    stop: &CancelFlag,
    mut progress: impl FnMut(u64) + Send,
) -> Result<Option<DoctorReport>, InspectError> {
    let scan = doctor(store)?
        .scan(store, settings, stop, &mut progress)
        .await?;
    Ok(scan.map(DoctorReport::from))
}
