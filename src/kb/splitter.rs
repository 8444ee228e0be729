//! LangChain's `RecursiveCharacterTextSplitter` with its defaults (separators `\n\n`, `\n`, ` `,
//! `""`; the separator kept at the start of the following piece; chunks stripped), measured in
//! characters as Python's `len` does. Langflow chunks memory-base messages with it at 1000/100.

/// Langflow's chunk size for memory bases, in characters.
pub const CHUNK_SIZE: usize = 1000;
/// Langflow's chunk overlap, in characters.
pub const CHUNK_OVERLAP: usize = 100;

const SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecursiveSplitter {
    pub chunk_size: usize,
    pub chunk_overlap: usize,
}

impl Default for RecursiveSplitter {
    fn default() -> Self {
        RecursiveSplitter {
            chunk_size: CHUNK_SIZE,
            chunk_overlap: CHUNK_OVERLAP,
        }
    }
}

fn char_len(text: &str) -> usize {
    text.chars().count()
}

impl RecursiveSplitter {
    /// The chunks of `text`; none for blank text.
    pub fn split(&self, text: &str) -> Vec<String> {
        // Most messages fit in one chunk: the recursion would return the text stripped.
        if char_len(text) <= self.chunk_size {
            let stripped = text.trim();
            return if stripped.is_empty() {
                Vec::new()
            } else {
                vec![stripped.to_owned()]
            };
        }
        self.split_with(text, &SEPARATORS)
    }

    fn split_with(&self, text: &str, separators: &[&str]) -> Vec<String> {
        let (index, separator) = separators
            .iter()
            .enumerate()
            .find(|(_, s)| s.is_empty() || text.contains(**s))
            .map(|(i, s)| (i, *s))
            .unwrap_or((separators.len() - 1, ""));
        let finer = &separators[index + 1..];
        let mut chunks = Vec::new();
        let mut small: Vec<&str> = Vec::new();
        for piece in split_keeping_separator(text, separator) {
            if char_len(piece) < self.chunk_size {
                small.push(piece);
                continue;
            }
            if !small.is_empty() {
                chunks.extend(self.merge(&small));
                small.clear();
            }
            if finer.is_empty() {
                chunks.push(piece.to_owned());
            } else {
                chunks.extend(self.split_with(piece, finer));
            }
        }
        if !small.is_empty() {
            chunks.extend(self.merge(&small));
        }
        chunks
    }

    /// LangChain's `_merge_splits` with an empty joiner (the separators stay in the pieces).
    fn merge(&self, pieces: &[&str]) -> Vec<String> {
        let mut chunks = Vec::new();
        let mut window: std::collections::VecDeque<(&str, usize)> = Default::default();
        let mut total = 0;
        for &piece in pieces {
            let len = char_len(piece);
            if total + len > self.chunk_size && !window.is_empty() {
                push_joined(&mut chunks, window.iter().map(|(p, _)| *p));
                while total > self.chunk_overlap || (total + len > self.chunk_size && total > 0) {
                    let Some((_, first)) = window.pop_front() else {
                        break;
                    };
                    total -= first;
                }
            }
            window.push_back((piece, len));
            total += len;
        }
        push_joined(&mut chunks, window.iter().map(|(p, _)| *p));
        chunks
    }
}

fn push_joined<'a>(chunks: &mut Vec<String>, pieces: impl Iterator<Item = &'a str>) {
    let joined: String = pieces.collect();
    let stripped = joined.trim();
    if !stripped.is_empty() {
        chunks.push(stripped.to_owned());
    }
}

/// `text` cut before each occurrence of `separator` (which starts the next piece), or into
/// characters for the empty separator. Empty pieces are dropped.
fn split_keeping_separator<'a>(text: &'a str, separator: &str) -> Vec<&'a str> {
    if separator.is_empty() {
        return text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices(separator) {
        if at > start {
            pieces.push(&text[start..at]);
        }
        start = at;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small(size: usize, overlap: usize) -> RecursiveSplitter {
        RecursiveSplitter {
            chunk_size: size,
            chunk_overlap: overlap,
        }
    }

    #[test]
    fn short_text_is_one_stripped_chunk() {
        assert_eq!(
            RecursiveSplitter::default().split("  hi there \n"),
            vec!["hi there"]
        );
        assert!(RecursiveSplitter::default().split(" \n ").is_empty());
    }

    #[test]
    fn matches_langchain_on_words() {
        // LangChain: RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=4)
        //   .split_text("aaa bbb ccc ddd eee") == ['aaa bbb', 'bbb ccc', 'ccc ddd', 'ddd eee']
        assert_eq!(
            small(10, 4).split("aaa bbb ccc ddd eee"),
            vec!["aaa bbb", "bbb ccc", "ccc ddd", "ddd eee"]
        );
    }

    #[test]
    fn paragraphs_split_before_lines() {
        let text = "one two\n\nthree four\nfive";
        assert_eq!(
            small(12, 0).split(text),
            vec!["one two", "three four", "five"]
        );
    }

    #[test]
    fn long_words_fall_back_to_characters() {
        assert_eq!(
            small(4, 1).split("abcdefghij"),
            vec!["abcd", "defg", "ghij"]
        );
    }

    #[test]
    fn separators_are_kept_separately_from_pieces() {
        assert_eq!(
            split_keeping_separator("a b  c", " "),
            vec!["a", " b", " ", " c"]
        );
        assert_eq!(split_keeping_separator("é€", ""), vec!["é", "€"]);
    }

    proptest! {
        #[test]
        fn chunks_fit_and_cover_every_word(
            words in proptest::collection::vec("[a-zé]{1,12}", 0..400),
            breaks in proptest::collection::vec(0u8..3, 0..400),
        ) {
            let mut text = String::new();
            for (i, word) in words.iter().enumerate() {
                text.push_str(word);
                text.push_str(match breaks.get(i).copied().unwrap_or(0) {
                    0 => " ",
                    1 => "\n",
                    _ => "\n\n",
                });
            }
            let splitter = small(50, 10);
            let chunks = splitter.split(&text);
            for chunk in &chunks {
                prop_assert!(char_len(chunk) <= 50);
                prop_assert!(!chunk.is_empty());
            }
            let joined = chunks.join(" ");
            for word in &words {
                prop_assert!(joined.contains(word.as_str()));
            }
        }
    }
}
