//! Tests of the detail popups of each screen's rows.

use chrono::{DateTime, Utc};
use crossterm::event::KeyCode;

use super::*;
use crate::store::memory_bases::{JobInfo, MemoryBaseSessionInfo};
use crate::tui::update::test_support::{code, key, list_loaded, state};
use crate::tui::update::{start, update};

fn detail(state: &AppState) -> &Detail {
    match &state.overlay {
        Overlay::Detail(detail) => detail,
        other => panic!("expected a detail popup, got {other:?}"),
    }
}

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
}

#[test]
fn i_shows_the_selected_conversation_whole_and_esc_closes_it() {
    let mut state = state();
    start(&mut state);
    let long = "9b691c25-0000-4000-8000-00000000abcd";
    list_loaded(&mut state, &["x", long]);
    update(&mut state, key('j'));
    update(&mut state, key('i'));
    let text = &detail(&state).text;
    assert!(text.contains(long), "{text}");
    assert!(text.contains(&format!("conversation {long}")), "{text}");
    // The popup owns the keyboard: q does not quit behind it.
    update(&mut state, key('q'));
    assert!(!state.quit);
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.overlay, Overlay::None);
}

#[test]
fn i_in_a_conversation_shows_the_selected_message_whole() {
    let mut state = state();
    let loaded = crate::tui::update::test_support::loaded();
    let mut conversation = crate::tui::state::ConversationState::new(
        "c1".to_owned(),
        0,
        crate::memory::thread_view::ThreadMode::Dify,
        crate::tui::state::Screen::Conversations,
    );
    conversation.loaded = Some(loaded);
    state.conversation = Some(conversation);
    state.screen = Screen::Conversation;
    update(&mut state, key('i'));
    let text = &detail(&state).text;
    assert!(text.contains("Query:\nquestion a"), "{text}");
    assert!(text.contains("Answer:\nanswer a"), "{text}");
}

#[test]
fn enter_on_a_failed_job_shows_its_reason_and_esc_goes_back_to_the_jobs() {
    let mut state = state();
    let reason = "the embedding endpoint refused the request: 401 Unauthorized \
                  (check [memory_bases] api_key_env)";
    state.jobs.table = vec![JobInfo {
        job_id: "0a1b2c3d-job".to_owned(),
        status: "failed".to_owned(),
        job_type: "ingestion".to_owned(),
        asset_id: None,
        dedupe_key: Some("ingestion:base:session-7:1".to_owned()),
        created_timestamp: at(0),
        finished_timestamp: Some(at(3)),
        ended_reason: Some(reason.to_owned()),
    }];
    state.overlay = Overlay::Jobs;
    update(&mut state, code(KeyCode::Enter));
    let text = &detail(&state).text;
    assert!(text.contains(reason), "{text}");
    assert!(text.contains("session-7"), "{text}");
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.overlay, Overlay::Jobs);
}

#[test]
fn enter_in_the_sessions_shows_what_the_threshold_counts_and_what_a_sync_reads() {
    let mut state = state();
    state.screen = Screen::MemoryBases;
    state.memory_bases.focus = Focus::Sessions;
    state.memory_bases.sessions = vec![SessionStatus {
        session: MemoryBaseSessionInfo {
            id: "s".to_owned(),
            memory_base_id: "b".to_owned(),
            session_id: "research-ada-0001".to_owned(),
            cursor_id: None,
            total_processed: 1_500,
            last_sync_at: None,
            pending_runs: 13,
            ingestion_records: 0,
        },
        pending: 13,
        pending_messages: 26,
        threshold: 20,
        unit: "messages",
        due: false,
    }];
    update(&mut state, code(KeyCode::Enter));
    let text = &detail(&state).text;
    assert!(text.contains("13/20 bot replies"), "{text}");
    assert!(text.contains("26 messages (a sync reads"), "{text}");
    assert!(text.contains("1,500 messages"), "{text}");
}

#[test]
fn a_node_turn_whose_texts_disagree_shows_both_side_by_side() {
    use crate::inspect::nodes::{Timeline, TimelineTurn};
    use crate::memory::node_context::Disagreement;
    let (mut state, _) = crate::tui::update::test_support::nodes_open();
    let turn = |disagreement| TimelineTurn {
        message_id: "m-2".to_owned(),
        workflow_run_id: "run-2".to_owned(),
        executions: 1,
        execution_id: None,
        status: Some("succeeded".to_owned()),
        context_messages: Some(2),
        prompt_messages: Some(3),
        disagreement,
        problems: Vec::new(),
    };
    let nodes = state.conversation.as_mut().unwrap().nodes.as_mut().unwrap();
    nodes.timeline = Some(Timeline {
        node_id: "llm1".to_owned(),
        turns: vec![
            turn(None),
            turn(Some(Disagreement::DifferentAssistant {
                file: "It ships on Friday.".to_owned(),
                outputs: "It ships on Monday.".to_owned(),
            })),
        ],
    });
    update(&mut state, key('i'));
    let shown = detail(&state);
    let [comparison] = &shown.comparisons[..] else {
        panic!("one comparison: {:?}", shown.comparisons);
    };
    assert!(
        comparison
            .heading
            .starts_with("Turn 2 (m-2): assistant message differs"),
        "{}",
        comparison.heading
    );
    let changed: Vec<(&str, &str)> = comparison
        .rows
        .iter()
        .filter(|r| r.changed)
        .map(|r| (r.left.as_str(), r.right.as_str()))
        .collect();
    assert_eq!(changed, [("Friday.", "Monday.")]);
}

#[test]
fn i_in_the_extraction_demo_shows_every_step_with_its_reason_whole() {
    let mut state = crate::tui::update::test_support::opened();
    update(&mut state, key('d'));
    update(&mut state, key('n'));
    update(&mut state, key('i'));
    let shown = detail(&state);
    assert!(shown.title.contains("Dify's extraction"), "{}", shown.title);
    let conversation = state.conversation.as_ref().unwrap();
    let demo = conversation.demo.as_ref().unwrap();
    for step in &demo.trace.steps[..demo.shown] {
        let reason = step.reason.describe();
        assert!(
            shown.text.contains(reason),
            "{reason} missing:\n{}",
            shown.text
        );
    }
}
