//! A deterministic mix of the text chat memories hold, for tokenizer tests and benchmarks:
//! 40% English prose (numbers, contractions, names, some emoji), 20% fenced code, 20% JSON
//! tool output (compact, indented, some `\u` escaped), 10% CJK and 10% emoji-heavy chat.
//! Message lengths are log-uniform between 20 and 2,000 characters.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MIN_CHARS: f64 = 20.0;
const MAX_CHARS: f64 = 2000.0;

/// Messages whose UTF-8 sizes add up to at least `total_bytes`; the same seed gives the same
/// messages.
pub fn mixed_messages(seed: u64, total_bytes: usize) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut messages = Vec::new();
    let mut bytes = 0;
    while bytes < total_bytes {
        let message = message(&mut rng);
        bytes += message.len();
        messages.push(message);
    }
    messages
}

fn message(rng: &mut ChaCha8Rng) -> String {
    let target_chars = (MIN_CHARS.ln() + rng.random::<f64>() * (MAX_CHARS / MIN_CHARS).ln())
        .exp()
        .round() as usize;
    let mut out = String::new();
    let kind = rng.random_range(0..10);
    let mut chars = 0;
    while chars < target_chars {
        let before = out.len();
        match kind {
            0..=3 => prose(rng, &mut out),
            4 | 5 => code(rng, &mut out),
            6 | 7 => json(rng, &mut out),
            8 => cjk(rng, &mut out),
            _ => emoji_chat(rng, &mut out),
        }
        chars += out[before..].chars().count();
    }
    out
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).copied().unwrap_or_default()
}

const WORDS: &[&str] = &[
    "the",
    "memory",
    "of",
    "a",
    "conversation",
    "is",
    "pruned",
    "when",
    "it",
    "grows",
    "beyond",
    "budget",
    "tokens",
    "model",
    "answer",
    "question",
    "user",
    "we",
    "should",
    "check",
    "window",
    "history",
    "because",
    "message",
    "thread",
    "branch",
    "regenerated",
    "quickly",
    "database",
    "every",
    "night",
    "Alice",
    "Bob",
    "José",
    "Zoë",
    "Müller",
    "O'Brien",
    "Dify",
    "Langflow",
    "internationalization",
    "don't",
    "it's",
    "we'll",
    "they've",
    "I'm",
    "can't",
    "you'd",
];
const NUMBERS: &[&str] = &[
    "42",
    "3.14",
    "2024",
    "1,000,000",
    "99%",
    "$12.50",
    "0x1F",
    "7th",
];
const PUNCTUATION: &[&str] = &[".", ",", "!", "?", ";", ":", " -", "...", "\"", "'"];
const EMOJI: &[&str] = &[
    "😀",
    "🎉",
    "👍",
    "🔥",
    "🤔",
    "❤️",
    "🚀",
    "😂",
    "🙏",
    "✨",
    "👩‍💻",
    "👨‍👩‍👧",
    "🇫🇷",
    "👋🏽",
    "🦀",
];

fn prose(rng: &mut ChaCha8Rng, out: &mut String) {
    let words = rng.random_range(5..18);
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        match rng.random_range(0..20) {
            0 => out.push_str(pick(rng, NUMBERS)),
            1 => out.push_str(pick(rng, EMOJI)),
            2 => out.push_str(pick(rng, PUNCTUATION)),
            _ => out.push_str(pick(rng, WORDS)),
        }
    }
    out.push_str(pick(rng, &[". ", "! ", "? ", ".\n", ".\n\n", ".  "]));
}

