//! The offline summarizer: no model, no network. It keeps the most informative sentences of the
//! removed messages, in their order, within a token cap.
//!
//! A sentence's score is the mean corpus frequency of its content words (words that recur across
//! the removed messages carry the thread), with a bonus for numbers and names, which summaries
//! most often need to keep.

use rustc_hash::FxHashMap;

use super::count::MessageCounter;
use super::plan::SUMMARY_PREFIX;
use super::policy::is_summary;
use crate::memory::model::{PromptMessage, Role};

/// How the UI names this summarizer.
pub const EXTRACTIVE_LABEL: &str = "extractive (offline)";

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "for", "from", "has",
    "have", "i", "if", "in", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "so",
    "that", "the", "this", "to", "was", "we", "were", "what", "will", "with", "you", "your",
];

struct Sentence<'a> {
    role: &'static str,
    text: &'a str,
    score: f64,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
}

/// Sentence ends: `.`, `!` or `?` before whitespace, and line breaks.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut pieces = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?')
                && bytes
                    .get(i + 1)
                    .is_none_or(|next| next.is_ascii_whitespace());
            if ends {
                pieces.push(&line[start..=i]);
                start = i + 1;
            }
        }
        pieces.push(&line[start..]);
    }
    pieces.into_iter().map(str::trim).filter(|s| !s.is_empty())
}

/// A line of an earlier summary as (role, sentence): `user: text` keeps its role; a line
/// without one (a remote summarizer's prose) counts as the system's.
fn summary_line(line: &str) -> (&'static str, &str) {
    match line.split_once(": ") {
        Some((role, sentence)) => match Role::parse(role) {
            Some(role) => (role.as_str(), sentence),
            None => (Role::System.as_str(), line),
        },
        None => (Role::System.as_str(), line),
    }
}

/// The best sentences of `removed` as `role: sentence` lines, in their order, within
/// `max_tokens` of `counter`. Empty when nothing fits or there is no text.
pub fn extractive_summary<'a>(
    removed: impl IntoIterator<Item = &'a PromptMessage>,
    max_tokens: usize,
    counter: &dyn MessageCounter,
) -> String {
    let mut texts: Vec<(&'static str, std::borrow::Cow<'a, str>)> = Vec::new();
    for message in removed {
        if is_summary(message) {
            // An earlier summary is folded, not quoted: its `role: sentence` lines compete
            // with the other sentences under their own roles, so a second trim never writes
            // "system: Summary of earlier conversation: …" inside its summary.
            let text = message.content.text();
            let earlier = text.strip_prefix(SUMMARY_PREFIX).unwrap_or(&text);
            for line in earlier.lines() {
                let (role, sentence) = summary_line(line);
                texts.push((role, std::borrow::Cow::Owned(sentence.to_owned())));
            }
        } else {
            texts.push((message.role.as_str(), message.content.text()));
        }
    }
    let mut frequency: FxHashMap<String, u32> = FxHashMap::default();
    for (_, text) in &texts {
        for word in words(text) {
            *frequency.entry(word).or_default() += 1;
        }
    }
    let mut candidates: Vec<Sentence> = Vec::new();
    for (role, text) in &texts {
        for sentence in sentences(text) {
            let content: Vec<String> = words(sentence).collect();
            if content.is_empty() {
                continue;
            }
            let total: f64 = content.iter().map(|w| f64::from(frequency[w])).sum();
            let specific = sentence
                .split_whitespace()
                .skip(1)
                .filter(|w| w.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()))
                .count();
            candidates.push(Sentence {
                role,
                text: sentence,
                score: total / content.len() as f64 + specific as f64,
            });
        }
    }
    let mut ranked: Vec<usize> = (0..candidates.len()).collect();
    // Stable: equal scores keep their order, so the summary is deterministic.
    ranked.sort_by(|&a, &b| candidates[b].score.total_cmp(&candidates[a].score));
    let mut chosen = vec![false; candidates.len()];
    let mut used = 0;
    for index in ranked {
        let line = format!("{}: {}\n", candidates[index].role, candidates[index].text);
        let tokens = counter.count_text(&line);
        if used + tokens <= max_tokens {
            used += tokens;
            chosen[index] = true;
        }
    }
    let lines: Vec<String> = candidates
        .iter()
        .zip(chosen)
        .filter(|(_, chosen)| *chosen)
        .map(|(s, _)| format!("{}: {}", s.role, s.text))
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};

    fn counter() -> TokenCounter {
        TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase)
    }

    #[test]
    fn recurring_topics_win_and_order_is_kept() {
        let removed = [
            PromptMessage::text(
                Role::User,
                "Hi there. My invoice 4411 shows a duplicate charge on the invoice.",
            ),
            PromptMessage::text(
                Role::Assistant,
                "Thanks! I refunded the duplicate charge on invoice 4411.",
            ),
        ];
        let best_two = "user: My invoice 4411 shows a duplicate charge on the invoice.\n\
                        assistant: I refunded the duplicate charge on invoice 4411.\n";
        let cap = counter().count_text(best_two);
        let summary = extractive_summary(&removed, cap, &counter());
        assert!(summary.contains("invoice 4411"), "{summary}");
        assert!(
            !summary.contains("Hi there") && !summary.contains("Thanks"),
            "{summary}"
        );
        let user = summary.find("user:").unwrap();
        let assistant = summary.find("assistant:").unwrap();
        assert!(user < assistant);
    }

    #[test]
    fn the_cap_holds() {
        let long: String = (0..200)
            .map(|i| format!("Fact {i} about billing. "))
            .collect();
        let removed = [PromptMessage::text(Role::User, long)];
        let summary = extractive_summary(&removed, 50, &counter());
        assert!(!summary.is_empty());
        let lines: usize = summary
            .lines()
            .map(|l| counter().count_text(&format!("{l}\n")))
            .sum();
        assert!(lines <= 50, "{lines}");
    }

    #[test]
    fn nothing_to_say_is_empty() {
        let removed = [PromptMessage::text(Role::Tool, "")];
        assert_eq!(extractive_summary(&removed, 100, &counter()), "");
        let words = [PromptMessage::text(Role::User, "Anything at all here.")];
        assert_eq!(extractive_summary(&words, 0, &counter()), "");
    }

    #[test]
    fn an_earlier_summary_is_folded_not_nested() {
        let earlier = PromptMessage::text(
            Role::System,
            format!(
                "{SUMMARY_PREFIX}user: My invoice 4411 shows a duplicate charge.\n\
                 assistant: I refunded invoice 4411."
            ),
        );
        let removed = [
            earlier,
            PromptMessage::text(Role::User, "The refund for invoice 4411 has not arrived."),
        ];
        let summary = extractive_summary(&removed, 1000, &counter());
        assert!(!summary.contains(SUMMARY_PREFIX.trim()), "{summary}");
        assert!(!summary.contains("system:"), "{summary}");
        assert_eq!(
            summary,
            "user: My invoice 4411 shows a duplicate charge.\n\
             assistant: I refunded invoice 4411.\n\
             user: The refund for invoice 4411 has not arrived."
        );
    }
}
