use super::*;
use crate::memory::model::Role;
use chrono::TimeZone;
use proptest::prelude::*;

const FLOW: &str = "11111111-1111-1111-1111-111111111111";
const OTHER_FLOW: &str = "22222222-2222-2222-2222-222222222222";
const OWNER: &str = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";
const OTHER_OWNER: &str = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb";
const SESSION: &str = "New Session 0";

fn at(second: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_767_603_601 + second, 0).unwrap()
}

/// A message of `FLOW`, `OWNER`, `SESSION` written at `second`, id derived from `n`.
fn message(n: u32, second: i64) -> LangflowMessage {
    LangflowMessage {
        id: format!("00000000-0000-4000-8000-{n:012x}"),
        timestamp: at(second),
        flow_id: Some(FLOW.into()),
        session_id: SESSION.into(),
        context_id: None,
        owner: Some(OWNER.into()),
        run_id: None,
        sender: if n % 2 == 0 { "User" } else { "Machine" }.into(),
        sender_name: if n % 2 == 0 { "User" } else { "AI" }.into(),
        text: format!("message {n}"),
        files: Vec::new(),
        error: false,
        category: "message".into(),
        stored_order: u64::from(n),
    }
}

fn args(n_messages: Option<u32>) -> AgentHistoryArgs {
    AgentHistoryArgs {
        flow_id: Some(FLOW.into()),
        session_id: SESSION.into(),
        context_id: None,
        owner: Some(OWNER.into()),
        n_messages,
    }
}

fn texts(history: &AgentHistory<'_>) -> Vec<String> {
    history.messages.iter().map(|m| m.text.clone()).collect()
}

#[test]
fn the_newest_n_messages_come_oldest_first() {
    let session: Vec<_> = (0..130).map(|n| message(n, i64::from(n))).rev().collect();
    let history = agent_history(&session, &args(Some(AGENT_DEFAULT_N_MESSAGES)));
    let expected: Vec<String> = (30..130).map(|n| format!("message {n}")).collect();
    assert_eq!(texts(&history), expected);
    assert_eq!(history.left_out, vec![(LeftOut::PastWindow, 30)]);
    assert!(!history.fetch_limit_reached);
}

#[test]
fn zero_messages_is_memory_switched_off() {
    let session: Vec<_> = (0..5).map(|n| message(n, i64::from(n))).collect();
    let history = agent_history(&session, &args(Some(0)));
    assert!(history.messages.is_empty());
    assert_eq!(history.left_out, vec![(LeftOut::MemoryOff, 5)]);
}

#[test]
fn without_a_flow_or_an_owner_the_read_fails_closed() {
    let session: Vec<_> = (0..3).map(|n| message(n, i64::from(n))).collect();
    for unscoped in [
        AgentHistoryArgs {
            flow_id: None,
            ..args(None)
        },
        AgentHistoryArgs {
            owner: None,
            ..args(None)
        },
    ] {
        let history = agent_history(&session, &unscoped);
        assert!(history.messages.is_empty());
        assert_eq!(history.left_out(LeftOut::MemoryOff), 3);
    }
}

#[test]
fn other_flows_and_owners_sharing_the_session_id_are_left_out_and_counted() {
    let mut session: Vec<_> = (0..4).map(|n| message(n, i64::from(n))).collect();
    session[0].flow_id = Some(OTHER_FLOW.into());
    session[1].owner = Some(OTHER_OWNER.into());
    session[2].owner = None;
    session.push(LangflowMessage {
        flow_id: None,
        ..message(9, 9)
    });
    let history = agent_history(&session, &args(None));
    assert_eq!(texts(&history), vec!["message 3"]);
    assert_eq!(
        history.left_out,
        vec![(LeftOut::OtherFlow, 2), (LeftOut::OtherOwner, 2)]
    );
}

#[test]
fn ids_match_with_or_without_dashes_and_in_any_case() {
    let mut session = vec![message(1, 1)];
    session[0].flow_id = Some(FLOW.replace('-', ""));
    session[0].owner = Some(OWNER.to_ascii_uppercase());
    assert_eq!(agent_history(&session, &args(None)).messages.len(), 1);
}

