//! The doctor view drawn into a TestBackend while its scan runs, once it is done, and after a
//! cancel, compared with insta snapshots. The state is driven through `update` as the app
//! drives it, with the scan's reports delivered by hand.

#[macro_use]
mod tui_support;

use tui_support::{code, key, screen_text};

use chrono::{DateTime, Utc};
use crossterm::event::KeyCode;
use memscope::inspect::doctor::{DoctorReport, Finding};
use memscope::memory::thread::ThreadComparison;
use memscope::sources::dify::doctor_finding::DifyFinding;
use memscope::sources::doctor::Found;
use memscope::tui::keymap::Keymap;
use memscope::tui::state::AppState;
use memscope::tui::update::doctor::DoctorEvent;
use memscope::tui::update::{Event, JobEvent, LoadReport, start, update};

fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-000000000000")
}

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_750_000_000 + seconds, 0).unwrap()
}

fn deliver(state: &mut AppState, event: JobEvent) {
    update(state, Event::Job(event));
}

fn generation(state: &AppState) -> u64 {
    state.doctor.as_ref().unwrap().generation
}

/// `D` pressed on the (empty) list; 1,000,000 messages counted, `scanned` read in 8 seconds.
fn scanning(scanned: u64) -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        tui_support::settings(),
        "sqlite:///data/memscope.db".to_owned(),
        true,
    );
    start(&mut state);
    let list = state.list.generation;
    update(
        &mut state,
        Event::Job(JobEvent::load(
            list,
            LoadReport::List(Ok(memscope::sources::conversation::ListedPage {
                conversations: Vec::new(),
                next: None,
            })),
        )),
    );
    key(&mut state, 'D');
    let generation = generation(&state);
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            DoctorEvent::Started {
                total: 1_000_000,
                at: at(0),
            },
        ),
    );
    deliver(
        &mut state,
        JobEvent::load(generation, DoctorEvent::Progress { scanned, at: at(8) }),
    );
    state
}

fn findings() -> Vec<Finding> {
    vec![
        Finding(Found::new(DifyFinding::OverBudget {
            conversation_id: id(2),
            tokens: 3_412,
            budget: 2_000,
            messages: 24,
        })),
        Finding(Found::new(DifyFinding::ThreadDivergence {
            conversation_id: id(1),
            newest_message: id(101),
            comparison: ThreadComparison::Same,
            explanation: "Dify's extraction stops at an unrelated root after 2 messages; the \
                          tree path has 5"
                .to_owned(),
        })),
        Finding(Found::new(DifyFinding::OverBudget {
            conversation_id: id(3),
            tokens: 2_107,
            budget: 2_000,
            messages: 9,
        })),
        Finding(Found::new(DifyFinding::UnreadableJson {
            node_execution_id: id(700),
            node_id: "llm".to_owned(),
            column: "outputs".to_owned(),
            error: "expected value at line 1 column 1".to_owned(),
        })),
    ]
}

fn finished() -> AppState {
    let mut state = scanning(640_000);
    let generation = generation(&state);
    let report = DoctorReport {
        conversations: 50_000,
        messages: 1_000_000,
        deleted_skipped: 12,
        archived_runs: 0,
        findings: findings(),
        files_not_checked: false,
    };
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            DoctorEvent::Finished {
                result: Ok(Box::new(report)),
                at: at(12),
            },
        ),
    );
    state
}

#[test]
fn doctor_running() {
    let state = scanning(450_000);
    let text = screen_text(&state, 120, 32);
    assert!(
        text.contains("Scanning messages: 450,000 of 1,000,000 · 56,250 messages/s · 8.0s"),
        "{text}"
    );
    snapshot!("doctor_running", &state, all_sizes);
}

#[test]
fn doctor_finished() {
    let mut state = finished();
    key(&mut state, 'j');
    let text = screen_text(&state, 120, 32);
    assert!(
        text.contains("4 findings: over_budget 2 · thread_divergence 1 · unreadable_json 1"),
        "{text}"
    );
    snapshot!("doctor_finished", &state, all_sizes);
}

#[test]
fn doctor_cancelled() {
    let mut state = scanning(450_000);
    code(&mut state, KeyCode::Esc);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("cancelled after 450,000 messages"), "{text}");
    snapshot!("doctor_cancelled", &state);
}

#[test]
fn doctor_scan_in_the_jobs_popup() {
    let mut state = scanning(450_000);
    key(&mut state, 'w');
    snapshot!("doctor_jobs_popup", &state);
}
