//! The memory bases tab and the jobs popup: `update()` driven by keys with job results delivered
//! by hand (selection, confirmations, conflict toasts, threshold validation, cancel), and insta
//! snapshots of the screens at two sizes.

#[macro_use]
mod tui_support;

use tui_support::{code, key, screen_text, settings};

use chrono::{DateTime, TimeZone, Utc};
use crossterm::event::KeyCode;
use memscope::inspect::memory_bases::{BaseStatus, SessionStatus};
use memscope::kb::store::SearchHit;
use memscope::memory::memory_base::{Mismatch, ThresholdUnit};
use memscope::store::memory_bases::{JobInfo, MemoryBaseInfo, MemoryBaseSessionInfo};
use memscope::sync::watch::WatchEvent;
use memscope::sync::{JobProgress, Stage, SyncOutcome};
use memscope::tui::keymap::{KeyContext, Keymap};
use memscope::tui::state::memory_bases::{Confirm, CreateForm, Dialog, Focus, RefusedChanges};
use memscope::tui::state::{AppState, LoadStatus, Overlay, Screen};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, MbEffect, MbEvent, MbLoad, MbLoaded, Stamped, SyncResult, update,
};
use serde_json::json;

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_771_400_000 + seconds, 0).unwrap()
}

fn state(read_only: bool) -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        settings(),
        "sqlite:///data/memscope.db".to_owned(),
        read_only,
    );
    // The conversation list is not what these tests look at: not loading.
    state.list.status = LoadStatus::Loaded;
    state
}

fn info(n: u32, name: &str, flow: &str, threshold: i64, unit: ThresholdUnit) -> MemoryBaseInfo {
    MemoryBaseInfo {
        id: format!("base-{n}"),
        name: name.to_owned(),
        flow_id: format!("flow-{n}"),
        flow_name: Some(flow.to_owned()),
        user_id: "user-1".to_owned(),
        username: Some("ada".to_owned()),
        threshold,
        threshold_unit: unit.as_str().to_owned(),
        auto_capture: n != 1,
        embedding_provider: "memscope".to_owned(),
        embedding_model: "hashing-lexical".to_owned(),
        kb_name: format!("{}_{n:08x}", name.to_lowercase().replace(' ', "_")),
        created_at: at(0),
        sessions: 2,
        total_processed: i64::from(n) * 10,
        ingestion_records: i64::from(n) * 10,
        active_jobs: 0,
        last_sync_at: Some(at(600)),
    }
}

fn status(base: MemoryBaseInfo, mismatches: Vec<Mismatch>) -> BaseStatus {
    let kb_path = format!("/kb/ada/{}", base.kb_name).into();
    BaseStatus::new(base, kb_path, mismatches)
}

/// Research (manual, ok), Support (auto, its store empty: a mismatch), Releases (auto, ok).
fn bases() -> Vec<BaseStatus> {
    vec![
        status(
            info(
                1,
                "Research notes",
                "Research Notes",
                20,
                ThresholdUnit::Messages,
            ),
            Vec::new(),
        ),
        status(
            info(2, "Support memory", "Support Agent", 5, ThresholdUnit::Runs),
            vec![Mismatch::StoreEmpty],
        ),
        status(
            info(3, "Release history", "Release Bot", 3, ThresholdUnit::Runs),
            Vec::new(),
        ),
    ]
}

fn session(base: &BaseStatus, id: &str, pending: i64, synced: bool) -> SessionStatus {
    let threshold = base.base.threshold;
    SessionStatus {
        session: MemoryBaseSessionInfo {
            id: format!("{}-{id}", base.base.id),
            memory_base_id: base.base.id.clone(),
            session_id: id.to_owned(),
            cursor_id: synced.then(|| "105179a3-aaaa-4000-8000-000000000000".to_owned()),
            total_processed: if synced { 20 } else { 0 },
            last_sync_at: synced.then(|| at(900)),
            pending_runs: pending,
            ingestion_records: if synced { 20 } else { 0 },
        },
        pending,
        pending_messages: pending,
        threshold,
        unit: if base.base.threshold_unit == "runs" {
            "runs"
        } else {
            "messages"
        },
        due: pending > 0 && pending >= threshold,
    }
}

fn typed(state: &mut AppState, text: &str) {
    for c in text.chars() {
        key(state, c);
    }
}