const CODE: &[(&str, &[&str])] = &[
    (
        "rust",
        &[
            "fn main() {",
            "    let counts: Vec<u32> = messages.iter().map(|m| m.len() as u32).collect();",
            "    if total > limit { return Err(Error::OverBudget(total)); }",
            "    println!(\"{} tokens\", total);",
            "}",
        ],
    ),
    (
        "python",
        &[
            "def prune(messages, limit=2000):",
            "    while count(messages) > limit and len(messages) > 1:",
            "        messages.pop(0)  # drop the oldest",
            "    return messages",
        ],
    ),
    (
        "ts",
        &[
            "export async function load(id: string): Promise<Message[]> {",
            "  const rows = await db.query(`SELECT * FROM messages WHERE id = $1`, [id]);",
            "  return rows.map((r) => ({ ...r, tokens: r.tokens ?? 0 }));",
            "}",
        ],
    ),
    (
        "sql",
        &[
            "SELECT id, query, answer FROM messages",
            "WHERE conversation_id = $1",
            "ORDER BY created_at DESC LIMIT 500;",
        ],
    ),
];

fn code(rng: &mut ChaCha8Rng, out: &mut String) {
    let (language, lines) = CODE[rng.random_range(0..CODE.len())];
    out.push_str("```");
    out.push_str(language);
    out.push('\n');
    for line in lines.iter().take(rng.random_range(2..=lines.len())) {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("```\n");
}

const JSON_KEYS: &[&str] = &[
    "id", "name", "status", "items", "score", "city", "tags", "note",
];
const JSON_VALUES: &[&str] = &[
    "\"ok\"",
    "true",
    "null",
    "17",
    "-0.25",
    "\"Paris\"",
    "\"caf\\u00e9 cr\\u00e8me\"",
    "\"\\u6771\\u4eac\"",
    "\"München\"",
    "\"line one\\nline two\"",
];

fn json(rng: &mut ChaCha8Rng, out: &mut String) {
    let indent = rng.random_bool(0.4);
    json_object(rng, out, 0, indent);
    out.push('\n');
}

fn json_object(rng: &mut ChaCha8Rng, out: &mut String, depth: usize, indent: bool) {
    out.push('{');
    let fields = rng.random_range(1..5);
    for i in 0..fields {
        if i > 0 {
            out.push(',');
        }
        if indent {
            out.push('\n');
            out.push_str(&"  ".repeat(depth + 1));
        }
        out.push('"');
        out.push_str(pick(rng, JSON_KEYS));
        out.push_str(if indent { "\": " } else { "\":" });
        if depth < 2 && rng.random_bool(0.25) {
            json_object(rng, out, depth + 1, indent);
        } else {
            out.push_str(pick(rng, JSON_VALUES));
        }
    }
    if indent {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    }
    out.push('}');
}

const CJK: &[&str] = &[
    "你好，今天的天气怎么样？",
    "请把这段对话的历史记录整理一下。",
    "記憶のウィンドウを五百件に制限します。",
    "トークン数を数えてください！",
    "대화 기록이 너무 깁니다.",
    "모델이 답변을 생성했습니다 😊",
    "数据库里有 1200 条消息。",
];

fn cjk(rng: &mut ChaCha8Rng, out: &mut String) {
    out.push_str(pick(rng, CJK));
    if rng.random_bool(0.2) {
        out.push_str(pick(rng, EMOJI));
    }
    if rng.random_bool(0.3) {
        out.push('\n');
    }
}

fn emoji_chat(rng: &mut ChaCha8Rng, out: &mut String) {
    for _ in 0..rng.random_range(1..5) {
        out.push_str(pick(rng, EMOJI));
    }
    out.push(' ');
    out.push_str(pick(
        rng,
        &["lol", "omg yes", "see you", "ok!!", "thx", "haha"],
    ));
    out.push(' ');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_messages_and_at_least_the_asked_size() {
        let first = mixed_messages(7, 50_000);
        assert_eq!(first, mixed_messages(7, 50_000));
        assert_ne!(first, mixed_messages(8, 50_000));
        let bytes: usize = first.iter().map(String::len).sum();
        assert!(bytes >= 50_000);
        assert!(
            first
                .iter()
                .all(|m| m.chars().count() >= MIN_CHARS as usize)
        );
    }

    #[test]
    fn mixes_every_kind_of_text() {
        let all = mixed_messages(1, 100_000).concat();
        for sample in ["```rust", "\"id\"", "你好", "🦀", "don't"] {
            assert!(all.contains(sample), "{sample}");
        }
    }
}
