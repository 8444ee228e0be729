//! Python's `repr()` of a `str`, because Dify's classic formula counts `str(dict)` text.

use std::fmt::Write;

use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// Appends `repr(s)` as CPython 3 writes it: single quotes unless the text holds a single
/// quote and no double quote; backslash escapes for the quote, `\`, `\t`, `\n`, `\r`, other
/// ASCII controls and every non-printable character (`str.isprintable`: separators and the
/// "other" categories). Unicode tables may be a version ahead of the Python that ran Dify, so
/// characters assigned since then print where that Python would escape them.
pub fn push_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if c.is_ascii() || !is_printable(c) => push_escape(out, c),
            c => out.push(c),
        }
    }
    out.push(quote);
}

fn is_printable(c: char) -> bool {
    !matches!(
        c.general_category_group(),
        GeneralCategoryGroup::Separator | GeneralCategoryGroup::Other
    )
}

fn push_escape(out: &mut String, c: char) {
    let code = u32::from(c);
    // Writing to a String cannot fail.
    let _ = match code {
        0..=0xff => write!(out, "\\x{code:02x}"),
        0x100..=0xffff => write!(out, "\\u{code:04x}"),
        _ => write!(out, "\\U{code:08x}"),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(s: &str) -> String {
        let mut out = String::new();
        push_str_repr(&mut out, s);
        out
    }

    // Expected values are CPython 3.11's output for the same strings.
    #[test]
    fn quotes_like_python() {
        assert_eq!(repr("abc"), "'abc'");
        assert_eq!(repr(""), "''");
        assert_eq!(repr("it's"), "\"it's\"");
        assert_eq!(repr(r#"{"a": 1}"#), r#"'{"a": 1}'"#);
        assert_eq!(repr(r#"it's "x""#), r#"'it\'s "x"'"#);
    }

    #[test]
    fn escapes_like_python() {
        assert_eq!(repr("a\\b"), r"'a\\b'");
        assert_eq!(repr("l1\nl2\tx\r"), r"'l1\nl2\tx\r'");
        assert_eq!(repr("\u{0}\u{1b}\u{7f}"), r"'\x00\x1b\x7f'");
        assert_eq!(repr("\u{85}\u{a0}\u{ad}"), r"'\x85\xa0\xad'");
        assert_eq!(
            repr("a\u{200b}b\u{2028}\u{3000}"),
            r"'a\u200bb\u2028\u3000'"
        );
        assert_eq!(repr("\u{e0001}\u{f0000}"), r"'\U000e0001\U000f0000'");
    }

    #[test]
    fn keeps_printable_non_ascii() {
        assert_eq!(repr("café 東京 😀 é"), "'café 東京 😀 é'");
        // The emoji is kept; the zero-width joiner between its parts is a format character.
        assert_eq!(repr("👨\u{200d}💻"), "'👨\\u200d💻'");
    }
}
