//! Places where a text can be cut without changing its token count, so that long texts are
//! counted in parallel and a message's text is counted once however it ends.
//!
//! A cut is *safe* when every piece of all four encodings' pre-tokenizers ends at it, both in
//! the whole text and in the two halves counted alone; then the count of the whole is the sum
//! of the halves' counts. Two kinds of positions are safe:
//!
//! - before a space that follows a non-whitespace character: no alternative continues from a
//!   non-whitespace character into a space (letters, digits and contractions stop there, and
//!   punctuation runs only take `\r`, `\n` or `/` after them), so a piece starts at the
//!   space, and no whitespace run ends the first half;
//! - after a `\n` between two non-whitespace characters, the second not a `/`: the newline is a
//!   piece of its own or the tail of a punctuation run, in the whole text and at the end of
//!   the first half alike (`\s++$`, `\s*[\r\n]` and `\s` all take exactly the one newline),
//!   and no alternative lets a piece start with a newline and continue into what follows. (A
//!   `/` could continue o200k's punctuation run: `[\r\n/]*`.)
//!
//! Pieces never look behind their start, so what follows a cut tokenizes the same alone.

/// Whether `at` is a safe cut of `text` (see the module documentation). `at` must be a
/// character boundary.
pub fn is_safe_cut(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    if at == 0 || at >= bytes.len() {
        return false;
    }
    let before = text[..at].chars().next_back();
    let after = text[at..].chars().next();
    match (before, after) {
        (Some(before), Some(' ')) => !before.is_whitespace(),
        (Some('\n'), Some(after)) => {
            !after.is_whitespace()
                && after != '/'
                && text[..at - 1]
                    .chars()
                    .next_back()
                    .is_some_and(|c| !c.is_whitespace())
        }
        _ => false,
    }
}

/// The last safe cut of `text`, or 0 when there is none.
pub fn last_safe_cut(text: &str) -> usize {
    text.bytes()
        .enumerate()
        .rev()
        .filter(|&(_, b)| b == b' ' || b == b'\n')
        .map(|(i, b)| if b == b' ' { i } else { i + 1 })
        .find(|&at| is_safe_cut(text, at))
        .unwrap_or(0)
}

/// The first safe cut at or after `from` and before `limit`, if any.
fn safe_cut_after(text: &str, from: usize, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    (from..limit.min(bytes.len()))
        .find(|&i| match bytes[i] {
            b' ' => is_safe_cut(text, i),
            b'\n' => is_safe_cut(text, i + 1),
            _ => false,
        })
        .map(|i| if bytes[i] == b' ' { i } else { i + 1 })
}

/// How far past an even share a cut is looked for before that share is merged into the next.
const SEARCH_WINDOW: usize = 64 * 1024;

/// `text` in at most `parts` consecutive slices of roughly equal size, cut only where it is
/// safe; fewer when the text has too few safe cuts.
pub fn split_safely(text: &str, parts: usize) -> Vec<&str> {
    let share = text.len() / parts.max(1);
    let mut slices = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..parts {
        let target = (k * share).max(start + 1);
        if target >= text.len() {
            break;
        }
        if let Some(cut) = safe_cut_after(text, target, target + SEARCH_WINDOW) {
            slices.push(&text[start..cut]);
            start = cut;
        }
    }
    slices.push(&text[start..]);
    slices
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::memory::tokens::encoding_names::Encoding;

    #[test]
    fn cuts_sit_before_spaces_and_after_newlines_between_words() {
        assert_eq!(last_safe_cut("user\n\nhello big world"), 15);
        assert_eq!(last_safe_cut("a\nb"), 2);
        assert_eq!(last_safe_cut("a\n/"), 0);
        assert_eq!(last_safe_cut("a  b"), 1);
        assert_eq!(last_safe_cut("a\n\nb"), 0);
        assert_eq!(last_safe_cut("东京大学"), 0);
        assert_eq!(
            split_safely("one two three four", 4),
            ["one two", " three", " four"]
        );
        assert_eq!(split_safely("nocuts", 3), ["nocuts"]);
    }

    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z]{1,5}",
            "[0-9]{1,4}",
            "[ \t\r\n\u{a0}\u{3000}]{1,3}",
            "[.,!?;:'\"(){}<>/\\-]{1,3}",
            r"\PC{1,3}",
            prop::sample::select(vec!["'s", "'LL", "你好", "😀", "é", "/", "\n/", ".\n"])
                .prop_map(str::to_owned),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn counts_add_up_across_every_safe_cut(
            fragments in prop::collection::vec(fragment(), 1..16),
            encoding in prop::sample::select(Encoding::ALL.to_vec()),
        ) {
            let text = fragments.concat();
            let whole = encoding.count(&text);
            for at in (1..text.len()).filter(|&at| text.is_char_boundary(at)) {
                if is_safe_cut(&text, at) {
                    let (head, tail) = text.split_at(at);
                    prop_assert_eq!(
                        encoding.count(head) + encoding.count(tail), whole,
                        "{:?} | {:?}", head, tail
                    );
                }
            }
        }
    }
}
