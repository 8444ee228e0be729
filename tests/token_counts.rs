//! Token counts against tiktoken-rs, the oracle: memscope's own tokenizer (tables read in place,
//! a DFA pre-tokenizer) on mixed and random text in all four encodings, and the per-message
//! split of the plugin counter against counting the fully joined string.

use memscope::memory::budget::SuffixTotals;
use memscope::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};
use memscope::memory::tokens::{CountCache, CounterKind, Encoding, TokenCounter, corpus};
use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

fn oracle(encoding: Encoding) -> &'static CoreBPE {
    match encoding {
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::P50kBase => tiktoken_rs::p50k_base_singleton(),
        Encoding::R50kBase => tiktoken_rs::r50k_base_singleton(),
    }
}

fn oracle_count(encoding: Encoding, text: &str) -> usize {
    oracle(encoding).encode_ordinary(text).len()
}

#[test]
fn counts_match_tiktoken_on_mixed_text() {
    // 300 KB: large enough to cover every kind of text, small enough for a debug build.
    let messages = corpus::mixed_messages(42, 300_000);
    for encoding in Encoding::ALL {
        for message in &messages {
            let expected = oracle_count(encoding, message);
            assert_eq!(encoding.count(message), expected, "{encoding}: {message:?}");
        }
        let whole = messages.concat();
        assert_eq!(
            encoding.count(&whole),
            oracle_count(encoding, &whole),
            "{encoding}"
        );
    }
}

#[test]
fn long_runs_count_like_tiktoken() {
    let texts = [
        format!("{}x", " ".repeat(10_000)),
        format!("a{}\n", "\n".repeat(10_000)),
        "ab".repeat(2_000),
        "😀".repeat(2_000),
        // One piece of 30,000 bytes: the heap merge, not the pairwise rescan.
        "a".repeat(30_000),
        format!("{}\r\n", " \t".repeat(3_000)),
        "東京大学".repeat(1_000),
    ];
    for encoding in Encoding::ALL {
        for text in &texts {
            assert_eq!(
                encoding.count(text),
                oracle_count(encoding, text),
                "{encoding}"
            );
        }
    }
}

/// The plugin's `"\n".join(parts)`, built the way its Python does.
fn plugin_joined(messages: &[PromptMessage]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        parts.push(message.role.as_str().to_owned());
        parts.push(message.name.clone().unwrap_or_default());
        parts.push(message.content.text().into_owned());
        if message.role == Role::Assistant {
            for call in &message.tool_calls {
                parts.extend([call.id.clone(), call.name.clone(), call.arguments.clone()]);
            }
        }
    }
    parts.join("\n")
}

fn plugin_oracle(encoding: Encoding, messages: &[PromptMessage]) -> u64 {
    if messages.is_empty() {
        return 0;
    }
    (oracle_count(encoding, &plugin_joined(messages)) + 3 * messages.len() + 3) as u64
}

/// Fragments chosen to sit on token boundaries: whitespace runs, newlines, punctuation next to
/// newlines and slashes (o200k's `[\r\n/]*`), contractions, digits, CJK and emoji sequences.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z]{1,8}",
        "[0-9]{1,5}",
        "[.,!?;:'\"(){}<>/\\\\-]{1,3}",
        prop::sample::select(vec![
            " ",
            "  ",
            "\n",
            "\n\n",
            " \n",
            "\r\n",
            "\t",
            " \t\n ",
            "/",
            "'s",
            "'ll",
            "你好",
            "東京",
            "대화",
            "。",
            "😀",
            "👩‍💻",
            "🇫🇷",
            "é",
            "\u{a0}",
            "<|endoftext|>",
        ])
        .prop_map(str::to_owned),
    ]
}

/// Everything the pre-tokenizer patterns tell apart: letters of each case class and script,
/// combining marks, numbers of other scripts, every kind of whitespace and line break, code,
/// contractions in any case (and `ſ`, which case-folds to `s`), CJK and emoji sequences.
fn wild_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => fragment(),
        1 => "[ \t\r\n\x0b\x0c\u{85}\u{a0}\u{2028}\u{3000}]{1,6}",
        1 => r"\PC{1,4}",
        1 => r"[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{M}\p{N}]{1,5}",
        1 => prop::sample::select(vec![
            "'S", "'LL", "'Ve", "'ſ", "'re", "'d ", "\u{212a}",
            "fn main() {\n    let x = 42;\n}\n",
            "    if (a && b) { return c[i]; }\r\n",
            "SELECT * FROM t WHERE id = $1;",
            "{\"key\": [1, 2.5, null], \"k2\": \"v\"}",
            "<|endoftext|>",
            "١٢٣٤",
            "½Ⅻ²",
            "Ǆemo ǅx",
            "e\u{301}\u{302}",
            "한국어 텍스트",
            "日本語のテキスト。",
            "👨‍👩‍👧‍👦👍🏽",
            "\n\n\n",
            "   ",
            "//",
            "/\n/",
        ])
        .prop_map(str::to_owned),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..8).prop_map(|fragments| fragments.concat())
}

fn message() -> impl Strategy<Value = PromptMessage> {
    let role = prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]);
    let content = prop_oneof![
        text().prop_map(Content::Text),
        prop::collection::vec(
            prop_oneof![
                text().prop_map(|text| ContentPart::Text { text }),
                Just(ContentPart::Image {
                    source: "https://example.com/a.png".into()
                }),
            ],
            0..3
        )
        .prop_map(Content::Parts),
    ];
    let call = (text(), "[a-z_]{0,8}", text()).prop_map(|(id, name, arguments)| ToolCall {
        id,
        name,
        arguments,
    });
    (
        role,
        content,
        proptest::option::of(text()),
        prop::collection::vec(call, 0..3),
    )
        .prop_map(|(role, content, name, tool_calls)| {
            let mut message = PromptMessage::new(role, content);
            message.name = name;
            message.tool_calls = tool_calls;
            message
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn counts_match_tiktoken_on_random_text(
        fragments in prop::collection::vec(wild_fragment(), 0..24),
        encoding in prop::sample::select(Encoding::ALL.to_vec()),
    ) {
        let text = fragments.concat();
        prop_assert_eq!(encoding.count(&text), oracle_count(encoding, &text), "{:?}", text);
    }

    #[test]
    fn plugin_split_is_exact_for_every_suffix(
        messages in prop::collection::vec(message(), 0..6),
        encoding in prop::sample::select(Encoding::ALL.to_vec()),
    ) {
        let counter = TokenCounter::with_encoding(CounterKind::Plugin, encoding);
        prop_assert_eq!(counter.count_list(&messages), plugin_oracle(encoding, &messages));
        let counts: Vec<_> = messages.iter().map(|m| counter.count_message(m)).collect();
        let totals = SuffixTotals::new(&counts, counter.list_overhead());
        for start in 0..=messages.len() {
            prop_assert_eq!(
                totals.from(start),
                plugin_oracle(encoding, &messages[start..]),
                "suffix from {}", start
            );
        }
    }

    #[test]
    fn cached_counts_equal_direct_counts(
        messages in prop::collection::vec(message(), 0..8),
        kind in prop::sample::select(CounterKind::ALL.to_vec()),
    ) {
        let counter = TokenCounter::for_model(kind, "gpt-4o");
        let mut cache = CountCache::new(6);
        for _ in 0..2 {
            prop_assert_eq!(cache.count_list(&counter, &messages), counter.count_list(&messages));
        }
        prop_assert!(cache.len() <= 6);
    }
}