fn deliver(state: &mut AppState, event: impl Into<JobEvent>) -> Vec<Effect> {
    update(state, Event::Job(event.into()))
}

fn mb_effects(effects: Vec<Effect>) -> Vec<MbEffect> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::MemoryBases(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// The loads among `effects`, each with its generation.
fn mb_loads(effects: Vec<Effect>) -> Vec<(u64, MbLoad)> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Load(Stamped {
                generation,
                value: Load::MemoryBases(load),
            }) => Some((generation, load)),
            _ => None,
        })
        .collect()
}

/// Delivers the sessions the last effects asked for, for the base they name.
fn deliver_sessions(state: &mut AppState, effects: Vec<Effect>) {
    for (generation, load) in mb_loads(effects) {
        if let MbLoad::Sessions { base } = load {
            let status = bases().into_iter().find(|b| b.base.id == base.id).unwrap();
            let sessions = match status.base.id.as_str() {
                "base-1" => vec![
                    session(&status, "research-ada-0001", 13, false),
                    session(&status, "research-ada-0002", 3, false),
                ],
                "base-2" => vec![
                    session(&status, "support-ada-0001", 2, true),
                    session(&status, "support-ada-0002", 7, false),
                ],
                _ => vec![session(&status, "release-grace-0001", 0, true)],
            };
            deliver(
                state,
                JobEvent::load(generation, MbLoaded::Sessions(Ok(sessions))),
            );
        }
    }
}

/// The tab in front with its bases and the first base's sessions loaded.
fn tab(read_only: bool) -> AppState {
    let mut state = state(read_only);
    let effects = key(&mut state, '3');
    assert_eq!(state.screen, Screen::MemoryBases);
    let generation = mb_loads(effects)
        .into_iter()
        .find_map(|(generation, load)| matches!(load, MbLoad::Bases).then_some(generation))
        .expect("entering the tab loads the bases");
    let effects = deliver(
        &mut state,
        JobEvent::load(generation, MbLoaded::Bases(Ok(bases()))),
    );
    deliver_sessions(&mut state, effects);
    state
}

fn selected_session(state: &AppState) -> &str {
    &state
        .memory_bases
        .selected_session()
        .unwrap()
        .session
        .session_id
}

#[test]
fn selection_moves_between_bases_and_their_sessions() {
    let mut state = tab(false);
    assert_eq!(state.memory_bases.status, LoadStatus::Loaded);
    assert_eq!(selected_session(&state), "research-ada-0001");
    let effects = key(&mut state, 'j');
    assert_eq!(
        state.memory_bases.selected_base().unwrap().base.name,
        "Support memory"
    );
    assert!(
        state.memory_bases.sessions.is_empty(),
        "another base's sessions are not shown under this one"
    );
    deliver_sessions(&mut state, effects);
    assert_eq!(selected_session(&state), "support-ada-0001");
    code(&mut state, KeyCode::Enter);
    assert_eq!(state.memory_bases.focus, Focus::Sessions);
    key(&mut state, 'j');
    assert_eq!(selected_session(&state), "support-ada-0002");
    assert!(key(&mut state, 'j').is_empty(), "already the last session");
    code(&mut state, KeyCode::Esc);
    assert_eq!(state.memory_bases.focus, Focus::Bases);
    key(&mut state, 'G');
    assert_eq!(
        state.memory_bases.selected_base().unwrap().base.name,
        "Release history"
    );
}

#[test]
fn a_reload_keeps_the_selected_base_and_a_deleted_one_moves_on() {
    let mut state = tab(false);
    let effects = key(&mut state, 'j');
    deliver_sessions(&mut state, effects);
    let generation = state.memory_bases.generation;
    let mut reordered = bases();
    reordered.reverse();
    deliver(
        &mut state,
        JobEvent::load(generation, MbLoaded::Bases(Ok(reordered))),
    );
    assert_eq!(
        state.memory_bases.selected_base().unwrap().base.name,
        "Support memory"
    );
    assert!(!state.memory_bases.sessions.is_empty());
    let effects = key(&mut state, 'r');
    let generation = mb_loads(effects)
        .into_iter()
        .find_map(|(generation, load)| matches!(load, MbLoad::Bases).then_some(generation))
        .unwrap();
    let without_support: Vec<BaseStatus> = bases()
        .into_iter()
        .filter(|b| b.base.name != "Support memory")
        .collect();
    deliver(
        &mut state,
        JobEvent::load(generation, MbLoaded::Bases(Ok(without_support))),
    );
    assert_eq!(
        state.memory_bases.selected_base().unwrap().base.name,
        "Release history"
    );
    assert!(state.memory_bases.sessions.is_empty());
}

