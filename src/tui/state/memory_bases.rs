//! The memory bases tab and the jobs popup, as plain data.

use super::form::{Field, FieldValue, Form};
use chrono::{DateTime, Utc};

use super::load::LoadStatus;
use crate::inspect::memory_bases::{BaseStatus, NewBaseRequest, SessionStatus};
use crate::kb::store::SearchHit;
use crate::memory::memory_base::ThresholdUnit;
use crate::store::memory_bases::{JobInfo, MemoryBaseInfo};
use crate::sync::{JobProgress, Stage};
use crate::tui::keymap::KeyContext;

/// Hits a KB search shows.
pub const SEARCH_TOP_K: usize = 5;
/// Jobs of the job table the popup lists.
pub const JOB_ROWS: i64 = 20;

/// Which list of the tab the cursor keys move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Bases,
    Sessions,
}

/// The memory bases tab.
#[derive(Debug, Clone, Default)]
pub struct MemoryBasesState {
    pub status: LoadStatus,
    pub generation: u64,
    pub bases: Vec<BaseStatus>,
    pub selected: usize,
    pub focus: Focus,
    pub sessions: Vec<SessionStatus>,
    pub sessions_status: LoadStatus,
    pub sessions_generation: u64,
    pub session_selected: usize,
    pub search: Option<SearchState>,
    /// The create form behind its confirmation and while the base is created: a "no" or a
    /// refusal reopens it as it was typed.
    pub create_draft: Option<Form>,
    /// Why creating and deleting a base are refused on this database (its app's own API makes
    /// them, which the refusal names); `None` where memscope makes them. Their keys are not
    /// offered where they are refused.
    pub refused_changes: Option<RefusedChanges>,
}

/// What `n` and `D` answer on a database whose memory bases memscope never creates or deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedChanges {
    pub create: String,
    pub delete: String,
}

impl MemoryBasesState {
    pub fn selected_base(&self) -> Option<&BaseStatus> {
        self.bases.get(self.selected)
    }

    pub fn selected_session(&self) -> Option<&SessionStatus> {
        self.sessions.get(self.session_selected)
    }

    /// Whether the bases, the sessions or a search are being loaded, for the spinner.
    pub fn is_loading(&self) -> bool {
        self.status.is_loading()
            || (self.selected_base().is_some() && self.sessions_status.is_loading())
            || self.search.as_ref().is_some_and(|s| s.status.is_loading())
    }

    /// One warning per mismatch, for the status bar.
    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        self.bases.iter().flat_map(|b| {
            b.mismatches
                .iter()
                .map(move |m| format!("memory base {}: {m}", b.base.name))
        })
    }
}

/// A KB search: the query typed, then its hits.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchState {
    pub base_name: String,
    pub query: String,
    pub status: LoadStatus,
    pub generation: u64,
    pub hits: Vec<SearchHit>,
    /// The hit the moving keys and `i` act on while the search is shown.
    pub selected: usize,
    /// The knowledge-base folder, when the base's check found it missing: no hits then means
    /// that, not "not synced yet".
    pub missing_folder: Option<String>,
}

/// What a memory base form is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseForm {
    /// A base's threshold and its unit.
    Threshold { base_id: String, base_name: String },
    /// A query of a base's knowledge base.
    Search { base: Box<MemoryBaseInfo> },
    /// A new base.
    Create,
}

/// A change of a memory base that asks first (in the one confirmation popup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryBaseWrite {
    Create(NewBaseRequest),
    Delete(Box<MemoryBaseInfo>),
    Regenerate(Box<MemoryBaseInfo>),
}

impl MemoryBaseWrite {
    /// The question the popup asks.
    pub fn question(&self) -> String {
        match self {
            MemoryBaseWrite::Create(r) => format!(
                "Create memory base {:?} on flow {:?}: threshold {} {}, auto-capture {}, \
                 embedding model {}?",
                r.name,
                r.flow,
                r.threshold,
                r.unit,
                if r.auto_capture { "on" } else { "off" },
                r.embedding_model
                    .as_deref()
                    .unwrap_or("[memory_bases] embedding_model")
            ),
            MemoryBaseWrite::Delete(b) => format!(
                "Delete memory base {:?}? Its running jobs are cancelled, and its sessions, \
                 ingestion records and knowledge base {} are removed.",
                b.name, b.kb_name
            ),
            MemoryBaseWrite::Regenerate(b) => format!(
                "Regenerate memory base {:?}? Every cursor and ingestion record is cleared, the \
                 knowledge base {} is removed, and every session is ingested again.",
                b.name, b.kb_name
            ),
        }
    }
}

