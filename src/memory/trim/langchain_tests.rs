//! LangChain's own `trim_messages` cases (libs/core/tests/unit_tests/messages/test_utils.py),
//! with its dummy counter: 3 + 4 + 3 tokens per string message, 4 more per content block.

use super::*;
use crate::memory::trim::count::MessageCount;

struct Dummy;

impl MessageCounter for Dummy {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        MessageTokens::flat(match &message.content {
            Content::Text(_) => 10,
            Content::Parts(parts) => 6 + 4 * parts.len() as u32,
        })
    }
    fn list_overhead(&self) -> u32 {
        0
    }
    fn count_text(&self, _text: &str) -> usize {
        4
    }
    fn describe(&self) -> String {
        "dummy".into()
    }
}

/// Counts characters, like LangChain's `lambda x: len(x[0].content)`.
struct Chars;

impl MessageCounter for Chars {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        MessageTokens::flat(message.content.text().chars().count() as u32)
    }
    fn list_overhead(&self) -> u32 {
        0
    }
    fn count_text(&self, text: &str) -> usize {
        text.chars().count()
    }
    fn describe(&self) -> String {
        "chars".into()
    }
}

/// Counts words split on single spaces, as the test's `count_words`.
struct Words;

impl MessageCounter for Words {
    fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        let text = match &message.content {
            Content::Text(text) => text.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(ContentPart::text)
                .collect::<Vec<_>>()
                .join(" "),
        };
        MessageTokens::flat(text.split(' ').count() as u32)
    }
    fn list_overhead(&self) -> u32 {
        0
    }
    fn count_text(&self, text: &str) -> usize {
        text.split(' ').count()
    }
    fn describe(&self) -> String {
        "words".into()
    }
}

const TEXT: &str = "This is a 4 token text.";

fn block(text: &str) -> ContentPart {
    ContentPart::Text { text: text.into() }
}

fn to_trim() -> Vec<PromptMessage> {
    vec![
        PromptMessage::text(Role::System, TEXT),
        PromptMessage::text(Role::User, TEXT),
        PromptMessage::new(
            Role::Assistant,
            Content::Parts(vec![
                block("This is the FIRST 4 token block."),
                block("This is the SECOND 4 token block."),
            ]),
        ),
        PromptMessage::text(Role::User, TEXT),
        PromptMessage::text(Role::Assistant, TEXT),
    ]
}

fn trim(
    messages: &[PromptMessage],
    options: TrimOptions,
    counter: &dyn MessageCounter,
) -> Vec<PromptMessage> {
    let before = messages.to_vec();
    let plan = trim_messages(messages, &options, counter).unwrap();
    assert_eq!(messages, before.as_slice(), "the input is never mutated");
    plan.messages(messages)
}

fn options(max_tokens: i64, strategy: Strategy) -> TrimOptions {
    TrimOptions {
        strategy,
        ..TrimOptions::new(max_tokens)
    }
}

fn only_block(text: &str) -> PromptMessage {
    PromptMessage::new(Role::Assistant, Content::Parts(vec![block(text)]))
}

#[test]
fn first_30() {
    let m = to_trim();
    assert_eq!(trim(&m, options(30, Strategy::First), &Dummy), m[..2]);
}

#[test]
fn first_30_allow_partial_keeps_the_first_block() {
    let m = to_trim();
    let opts = TrimOptions {
        allow_partial: true,
        ..options(30, Strategy::First)
    };
    let expected = vec![
        m[0].clone(),
        m[1].clone(),
        only_block("This is the FIRST 4 token block."),
    ];
    assert_eq!(trim(&m, opts, &Dummy), expected);
}

#[test]
fn first_30_allow_partial_end_on_human() {
    let m = to_trim();
    let opts = TrimOptions {
        allow_partial: true,
        end_on: Some(vec![Role::User]),
        ..options(30, Strategy::First)
    };
    assert_eq!(trim(&m, opts, &Dummy), m[..2]);
}

