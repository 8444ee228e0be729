//! Why a conversation matched the list's search, and where a text occurs in another. A source's
//! search matches a text, ignoring case, in a conversation's id, one of its messages, and where
//! the source says its search reads them, its title and columns (Dify's app name); this says
//! which, and for message text shows the words around the first hit.

use std::ops::Range;

use super::InspectError;
use super::sessions::open_conversation;
use crate::format::one_line;
use crate::memory::budget_view::BudgetSettings;
use crate::sources::conversation::{ListColumn, ListSearch, ListedConversation};
use crate::sources::opened::ConversationKey;
use crate::sources::turn_trees_of;
use crate::store::Store;

/// Characters of context kept before a hit in a snippet.
const BEFORE_HIT: usize = 20;

/// Where `query` occurs in `text`, ignoring case: byte ranges of `text`, none overlapping.
pub fn find<'a>(text: &'a str, query: &'a str) -> impl Iterator<Item = Range<usize>> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        if query.is_empty() {
            return None;
        }
        while from < text.len() {
            let start = from;
            let rest = &text[start..];
            from += rest.chars().next().map_or(1, char::len_utf8);
            if let Some(length) = prefix_length(rest, query) {
                from = start + length;
                return Some(start..start + length);
            }
        }
        None
    })
}

/// The length in bytes of the start of `text` that equals `query` ignoring case, if it does.
fn prefix_length(text: &str, query: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    for wanted in query.chars() {
        let (_, found) = chars.next()?;
        if !found.to_lowercase().eq(wanted.to_lowercase()) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(at, _)| at))
}

/// The part of a conversation the search matched without reading its messages: its title, a
/// searched column of `columns` (named by its heading) or its id, as `reads` says the source's
/// search reads them. `None`: the search found it in a message's text.
pub fn matched_field(
    row: &ListedConversation,
    columns: &[ListColumn],
    reads: ListSearch,
    search: &str,
) -> Option<&'static str> {
    let search = search.trim();
    let holds = |text: &str| find(text, search).next().is_some();
    if reads.titles && row.title.as_deref().is_some_and(holds) {
        return Some("title");
    }
    let mut searched = columns.iter().filter(|column| column.searched);
    let column = searched.find(|column| {
        let cell = row.extra.get(column.key).and_then(|value| value.as_str());
        cell.is_some_and(holds)
    });
    if let Some(column) = column {
        return Some(column.header);
    }
    let id_matched = if reads.id_prefix {
        let prefix = search.replace('-', "").to_lowercase();
        !prefix.is_empty() && row.id.replace('-', "").to_lowercase().starts_with(&prefix)
    } else {
        holds(&row.id)
    };
    id_matched.then_some("id")
}

/// What a list search reads, for a user: "titles, app, ids and message text".
pub fn what_search_reads(reads: ListSearch, columns: &[ListColumn]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if reads.titles {
        parts.push("titles");
    }
    parts.extend(columns.iter().filter(|c| c.searched).map(|c| c.header));
    parts.push("ids");
    let last = "message text";
    format!("{} and {last}", parts.join(", "))
}

/// `text` around the first hit of `search`, on one line, at most `width` characters: a leading
/// `…` when the text before it is left out, a trailing one when the rest is cut.
pub fn snippet(text: &str, search: &str, width: usize) -> Option<String> {
    let hit = find(text, search.trim()).next()?;
    let before: Vec<(usize, char)> = text[..hit.start].char_indices().collect();
    let (start, cut) = match before.len().checked_sub(BEFORE_HIT) {
        Some(skip) if skip > 0 => (before[skip].0, true),
        _ => (0, false),
    };
    let lead = if cut { "…" } else { "" };
    let room = width.saturating_sub(lead.chars().count());
    Some(format!("{lead}{}", one_line(&text[start..], room)))
}

