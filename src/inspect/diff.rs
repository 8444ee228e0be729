//! Two texts side by side: the runs they share and, between them, what each has instead. For
//! a node turn whose memory file and run context disagree, in the TUI and wherever else.

use similar::{ChangeTag, TextDiff};

/// One row of a side-by-side diff: a run of words on the left and on the right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRow {
    pub left: String,
    pub right: String,
    /// Whether the two sides differ here (a shared run has the same text on both).
    pub changed: bool,
}

/// The word-level diff of `left` and `right`, one row per shared run and per change.
pub fn side_by_side(left: &str, right: &str) -> Vec<DiffRow> {
    let diff = TextDiff::from_words(left, right);
    let mut rows: Vec<DiffRow> = Vec::new();
    for change in diff.iter_all_changes() {
        let text = change.value();
        let changed = change.tag() != ChangeTag::Equal;
        // Consecutive words of one kind (shared, or changed on either side) make one row.
        let row = match rows.last_mut() {
            Some(row) if row.changed == changed => row,
            _ => {
                rows.push(DiffRow {
                    left: String::new(),
                    right: String::new(),
                    changed,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        match change.tag() {
            ChangeTag::Equal => {
                row.left.push_str(text);
                row.right.push_str(text);
            }
            ChangeTag::Delete => row.left.push_str(text),
            ChangeTag::Insert => row.right.push_str(text),
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_runs_and_changes_alternate() {
        let rows = side_by_side(
            "The parcel leaves Lyon on Friday morning.",
            "The parcel leaves Lyon on Monday morning.",
        );
        let texts: Vec<(&str, &str, bool)> = rows
            .iter()
            .map(|r| (r.left.as_str(), r.right.as_str(), r.changed))
            .collect();
        assert_eq!(
            texts,
            [
                (
                    "The parcel leaves Lyon on ",
                    "The parcel leaves Lyon on ",
                    false
                ),
                ("Friday", "Monday", true),
                (" morning.", " morning.", false),
            ]
        );
    }

    #[test]
    fn a_side_missing_text_is_empty_in_its_row() {
        let rows = side_by_side("", "Only here.");
        assert!(rows.iter().all(|r| r.left.is_empty() && r.changed));
        let right: String = rows.iter().map(|r| r.right.as_str()).collect();
        assert_eq!(right, "Only here.");
    }
}
