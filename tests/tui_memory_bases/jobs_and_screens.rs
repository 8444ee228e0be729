//! The jobs popup (cancel, a finished job, the row window key, the status bar) and snapshots of
//! the tab's screens.

use super::*;

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