#[test]
fn sync_asks_for_the_selected_session_or_the_whole_base() {
    let mut state = tab(false);
    let effects = mb_effects(key(&mut state, 's'));
    assert!(matches!(
        &effects[..],
        [MbEffect::Sync { base, session: Some(s) }] if base.id == "base-1" && s == "research-ada-0001"
    ));
    let effects = mb_effects(key(&mut state, 'S'));
    assert!(matches!(
        &effects[..],
        [MbEffect::Sync { base, session: None }] if base.id == "base-1"
    ));
}

#[test]
fn a_manual_conflict_toasts_and_an_automatic_one_stays_quiet() {
    let mut state = tab(false);
    key(&mut state, 's');
    deliver(
        &mut state,
        MbEvent::Synced {
            base_name: "Research notes".to_owned(),
            result: Ok(vec![SyncResult::Conflict {
                session_id: "research-ada-0001".to_owned(),
            }]),
        },
    );
    let toast = state.message.clone().unwrap();
    assert!(toast.contains("already syncing"), "{toast}");
    assert!(toast.contains("research-ada-0001"), "{toast}");

    state.message = None;
    deliver(
        &mut state,
        MbEvent::Watched(WatchEvent {
            memory_base: "Support memory".to_owned(),
            session_id: "support-ada-0002".to_owned(),
            pending: 7,
            threshold: 5,
            result: Ok(SyncOutcome::Skipped {
                session_id: "support-ada-0002".to_owned(),
            }),
        }),
    );
    assert_eq!(state.message, None, "an automatic skip says nothing");
    assert!(
        state
            .warnings()
            .iter()
            .all(|w| !w.contains("support-ada-0002"))
    );

    deliver(
        &mut state,
        MbEvent::Watched(WatchEvent {
            memory_base: "Support memory".to_owned(),
            session_id: "support-ada-0002".to_owned(),
            pending: 7,
            threshold: 5,
            result: Err("embeddings server unreachable".to_owned()),
        }),
    );
    assert_eq!(state.message, None);
    assert!(
        state
            .warnings()
            .iter()
            .any(|w| w.contains("embeddings server unreachable")),
        "an automatic failure is a warning, not a toast"
    );
}

#[test]
fn a_sync_of_one_message_says_one_message() {
    let mut state = tab(false);
    deliver(
        &mut state,
        MbEvent::Synced {
            base_name: "Research notes".to_owned(),
            result: Ok(vec![SyncResult::Completed {
                session_id: "research-ada-0001".to_owned(),
                job_id: "job-1".to_owned(),
                messages: 1,
            }]),
        },
    );
    assert_eq!(
        state.message.as_deref(),
        Some("Research notes: ingested 1 message")
    );
}

#[test]
fn a_completed_sync_reports_and_reloads() {
    let mut state = tab(false);
    let effects = deliver(
        &mut state,
        MbEvent::Synced {
            base_name: "Research notes".to_owned(),
            result: Ok(vec![SyncResult::Completed {
                session_id: "research-ada-0001".to_owned(),
                job_id: "job-1".to_owned(),
                messages: 26,
            }]),
        },
    );
    assert_eq!(
        state.message.as_deref(),
        Some("Research notes: ingested 26 messages")
    );
    let loads = mb_loads(effects);
    assert!(loads.iter().any(|(_, l)| matches!(l, MbLoad::Bases)));
    assert!(loads.iter().any(|(_, l)| matches!(l, MbLoad::Jobs { .. })));
}

fn threshold_dialog(state: &AppState) -> (u64, &'static str, Option<&str>) {
    match &state.memory_bases.dialog {
        Some(Dialog::Threshold { form, error, .. }) => (
            form.number("threshold"),
            form.choice("unit"),
            error.as_deref(),
        ),
        other => panic!("the threshold form is not open: {other:?}"),
    }
}

