//! MySQL and MariaDB text for a query written in PostgreSQL syntax.
//!
//! The session runs with `ANSI_QUOTES` and `NO_BACKSLASH_ESCAPES` (see `mysql.rs`), so double
//! quotes name identifiers and `'\'` is a one-character literal, as in PostgreSQL. What is left
//! to rewrite:
//! - `::type` casts: integer casts become `CAST(… AS SIGNED)` (MySQL's `SUM` is a `DECIMAL`),
//!   every other cast goes (ids are `CHAR(36)` text, instants `DATETIME`, booleans `TINYINT(1)`);
//! - `CAST(… AS TEXT)`, which MySQL does not know, becomes `CAST(… AS CHAR)`: the whole value
//!   as text (an instant as `2026-11-28 21:13:00.948564`, a `LONGTEXT` or `JSON` unchanged);
//! - `$n` parameters: MySQL's are `?`, bound in the order they appear. A query that uses its
//!   parameters in order, each once, gets `?` in place. Any other names its parameters once, in
//!   a `WITH` clause, and reads them there, except in `LIMIT`, which takes only a `?`: those are
//!   bound again after the others ([`bind_order`] says in which order).

/// The name of the one-row table a query reads its repeated parameters from.
const PARAMS: &str = "memscope_params";

/// The MySQL text of a PostgreSQL-syntax query.
pub fn mysql_text(postgres_sql: &str) -> String {
    placeholders(&rewritten(postgres_sql)).0
}

/// The query with every rewrite but its parameters'.
fn rewritten(postgres_sql: &str) -> String {
    quote_reserved(&exact_like(&text_casts(&casts(postgres_sql))))
}

/// `CAST(x AS TEXT)` as `CAST(x AS CHAR)`, outside quotes.
fn text_casts(sql: &str) -> String {
    let mut word = String::new();
    walk(sql, |out, c, _| {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            return true;
        }
        let is_text_cast = c == ')'
            && word.eq_ignore_ascii_case("TEXT")
            && out.len() >= 4
            && out.as_bytes()[out.len() - 4..].eq_ignore_ascii_case(b" AS ");
        out.push_str(if is_text_cast { "CHAR" } else { &word });
        word.clear();
        false
    }) + &word
}

/// Dify's column names that MySQL reserves (`upload_files.key`), quoted wherever they stand
/// as words (the session's `ANSI_QUOTES` makes double quotes name identifiers).
const RESERVED_COLUMNS: &[&str] = &["key"];

fn quote_reserved(sql: &str) -> String {
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if RESERVED_COLUMNS.contains(&word.as_str()) {
            out.push_str(&format!("\"{word}\""));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    let mut text = walk(sql, |out, c, _| {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            return true;
        }
        flush(&mut word, out);
        false
    });
    flush(&mut word, &mut text);
    text
}

/// `LIKE` compares bytes, as PostgreSQL's does, not under the case- and accent-insensitive
/// collation MySQL's text columns have (memscope lowercases both sides where it means to).
fn exact_like(sql: &str) -> String {
    sql.replace(" LIKE ", " LIKE BINARY ")
}

/// The parameters of a query's MySQL text, by their PostgreSQL number, in the order they are
/// bound: `1..=n` for a query that uses its parameters in order, each once.
pub fn bind_order(postgres_sql: &str) -> Vec<usize> {
    placeholders(&rewritten(postgres_sql)).1
}

