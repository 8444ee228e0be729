use proptest::prelude::*;

use super::*;
use crate::memory::model::ToolCall;
use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};
use crate::memory::trim::count::MessageCount;
use crate::memory::trim::extractive::{EXTRACTIVE_LABEL, extractive_summary};

fn raw() -> TokenCounter {
    TokenCounter::with_encoding(CounterKind::OpenAi, Encoding::Cl100kBase)
}

fn user(text: &str) -> PromptMessage {
    PromptMessage::text(Role::User, text)
}

fn assistant(text: &str) -> PromptMessage {
    PromptMessage::text(Role::Assistant, text)
}

fn call(id: &str) -> PromptMessage {
    PromptMessage {
        tool_calls: vec![ToolCall {
            id: id.into(),
            name: "search".into(),
            arguments: "{\"q\":\"refund\"}".into(),
        }],
        ..assistant("")
    }
}

fn result(id: &str, text: &str) -> PromptMessage {
    PromptMessage {
        tool_call_id: Some(id.into()),
        ..PromptMessage::text(Role::Tool, text)
    }
}

fn image(name: &str) -> PromptMessage {
    PromptMessage::new(
        Role::User,
        Content::Parts(vec![
            ContentPart::Image {
                source: format!("https://files.example.com/u/{name}?sig=1"),
            },
            ContentPart::Text {
                text: "see attached".into(),
            },
        ]),
    )
}

fn policy(json: &str) -> ChatMemoryPolicy {
    ChatMemoryPolicy::from_json(json).unwrap()
}

fn plan(
    policy: &ChatMemoryPolicy,
    history: &[PromptMessage],
    counter: &dyn MessageCounter,
) -> TrimPlan {
    let counts: Vec<MessageTokens> = history.iter().map(|m| counter.count_message(m)).collect();
    PolicyPlanner::new(policy, history, &counts, counter)
        .unwrap()
        .plan()
}

/// Plans, summarizes extractively when asked, and returns the new history (without the
/// predefined messages) with its plan.
fn apply(
    policy: &ChatMemoryPolicy,
    history: &[PromptMessage],
    counter: &dyn MessageCounter,
) -> (Vec<PromptMessage>, TrimPlan) {
    let counts: Vec<MessageTokens> = history.iter().map(|m| counter.count_message(m)).collect();
    let planner = PolicyPlanner::new(policy, history, &counts, counter).unwrap();
    let mut plan = planner.plan();
    if plan.summary.is_some() {
        let text = extractive_summary(
            planner.summarized(&plan),
            planner.summary_max_tokens(),
            counter,
        );
        planner.fill_summary(&mut plan, text, EXTRACTIVE_LABEL);
    }
    let messages = plan.messages(&planner.context());
    (messages[planner.predefined_len()..].to_vec(), plan)
}

fn turns(n: usize) -> Vec<PromptMessage> {
    (0..n)
        .flat_map(|i| {
            [
                user(&format!("Question {i} about the invoice.")),
                assistant(&format!("Answer {i}: the refund is on its way.")),
            ]
        })
        .collect()
}

