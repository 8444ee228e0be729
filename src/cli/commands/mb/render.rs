//! The text tables of `mb`: bases, sessions with their pending gauge, and jobs.

use chrono::Utc;

use crate::cli::output::table;
use crate::format::{one_line, thousands};
use crate::inspect::memory_bases::{BaseStatus, SessionStatus, job_counts, job_state};
use crate::store::memory_bases::JobInfo;

pub(super) fn render_bases(statuses: &[BaseStatus]) -> String {
    if statuses.is_empty() {
        return "no memory bases".to_owned();
    }
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|s| {
            let b = &s.base;
            let warning = if s.mismatches.is_empty() {
                String::new()
            } else {
                format!("! {}", s.mismatches[0])
            };
            vec![
                one_line(&b.name, 24),
                one_line(b.flow_name.as_deref().unwrap_or(&b.flow_id), 20),
                format!("{} {}", b.threshold, b.threshold_unit),
                if b.auto_capture { "auto" } else { "manual" }.to_owned(),
                one_line(&b.kb_name, 28),
                thousands(b.sessions),
                thousands(b.total_processed),
                s.status.as_str().to_owned(),
                warning,
            ]
        })
        .collect();
    table(
        &[
            "name",
            "flow",
            "threshold",
            "capture",
            "kb",
            "sessions",
            "processed",
            "status",
            "warning",
        ],
        &rows,
    )
}

pub(super) fn render_sessions(sessions: &[SessionStatus]) -> String {
    if sessions.is_empty() {
        return "no tracked sessions".to_owned();
    }
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            vec![
                one_line(&s.session.session_id, 36),
                s.pending_label(),
                gauge(s.ratio()),
                thousands(s.pending_messages),
                s.session
                    .cursor_id
                    .as_deref()
                    .map_or("-".to_owned(), |c| one_line(c, 8)),
                thousands(s.session.total_processed),
                s.session.last_sync_at.map_or("never".to_owned(), |t| {
                    t.format("%Y-%m-%d %H:%M").to_string()
                }),
            ]
        })
        .collect();
    table(
        &[
            "session",
            "pending",
            "",
            "to ingest",
            "cursor",
            "processed",
            "last sync",
        ],
        &rows,
    )
}

fn gauge(ratio: f64) -> String {
    let filled = (ratio * 10.0).round() as usize;
    format!(
        "[{}{}]",
        "#".repeat(filled),
        ".".repeat(10 - filled.min(10))
    )
}

pub(super) fn render_jobs(jobs: &[JobInfo]) -> String {
    if jobs.is_empty() {
        return "no ingestion jobs".to_owned();
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|j| {
            let elapsed = j.finished_timestamp.unwrap_or_else(Utc::now) - j.created_timestamp;
            vec![
                j.job_id.clone(),
                match &j.ended_reason {
                    Some(reason) => format!("{} ({reason})", j.status),
                    None => j.status.clone(),
                },
                one_line(j.session_id().unwrap_or("-"), 36),
                j.created_timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
                format!("{:.1}s", elapsed.num_milliseconds() as f64 / 1000.0),
            ]
        })
        .collect();
    let states: Vec<String> = jobs.iter().map(|j| job_state(&j.status)).collect();
    format!(
        "{}\n{}",
        job_counts(&states),
        table(&["job", "status", "session", "created", "elapsed"], &rows)
    )
}