#[test]
fn the_threshold_form_validates_before_saving() {
    let mut state = tab(false);
    key(&mut state, 't');
    assert_eq!(threshold_dialog(&state), (20, "messages", None));
    code(&mut state, KeyCode::Backspace);
    code(&mut state, KeyCode::Backspace);
    // Only digits type into a number: a letter is no threshold and no command either.
    typed(&mut state, "x0");
    assert_eq!(threshold_dialog(&state).0, 0);
    let effects = code(&mut state, KeyCode::Enter);
    assert!(mb_effects(effects).is_empty());
    assert!(threshold_dialog(&state).2.unwrap().contains("below 1"));
    typed(&mut state, "12");
    assert_eq!(threshold_dialog(&state), (12, "messages", None));
    // The unit is a choice of the same form.
    code(&mut state, KeyCode::Down);
    code(&mut state, KeyCode::Right);
    assert_eq!(threshold_dialog(&state).1, "runs");
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    assert!(matches!(
        &effects[..],
        [MbEffect::Update { base, update }] if base.id == "base-1" && update.threshold == Some(12)
            && update.unit == Some(ThresholdUnit::Runs) && update.auto_capture.is_none()
    ));
    assert!(state.memory_bases.dialog.is_none());
}

#[test]
fn typing_in_a_dialog_does_not_trigger_keys() {
    let mut state = tab(false);
    key(&mut state, 't');
    typed(&mut state, "qjD");
    assert!(!state.quit);
    assert_eq!(state.memory_bases.selected, 0);
    code(&mut state, KeyCode::Esc);
    assert!(state.memory_bases.dialog.is_none());
}

#[test]
fn auto_capture_toggles_the_selected_base() {
    let mut state = tab(false);
    let effects = mb_effects(key(&mut state, 'a'));
    assert!(matches!(
        &effects[..],
        [MbEffect::Update { base, update }] if base.id == "base-1" && update.auto_capture == Some(true)
    ));
    deliver(
        &mut state,
        MbEvent::Written {
            result: Ok("Research notes: auto-capture on".to_owned()),
        },
    );
    assert_eq!(
        state.message.as_deref(),
        Some("Research notes: auto-capture on")
    );
}

#[test]
fn delete_asks_first_and_no_cancels() {
    let mut state = tab(false);
    let effects = key(&mut state, 'D');
    assert!(mb_effects(effects).is_empty());
    assert!(matches!(
        &state.memory_bases.dialog,
        Some(Dialog::Confirm(Confirm::Delete(b))) if b.id == "base-1"
    ));
    assert_eq!(state.key_context(), KeyContext::Confirm);
    assert!(
        mb_effects(key(&mut state, 'S')).is_empty(),
        "other keys do nothing while confirming"
    );
    key(&mut state, 'n');
    assert!(state.memory_bases.dialog.is_none());
    assert_eq!(state.key_context(), KeyContext::MemoryBases);

    key(&mut state, 'D');
    let effects = mb_effects(key(&mut state, 'y'));
    assert!(matches!(&effects[..], [MbEffect::Delete(b)] if b.id == "base-1"));
    assert!(state.memory_bases.dialog.is_none());
}

#[test]
fn regenerate_is_offered_on_a_mismatch_only_and_asks_first() {
    let mut state = tab(false);
    key(&mut state, 'R');
    assert!(state.memory_bases.dialog.is_none());
    assert!(state.message.as_deref().unwrap().contains("mismatch"));
    key(&mut state, 'j');
    key(&mut state, 'R');
    assert!(matches!(
        &state.memory_bases.dialog,
        Some(Dialog::Confirm(Confirm::Regenerate(b))) if b.id == "base-2"
    ));
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    assert!(matches!(&effects[..], [MbEffect::Regenerate(b)] if b.id == "base-2"));
}

fn create_form(state: &AppState) -> &CreateForm {
    match &state.memory_bases.dialog {
        Some(Dialog::Create(form)) => form,
        other => panic!("the create form is not open: {other:?}"),
    }
}

