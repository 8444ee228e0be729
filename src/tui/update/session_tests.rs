use super::*;
use crate::memory::agent_history::LangflowMessage;
use crate::memory::model::{ChatMessage, PromptMessage, Role};
use crate::memory::tokens::CountCache;
use crate::sources::langflow::opened::agent_memory;
use crate::sources::opened::{
    ConversationKey, ConversationMemory, FedHistory, OpenConversation, ShownMessage,
};
use crate::tui::state::ConversationScreens;
use crate::tui::state::Overlay;
use crate::tui::state::trim::TrimSource;
use crate::tui::update::effect::{Load, Stamped};
use crate::tui::update::open_session::open_session;
use crate::tui::update::session_effects::{SessionLoad, SessionLoaded};
use crate::tui::update::test_support::{code, key, state};
use crate::tui::update::{Event, JobEvent, update};
use chrono::{TimeZone, Utc};
use crossterm::event::KeyCode;

const FLOW: &str = "11111111-1111-1111-1111-111111111111";
const OWNER: &str = "22222222-2222-2222-2222-222222222222";

fn stored(n: u32, sender: &str, category: &str) -> LangflowMessage {
    LangflowMessage {
        id: format!("m{n}"),
        timestamp: Utc.timestamp_opt(1_700_000_000 + i64::from(n), 0).unwrap(),
        flow_id: Some(FLOW.into()),
        session_id: "s".into(),
        context_id: None,
        owner: Some(OWNER.into()),
        run_id: Some(format!("run{}", n / 2)),
        sender: sender.into(),
        sender_name: sender.into(),
        text: format!("text of message {n}"),
        files: Vec::new(),
        error: false,
        category: category.into(),
        stored_order: u64::from(n),
    }
}

fn shown(m: &LangflowMessage) -> ShownMessage {
    ShownMessage {
        message: ChatMessage {
            id: m.id.clone(),
            message: PromptMessage::text(Role::User, m.text.clone()),
            created_at: Some(m.timestamp.naive_utc()),
            usage: None,
        },
        run: m.run_id.clone(),
        sender: m.sender.clone(),
        files: Vec::new(),
        marks: Vec::new(),
        owner: m.owner.clone(),
        context_id: None,
    }
}

/// A session of 30 messages, the 4th of them error text without the error flag.
fn flow_view() -> Arc<OpenConversation> {
    let rows: Vec<LangflowMessage> = (0..30)
        .map(|n| {
            let sender = if n % 2 == 0 { "User" } else { "Machine" };
            stored(n, sender, if n == 3 { "error" } else { "message" })
        })
        .collect();
    let key = ConversationKey::scoped("s", Some(FLOW.into()));
    Arc::new(OpenConversation {
        heading: "session \"s\" of flow Chat".into(),
        structure: "Langflow keeps no regeneration tree".into(),
        messages: rows.iter().map(shown).collect(),
        memory: agent_memory(&key, rows, Some(OWNER.into())),
        warnings: Vec::new(),
        views: None,
        key,
    })
}

/// The state with `view` open and loaded, and the effects its arrival asked for.
fn opened(view: Arc<OpenConversation>) -> (AppState, Vec<Effect>) {
    let mut state = state();
    state.conversation_screens = ConversationScreens::Messages;
    let mut effects = Vec::new();
    open_session(
        &mut state,
        view.key.clone(),
        Screen::Conversations,
        &mut effects,
    );
    let generation = state.session.as_ref().unwrap().generation;
    let effects = update(
        &mut state,
        Event::Job(JobEvent::load(generation, SessionLoaded::Opened(Ok(view)))),
    );
    (state, effects)
}

fn budget_asked(effects: &[Effect]) -> Option<(u64, Option<u32>)> {
    effects.iter().find_map(|effect| match effect {
        Effect::Load(Stamped {
            generation,
            value: Load::Sessions(SessionLoad::Budget { window, .. }),
        }) => Some((*generation, *window)),
        _ => None,
    })
}

/// Runs the budget job as the runner would and hands its result back.
fn count(state: &mut AppState, effects: &[Effect]) {
    let Some(Effect::Load(Stamped {
        generation,
        value:
            Load::Sessions(SessionLoad::Budget {
                view,
                window,
                settings,
            }),
    })) = effects.iter().find(|e| {
        matches!(
            e,
            Effect::Load(Stamped {
                value: Load::Sessions(SessionLoad::Budget { .. }),
                ..
            })
        )
    })
    else {
        panic!("no budget asked: {effects:?}");
    };
    let result = view
        .memory
        .fed(*window, settings, &mut CountCache::default());
    update(
        state,
        Event::Job(JobEvent::load(
            *generation,
            SessionLoaded::Budget(result.map(Box::new)),
        )),
    );
}

/// The messages the memory reads, before the token cut.
fn fed(budget: &FedHistory) -> usize {
    budget.view.history.messages.len()
}

#[test]
fn the_budget_is_what_the_agent_reads_and_n_messages_moves_it() {
    let (mut state, effects) = opened(flow_view());
    assert_eq!(budget_asked(&effects).map(|(_, n)| n), Some(None));
    count(&mut state, &effects);
    let budget = state.session.as_ref().unwrap().budget.as_ref().unwrap();
    assert_eq!(fed(budget), 30);
    assert_eq!(budget.flagged, vec!["m3".to_owned()]);
    assert!(budget.left_out.is_empty());

    let effects = update(&mut state, key('<'));
    assert_eq!(budget_asked(&effects).map(|(_, n)| n), Some(Some(90)));
    for _ in 0..9 {
        update(&mut state, key('<'));
    }
    let effects = update(&mut state, key('>'));
    assert_eq!(budget_asked(&effects).map(|(_, n)| n), Some(Some(10)));
    count(&mut state, &effects);
    let session = state.session.as_ref().unwrap();
    let budget = session.budget.as_ref().unwrap();
    assert_eq!(fed(budget), 10);
    let left_out: Vec<_> = budget
        .left_out
        .iter()
        .map(|l| (l.reason.as_str(), l.messages))
        .collect();
    assert_eq!(left_out, vec![("past_window", 20)]);
    assert!(budget.flagged.is_empty(), "m3 is past the window");
    assert_eq!(session.is_fed("m29"), Some(true));
    assert_eq!(session.is_fed("m0"), Some(false));
}