#[test]
fn last_30_include_system() {
    let m = to_trim();
    let opts = TrimOptions {
        include_system: true,
        ..options(30, Strategy::Last)
    };
    assert_eq!(
        trim(&m, opts, &Dummy),
        vec![m[0].clone(), m[3].clone(), m[4].clone()]
    );
}

#[test]
fn last_30_without_system_keeps_three_messages() {
    let m = to_trim();
    // The 14-token block message does not fit after 10 + 10.
    assert_eq!(trim(&m, options(30, Strategy::Last), &Dummy), m[3..]);
    assert_eq!(trim(&m, options(34, Strategy::Last), &Dummy), m[2..]);
}

#[test]
fn last_40_include_system_allow_partial_keeps_the_last_block() {
    let m = to_trim();
    let opts = TrimOptions {
        include_system: true,
        allow_partial: true,
        ..options(40, Strategy::Last)
    };
    let expected = vec![
        m[0].clone(),
        only_block("This is the SECOND 4 token block."),
        m[3].clone(),
        m[4].clone(),
    ];
    assert_eq!(trim(&m, opts, &Dummy), expected);
}

#[test]
fn last_30_include_system_allow_partial_end_on_human() {
    let m = to_trim();
    let opts = TrimOptions {
        include_system: true,
        allow_partial: true,
        end_on: Some(vec![Role::User]),
        ..options(30, Strategy::Last)
    };
    let expected = vec![
        m[0].clone(),
        only_block("This is the SECOND 4 token block."),
        m[3].clone(),
    ];
    assert_eq!(trim(&m, opts, &Dummy), expected);
}

#[test]
fn last_40_include_system_allow_partial_start_on_human() {
    let m = to_trim();
    let opts = TrimOptions {
        include_system: true,
        allow_partial: true,
        start_on: Some(vec![Role::User]),
        ..options(40, Strategy::Last)
    };
    let plan = trim_messages(&m, &opts, &Dummy).unwrap();
    assert_eq!(
        plan.messages(&m),
        vec![m[0].clone(), m[3].clone(), m[4].clone()]
    );
    // The partial AI message was cut for the budget, then dropped by start_on.
    assert!(plan.removed().any(|(i, r)| i == 2 && r == Reason::StartOn));
}

#[test]
fn partial_text_with_a_character_splitter() {
    let m = vec![PromptMessage::text(Role::User, "This is a funky text.")];
    let chars = TrimOptions {
        allow_partial: true,
        text_splitter: TextSplitter::Separator(String::new()),
        ..options(2, Strategy::First)
    };
    // An empty separator keeps the text whole: it cannot fit in 2.
    assert!(trim(&m, chars, &Chars).is_empty());
    let spaces = |strategy| TrimOptions {
        allow_partial: true,
        text_splitter: TextSplitter::Separator(" ".into()),
        ..options(8, strategy)
    };
    assert_eq!(
        trim(&m, spaces(Strategy::First), &Chars),
        vec![PromptMessage::text(Role::User, "This is ")]
    );
    assert_eq!(
        trim(&m, spaces(Strategy::Last), &Chars),
        vec![PromptMessage::text(Role::User, "text.")]
    );
}

#[test]
fn partial_text_with_a_word_splitter() {
    let opts = TrimOptions {
        allow_partial: true,
        text_splitter: TextSplitter::Separator(" ".into()),
        ..options(10, Strategy::Last)
    };
    let m = to_trim();
    let expected = vec![
        PromptMessage::text(Role::User, "a 4 token text."),
        m[4].clone(),
    ];
    assert_eq!(trim(&m, opts, &Words), expected);
}

#[test]
fn the_default_splitter_splits_on_newlines_keeping_them() {
    let splitter = TextSplitter::default();
    assert_eq!(splitter.split("a\nb\n"), vec!["a\n", "b\n", ""]);
    assert_eq!(splitter.split("one"), vec!["one"]);
    let m = vec![PromptMessage::text(
        Role::User,
        "line one\nline two\nline three",
    )];
    let opts = TrimOptions {
        allow_partial: true,
        ..options(19, Strategy::Last)
    };
    assert_eq!(
        trim(&m, opts, &Chars),
        vec![PromptMessage::text(Role::User, "line two\nline three")]
    );
}

