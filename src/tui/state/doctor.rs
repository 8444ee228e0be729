//! The doctor view: one scan of the whole database for memory problems, run as a job. While it
//! runs the view shows how far it is; once done, its findings with their counts per kind.

use chrono::{DateTime, Utc};

use super::screen_unit::{Around, ScreenUnit};
use crate::inspect::doctor::{DoctorReport, Finding};
use crate::tui::keymap::KeyContext;

/// Where the scan stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanStatus {
    /// Counting the messages, then reading them.
    Running,
    Finished,
    /// Stopped by the user after [`DoctorState::scanned`] messages.
    Cancelled,
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct DoctorState {
    /// The running scan's: its reports count only while it is the latest.
    pub generation: u64,
    pub status: ScanStatus,
    /// What a conversation is called, and what the scan counts, singular.
    pub noun: &'static str,
    pub unit: &'static str,
    /// Rows to scan, counted as the scan starts; `None` until the count is in.
    pub total: Option<u64>,
    /// Rows read so far (unreadable rows included).
    pub scanned: u64,
    /// When the scan started and when it last reported, by the job's clock.
    pub started: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    /// What the finished scan counted (its findings are in `findings`).
    pub report: Option<DoctorReport>,
    /// The findings grouped by kind (kinds in name order, each in the order found).
    pub findings: Vec<Finding>,
    /// Findings per kind, in the same order.
    pub counts: Vec<(&'static str, usize)>,
    pub selected: usize,
}

impl DoctorState {
    pub fn new(generation: u64, noun: &'static str, unit: &'static str) -> DoctorState {
        DoctorState {
            generation,
            status: ScanStatus::Running,
            noun,
            unit,
            total: None,
            scanned: 0,
            started: None,
            last: None,
            report: None,
            findings: Vec::new(),
            counts: Vec::new(),
            selected: 0,
        }
    }

    pub fn is_running(&self) -> bool {
        self.status == ScanStatus::Running
    }

    /// Takes a finished scan's report: its findings grouped by kind, and counted.
    pub fn finish(&mut self, mut report: DoctorReport) {
        let mut findings = std::mem::take(&mut report.findings);
        findings.sort_by_key(Finding::kind);
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for finding in &findings {
            match counts.last_mut() {
                Some((kind, count)) if *kind == finding.kind() => *count += 1,
                _ => counts.push((finding.kind(), 1)),
            }
        }
        self.scanned = self.scanned.max(report.messages as u64);
        self.findings = findings;
        self.counts = counts;
        self.report = Some(report);
        self.selected = 0;
        self.status = ScanStatus::Finished;
    }

    /// Seconds from the start to the last report.
    pub fn elapsed(&self) -> f64 {
        match (self.started, self.last) {
            (Some(start), Some(last)) => (last - start).num_milliseconds().max(0) as f64 / 1000.0,
            _ => 0.0,
        }
    }

    /// Messages read per second, once a report has come after the start.
    pub fn rate(&self) -> Option<f64> {
        let elapsed = self.elapsed();
        (elapsed > 0.0).then(|| self.scanned as f64 / elapsed)
    }

    /// Messages read over messages counted, for a gauge (rows written since the count keep
    /// it full rather than past the end).
    pub fn ratio(&self) -> f64 {
        match (self.status == ScanStatus::Finished, self.total) {
            (true, _) => 1.0,
            (false, Some(total)) if total > 0 => (self.scanned as f64 / total as f64).min(1.0),
            _ => 0.0,
        }
    }

    pub fn selected_finding(&self) -> Option<&Finding> {
        self.findings.get(self.selected)
    }
}

impl ScreenUnit for DoctorState {
    fn key_context(&self, _around: &Around) -> KeyContext {
        KeyContext::Doctor
    }

    /// The scan draws its own progress, so it does not turn the spinner.
    fn busy(&self) -> bool {
        false
    }

    fn breadcrumbs(&self, _around: &Around) -> Vec<String> {
        vec!["doctor".to_owned()]
    }

    fn selected_id(&self) -> Option<(&'static str, String)> {
        let id = self.selected_finding()?.conversation_id()?;
        Some(("conversation id", id.to_owned()))
    }
}
