use chrono::{DateTime, Utc};
use crossterm::event::KeyCode;

use super::*;
use crate::inspect::doctor::DoctorReport;
use crate::sources::dify::doctor_finding::DifyFinding;
use crate::sources::doctor::Found;
use crate::tui::keymap::KeyContext;
use crate::tui::state::{Overlay, Tab};
use crate::tui::update::test_support::{code, key, list_loaded, state};
use crate::tui::update::{Effect, Event, JobEvent, Load, Stamped, update};

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
}

fn generation(state: &AppState) -> u64 {
    state
        .doctor
        .as_ref()
        .expect("the doctor view is open")
        .generation
}

fn report(event: JobEvent, state: &mut AppState) -> Vec<Effect> {
    update(state, Event::Job(event))
}

fn over_budget(conversation: &str) -> Finding {
    Finding(Found::new(DifyFinding::OverBudget {
        conversation_id: conversation.to_owned(),
        tokens: 2_500,
        budget: 2_000,
        messages: 12,
    }))
}

fn findings() -> Vec<Finding> {
    vec![
        over_budget("c-2"),
        Finding(Found::new(DifyFinding::TreeAnomaly {
            conversation_id: "c-1".to_owned(),
            anomaly: "message m-3 points to parent m-9, which is not in the conversation"
                .to_owned(),
        })),
        Finding(Found::new(DifyFinding::UnreadableJson {
            node_execution_id: "e-1".to_owned(),
            node_id: "llm".to_owned(),
            column: "outputs".to_owned(),
            error: "expected value at line 1 column 1".to_owned(),
        })),
        over_budget("c-3"),
    ]
}

/// `D` on the list, the count in, and a report of `scanned` messages.
fn scanning(scanned: u64) -> AppState {
    let mut state = state();
    list_loaded(&mut state, &["c-1"]);
    let effects = update(&mut state, key('D'));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::Load(Stamped {
                value: Load::Doctor(DoctorScan { budget: 2000, .. }),
                ..
            })]
        ),
        "{effects:?}"
    );
    let generation = generation(&state);
    report(
        JobEvent::load(
            generation,
            DoctorEvent::Started {
                total: 1_000,
                at: at(0),
            },
        ),
        &mut state,
    );
    report(
        JobEvent::load(generation, DoctorEvent::Progress { scanned, at: at(2) }),
        &mut state,
    );
    state
}

fn finished() -> AppState {
    let mut state = scanning(600);
    let result = Ok(Box::new(DoctorReport {
        conversations: 40,
        messages: 1_000,
        deleted_skipped: 0,
        archived_runs: 0,
        findings: findings(),
        files_not_checked: false,
    }));
    let generation = generation(&state);
    report(
        JobEvent::load(generation, DoctorEvent::Finished { result, at: at(4) }),
        &mut state,
    );
    state
}

#[test]
fn the_list_key_opens_the_view_and_starts_a_scan() {
    let state = scanning(250);
    assert_eq!(state.screen, Screen::Doctor);
    assert_eq!(state.key_context(), KeyContext::Doctor);
    let doctor = state.doctor.as_ref().unwrap();
    assert!(doctor.is_running());
    assert_eq!((doctor.scanned, doctor.total), (250, Some(1_000)));
    assert_eq!(doctor.ratio(), 0.25);
    assert_eq!(doctor.elapsed(), 2.0);
    assert_eq!(doctor.rate(), Some(125.0));
}

#[test]
fn the_command_line_opens_the_view_too() {
    let mut state = state();
    update(&mut state, key(':'));
    for c in "doctor".chars() {
        update(&mut state, key(c));
    }
    let effects = update(&mut state, code(KeyCode::Enter));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Load(Stamped {
            value: Load::Doctor(DoctorScan { .. }),
            ..
        })]
    ));
    assert_eq!(state.screen, Screen::Doctor);
}

#[test]
fn findings_arrive_grouped_and_counted_by_kind() {
    let state = finished();
    let doctor = state.doctor.as_ref().unwrap();
    assert_eq!(doctor.status, ScanStatus::Finished);
    let kinds: Vec<&str> = doctor.findings.iter().map(Finding::kind).collect();
    assert_eq!(
        kinds,
        [
            "over_budget",
            "over_budget",
            "tree_anomaly",
            "unreadable_json"
        ]
    );
    assert_eq!(
        doctor.counts,
        [
            ("over_budget", 2),
            ("tree_anomaly", 1),
            ("unreadable_json", 1)
        ]
    );
    assert_eq!(doctor.ratio(), 1.0);
}

#[test]
fn enter_opens_the_findings_conversation_and_esc_comes_back() {
    let mut state = finished();
    update(&mut state, key('j'));
    let effects = update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Conversation);
    assert!(
        matches!(effects.as_slice(), [Effect::Load(Stamped { value: Load::Conversation { id, .. }, .. })] if id == "c-3"),
        "{effects:?}"
    );
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Doctor, "back to the findings");
    assert_eq!(state.doctor.as_ref().unwrap().selected, 1);

    // A finding about no conversation says so instead.
    update(&mut state, key('G'));
    let effects = update(&mut state, code(KeyCode::Enter));
    assert!(effects.is_empty());
    assert_eq!(state.screen, Screen::Doctor);
    assert!(
        state
            .message
            .as_deref()
            .unwrap()
            .contains("no conversation")
    );

    update(&mut state, key('i'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i shows the finding whole: {:?}", state.overlay);
    };
    assert!(detail.text.contains("`outputs` is not valid JSON"));
    assert!(detail.text.contains("\"node_execution_id\": \"e-1\""));
}