#[test]
fn counting_messages_like_len() {
    let m = to_trim();
    assert_eq!(trim(&m, options(2, Strategy::Last), &MessageCount), m[3..]);
    assert_eq!(trim(&m, options(2, Strategy::First), &MessageCount), m[..2]);
    assert_eq!(trim(&m, options(5, Strategy::Last), &MessageCount), m);
}

#[test]
fn everything_fits_and_end_on_still_applies() {
    let m = to_trim();
    let first = TrimOptions {
        end_on: Some(vec![Role::User]),
        ..options(1000, Strategy::First)
    };
    assert_eq!(trim(&m, first, &Dummy), m[..4]);
    let last = TrimOptions {
        end_on: Some(vec![Role::Tool]),
        ..options(1000, Strategy::Last)
    };
    assert!(trim(&m, last, &Dummy).is_empty());
}

#[test]
fn zero_and_negative_budgets_keep_nothing_but_the_system_message() {
    let m = to_trim();
    assert!(trim(&m, options(0, Strategy::Last), &Dummy).is_empty());
    assert!(trim(&m, options(-5, Strategy::First), &Dummy).is_empty());
    let opts = TrimOptions {
        include_system: true,
        ..options(-5, Strategy::Last)
    };
    assert_eq!(trim(&m, opts, &Dummy), m[..1]);
}

#[test]
fn empty_input_is_empty() {
    assert!(trim(&[], options(10, Strategy::Last), &Dummy).is_empty());
    assert!(trim(&[], options(10, Strategy::First), &Dummy).is_empty());
}

#[test]
fn validation_errors_match_langchain() {
    let m = to_trim();
    let start_on = TrimOptions {
        start_on: Some(vec![Role::User]),
        ..options(10, Strategy::First)
    };
    let err = trim_messages(&m, &start_on, &Dummy).unwrap_err();
    assert_eq!(
        err.to_string(),
        "start_on parameter is only valid with strategy='last'"
    );
    let system = TrimOptions {
        include_system: true,
        ..options(10, Strategy::First)
    };
    assert_eq!(
        trim_messages(&m, &system, &Dummy).unwrap_err(),
        TrimError::IncludeSystemWithFirst
    );
    let err = "middle".parse::<Strategy>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unrecognized strategy='middle'. Supported strategies are 'last' and 'first'."
    );
    let counts = vec![MessageTokens::flat(1)];
    assert!(matches!(
        trim_messages_counted(&m, &counts, &options(10, Strategy::Last), &Dummy),
        Err(TrimError::CountsMismatch { .. })
    ));
}

#[test]
fn plans_give_reasons_and_token_totals() {
    let m = to_trim();
    let opts = TrimOptions {
        end_on: Some(vec![Role::User]),
        ..options(20, Strategy::Last)
    };
    let plan = trim_messages(&m, &opts, &Dummy).unwrap();
    assert_eq!(plan.tokens_before, 54);
    assert_eq!(plan.tokens_after, 10);
    let removed: Vec<(usize, Reason)> = plan.removed().collect();
    assert_eq!(
        removed,
        vec![
            (0, Reason::OverLimit),
            (1, Reason::OverLimit),
            (2, Reason::OverLimit),
            (4, Reason::EndOn)
        ]
    );
    assert_eq!(plan.steps.len(), m.len());
}

#[test]
fn the_real_counter_counts_the_kept_list_as_sent() {
    use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};
    let counter = TokenCounter::with_encoding(CounterKind::Plugin, Encoding::O200kBase);
    let m = to_trim();
    for budget in [0, 20, 35, 60, 200] {
        let plan = trim_messages(&m, &options(budget, Strategy::Last), &counter).unwrap();
        let kept = plan.messages(&m);
        assert_eq!(plan.tokens_after, counter.count_list(&kept));
        assert!(plan.tokens_after as i64 <= budget.max(0));
    }
}