#[test]
fn the_create_form_validates_then_asks() {
    let mut state = tab(false);
    key(&mut state, 'n');
    assert_eq!(
        create_form(&state).form.text("flow"),
        "Research Notes",
        "the selected base's flow"
    );
    code(&mut state, KeyCode::Enter);
    assert!(
        create_form(&state)
            .error
            .as_deref()
            .unwrap()
            .starts_with("name")
    );
    typed(&mut state, "Ideas");
    // The unit is a choice and auto-capture a toggle, as in every form: no free text.
    code(&mut state, KeyCode::Tab);
    code(&mut state, KeyCode::Tab);
    typed(&mut state, "xyz");
    assert_eq!(create_form(&state).form.choice("unit"), "runs");
    code(&mut state, KeyCode::Right);
    assert_eq!(create_form(&state).form.choice("unit"), "messages");
    code(&mut state, KeyCode::Tab);
    key(&mut state, ' ');
    assert!(!create_form(&state).form.toggle("auto"));
    key(&mut state, ' ');

    // The flow is checked against the database before anything is asked; a refusal keeps
    // everything typed.
    let effects = mb_effects(code(&mut state, KeyCode::Enter));
    let [MbEffect::CheckCreate(request)] = &effects[..] else {
        panic!("{effects:?}");
    };
    let request = request.clone();
    assert!(create_form(&state).checking);
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request: request.clone(),
            result: Err("no flow named \"Research Notes\"".to_owned()),
        },
    );
    let form = create_form(&state);
    assert!(form.error.as_deref().unwrap().contains("no flow"));
    assert_eq!(form.form.text("name"), "Ideas", "what was typed stays");
    assert_eq!(form.form.choice("unit"), "messages");
    code(&mut state, KeyCode::Enter);
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request: request.clone(),
            result: Ok(()),
        },
    );
    let Some(Dialog::Confirm(Confirm::Create(asked))) = &state.memory_bases.dialog else {
        panic!("a checked form asks for confirmation");
    };
    assert_eq!(asked.name, "Ideas");
    assert_eq!(asked.unit, ThresholdUnit::Messages);
    assert_eq!(asked.threshold, 50);
    assert!(asked.auto_capture);
    // "No" goes back to the form as typed.
    key(&mut state, 'n');
    assert_eq!(create_form(&state).form.text("name"), "Ideas");
    code(&mut state, KeyCode::Enter);
    deliver(
        &mut state,
        MbEvent::CreateChecked {
            request,
            result: Ok(()),
        },
    );
    let effects = mb_effects(key(&mut state, 'y'));
    assert!(matches!(&effects[..], [MbEffect::Create(r)] if r.name == "Ideas"));
    // Refused at the last moment: the form is back with the reason.
    deliver(
        &mut state,
        MbEvent::Created {
            result: Err("memory base \"Ideas\" already exists".to_owned()),
        },
    );
    let form = create_form(&state);
    assert!(form.error.as_deref().unwrap().contains("already exists"));
    assert_eq!(form.form.text("name"), "Ideas");
    snapshot!("mb_create_form_refused", &state, all_sizes);
}

#[test]
fn a_read_only_database_refuses_every_write_with_a_reason() {
    let mut state = tab(true);
    for c in ['s', 'S', 'a', 't', 'n', 'D'] {
        state.message = None;
        let effects = mb_effects(key(&mut state, c));
        assert!(effects.is_empty(), "{c}: {effects:?}");
        assert!(state.memory_bases.dialog.is_none(), "{c}");
        let message = state.message.clone().unwrap_or_default();
        assert!(message.starts_with("read-only database"), "{c}: {message}");
    }
}

#[test]
fn creating_and_deleting_are_not_offered_where_the_database_refuses_them() {
    let help = |state: &mut AppState| {
        key(state, '?');
        let text = screen_text(state, 120, 45);
        key(state, '?');
        text
    };
    let mut offered = tab(false);
    let hints = tui_support::hint_bar(&offered, 300, 32);
    assert!(
        hints.contains("new base") && hints.contains("delete base"),
        "{hints}"
    );
    assert!(help(&mut offered).contains("new base"));

    let mut state = tab(false);
    state.memory_bases.refused_changes = Some(RefusedChanges {
        create: "memscope does not create memory bases here; POST /api/v1/memories".into(),
        delete: "memscope does not delete memory bases here; DELETE /api/v1/memories/{id}".into(),
    });
    let hints = tui_support::hint_bar(&state, 300, 32);
    assert!(
        !hints.contains("new base") && !hints.contains("delete base"),
        "{hints}"
    );
    let help = help(&mut state);
    assert!(
        !help.contains("new base") && !help.contains("delete base"),
        "{help}"
    );
    // Typed anyway, each is refused with the way out, and nothing opens.
    for (c, says) in [
        ('n', "POST /api/v1/memories"),
        ('D', "DELETE /api/v1/memories"),
    ] {
        let effects = mb_effects(key(&mut state, c));
        assert!(
            effects.is_empty() && state.memory_bases.dialog.is_none(),
            "{c}"
        );
        let message = state.message.clone().unwrap_or_default();
        assert!(message.contains(says), "{c}: {message}");
    }
    // Where there is no base, the empty tab says where one is made.
    state.memory_bases.bases.clear();
    let text = screen_text(&state, 160, 32);
    assert!(text.contains("POST /api/v1/memories"), "{text}");
}

