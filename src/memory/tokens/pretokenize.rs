//! Splitting text into the pieces BPE merges within, exactly as tiktoken's patterns do.
//!
//! tiktoken's patterns end in look-ahead alternatives (`\s+(?!\S)`, plus `\s++$` or
//! `\s*[\r\n]`), which need a backtracking engine. Here the look-ahead alternatives become one
//! plain `\s+` pattern, searched as a second pattern of a forward-only lazy DFA, and the
//! backtracking engine's choice is recomputed from the whitespace run it found:
//!
//! - `\s++$`: a run that reaches the end of the text is one piece (cl100k, p50k, r50k);
//! - `\s*[\r\n]` / `\s*[\r\n]+`: otherwise a run holding a line break ends after its last one
//!   (cl100k, o200k; o200k tries this before the end-of-text rule);
//! - `\s+(?!\S)`: otherwise a run of two or more characters leaves its last one to the next
//!   piece, which is why a space sticks to the word after it;
//! - `\s`: otherwise the single character.
//!
//! The earlier alternatives keep their priority: the DFA is leftmost-first and they come
//! first, and none of them matches whitespace alone, so a match of the second pattern is
//! exactly a case where tiktoken reaches its whitespace alternatives. Every character is
//! matched by some alternative, so pieces tile the text and searches can be anchored.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input, MatchKind};

use super::encoding_names::Encoding;

/// The alternatives of tiktoken's pattern before its whitespace ones, as the `regex` crate
/// writes them (possessive quantifiers dropped: nothing follows them that could backtrack).
fn leading_alternatives(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Cl100kBase => {
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        }
        Encoding::O200kBase => concat!(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*"
        ),
        Encoding::P50kBase | Encoding::R50kBase => {
            r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
        }
    }
}

/// Which whitespace rules apply, in tiktoken's order of alternatives.
#[derive(Clone, Copy)]
struct WhitespaceRules {
    /// `\s++$` comes first.
    run_to_end: bool,
    /// `\s*[\r\n]` or `\s*[\r\n]+` comes next.
    line_breaks: bool,
}

fn whitespace_rules(encoding: Encoding) -> WhitespaceRules {
    match encoding {
        Encoding::Cl100kBase => WhitespaceRules {
            run_to_end: true,
            line_breaks: true,
        },
        Encoding::O200kBase => WhitespaceRules {
            run_to_end: false,
            line_breaks: true,
        },
        Encoding::P50kBase | Encoding::R50kBase => WhitespaceRules {
            run_to_end: true,
            line_breaks: false,
        },
    }
}

/// The pattern index of the plain whitespace run.
const WHITESPACE: usize = 1;

type MakeCache = Box<dyn Fn() -> Cache + Send + Sync>;

pub(super) struct Pretokenizer {
    dfa: DFA,
    /// Lazy DFA caches, one per thread at a time: the states the DFA has built stay built
    /// from one text to the next.
    caches: Pool<Cache, MakeCache>,
    rules: WhitespaceRules,
}

impl Pretokenizer {
    /// Compiles the pattern; the DFA itself is built lazily, state by state, while searching.
    pub(super) fn new(encoding: Encoding) -> Pretokenizer {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .starts_for_each_pattern(false)
                    // Never give up on a text: rebuilding states is slower but still linear.
                    .minimum_cache_clear_count(None),
            )
            .build_many(&[leading_alternatives(encoding), r"\s+"])
            .expect("the pre-tokenizer patterns compile");
        let for_caches = dfa.clone();
        Pretokenizer {
            dfa,
            caches: Pool::new(Box::new(move || for_caches.create_cache())),
            rules: whitespace_rules(encoding),
        }
    }

    /// Calls `piece` with each piece of `text`, in order.
    pub(super) fn for_each_piece(&self, text: &str, mut piece: impl FnMut(&[u8])) {
        let mut cache = self.caches.get();
        let mut at = 0;
        while at < text.len() {
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            let end = match self.dfa.try_search_fwd(&mut cache, &input) {
                Ok(Some(found)) if found.pattern().as_usize() == WHITESPACE => {
                    self.whitespace_end(text, at, found.offset())
                }
                Ok(Some(found)) => found.offset(),
                // Unreachable: every character starts some alternative, and the cache is
                // never given up on.
                Ok(None) | Err(_) => text.len(),
            };
            piece(&text.as_bytes()[at..end]);
            at = end;
        }
    }

    /// Where tiktoken's whitespace alternatives end a piece, given the whole run `start..end`.
    fn whitespace_end(&self, text: &str, start: usize, end: usize) -> usize {
        let run = &text[start..end];
        if self.rules.run_to_end && end == text.len() {
            return end;
        }
        if self.rules.line_breaks {
            if let Some(last) = run.rfind(['\r', '\n']) {
                return start + last + 1;
            }
        }
        if end == text.len() {
            return end;
        }
        match run.char_indices().next_back() {
            Some((last, _)) if last > 0 => start + last,
            _ => end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(encoding: Encoding, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Pretokenizer::new(encoding).for_each_piece(text, |piece| {
            out.push(String::from_utf8(piece.to_vec()).expect("pieces are whole characters"))
        });
        out
    }

    #[test]
    fn whitespace_runs_split_as_each_pattern_orders_its_alternatives() {
        // cl100k: `\s++$` first, so a run that ends the text stays whole.
        assert_eq!(pieces(Encoding::Cl100kBase, "x  \n  "), ["x", "  \n  "]);
        // o200k tries `\s*[\r\n]+` first: the run ends after its line break.
        assert_eq!(pieces(Encoding::O200kBase, "x  \n  "), ["x", "  \n", "  "]);
        // Before more text, a line break ends the run (cl100k), and `\s+(?!\S)` leaves the
        // last space to the word.
        assert_eq!(
            pieces(Encoding::Cl100kBase, "x  \n  y"),
            ["x", "  \n", " ", " y"]
        );
        // p50k and r50k have no line-break alternative.
        assert_eq!(pieces(Encoding::R50kBase, "x  \n  y"), ["x", "  \n ", " y"]);
        assert_eq!(pieces(Encoding::P50kBase, "x \t"), ["x", " \t"]);
        assert_eq!(pieces(Encoding::R50kBase, "a\tb"), ["a", "\t", "b"]);
    }
}