#[test]
fn the_demo_policy_shape_parses_and_defaults_follow_the_seed() {
    let demo = policy(
        r#"{"limit_type":"messages","trim_mode":"continuous","max_messages":20,
            "strategy":"drop_oldest","clear_tool_results":false,"max_images":1,
            "predefined_messages":[{"role":"user","content":"How do I reset my password?"}],
            "summarization":{"enabled":false}}"#,
    );
    assert_eq!(demo.max_messages, 20);
    assert_eq!(demo.predefined_messages.len(), 1);
    let defaults = ChatMemoryPolicy::default();
    assert_eq!(
        (defaults.limit_type, defaults.trim_mode, defaults.strategy),
        (
            LimitType::Messages,
            TrimMode::Continuous,
            PolicyStrategy::DropOldest
        )
    );
    assert_eq!(
        (defaults.max_messages, defaults.trigger, defaults.target),
        (20, 500, 100)
    );
    assert_eq!(
        (
            defaults.max_tokens,
            defaults.min_messages,
            defaults.max_images
        ),
        (2000, 0, 1)
    );
    assert_eq!(defaults.summarize_rules(), DEFAULT_SUMMARIZE_PROMPT);
    assert!(matches!(
        ChatMemoryPolicy::from_json(r#"{"strategy":"drop_newest"}"#),
        Err(TrimError::BadPolicy(_))
    ));
    assert!(matches!(
        ChatMemoryPolicy::from_json(r#"{"trim_mode":"threshold","trigger":10,"target":50}"#),
        Err(TrimError::BadPolicy(_))
    ));
    assert_eq!(policy(&demo.to_json()), demo);
}

#[test]
fn continuous_message_limit_drops_the_oldest_and_counts_predefined() {
    let p = policy(
        r#"{"max_messages":6,"max_images":5,
            "predefined_messages":[{"role":"user","content":"Example?"},{"role":"assistant","content":"Example."}]}"#,
    );
    let history = turns(5);
    let (kept, plan) = apply(&p, &history, &MessageCount);
    assert_eq!(kept, history[6..]);
    assert_eq!(plan.kept_len(), 6);
    // Predefined messages are pinned: indices 0 and 1 are kept.
    assert!(matches!(plan.steps[0], Step::Keep { index: 0 }));
    assert!(
        plan.removed()
            .all(|(i, r)| i >= 2 && r == Reason::OverLimit)
    );
}

#[test]
fn threshold_waits_for_the_trigger_then_cuts_to_the_target() {
    let p = policy(r#"{"trim_mode":"threshold","trigger":10,"target":4}"#);
    assert!(plan(&p, &turns(5), &MessageCount).is_noop());
    let (kept, _) = apply(&p, &turns(6), &MessageCount);
    assert_eq!(kept, turns(6)[8..]);
}

#[test]
fn drop_middle_keeps_system_and_first_messages() {
    let p = policy(
        r#"{"max_messages":5,"strategy":"drop_middle","keep_first":1,
            "summarization":{"enabled":true}}"#,
    );
    let mut history = vec![PromptMessage::text(
        Role::System,
        "You are a billing agent.",
    )];
    history.extend(turns(4));
    let (kept, plan) = apply(&p, &history, &MessageCount);
    assert_eq!(kept.len(), 5);
    assert_eq!(kept[0], history[0]);
    assert_eq!(kept[1], history[1]);
    assert!(is_summary(&kept[2]), "{:?}", kept[2]);
    assert_eq!(kept[3..], history[7..]);
    let summary = plan.summary.unwrap();
    assert_eq!(summary.summarized, (2..7).collect::<Vec<_>>());
    assert!(summary.prompt.contains("Question 1 about the invoice."));
    assert!(summary.prompt.contains(DEFAULT_SUMMARIZE_PROMPT));
    // The summary stands right after what it replaces.
    let at = plan.steps.iter().position(|s| *s == Step::Summary).unwrap();
    assert_eq!(plan.steps[at - 1].index(), Some(6));
}