/// Walks `sql` outside string literals and quoted identifiers, handing every other character
/// to `visit` with the text written so far.
fn walk(
    sql: &str,
    mut visit: impl FnMut(&mut String, char, &mut std::iter::Peekable<std::str::Chars>) -> bool,
) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {
                if visit(&mut out, c, &mut chars) {
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

fn casts(sql: &str) -> String {
    walk(sql, |out, c, chars| {
        if c != ':' || chars.peek() != Some(&':') {
            return false;
        }
        chars.next();
        let mut cast = String::new();
        while let Some(&t) = chars.peek() {
            if t.is_ascii_alphanumeric() || t == '_' || t == '[' || t == ']' {
                cast.push(t);
                chars.next();
            } else {
                break;
            }
        }
        if matches!(
            cast.as_str(),
            "bigint" | "integer" | "int" | "int4" | "int8"
        ) {
            let operand = out.split_off(operand_start(out));
            out.push_str(&format!("CAST({operand} AS SIGNED)"));
        } else if cast == "uuid" && out.ends_with(|c: char| c.is_ascii_digit()) {
            // An id parameter: compared byte for byte, not under the column's collation.
            let operand = out.split_off(operand_start(out));
            if operand.starts_with('$') {
                out.push_str("BINARY ");
            }
            out.push_str(&operand);
        }
        true
    })
}

/// Where the operand of a cast at the end of `out` starts: a parenthesised expression with the
/// function name before it, a quoted identifier or literal, or a plain name, number or
/// parameter.
fn operand_start(out: &str) -> usize {
    let bytes = out.as_bytes();
    let Some(&last) = bytes.last() else {
        return 0;
    };
    let mut start = match last {
        b')' => {
            let mut depth = 0usize;
            let mut i = bytes.len();
            while i > 0 {
                i -= 1;
                match bytes[i] {
                    b')' => depth += 1,
                    b'(' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            i
        }
        b'"' | b'\'' => out[..out.len() - 1].rfind(last as char).unwrap_or(0),
        _ => out.len(),
    };
    while start > 0 {
        let b = bytes[start - 1];
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$' || b == b'*' {
            start -= 1;
        } else {
            break;
        }
    }
    start
}

/// `sql` with each `$n` replaced by `replace(n, in_limit)`, `in_limit` telling a `LIMIT` or
/// `OFFSET` value.
fn replace_parameters(sql: &str, mut replace: impl FnMut(usize, bool) -> String) -> String {
    walk(sql, |out, c, chars| {
        if c != '$' || !chars.peek().is_some_and(char::is_ascii_digit) {
            return false;
        }
        let mut digits = String::new();
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            digits.push(d);
        }
        let before = out.trim_end().to_ascii_uppercase();
        let in_limit = before.ends_with("LIMIT") || before.ends_with("OFFSET");
        out.push_str(&replace(digits.parse().unwrap_or(0), in_limit));
        true
    })
}

fn placeholders(sql: &str) -> (String, Vec<usize>) {
    let mut found = Vec::new();
    replace_parameters(sql, |n, in_limit| {
        found.push((n, in_limit));
        String::new()
    });
    let count = found.iter().map(|&(n, _)| n).max().unwrap_or(0);
    if found.iter().map(|&(n, _)| n).eq(1..=count) {
        let text = replace_parameters(sql, |_, _| "?".to_owned());
        return (text, (1..=count).collect());
    }
    let columns: Vec<String> = (1..=count).map(|n| format!("? AS p{n}")).collect();
    let with = format!("{PARAMS} AS (SELECT {})", columns.join(", "));
    let body = replace_parameters(sql, |n, in_limit| {
        if in_limit {
            "?".to_owned()
        } else {
            format!("(SELECT p{n} FROM {PARAMS})")
        }
    });
    let trimmed = body.trim_start();
    let text = match trimmed.strip_prefix("WITH RECURSIVE ") {
        Some(rest) => format!("WITH RECURSIVE {with}, {rest}"),
        None => match trimmed.strip_prefix("WITH ") {
            Some(rest) => format!("WITH {with}, {rest}"),
            None => format!("WITH {with} {trimmed}"),
        },
    };
    let mut order: Vec<usize> = (1..=count).collect();
    order.extend(found.iter().filter(|&&(_, limit)| limit).map(|&(n, _)| n));
    (text, order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_go_and_integer_casts_become_signed() {
        assert_eq!(
            mysql_text(
                "SELECT m.id::text AS id, COUNT(*)::bigint, coalesce(sum(x), 0)::bigint FROM m WHERE m.c = $1::uuid"
            ),
            "SELECT m.id AS id, CAST(COUNT(*) AS SIGNED), CAST(coalesce(sum(x), 0) AS SIGNED) FROM m WHERE m.c = BINARY ?"
        );
        assert_eq!(
            mysql_text("SELECT e.\"index\"::bigint AS \"index\", 'a::b', NULL::bigint"),
            "SELECT CAST(e.\"index\" AS SIGNED) AS \"index\", 'a::b', CAST(NULL AS SIGNED)"
        );
    }

    #[test]
    fn parameters_in_order_become_question_marks() {
        let sql = "SELECT 1 FROM m WHERE a = $1::uuid AND b = $2 LIMIT $3";
        assert_eq!(
            mysql_text(sql),
            "SELECT 1 FROM m WHERE a = BINARY ? AND b = ? LIMIT ?"
        );
        assert_eq!(bind_order(sql), [1, 2, 3]);
    }

    #[test]
    fn repeated_parameters_are_read_from_one_row() {
        let sql = "SELECT 1 FROM m WHERE ($2::boolean OR a = $1) AND b LIKE $1 LIMIT $2";
        assert_eq!(
            mysql_text(sql),
            "WITH memscope_params AS (SELECT ? AS p1, ? AS p2) SELECT 1 FROM m WHERE \
             ((SELECT p2 FROM memscope_params) OR a = (SELECT p1 FROM memscope_params)) \
             AND b LIKE BINARY (SELECT p1 FROM memscope_params) LIMIT ?"
        );
        assert_eq!(bind_order(sql), [1, 2, 2]);
        assert!(mysql_text("WITH t AS (SELECT $2) SELECT $1").starts_with(
            "WITH memscope_params AS (SELECT ? AS p1, ? AS p2), t AS (SELECT (SELECT p2"
        ));
    }

    #[test]
    fn reserved_column_names_are_quoted() {
        assert_eq!(
            mysql_text("SELECT uf.key AS key, keys FROM upload_files uf WHERE uf.key = 'key'"),
            "SELECT uf.\"key\" AS \"key\", keys FROM upload_files uf WHERE uf.\"key\" = 'key'"
        );
    }

    #[test]
    fn text_casts_become_char_casts() {
        assert_eq!(
            mysql_text("SELECT CAST(t.state AS TEXT), CAST(x AS text) FROM t WHERE a = 'AS TEXT)'"),
            "SELECT CAST(t.state AS CHAR), CAST(x AS CHAR) FROM t WHERE a = 'AS TEXT)'"
        );
        assert_eq!(
            mysql_text("SELECT text, context FROM t"),
            "SELECT text, context FROM t"
        );
    }

    #[test]
    fn text_in_quotes_is_left_alone() {
        assert_eq!(
            mysql_text("SELECT '$1', \"$2\" FROM t WHERE x LIKE $1 ESCAPE '\\'"),
            "SELECT '$1', \"$2\" FROM t WHERE x LIKE BINARY ? ESCAPE '\\'"
        );
    }
}