#[test]
fn a_budget_another_request_overtook_is_dropped() {
    let (mut state, first) = opened(flow_view());
    let second = update(&mut state, key('+'));
    let (old, _) = budget_asked(&first).unwrap();
    let (new, _) = budget_asked(&second).unwrap();
    assert!(new > old);
    count(&mut state, &first);
    assert!(state.session.as_ref().unwrap().budget.is_none());
    count(&mut state, &second);
    assert!(state.session.as_ref().unwrap().budget.is_some());
}

#[test]
fn t_previews_a_trim_of_the_fed_history_and_i_shows_a_message_whole() {
    let (mut state, effects) = opened(flow_view());
    update(&mut state, key('T'));
    assert_eq!(
        state.overlay,
        Overlay::None,
        "no budget yet: nothing to trim"
    );
    count(&mut state, &effects);
    update(&mut state, key('T'));
    assert_eq!(state.overlay, Overlay::Trim);
    let trim = state.trim.as_ref().unwrap();
    assert_eq!(trim.source, TrimSource::Session { id: "s".into() });
    assert_eq!(trim.messages_before(), 30);
    update(&mut state, code(KeyCode::Esc));

    update(&mut state, key('j'));
    update(&mut state, key('i'));
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("no detail: {:?}", state.overlay);
    };
    assert!(detail.text.contains("text of message 1"), "{}", detail.text);
    assert!(detail.text.contains("run run0"), "{}", detail.text);
}

/// A memory without a message window: it feeds nothing.
#[derive(Debug)]
struct NoWindow;

impl ConversationMemory for NoWindow {
    fn fed(
        &self,
        _: Option<u32>,
        _: &crate::memory::budget_view::BudgetSettings,
        _: &mut CountCache,
    ) -> Result<FedHistory, String> {
        Err("not counted here".to_owned())
    }
}

#[test]
fn a_memory_without_a_message_window_offers_no_window_keys() {
    let mut view = (*flow_view()).clone();
    view.memory = Arc::new(NoWindow);
    let (mut state, _) = opened(Arc::new(view));
    let (hints, _) = state.keymap.hints(state.key_context());
    assert!(
        !hints.iter().any(|(_, desc)| desc.contains("n_messages")),
        "{hints:?}"
    );
    assert!(
        hints.contains(&("i/enter".to_owned(), "the message whole")),
        "{hints:?}"
    );
    let effects = update(&mut state, key('>'));
    assert!(budget_asked(&effects).is_none());
}

#[test]
fn esc_goes_back_where_the_session_was_opened_from() {
    let (mut state, _) = opened(flow_view());
    state.session.as_mut().unwrap().back_to = Screen::MemoryBases;
    update(&mut state, code(KeyCode::Esc));
    assert_eq!(state.screen, Screen::MemoryBases);
}

#[test]
fn enter_on_a_thread_opens_its_checkpoint_tree_and_on_a_langflow_session_the_message() {
    let (mut state, _) = opened(flow_view());
    let (hints, _) = state.keymap.hints(state.key_context());
    assert!(
        hints.contains(&("i/enter".to_owned(), "the message whole")),
        "{hints:?}"
    );
    update(&mut state, key('j'));
    update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Session);
    assert!(state.checkpoints.is_none());
    let Overlay::Detail(detail) = &state.overlay else {
        panic!("enter opens the message whole: {:?}", state.overlay);
    };
    assert!(detail.title.contains("m1"), "{}", detail.title);

    let (mut state, _) = opened(flow_view());
    state.conversation_screens = ConversationScreens::CheckpointThread;
    let (hints, _) = state.keymap.hints(state.key_context());
    assert!(
        hints.contains(&("t/enter".to_owned(), "checkpoint tree")),
        "{hints:?}"
    );
    assert!(
        !hints.iter().any(|(_, desc)| desc.contains("n_messages")),
        "a thread has no n_messages: {hints:?}"
    );
    let effects = update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Checkpoints);
    let thread = state.checkpoints.as_ref().expect("the thread's tree opens");
    assert_eq!(thread.thread_id, state.session.as_ref().unwrap().key.id);
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::Load(Stamped {
                value: Load::Checkpoints(_),
                ..
            })
        )),
        "{effects:?}"
    );
}

#[test]
fn conv_opens_a_langflow_session_as_its_log() {
    let mut state = state();
    state.conversation_screens = ConversationScreens::Messages;
    update(&mut state, key(':'));
    for c in "conv s".chars() {
        update(&mut state, key(c));
    }
    let effects = update(&mut state, code(KeyCode::Enter));
    assert_eq!(state.screen, Screen::Session);
    let opened = effects.iter().find_map(|e| match e {
        Effect::Load(Stamped {
            value: Load::Sessions(SessionLoad::Open { key, .. }),
            ..
        }) => Some(key.clone()),
        _ => None,
    });
    assert_eq!(opened, Some(ConversationKey::new("s")));
}