#[test]
fn a_conversation_opened_from_the_list_goes_back_to_the_list_while_the_scan_is_kept() {
    let mut state = finished();
    // `/` on the findings searches the list; the scan stays for `:doctor`'s return.
    update(&mut state, key('/'));
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::Conversations);
    assert!(state.doctor.is_some());
    list_loaded(&mut state, &["c-1"]);
    update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Conversation);
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(
        state.screen,
        Screen::Conversations,
        "back where it was opened from"
    );
}

#[test]
fn esc_cancels_a_running_scan_then_closes_the_view() {
    let mut state = scanning(300);
    let effects = update(&mut state, code(KeyCode::Esc));
    assert!(
        matches!(effects.as_slice(), [Effect::StopDoctor]),
        "{effects:?}"
    );
    let doctor = state.doctor.as_ref().unwrap();
    assert_eq!(doctor.status, ScanStatus::Cancelled);
    assert_eq!(cancelled_text(doctor), "cancelled after 300 messages");

    // Reports already on their way are dropped.
    let stale = doctor.generation - 1;
    let changed = report(
        JobEvent::load(
            stale,
            DoctorEvent::Progress {
                scanned: 400,
                at: at(3),
            },
        ),
        &mut state,
    );
    assert!(changed.is_empty());
    assert_eq!(state.doctor.as_ref().unwrap().scanned, 300);

    let effects = update(&mut state, code(KeyCode::Esc));
    assert!(effects.is_empty());
    assert!(state.doctor.is_none());
    assert_eq!(state.screen, Screen::Conversations);
}

#[test]
fn q_closes_a_finished_view_instead_of_quitting() {
    let mut state = finished();
    update(&mut state, key('q'));
    assert!(!state.quit);
    assert_eq!(state.screen, Screen::Conversations);
    // The hint bar names the keys that quit here.
    let (_, globals) = state.keymap.hints(KeyContext::Doctor);
    assert!(
        globals.iter().all(|(keys, _)| keys != "q"),
        "q closes the view: {globals:?}"
    );
}

#[test]
fn r_scans_again_and_drops_the_old_scans_reports() {
    let mut state = finished();
    let old = generation(&state);
    let effects = update(&mut state, key('r'));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Load(Stamped { generation, value: Load::Doctor(DoctorScan { .. }) })] if *generation != old
    ));
    let doctor = state.doctor.as_ref().unwrap();
    assert!(doctor.is_running() && doctor.findings.is_empty());
    report(
        JobEvent::load(
            old,
            DoctorEvent::Progress {
                scanned: 9,
                at: at(9),
            },
        ),
        &mut state,
    );
    assert_eq!(state.doctor.as_ref().unwrap().scanned, 0);
}

#[test]
fn the_scan_is_a_line_of_the_jobs_popup_that_x_cancels() {
    let mut state = scanning(500);
    let lines = state.jobs.lines();
    let line = lines.iter().find(|l| l.job_id == JOB_ID).unwrap();
    assert!(line.is_running());
    assert_eq!(line.tracked.as_ref().unwrap().ratio(), 0.5);
    assert_eq!(state.jobs.running(), 1);

    state.overlay = Overlay::Jobs;
    state.jobs.selected = lines.iter().position(|l| l.job_id == JOB_ID).unwrap();
    let effects = update(&mut state, key('x'));
    assert!(
        matches!(effects.as_slice(), [Effect::StopDoctor]),
        "{effects:?}"
    );
    let lines = state.jobs.lines();
    let line = lines.iter().find(|l| l.job_id == JOB_ID).unwrap();
    assert_eq!(line.status, "cancelled");
    assert_eq!(line.error.as_deref(), Some("cancelled after 500 messages"));
    assert_eq!(state.jobs.running(), 0);
}

#[test]
fn a_failed_scan_says_why() {
    let mut state = scanning(10);
    let generation = generation(&state);
    report(
        JobEvent::load(
            generation,
            DoctorEvent::Finished {
                result: Err("database is locked".to_owned()),
                at: at(1),
            },
        ),
        &mut state,
    );
    let doctor = state.doctor.as_ref().unwrap();
    assert_eq!(
        doctor.status,
        ScanStatus::Failed("database is locked".to_owned())
    );
    assert_eq!(
        state.jobs.doctor.as_ref().unwrap().error.as_deref(),
        Some("database is locked")
    );
}

#[test]
fn a_database_without_conversations_says_so_instead_of_scanning() {
    // A Langflow database: its messages are memory-base sessions, not conversations, which
    // `memscope doctor` refuses the same way.
    let mut state = state();
    let why = "This is a Langflow database (schema mb01): it has no conversations.";
    state.missing_tabs = vec![(Tab::Conversations, why.to_owned())];
    update(&mut state, key(':'));
    for c in "doctor".chars() {
        update(&mut state, key(c));
    }
    let effects = update(&mut state, code(KeyCode::Enter));
    assert!(effects.is_empty(), "{effects:?}");
    assert!(state.doctor.is_none());
    assert_eq!(state.message.as_deref(), Some(why));
}
