//! A search in the messages of the open conversation, session or thread (`/` there): what was
//! typed, which messages hold it, and where it is found in a text, for the highlight.

pub use crate::inspect::search_match::find;

/// The messages of the open view that hold a text, in the view's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageSearch {
    /// As typed; matched ignoring case.
    pub query: String,
    /// The positions (in the view's order) of the messages whose text holds the query.
    pub matches: Vec<usize>,
}

impl MessageSearch {
    /// The search for `query` over `texts`, each a message's text in the view's order.
    pub fn new<T: AsRef<str>>(query: &str, texts: impl IntoIterator<Item = T>) -> MessageSearch {
        let matches = match query.is_empty() {
            true => Vec::new(),
            false => texts
                .into_iter()
                .enumerate()
                .filter(|(_, text)| find(text.as_ref(), query).next().is_some())
                .map(|(position, _)| position)
                .collect(),
        };
        MessageSearch {
            query: query.to_owned(),
            matches,
        }
    }

    /// Whether the message at `position` holds the query.
    pub fn holds(&self, position: usize) -> bool {
        self.matches.binary_search(&position).is_ok()
    }

    /// The match after `position` (`forward`) or before it, wrapping around the ends.
    pub fn step(&self, position: usize, forward: bool) -> Option<usize> {
        let after = self.matches.iter().copied().find(|&m| m > position);
        let before = self.matches.iter().copied().rev().find(|&m| m < position);
        match forward {
            true => after.or_else(|| self.matches.first().copied()),
            false => before.or_else(|| self.matches.last().copied()),
        }
    }

    /// The first match at `position` or after it (wrapping): where typing takes the selection.
    pub fn from(&self, position: usize) -> Option<usize> {
        match self.holds(position) {
            true => Some(position),
            false => self.step(position, true),
        }
    }

    /// "match 2 of 5", for the status line; `position` is the selected message.
    pub fn describe(&self, position: usize) -> String {
        match self.matches.binary_search(&position) {
            _ if self.matches.is_empty() => format!("no message holds {:?}", self.query),
            Ok(index) => format!(
                "{:?}: match {} of {}",
                self.query,
                index + 1,
                self.matches.len()
            ),
            Err(_) => match self.matches.len() {
                1 => format!("{:?}: 1 match", self.query),
                n => format!(
                    "{:?}: {} matches",
                    self.query,
                    crate::format::thousands(n as u64)
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_through_the_matches_and_wraps() {
        let texts = ["hello", "refund please", "ok", "the refund", "bye"];
        let search = MessageSearch::new("REFUND", texts);
        assert_eq!(search.matches, [1, 3]);
        assert_eq!(search.step(0, true), Some(1));
        assert_eq!(search.step(1, true), Some(3));
        assert_eq!(search.step(3, true), Some(1), "wraps past the last");
        assert_eq!(search.step(1, false), Some(3), "wraps before the first");
        assert_eq!(search.from(3), Some(3));
        assert_eq!(search.from(4), Some(1));
        assert_eq!(search.describe(3), "\"REFUND\": match 2 of 2");
        assert_eq!(search.describe(0), "\"REFUND\": 2 matches");
        let none = MessageSearch::new("zzz", texts);
        assert_eq!(none.step(0, true), None);
        assert_eq!(none.describe(0), "no message holds \"zzz\"");
    }
}