#[test]
fn search_asks_for_hits_and_drops_stale_ones() {
    let mut state = tab(false);
    key(&mut state, '/');
    typed(&mut state, "rollout");
    let loads = mb_loads(code(&mut state, KeyCode::Enter));
    let [(generation, MbLoad::Search { query, .. })] = &loads[..] else {
        panic!("{loads:?}");
    };
    assert_eq!(query, "rollout");
    deliver(
        &mut state,
        JobEvent::load(generation - 1, MbLoaded::Hits(Ok(hits()))),
    );
    assert!(state.memory_bases.search.as_ref().unwrap().hits.is_empty());
    deliver(
        &mut state,
        JobEvent::load(*generation, MbLoaded::Hits(Ok(hits()))),
    );
    let search = state.memory_bases.search.as_ref().unwrap();
    assert_eq!(search.hits.len(), 2);
    assert_eq!(search.status, LoadStatus::Loaded);
    code(&mut state, KeyCode::Esc);
    assert!(
        state.memory_bases.search.is_none(),
        "esc closes the results"
    );
}

fn progress(job: &str, session: &str, stage: Stage, done: u64, total: u64) -> JobProgress {
    JobProgress {
        job_id: job.to_owned(),
        memory_base_id: "base-1".to_owned(),
        session_id: session.to_owned(),
        stage,
        messages_done: done,
        messages_total: total,
        chunks_written: done,
    }
}

fn job_row(job: &str, session: &str, status: &str, created: i64, finished: Option<i64>) -> JobInfo {
    JobInfo {
        job_id: job.to_owned(),
        status: status.to_owned(),
        job_type: "ingestion".to_owned(),
        asset_id: Some("base-2".to_owned()),
        dedupe_key: Some(format!("ingestion:base-2:{session}:0")),
        created_timestamp: at(created),
        finished_timestamp: finished.map(at),
        ended_reason: None,
    }
}

/// A running job of this process, a finished one of the job table and a failed one.
fn jobs_open(state: &mut AppState) {
    let loads = mb_loads(key(state, 'w'));
    assert_eq!(state.overlay, Overlay::Jobs);
    let generation = loads
        .iter()
        .find_map(|(generation, load)| matches!(load, MbLoad::Jobs { .. }).then_some(*generation))
        .expect("the popup asks for the job table");
    deliver(
        state,
        MbEvent::Progress {
            progress: progress(
                "0a1b2c3d-0000-4000-8000-000000000000",
                "research-ada-0001",
                Stage::Running,
                12,
                26,
            ),
            at: at(1000),
            automatic: false,
        },
    );
    deliver(
        state,
        JobEvent::load(
            generation,
            MbLoaded::Jobs {
                result: Ok(vec![
                    job_row(
                        "0a1b2c3d-0000-4000-8000-000000000000",
                        "research-ada-0001",
                        "in_progress",
                        1000,
                        None,
                    ),
                    job_row(
                        "5f5c5275-0000-4000-8000-000000000000",
                        "support-ada-0001",
                        "completed",
                        500,
                        Some(520),
                    ),
                    job_row(
                        "05f63101-0000-4000-8000-000000000000",
                        "support-ada-0002",
                        "failed",
                        300,
                        Some(301),
                    ),
                ]),
                now: at(1004),
            },
        ),
    );
}