/// Why conversation `key` matched the list's search over message text: the first of its
/// messages (oldest first) whose text holds `search`, as a [`snippet`] of at most `width`
/// characters. A source whose conversations are trees of turns searches every branch, so every
/// stored turn is read; the others' search reads what the open view reads.
pub async fn conversation_snippet(
    store: &Store,
    key: &ConversationKey,
    search: &str,
    width: usize,
    budget: &BudgetSettings,
) -> Result<Option<String>, InspectError> {
    if let Some(turn_trees) = turn_trees_of(store.profile().source) {
        let conversation = turn_trees.conversation(store, &key.id, None).await?;
        return Ok(conversation.rows.iter().find_map(|row| {
            snippet(&row.query, search, width).or_else(|| snippet(&row.answer, search, width))
        }));
    }
    let view = open_conversation(store, key, budget).await?;
    Ok(view
        .messages
        .iter()
        .find_map(|message| snippet(&message.message.message.content.text(), search, width)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: ListColumn = ListColumn {
        header: "app",
        key: "app",
        width: 24,
        brief: true,
        searched: true,
    };

    fn row(name: &str, app: &str) -> ListedConversation {
        ListedConversation {
            id: "9b691c25-0000-4000-8000-000000000000".to_owned(),
            title: Some(name.to_owned()),
            messages: Some(1),
            last_activity: None,
            deleted: false,
            problem: None,
            extra: crate::sources::conversation::extra(serde_json::json!({ "app": app })),
            scope: None,
        }
    }

    #[test]
    fn finds_every_occurrence_ignoring_case_at_char_boundaries() {
        let text = "Refund? The REFUND was refunded — 退款 refund";
        let found: Vec<&str> = find(text, "refund").map(|r| &text[r]).collect();
        assert_eq!(found, ["Refund", "REFUND", "refund", "refund"]);
        let found: Vec<&str> = find(text, "退款").map(|r| &text[r]).collect();
        assert_eq!(found, ["退款"]);
        assert_eq!(find(text, "").count(), 0);
        assert_eq!(find("aaa", "aa").count(), 1, "matches do not overlap");
    }

    const TITLES_AND_ID_PREFIXES: ListSearch = ListSearch {
        titles: true,
        id_prefix: true,
    };

    #[test]
    fn names_the_field_the_search_matched() {
        let reads = TITLES_AND_ID_PREFIXES;
        assert_eq!(
            matched_field(&row("Refund for order", "Bot"), &[APP], reads, "REFUND"),
            Some("title")
        );
        assert_eq!(
            matched_field(&row("Hello", "Refund desk"), &[APP], reads, "refund"),
            Some("app")
        );
        assert_eq!(
            matched_field(&row("Hello", "Bot"), &[APP], reads, "9B691C25-0"),
            Some("id")
        );
        assert_eq!(
            matched_field(&row("Hello", "Bot"), &[APP], reads, "c25"),
            None,
            "an id matched by its start only is not matched in its middle"
        );
        assert_eq!(
            matched_field(&row("Hello", "Bot"), &[APP], reads, "kyoto"),
            None
        );
        let unsearched = ListColumn {
            searched: false,
            ..APP
        };
        assert_eq!(
            matched_field(&row("Hello", "Refund desk"), &[unsearched], reads, "refund"),
            None,
            "a column the search does not read is never why a row matched"
        );
    }

    #[test]
    fn a_search_of_ids_and_text_names_neither_title_nor_prefix() {
        let reads = ListSearch::default();
        assert_eq!(
            matched_field(&row("Refund", "Bot"), &[], reads, "refund"),
            None,
            "the title is not what such a search read"
        );
        assert_eq!(
            matched_field(&row("Hello", "Bot"), &[], reads, "C25-00"),
            Some("id"),
            "anywhere in the id, any case"
        );
        assert_eq!(what_search_reads(reads, &[]), "ids and message text");
        assert_eq!(
            what_search_reads(TITLES_AND_ID_PREFIXES, &[APP]),
            "titles, app, ids and message text"
        );
    }

    #[test]
    fn a_snippet_keeps_the_words_before_the_hit_and_marks_each_cut() {
        let text = "Our customer wrote that the parcel to Kyoto never arrived and asks for help";
        assert_eq!(
            snippet(text, "kyoto", 30).as_deref(),
            Some("… that the parcel to Kyoto ne…")
        );
        assert_eq!(
            snippet("to Kyoto", "kyoto", 30).as_deref(),
            Some("to Kyoto")
        );
        assert_eq!(snippet(text, "osaka", 30), None);
    }
}