#[test]
fn a_context_id_narrows_the_read_and_an_empty_one_does_not() {
    let mut session: Vec<_> = (0..3).map(|n| message(n, i64::from(n))).collect();
    session[0].context_id = Some("ctx-a".into());
    session[1].context_id = Some("ctx-b".into());
    let narrowed = agent_history(
        &session,
        &AgentHistoryArgs {
            context_id: Some("ctx-a".into()),
            ..args(None)
        },
    );
    assert_eq!(texts(&narrowed), vec!["message 0"]);
    assert_eq!(narrowed.left_out, vec![(LeftOut::OtherContext, 2)]);
    let empty = agent_history(
        &session,
        &AgentHistoryArgs {
            context_id: Some(String::new()),
            ..args(None)
        },
    );
    assert_eq!(empty.messages.len(), 3);
}

#[test]
fn the_error_flag_keeps_a_message_out_but_the_error_category_does_not() {
    let mut session: Vec<_> = (0..3).map(|n| message(n, i64::from(n))).collect();
    session[0].category = ERROR_CATEGORY.into();
    session[1].category = ERROR_CATEGORY.into();
    session[1].error = true;
    let history = agent_history(&session, &args(None));
    assert_eq!(texts(&history), vec!["message 0", "message 2"]);
    assert_eq!(history.left_out, vec![(LeftOut::ErrorFlag, 1)]);
    assert_eq!(history.error_text_fed, vec![session[0].id.clone()]);
}

#[test]
fn errored_messages_do_not_take_a_place_in_the_window() {
    let mut session: Vec<_> = (0..4).map(|n| message(n, i64::from(n))).collect();
    session[3].error = true;
    let history = agent_history(&session, &args(Some(2)));
    assert_eq!(texts(&history), vec!["message 1", "message 2"]);
    assert_eq!(
        history.left_out,
        vec![(LeftOut::ErrorFlag, 1), (LeftOut::PastWindow, 1)]
    );
}

#[test]
fn equal_timestamps_are_ordered_as_the_table_keeps_them_not_by_id() {
    let mut session = vec![message(3, 7), message(1, 7), message(2, 7), message(0, 1)];
    // Ids that sort against the stored order.
    for m in &mut session {
        m.id = format!("00000000-0000-4000-8000-{:012x}", 10 - m.stored_order);
    }
    let history = agent_history(&session, &args(Some(2)));
    assert_eq!(texts(&history), vec!["message 2", "message 3"]);
    let all = agent_history(&session, &args(None));
    assert_eq!(
        texts(&all),
        vec!["message 0", "message 1", "message 2", "message 3"]
    );
}

#[test]
fn other_sessions_are_not_read() {
    let mut session = vec![message(0, 0), message(1, 1)];
    session[0].session_id = "New Session 1".into();
    let history = agent_history(&session, &args(None));
    assert_eq!(texts(&history), vec!["message 1"]);
    assert!(history.left_out.is_empty());
}

#[test]
fn an_unset_window_reads_up_to_langflows_fetch_limit() {
    let count = MAX_CHAT_HISTORY_FETCH_LIMIT + 2;
    let session: Vec<_> = (0..count).map(|n| message(n, i64::from(n))).collect();
    let history = agent_history(&session, &args(None));
    assert_eq!(
        history.messages.len(),
        MAX_CHAT_HISTORY_FETCH_LIMIT as usize
    );
    assert_eq!(history.messages[0].text, "message 2");
    assert_eq!(history.left_out, vec![(LeftOut::PastWindow, 2)]);
    assert!(history.fetch_limit_reached);
    let exactly: Vec<_> = session[2..].to_vec();
    assert!(agent_history(&exactly, &args(None)).fetch_limit_reached);
    assert!(!agent_history(&session[3..], &args(None)).fetch_limit_reached);
}

