//! Dify's conversation list as the conversation capability gives it: one keyset page at a time
//! (the cursor is `<updated_at>~<id>`), each row with its app, and the scan a search without a
//! text index falls back to.

use std::ops::ControlFlow;

use chrono::NaiveDateTime;
use serde_json::json;

use super::queries::{ConversationCursor, ConversationFilter, ConversationSummary};
use crate::sources::conversation::{Extra, ListQuery, ListedConversation, ListedPage, SourceError};
use crate::store::Store;

const CURSOR_TIME: &str = "%Y-%m-%dT%H:%M:%S%.f";

/// A page cursor as the user passes it back: `<updated_at>~<id>`.
pub fn format_cursor(cursor: &ConversationCursor) -> String {
    format!("{}~{}", cursor.updated_at.format(CURSOR_TIME), cursor.id)
}

pub fn parse_cursor(text: &str) -> Result<ConversationCursor, SourceError> {
    let bad = || {
        SourceError::usage(format!(
            "`{text}` is not a cursor printed by `conversations`"
        ))
    };
    let (time, id) = text.split_once('~').ok_or_else(bad)?;
    let updated_at = NaiveDateTime::parse_from_str(time, CURSOR_TIME).map_err(|_| bad())?;
    Ok(ConversationCursor {
        updated_at,
        id: id.to_owned(),
    })
}

/// The filter `query` asks for, one row more than the page so the row past it says whether
/// another page exists.
pub fn filter(query: &ListQuery) -> Result<ConversationFilter, SourceError> {
    Ok(ConversationFilter {
        app_id: query.options.get("app").map(str::to_owned),
        search: query.search.clone().filter(|s| !s.is_empty()),
        limit: i64::from(query.limit.max(1)) + 1,
        after: query.after.as_deref().map(parse_cursor).transpose()?,
        include_deleted: query.options.is_set("include-deleted"),
    })
}

/// A Dify conversation as a row of the list.
pub fn listed(c: &ConversationSummary) -> ListedConversation {
    let mut extra = Extra::new();
    extra.insert("app_id".into(), json!(c.app_id));
    extra.insert("app".into(), json!(c.app_name));
    extra.insert("app_mode".into(), json!(c.app_mode));
    extra.insert("mode".into(), json!(c.mode));
    ListedConversation {
        id: c.id.clone(),
        title: Some(c.name.clone()),
        messages: Some(c.message_count.max(0) as u64),
        last_activity: Some(c.last_activity.and_utc()),
        deleted: c.is_deleted,
        problem: None,
        extra,
        scope: None,
    }
}

/// One page, each row handed to `found` as the query (or the scan) yields it.
pub async fn list(
    store: &Store,
    query: &ListQuery,
    found: &mut (dyn FnMut(&ListedConversation) -> ControlFlow<()> + Send),
) -> Result<ListedPage, SourceError> {
    let filter = filter(query)?;
    let limit = (filter.limit - 1) as usize;
    let mut rows = Vec::new();
    let mut last = None;
    let mut more = false;
    let mut stopped = false;
    store
        .stream_conversations(&filter, |c| {
            if rows.len() == limit {
                more = true;
                return;
            }
            let row = listed(&c);
            if !stopped {
                stopped = found(&row).is_break();
            }
            rows.push(row);
            last = Some(c.cursor());
        })
        .await?;
    Ok(ListedPage {
        conversations: rows,
        next: last.filter(|_| more).map(|cursor| format_cursor(&cursor)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_bad_ones_are_named() {
        let cursor = ConversationCursor {
            updated_at: chrono::NaiveDate::from_ymd_opt(2026, 3, 2)
                .unwrap()
                .and_hms_milli_opt(9, 0, 1, 250)
                .unwrap(),
            id: "0b7e0d8e-1c1a-4c55-9f4e-0f3b2b1a0001".into(),
        };
        let text = format_cursor(&cursor);
        assert_eq!(parse_cursor(&text).unwrap(), cursor);
        let err = parse_cursor("yesterday").unwrap_err();
        assert!(err.to_string().contains("`yesterday`"));
    }
}