#[test]
fn tool_groups_trim_whole_and_no_orphan_opens_the_history() {
    let p = policy(r#"{"max_messages":3}"#);
    let history = vec![
        user("Find my refund."),
        call("c1"),
        result("c1", "{\"status\":\"sent\"}"),
        assistant("It was sent."),
        user("Thanks"),
    ];
    let (kept, plan) = apply(&p, &history, &MessageCount);
    assert_eq!(kept, history[3..]);
    assert!(
        plan.removed()
            .any(|(i, r)| i == 2 && r == Reason::ToolGroup)
    );

    // A result whose call is gone is dropped with the cut.
    let orphaned = vec![user("a"), result("gone", "x"), user("b"), assistant("c")];
    let (kept, plan) = apply(&policy(r#"{"max_messages":3}"#), &orphaned, &MessageCount);
    assert_eq!(kept, orphaned[2..]);
    assert!(
        plan.removed()
            .any(|(i, r)| i == 1 && r == Reason::OrphanToolResult)
    );
}

#[test]
fn the_minimum_messages_floor_beats_the_token_limit() {
    let p = policy(r#"{"limit_type":"tokens","max_tokens":10,"min_messages":3}"#);
    let (kept, plan) = apply(&p, &turns(4), &raw());
    assert_eq!(kept, turns(4)[5..]);
    assert!(plan.tokens_after > 10);
}

#[test]
fn tool_results_are_emptied_when_a_trim_fires() {
    let p = policy(r#"{"limit_type":"tokens","max_tokens":60,"clear_tool_results":true}"#);
    let long = "lorem ipsum ".repeat(40);
    let history = vec![
        user("Find it."),
        call("c1"),
        result("c1", &long),
        assistant("Found."),
    ];
    let (kept, plan) = apply(&p, &history, &raw());
    assert_eq!(kept.len(), 4, "emptying was enough: nothing removed");
    assert_eq!(kept[2].content, Content::Text(String::new()));
    assert_eq!(kept[2].tool_call_id.as_deref(), Some("c1"));
    assert!(
        plan.modified()
            .all(|(i, _, r)| i == 2 && r == Reason::ToolResultCleared)
    );
    // Under the limit nothing is emptied.
    let roomy = policy(r#"{"limit_type":"tokens","max_tokens":100000,"clear_tool_results":true}"#);
    assert!(plan_of(&roomy, &history).is_noop());
}

fn plan_of(p: &ChatMemoryPolicy, history: &[PromptMessage]) -> TrimPlan {
    plan(p, history, &raw())
}

#[test]
fn older_images_become_stubs_naming_the_file() {
    let p = policy(r#"{"max_messages":50,"max_images":1}"#);
    let history = vec![
        image("error-dialog.png"),
        assistant("I see."),
        image("invoice.png"),
    ];
    let (kept, plan) = apply(&p, &history, &MessageCount);
    assert_eq!(kept[2], history[2]);
    assert_eq!(
        kept[0].content,
        Content::Parts(vec![
            ContentPart::Text {
                text: "[image removed: error-dialog.png]".into()
            },
            ContentPart::Text {
                text: "see attached".into()
            },
        ])
    );
    assert_eq!(plan.modified().count(), 1);
    let none = policy(r#"{"max_images":0}"#);
    assert_eq!(
        apply(&none, &history, &MessageCount).1.modified().count(),
        2
    );
}

#[test]
fn halving_removes_fewer_groups() {
    let p = policy(r#"{"max_messages":2,"summarization":{"enabled":true}}"#);
    let history = turns(5);
    let counts: Vec<MessageTokens> = history
        .iter()
        .map(|m| MessageCount.count_message(m))
        .collect();
    let planner = PolicyPlanner::new(&p, &history, &counts, &MessageCount).unwrap();
    let full = planner.plan();
    assert_eq!(full.summary.as_ref().unwrap().groups, 9);
    let half = planner.plan_removing_at_most(Some(4));
    assert_eq!(half.summary.as_ref().unwrap().summarized, vec![0, 1, 2, 3]);
    assert_eq!(half.removed().count(), 4);
}

#[test]
fn without_a_summary_text_the_prompt_is_reported() {
    let p = policy(r#"{"max_messages":2,"summarization":{"enabled":true,"prompt":"Keep names."}}"#);
    let plan = plan(&p, &turns(3), &MessageCount);
    let slot = plan.summary.as_ref().unwrap();
    assert!(slot.text.is_none());
    assert!(
        slot.prompt
            .starts_with("You are given a chat log inside <chat> tags. Rules: Keep names.")
    );
    // Without text the summary is not in the list.
    assert_eq!(plan.messages(&turns(3)).len(), 1);
}

/// Random histories: plain turns, tool calls with one or two results, images, stray results.
fn history_strategy() -> impl Strategy<Value = Vec<PromptMessage>> {
    let item = prop_oneof![
        4 => "[a-z ]{1,60}".prop_map(|t| vec![user(&t), assistant(&t)]),
        2 => (1usize..3, "[a-z ]{0,80}").prop_map(|(n, t)| {
            let mut group = vec![PromptMessage {
                tool_calls: (0..n)
                    .map(|i| ToolCall { id: format!("c{i}"), name: "f".into(), arguments: "{}".into() })
                    .collect(),
                ..assistant("")
            }];
            group.extend((0..n).map(|i| result(&format!("c{i}"), &t)));
            group
        }),
        1 => Just(vec![image("shot.png")]),
        1 => Just(vec![result("stray", "late result")]),
    ];
    prop::collection::vec(item, 0..25).prop_map(|items| items.concat())
}

fn policy_strategy() -> impl Strategy<Value = ChatMemoryPolicy> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1u64..30,
        1u64..400,
        0u64..6,
        0u64..4,
        any::<bool>(),
        0u64..3,
    )
        .prop_map(
            |(tokens, middle, summarize, messages, max_tokens, min, keep_first, clear, images)| {
                ChatMemoryPolicy {
                    limit_type: if tokens {
                        LimitType::Tokens
                    } else {
                        LimitType::Messages
                    },
                    max_messages: messages,
                    max_tokens,
                    min_messages: min,
                    strategy: if middle {
                        PolicyStrategy::DropMiddle
                    } else {
                        PolicyStrategy::DropOldest
                    },
                    keep_first,
                    clear_tool_results: clear,
                    max_images: images,
                    summarization: Summarization {
                        enabled: summarize,
                        prompt: None,
                    },
                    summary_max_tokens: 40,
                    ..ChatMemoryPolicy::default()
                }
            },
        )
}

/// Every call in `messages` is followed by all its results, and every result follows its call.
fn groups_whole(messages: &[PromptMessage]) -> bool {
    messages.iter().enumerate().all(|(i, m)| match m.role {
        Role::Tool => {
            m.tool_call_id.as_deref() == Some("stray")
                || messages[..i]
                    .iter()
                    .rev()
                    .find(|p| p.role != Role::Tool)
                    .is_some_and(|p| {
                        p.tool_calls
                            .iter()
                            .any(|c| Some(&c.id) == m.tool_call_id.as_ref())
                    })
        }
        _ => m.tool_calls.iter().all(|c| {
            messages[i + 1..]
                .iter()
                .take_while(|r| r.role == Role::Tool)
                .any(|r| r.tool_call_id.as_ref() == Some(&c.id))
        }),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn results_fit_unless_the_floor_or_pinned_messages_force_it(
        history in history_strategy(),
        p in policy_strategy(),
    ) {
        let counter = raw();
        let counts: Vec<MessageTokens> = history.iter().map(|m| counter.count_message(m)).collect();
        let protected = PolicyPlanner::new(&p, &history, &counts, &counter).unwrap().protected_len();
        let (kept, plan) = apply(&p, &history, &counter);
        let (size, limit) = match p.limit_type {
            LimitType::Messages => (plan.kept_len() as u64, p.max_messages),
            LimitType::Tokens => (plan.tokens_after, p.max_tokens),
        };
        let history_kept = kept.iter().filter(|m| !is_summary(m)).count();
        let removable_left = history_kept - protected;
        // A group holds at most 3 messages here: the floor stops a cut less than 3 above it.
        let floor_blocked = (history_kept as u64) < p.min_messages + 3;
        prop_assert!(
            size <= limit || removable_left == 0 || floor_blocked,
            "size {size} over {limit} with {history_kept} kept, {protected} protected"
        );
    }

    #[test]
    fn tool_groups_are_never_split(history in history_strategy(), p in policy_strategy()) {
        let (kept, _) = apply(&p, &history, &raw());
        let whole_before = groups_whole(&history);
        prop_assert!(!whole_before || groups_whole(&kept));
    }

    #[test]
    fn continuous_mode_is_idempotent(history in history_strategy(), p in policy_strategy()) {
        let counter = raw();
        let (once, _) = apply(&p, &history, &counter);
        let (twice, second) = apply(&p, &once, &counter);
        prop_assert!(second.is_noop(), "second plan changed {:?}", second.steps);
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn threshold_mode_does_nothing_under_the_trigger(
        history in history_strategy(),
        p in policy_strategy(),
        trigger in 0u64..600,
    ) {
        let p = ChatMemoryPolicy { trim_mode: TrimMode::Threshold, trigger, target: trigger / 3, ..p };
        let counter = raw();
        let plan = plan(&p, &history, &counter);
        let size = match p.limit_type {
            LimitType::Messages => history.len() as u64,
            LimitType::Tokens => counter.count_list(&history),
        };
        prop_assert!(size > trigger || plan.is_noop());
    }
}