#[test]
fn the_user_sender_is_the_human_and_every_other_the_ai() {
    let mut session: Vec<_> = (0..3).map(|n| message(n, i64::from(n))).collect();
    session[2].sender = String::new();
    let history = agent_history(&session, &args(None));
    let prompt = history.prompt_history(100);
    let roles: Vec<Role> = prompt.messages.iter().map(|m| m.message.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::User]);
    assert_eq!(prompt.messages[1].message.content.text(), "message 1");
    assert_eq!(
        prompt.thread,
        session.iter().map(|m| m.id.clone()).collect::<Vec<_>>()
    );
    assert_eq!(prompt.popped, None);
}

/// A session of messages varying in every column the read looks at.
fn arbitrary_session() -> impl Strategy<Value = Vec<LangflowMessage>> {
    prop::collection::vec(
        (
            0..6i64,
            0..4u8,
            0..4u8,
            0..3u8,
            any::<bool>(),
            any::<bool>(),
        ),
        0..40,
    )
    .prop_map(|rows| {
        rows.into_iter()
            .enumerate()
            .map(
                |(n, (second, flow, owner, context, error, error_category))| {
                    let mut m = message(n as u32, second);
                    m.flow_id = [Some(FLOW), Some(FLOW), Some(OTHER_FLOW), None][flow as usize]
                        .map(Into::into);
                    m.owner = [Some(OWNER), Some(OWNER), Some(OTHER_OWNER), None][owner as usize]
                        .map(Into::into);
                    m.context_id =
                        [None, Some("ctx-a"), Some("ctx-b")][context as usize].map(Into::into);
                    m.error = error;
                    if error_category {
                        m.category = ERROR_CATEGORY.into();
                    }
                    m
                },
            )
            .collect()
    })
}

fn arbitrary_args() -> impl Strategy<Value = AgentHistoryArgs> {
    (
        prop::option::of(0..12u32),
        prop::option::of(prop::sample::select(vec!["", "ctx-a", "ctx-b"])),
    )
        .prop_map(|(n_messages, context)| AgentHistoryArgs {
            context_id: context.map(Into::into),
            ..args(n_messages)
        })
}

proptest! {
    /// The history is Langflow's query read straight: filter, newest n, oldest first; and every
    /// message of the session is either fed or counted once.
    #[test]
    fn history_is_the_filtered_newest_window(session in arbitrary_session(), args in arbitrary_args()) {
        let history = agent_history(&session, &args);
        let context = args.context_id.as_deref().filter(|c| !c.is_empty());
        let mut expected: Vec<&LangflowMessage> = session
            .iter()
            .filter(|m| m.flow_id.as_deref() == Some(FLOW) && m.owner.as_deref() == Some(OWNER))
            .filter(|m| context.is_none() || m.context_id.as_deref() == context)
            .filter(|m| !m.error)
            .collect();
        expected.sort_by_key(|m| (m.timestamp, m.stored_order));
        let n = args.n_messages.map_or(usize::MAX, |n| n as usize);
        let expected = &expected[expected.len().saturating_sub(n)..];
        prop_assert_eq!(&history.messages[..], expected);
        let counted: usize = history.left_out.iter().map(|(_, n)| n).sum();
        prop_assert_eq!(counted + history.messages.len(), session.len());
        prop_assert!(history.left_out.iter().all(|(_, n)| *n > 0));
        let fed_errors = history.messages.iter().filter(|m| m.category == ERROR_CATEGORY).count();
        prop_assert_eq!(history.error_text_fed.len(), fed_errors);
    }

    /// A larger window only adds older messages in front.
    #[test]
    fn a_larger_window_extends_the_history_backwards(session in arbitrary_session(), n in 0..10u32) {
        let smaller = agent_history(&session, &args(Some(n)));
        let larger = agent_history(&session, &args(Some(n + 1)));
        prop_assert!(larger.messages.ends_with(&smaller.messages));
        prop_assert!(larger.messages.len() - smaller.messages.len() <= 1);
    }

    /// The order of the rows as read does not matter.
    #[test]
    fn the_order_rows_arrive_in_does_not_matter(session in arbitrary_session(), args in arbitrary_args()) {
        let mut reversed = session.clone();
        reversed.reverse();
        prop_assert_eq!(agent_history(&session, &args), agent_history(&reversed, &args));
    }
}
