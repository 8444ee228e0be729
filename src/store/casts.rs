//! PostgreSQL `::type` casts in query text: removed for SQLite, or rewritten.

/// The query with every `::type` cast removed (outside string literals).
pub fn strip_casts(postgres_sql: &str) -> String {
    rewrite_casts(postgres_sql, |operand, _| operand.to_owned())
}

/// The query with each `operand::type` cast outside string literals replaced by
/// `rewrite(operand, type)`. The operand is the identifier, column path or `$n` parameter right
/// before the cast; after a parenthesis it is empty (the cast of an expression).
pub fn rewrite_casts(postgres_sql: &str, rewrite: impl Fn(&str, &str) -> String) -> String {
    let mut out = String::with_capacity(postgres_sql.len());
    let mut chars = postgres_sql.chars().peekable();
    let mut in_literal = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            // A doubled quote inside a literal toggles twice, so it needs no special case.
            in_literal = !in_literal;
        } else if !in_literal && c == ':' && chars.peek() == Some(&':') {
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
            let operand_start = out
                .rfind(|ch: char| {
                    !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' || ch == '$')
                })
                .map_or(0, |i| i + 1);
            let operand = out.split_off(operand_start);
            out.push_str(&rewrite(&operand, &cast));
            continue;
        }
        out.push(c);
    }
    out
}
