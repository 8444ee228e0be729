//! The text formats both front ends share, so the CLI and the TUI print a number, a plural or a
//! cut line alike. Pure functions on text: this module imports nothing of the crate.

use std::borrow::Cow;

/// `1234567` → `1,234,567`: the one number format of human output (JSON keeps plain numbers).
pub fn thousands(n: impl Into<i128>) -> String {
    let n = n.into();
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// `word` as `n` of it reads: "message" for 1, "messages" otherwise (regular plurals only).
pub fn noun(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// The indefinite article before `word`: "an" before a vowel ("an OpenAI Agents SDK session
/// database"), "a" otherwise.
pub fn article(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// The columns `text` takes on a terminal: two for a CJK character or an emoji, none for a
/// combining mark.
pub fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `n` things as people read them: `1 row`, `151,312 tokens` (thousands separators, regular
/// plurals).
pub fn count(n: impl Into<i128>, word: &str) -> String {
    let n = n.into();
    format!(
        "{} {}",
        thousands(n),
        noun(u64::try_from(n).unwrap_or(0), word)
    )
}

/// `text` on one line (control characters as spaces), cut to `width` terminal columns with an
/// ellipsis.
pub fn one_line(text: &str, width: usize) -> String {
    // Only a prefix can be shown: a long text (an answer of pages) is read only as far as a
    // prefix four times wider than `width` by its characters' own widths, which even a run of
    // joined emoji (a family: four characters of width 2 drawn in 2 columns) cannot fit.
    let enough = width.saturating_mul(4).saturating_add(8);
    let mut seen = 0usize;
    let mut rest = text.chars();
    let flat: String = rest
        .by_ref()
        .take_while(|c| {
            seen += char_width(*c).max(1);
            seen <= enough
        })
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let whole = seen <= enough && rest.next().is_none();
    if whole && display_width(&flat) <= width {
        return flat;
    }
    let mut cut: String = take_columns(flat.chars(), width.saturating_sub(1))
        .into_iter()
        .collect();
    cut.push('…');
    cut
}

/// `text` on one line in exactly `width` columns: cut with an ellipsis, or padded with spaces.
pub fn fit(text: &str, width: usize) -> String {
    pad(&one_line(text, width), width)
}

/// `text` padded with spaces to `width` columns (as `{:<width$}` would pad, but by the columns
/// wide characters take, not by their count).
pub fn pad(text: &str, width: usize) -> String {
    let room = width.saturating_sub(display_width(text));
    format!("{text}{}", " ".repeat(room))
}

/// `text` on one line, cut in the middle to `width` columns: names and ids that share a
/// prefix (`research-ada-0001`, `research-ada-0002`) still differ where they end.
pub fn middle_cut(text: &str, width: usize) -> String {
    let flat = one_line(text, usize::MAX);
    if display_width(&flat) <= width {
        return flat;
    }
    let kept = width.saturating_sub(1);
    let tail_room = kept / 2;
    let head = take_columns(flat.chars(), kept - tail_room);
    let mut tail = take_columns(flat.chars().rev(), tail_room);
    tail.reverse();
    let mut cut: String = head.into_iter().collect();
    cut.push('…');
    cut.extend(tail);
    cut
}

/// The first characters of `chars` that fit in `room` columns.
fn take_columns(chars: impl Iterator<Item = char>, room: usize) -> Vec<char> {
    let mut used = 0;
    chars
        .take_while(|&c| {
            used += char_width(c);
            used <= room
        })
        .collect()
}

/// An id short enough for a column: a UUID's first block, enough to tell rows apart as a short
/// commit hash is; any other id whole up to 12 characters, or cut in its middle with `…`
/// (a LangGraph thread named `long-chat` cut at its hyphen would read as another thread,
/// `long`, and LangChain's `lc_run--…` message ids all begin alike).
pub fn short_id(id: &str) -> Cow<'_, str> {
    match id.split_once('-') {
        Some((block, _)) if block.len() == 8 && block.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Cow::Borrowed(block)
        }
        _ if id.chars().count() <= SHORT_ID_WIDTH => Cow::Borrowed(id),
        _ => Cow::Owned(middle_cut(id, SHORT_ID_WIDTH)),
    }
}

/// The widest [`short_id`].
pub const SHORT_ID_WIDTH: usize = 12;

/// A size in bytes as people read it, in powers of 1,000: `912 bytes`, `3.4 kB`, `170 MB`.
pub fn byte_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if bytes < 1_000 {
        return format!("{bytes} {}", noun(bytes, "byte"));
    }
    let mut value = bytes as f64 / 1_000.0;
    let mut unit = 0;
    while value >= 999.5 && unit + 1 < UNITS.len() {
        value /= 1_000.0;
        unit += 1;
    }
    if value < 9.95 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// An id as a message names it: quoted when it is empty or has spaces at either end, so none
/// reads as a double space.
pub fn quoted_id(id: &str) -> String {
    if id.is_empty() || id.trim() != id {
        format!("{id:?}")
    } else {
        id.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_id_shortens_uuids_only() {
        assert_eq!(short_id("3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"), "3f2a1b4c");
        assert_eq!(short_id("long-chat"), "long-chat");
        assert_eq!(short_id("msg-36"), "msg-36");
        assert_eq!(short_id("run"), "run");
        let langchain = short_id("lc_run--019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b");
        assert_eq!(langchain, "lc_run…f4a5b");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
    }

    #[test]
    fn sizes_read_in_powers_of_a_thousand() {
        assert_eq!(byte_size(1), "1 byte");
        assert_eq!(byte_size(912), "912 bytes");
        assert_eq!(byte_size(3_400), "3.4 kB");
        assert_eq!(byte_size(170_000_000), "170 MB");
        assert_eq!(byte_size(999_600), "1.0 MB");
        assert_eq!(byte_size(3_400_000_000), "3.4 GB");
    }

    #[test]
    fn noun_is_plural_unless_one() {
        assert_eq!(noun(1, "message"), "message");
        assert_eq!(noun(0, "message"), "messages");
        assert_eq!(noun(2, "file"), "files");
    }

    #[test]
    fn count_groups_digits_and_agrees_in_number() {
        assert_eq!(count(1, "row"), "1 row");
        assert_eq!(count(0, "row"), "0 rows");
        assert_eq!(count(151_312, "token"), "151,312 tokens");
    }

    #[test]
    fn one_line_flattens_and_cuts() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("日本語テキスト", 3), "日…");
        assert_eq!(one_line("日本語テキスト", 4), "日…");
        assert_eq!(one_line("日本語テキスト", 14), "日本語テキスト");
        // A long text is read only as far as it can be shown, and cut the same.
        let long = "word ".repeat(100_000);
        assert_eq!(one_line(&long, 12), "word word w…");
        assert_eq!(one_line(&"a".repeat(48), 10), "aaaaaaaaa…");
        assert_eq!(one_line(&"a".repeat(48), 48), "a".repeat(48));
        // Zero-width marks past the prefix still make a cut, shown with its ellipsis.
        let marks = format!("ab{}", "\u{301}".repeat(200));
        assert!(one_line(&marks, 5).ends_with('…'));
        assert_eq!(one_line("日本語テキスト", 13), "日本語テキス…");
        assert_eq!(one_line("🙂🙂🙂", 5), "🙂🙂…");
    }

    #[test]
    fn every_cut_fits_its_columns_and_ends_in_an_ellipsis() {
        for text in [
            "日本語テキスト",
            "abc日本語def",
            "🙂a🙂b🙂c",
            "plain ascii text here",
        ] {
            for width in 1..20 {
                for cut in [one_line(text, width), middle_cut(text, width)] {
                    assert!(display_width(&cut) <= width, "{text:?} in {width}: {cut:?}");
                    if display_width(text) > width {
                        assert!(cut.contains('…'), "{text:?} in {width}: {cut:?}");
                    } else {
                        assert_eq!(cut, text);
                    }
                }
                assert_eq!(
                    display_width(&fit(text, width)),
                    width,
                    "{text:?} in {width}"
                );
            }
        }
    }

    #[test]
    fn middle_cut_keeps_the_ends_that_tell_names_apart() {
        assert_eq!(middle_cut("research-ada-0001", 12), "resear…-0001");
        assert_ne!(
            middle_cut("research-ada-0001", 12),
            middle_cut("research-ada-0002", 12)
        );
        assert_eq!(middle_cut("short", 12), "short");
        assert_eq!(middle_cut("abcdef", 1), "…");
        assert_eq!(middle_cut("abcdef", 0), "…");
        assert_eq!(middle_cut("会話の記録-0001", 10), "会話…0001");
    }
}
