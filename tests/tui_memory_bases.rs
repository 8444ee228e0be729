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
use memscope::tui::state::confirm::PendingWrite;
use memscope::tui::state::memory_bases::{BaseForm, Focus, MemoryBaseWrite, RefusedChanges};
use memscope::tui::state::{AppState, LoadStatus, Overlay, Screen};
use memscope::tui::state::{FormPopup, FormPurpose};
use memscope::tui::update::{
    Effect, Event, JobEvent, Load, MbEffect, MbEvent, MbLoad, MbLoaded, Stamped, SyncResult, update,
};
use serde_json::json;

#[path = "tui_memory_bases/forms.rs"]
mod forms;
#[path = "tui_memory_bases/jobs_and_screens.rs"]
mod jobs_and_screens;

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