/// The unit choice of the create and threshold forms.
fn unit_field(unit: &str) -> Field {
    let units = [
        ThresholdUnit::Runs.as_str(),
        ThresholdUnit::Messages.as_str(),
    ];
    Field::new("unit", "unit", FieldValue::choice(&units, unit))
}

/// The threshold form of a base: the number and its unit.
pub fn threshold_form(threshold: i64, unit: &str) -> Form {
    Form::new(vec![
        Field::new(
            "threshold",
            "threshold",
            FieldValue::number(threshold.max(0) as u64, 1),
        ),
        unit_field(unit),
    ])
}

/// The threshold a form holds, checked, and its unit.
pub fn threshold_of(form: &Form) -> Result<(i64, ThresholdUnit), String> {
    let threshold = parse_threshold(&form.number("threshold").to_string())?;
    let unit = ThresholdUnit::parse(form.choice("unit")).unwrap_or(ThresholdUnit::Runs);
    Ok((threshold, unit))
}

/// The create form, with the defaults of `memscope mb create`, on `flow`.
pub fn create_form(flow: String) -> Form {
    let mut form = Form::new(vec![
        Field::new("flow", "flow", FieldValue::text(flow)),
        Field::new("name", "name", FieldValue::text("")),
        Field::new("threshold", "threshold", FieldValue::number(50, 10)),
        unit_field(ThresholdUnit::Runs.as_str()),
        Field::new("auto", "auto-capture", FieldValue::Toggle(true)),
        Field::new(
            "model",
            "embedding model",
            FieldValue::text(crate::kb::embedder::HASHING_MODEL),
        ),
    ]);
    form.focused = 1;
    form
}

/// The new base a create form describes, or what is wrong with it (the flow itself is checked
/// against the database by a job).
pub fn new_base_request(form: &Form) -> Result<NewBaseRequest, String> {
    let (flow, name, model) = (
        form.text("flow").trim(),
        form.text("name").trim(),
        form.text("model").trim(),
    );
    if flow.is_empty() {
        return Err("flow: give a flow id or name".to_owned());
    }
    if name.is_empty() {
        return Err("name: a memory base needs a name".to_owned());
    }
    let (threshold, unit) = threshold_of(form)?;
    Ok(NewBaseRequest {
        name: name.to_owned(),
        flow: flow.to_owned(),
        threshold,
        unit,
        auto_capture: form.toggle("auto"),
        // Empty: the configured default model.
        embedding_model: Some(model.to_owned()).filter(|m| !m.is_empty()),
    })
}

use super::screen_unit::{Around, ScreenUnit};
pub use crate::inspect::memory_bases::parse_threshold;

/// A sync job this process runs, as its progress reports describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedJob {
    pub progress: JobProgress,
    /// When the first report came.
    pub started: DateTime<Utc>,
    /// When it committed or rolled back.
    pub finished: Option<DateTime<Utc>>,
    /// Set by the watcher's reports: started automatically.
    pub automatic: bool,
}

impl TrackedJob {
    pub fn is_running(&self) -> bool {
        self.progress.stage == Stage::Running
    }

    /// Messages done over messages in scope, for a gauge.
    pub fn ratio(&self) -> f64 {
        match self.progress.stage {
            Stage::Committed => 1.0,
            _ if self.progress.messages_total == 0 => 0.0,
            _ => {
                (self.progress.messages_done as f64 / self.progress.messages_total as f64).min(1.0)
            }
        }
    }
}

/// A line of the jobs popup: a job of this process, of the job table, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct JobLine {
    pub job_id: String,
    pub session_id: String,
    /// queued, in_progress, completed, failed, cancelled.
    pub status: String,
    pub tracked: Option<TrackedJob>,
    pub started: DateTime<Utc>,
    pub finished: Option<DateTime<Utc>>,
    pub error: Option<String>,
}

