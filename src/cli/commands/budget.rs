//! A token budget as `history` and `node-context` print it: its counter and figures, and the
//! table of messages with the cut line.

use crate::cli::output::table;
use crate::format::{one_line, thousands};
use crate::memory::budget_view::BudgetLine;

/// Messages with their tokens, the tokens of the history from each one on, and the cut line:
/// how conversation histories and node contexts are printed alike.
pub(super) fn budget_table(lines: &[BudgetLine], dropped: usize) -> String {
    let mut rows = Vec::new();
    for line in lines {
        if line.index == dropped && dropped > 0 {
            rows.push(vec![
                "──".into(),
                "── cut line: everything above is pruned ──".into(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        rows.push(vec![
            line.index.to_string(),
            format!("{} {}", line.role.as_str(), short_id(&line.source_id)),
            thousands(line.tokens),
            thousands(line.tokens_from_here),
            one_line(&line.message.content.text(), 60),
        ]);
    }
    table(&["#", "message", "tokens", "from here", "content"], &rows)
}

/// A UUID's first 8 characters; any other label whole.
pub(super) fn short_id(id: &str) -> &str {
    match uuid::Uuid::parse_str(id) {
        Ok(_) => &id[..8],
        Err(_) => id,
    }
}