#[test]
fn the_jobs_popup_cancels_the_selected_running_job_only() {
    let mut state = tab(false);
    jobs_open(&mut state);
    assert_eq!(state.key_context(), KeyContext::Jobs);
    assert_eq!(state.jobs.running(), 1);
    let lines = state.jobs.lines();
    assert_eq!(lines[0].job_id, "0a1b2c3d-0000-4000-8000-000000000000");
    assert!(lines[0].tracked.is_some(), "its progress is merged in");
    assert_eq!(lines[0].elapsed(at(1004)), 4.0);
    let effects = mb_effects(key(&mut state, 'x'));
    assert!(matches!(
        &effects[..],
        [MbEffect::CancelJob { job_id }] if job_id == "0a1b2c3d-0000-4000-8000-000000000000"
    ));
    key(&mut state, 'j');
    let effects = mb_effects(key(&mut state, 'x'));
    assert!(effects.is_empty());
    assert!(state.message.as_deref().unwrap().contains("not running"));
    deliver(
        &mut state,
        MbEvent::Cancelled {
            job_id: "0a1b2c3d-0000-4000-8000-000000000000".to_owned(),
            result: Ok(true),
        },
    );
    assert!(state.message.as_deref().unwrap().contains("cancelled"));
    key(&mut state, 'w');
    assert_eq!(state.overlay, Overlay::None);
    assert_eq!(state.key_context(), KeyContext::MemoryBases);
}

#[test]
fn a_finished_job_reloads_the_tab_and_leaves_the_running_count() {
    let mut state = tab(false);
    jobs_open(&mut state);
    let loads = mb_loads(deliver(
        &mut state,
        MbEvent::Progress {
            progress: progress(
                "0a1b2c3d-0000-4000-8000-000000000000",
                "research-ada-0001",
                Stage::Committed,
                26,
                26,
            ),
            at: at(1006),
            automatic: false,
        },
    ));
    assert_eq!(state.jobs.running(), 0);
    assert!(loads.iter().any(|(_, l)| matches!(l, MbLoad::Bases)));
    let rolled_back = progress(
        "77777777-0000-4000-8000-000000000000",
        "research-ada-0002",
        Stage::RolledBack {
            reason: "embedder failed".to_owned(),
        },
        0,
        6,
    );
    deliver(
        &mut state,
        MbEvent::Progress {
            progress: rolled_back,
            at: at(1007),
            automatic: true,
        },
    );
    let line = state
        .jobs
        .lines()
        .into_iter()
        .find(|l| l.job_id.starts_with("7777"))
        .unwrap();
    assert_eq!(line.error.as_deref(), Some("embedder failed"));
}

#[test]
fn w_opens_jobs_everywhere_and_big_w_toggles_the_row_window() {
    let keymap = Keymap::default_keys();
    let chord = |text: &str| memscope::tui::keymap::KeyChord::parse(text).unwrap();
    use memscope::tui::action::Action;
    assert_eq!(
        keymap.lookup(KeyContext::Conversation, chord("w")),
        Some(Action::ToggleJobs)
    );
    assert_eq!(
        keymap.lookup(KeyContext::Conversation, chord("W")),
        Some(Action::ToggleRowWindow)
    );
    assert_eq!(
        keymap.lookup(KeyContext::MemoryBases, chord("w")),
        Some(Action::ToggleJobs)
    );
}

#[test]
fn mismatches_and_running_jobs_reach_the_status_bar() {
    let mut state = tab(false);
    assert!(
        state
            .warnings()
            .iter()
            .any(|w| w == "memory base Support memory: vector store empty or missing")
    );
    jobs_open(&mut state);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("jobs: 1"), "{text}");
    assert!(text.contains("warnings: 1"), "{text}");
}

fn hits() -> Vec<SearchHit> {
    vec![
        SearchHit {
            chunk_id: "c1".to_owned(),
            message_id: "m1".to_owned(),
            session_id: "research-ada-0001".to_owned(),
            content: "Note 3: what did we learn about the rollout? The canary caught it."
                .to_owned(),
            metadata: json!({ "sender": "User" }),
            distance: 0.25,
        },
        SearchHit {
            chunk_id: "c2".to_owned(),
            message_id: "m2".to_owned(),
            session_id: "research-ada-0002".to_owned(),
            content: "The rollout went to 10% first,\nthen everyone.".to_owned(),
            metadata: json!({ "sender": "Machine" }),
            distance: 0.5,
        },
    ]
}

#[test]
fn screen_bases_and_sessions() {
    let mut state = tab(false);
    code(&mut state, KeyCode::Enter);
    let text = screen_text(&state, 120, 32);
    // The messages unit counts the bot's replies: the label says so.
    assert!(text.contains("13/20 bot replies"), "{text}");
    snapshot!("mb_bases_and_sessions", &state);
}

#[test]
fn screen_mismatch() {
    let mut state = tab(false);
    let effects = key(&mut state, 'j');
    deliver_sessions(&mut state, effects);
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("mismatch"), "{text}");
    snapshot!("mb_mismatch", &state);
}

