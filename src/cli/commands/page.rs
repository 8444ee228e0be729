//! One page of the conversation list, as every kind of conversation prints it: a row each, and
//! where the next page starts.

use serde::Serialize;

use crate::cli::output::table;

/// A page of conversations and where the next one starts.
#[derive(Serialize)]
pub(super) struct Page<'a, T> {
    pub conversations: &'a [T],
    /// Pass as `--after` for the next page; `null` on the last page.
    pub next: Option<String>,
}

impl<T> Page<'_, T> {
    /// The page as a table with `headers`, one row of `cells` a conversation, and the flag that
    /// asks for the next page.
    pub fn render(&self, headers: &[&str], cells: impl Fn(&T) -> Vec<String>) -> String {
        if self.conversations.is_empty() {
            return "no conversations".to_owned();
        }
        let rows: Vec<Vec<String>> = self.conversations.iter().map(cells).collect();
        let mut out = table(headers, &rows);
        if let Some(next) = &self.next {
            out.push_str(&format!("\n\nmore: --after {next}"));
        }
        out
    }
}