impl JobLine {
    pub fn is_running(&self) -> bool {
        match &self.tracked {
            Some(job) => job.is_running(),
            None => {
                self.status == crate::store::memory_bases::job_status::IN_PROGRESS
                    || self.status == crate::store::memory_bases::job_status::QUEUED
            }
        }
    }

    /// Seconds from start to finish, or to `now` while it runs.
    pub fn elapsed(&self, now: DateTime<Utc>) -> f64 {
        let end = self.finished.unwrap_or(now);
        (end - self.started).num_milliseconds().max(0) as f64 / 1000.0
    }
}

/// Sync jobs: this process's (from progress reports) and the job table's (every process).
#[derive(Debug, Clone, Default)]
pub struct JobsState {
    pub open: bool,
    pub selected: usize,
    pub tracked: Vec<TrackedJob>,
    pub table: Vec<JobInfo>,
    /// Errors of this process's jobs, by job id.
    pub errors: Vec<(String, String)>,
    /// The watcher's last failure, until a check succeeds again: a warning.
    pub watcher_error: Option<String>,
    /// The clock of the last report: elapsed times are measured against it.
    pub now: Option<DateTime<Utc>>,
    pub generation: u64,
    /// The doctor's latest scan, listed with the sync jobs.
    pub doctor: Option<JobLine>,
}

impl JobsState {
    /// Running jobs first, newest first: the tracked ones merged with the job table's rows.
    pub fn lines(&self) -> Vec<JobLine> {
        let mut lines: Vec<JobLine> = self
            .table
            .iter()
            .map(|job| {
                let tracked = self
                    .tracked
                    .iter()
                    .find(|t| t.progress.job_id == job.job_id)
                    .cloned();
                JobLine {
                    job_id: job.job_id.clone(),
                    session_id: job.session_id().unwrap_or("-").to_owned(),
                    status: job.status.clone(),
                    started: job.created_timestamp,
                    finished: job.finished_timestamp,
                    // The reason memscope kept (e.g. its process stopped) when none is known here.
                    error: self
                        .error_of(&job.job_id)
                        .or_else(|| job.ended_reason.clone()),
                    tracked,
                }
            })
            .collect();
        for job in &self.tracked {
            if lines.iter().any(|l| l.job_id == job.progress.job_id) {
                continue;
            }
            let status = match &job.progress.stage {
                Stage::Running => crate::store::memory_bases::job_status::IN_PROGRESS,
                Stage::Committed => crate::store::memory_bases::job_status::COMPLETED,
                Stage::RolledBack { .. } => crate::store::memory_bases::job_status::FAILED,
            };
            lines.push(JobLine {
                job_id: job.progress.job_id.clone(),
                session_id: job.progress.session_id.clone(),
                status: status.to_owned(),
                started: job.started,
                finished: job.finished,
                error: self.error_of(&job.progress.job_id),
                tracked: Some(job.clone()),
            });
        }
        lines.extend(self.doctor.clone());
        lines.sort_by(|a, b| {
            b.is_running()
                .cmp(&a.is_running())
                .then(b.started.cmp(&a.started))
        });
        lines
    }

    fn error_of(&self, job_id: &str) -> Option<String> {
        let tracked = self.tracked.iter().find(|t| t.progress.job_id == job_id);
        if let Some(Stage::RolledBack { reason }) = tracked.map(|t| &t.progress.stage) {
            return Some(reason.clone());
        }
        self.errors
            .iter()
            .find(|(id, _)| id == job_id)
            .map(|(_, e)| e.clone())
    }

    /// Jobs running now, in any process.
    pub fn running(&self) -> usize {
        self.lines().iter().filter(|l| l.is_running()).count()
    }
}

impl ScreenUnit for MemoryBasesState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        KeyContext::MemoryBases
    }

    fn busy(&self) -> bool {
        self.is_loading()
    }

    /// A search hit's session while a search is shown, else the focused list's row.
    fn selected_id(&self) -> Option<(&'static str, String)> {
        if let Some(search) = &self.search {
            let hit = search.hits.get(search.selected)?;
            return Some(("session", hit.session_id.clone()));
        }
        match self.focus {
            Focus::Bases => {
                let status = self.selected_base()?;
                Some(("memory base id", status.base.id.clone()))
            }
            Focus::Sessions => {
                let status = self.selected_session()?;
                Some(("session", status.session.session_id.clone()))
            }
        }
    }
}