#[test]
fn screen_jobs_popup_with_a_running_job() {
    let mut state = tab(false);
    jobs_open(&mut state);
    let text = screen_text(&state, 120, 32);
    assert!(text.contains("12/26 msgs"), "{text}");
    snapshot!("mb_jobs_popup", &state);
}

#[test]
fn screen_job_detail_and_session_detail() {
    let mut state = tab(false);
    jobs_open(&mut state);
    // enter on a job shows it whole; esc goes back to the list.
    code(&mut state, KeyCode::Enter);
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("research-ada-0001"), "{text}");
    snapshot!("mb_job_detail", &state, all_sizes);
    code(&mut state, KeyCode::Esc);
    assert!(screen_text(&state, 80, 24).contains("Sync jobs"));
    code(&mut state, KeyCode::Esc);
    // enter moves into the sessions, enter again shows the selected one whole.
    code(&mut state, KeyCode::Enter);
    code(&mut state, KeyCode::Enter);
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("13/20 bot replies"), "{text}");
    snapshot!("mb_session_detail", &state, all_sizes);
}

#[test]
fn screen_search_results() {
    let mut state = tab(false);
    key(&mut state, '/');
    typed(&mut state, "rollout");
    let loads = mb_loads(code(&mut state, KeyCode::Enter));
    let [(generation, MbLoad::Search { .. })] = &loads[..] else {
        panic!("{loads:?}");
    };
    deliver(
        &mut state,
        JobEvent::load(*generation, MbLoaded::Hits(Ok(hits()))),
    );
    snapshot!("mb_search_results", &state);
}

#[test]
fn screen_confirmation() {
    let mut state = tab(false);
    key(&mut state, 'D');
    snapshot!("mb_confirm_delete", &state);
}

#[test]
fn screen_loading_and_error() {
    let mut state = state(false);
    key(&mut state, '3');
    snapshot!("mb_loading", &state);
    let generation = state.memory_bases.generation;
    deliver(
        &mut state,
        JobEvent::load(
            generation,
            MbLoaded::Bases(Err("no such table: memory_base".to_owned())),
        ),
    );
    let text = screen_text(&state, 80, 24);
    assert!(text.contains("no such table"), "{text}");
}

/// The first base searched for "rollout", its hits delivered.
fn searched(state: &mut AppState, hits: Vec<SearchHit>) {
    key(state, '/');
    typed(state, "rollout");
    let loads = mb_loads(code(state, KeyCode::Enter));
    let [(generation, MbLoad::Search { .. })] = &loads[..] else {
        panic!("{loads:?}");
    };
    deliver(state, JobEvent::load(*generation, MbLoaded::Hits(Ok(hits))));
}

#[test]
fn search_hits_are_selected_with_the_moving_keys_and_read_whole() {
    let mut state = tab(false);
    let session_before = state.memory_bases.session_selected;
    searched(&mut state, hits());
    key(&mut state, 'j');
    let search = state.memory_bases.search.as_ref().unwrap();
    assert_eq!(search.selected, 1, "j moves among the hits");
    assert_eq!(
        state.memory_bases.session_selected, session_before,
        "not the sessions underneath"
    );
    key(&mut state, 'i');
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("i opens the hit: {:?}", state.overlay);
    };
    assert!(
        detail
            .text
            .contains("The rollout went to 10% first,\nthen everyone."),
        "{}",
        detail.text
    );
    assert!(detail.text.contains("research-ada-0002"), "{}", detail.text);
}

#[test]
fn a_search_on_a_base_whose_folder_is_missing_says_so() {
    let mut state = tab(false);
    let base = &mut state.memory_bases.bases[0];
    base.mismatches = vec![Mismatch::DirectoryMissing];
    searched(&mut state, Vec::new());
    let text = screen_text(&state, 120, 32);
    assert!(
        text.contains("knowledge-base folder /kb/ada/") && text.contains("is missing"),
        "{text}"
    );
    assert!(!text.contains("not been synced"), "{text}");
}

#[test]
fn bang_names_where_a_memory_base_mismatch_is_fixed() {
    let mut state = tab(false);
    key(&mut state, '!');
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("! opens a popup: {:?}", state.overlay);
    };
    assert!(
        detail.text.contains("memory base Support memory")
            && detail.text.contains("memory bases tab (3): R regenerates"),
        "{}",
        detail.text
    );
}
