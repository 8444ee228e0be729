//! `conversations`: the list, most recently active first, one keyset page at a time.

use chrono::NaiveDateTime;
use serde::Serialize;

use crate::cli::Context;
use crate::cli::args::ConversationsArgs;
use crate::cli::output::{CliError, CliResult, ExitCode, cell, emit, table, thousands};
use crate::store::{ConversationCursor, ConversationFilter, ConversationSummary, Part};

const CURSOR_TIME: &str = "%Y-%m-%dT%H:%M:%S%.f";

/// A page cursor as the user passes it back: `<updated_at>~<id>`.
fn format_cursor(cursor: &ConversationCursor) -> String {
    format!("{}~{}", cursor.updated_at.format(CURSOR_TIME), cursor.id)
}

fn parse_cursor(text: &str) -> Result<ConversationCursor, CliError> {
    let bad = || {
        CliError::failure(format!(
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

#[derive(Serialize)]
struct Row<'a> {
    id: &'a str,
    name: &'a str,
    app_id: &'a str,
    app_name: Option<&'a str>,
    app_mode: Option<&'a str>,
    mode: &'a str,
    messages: i64,
    last_activity: NaiveDateTime,
    /// Deleted in Dify; listed only with `--include-deleted`.
    deleted: bool,
}

#[derive(Serialize)]
struct Page<'a> {
    conversations: Vec<Row<'a>>,
    /// Pass as `--after` for the next page; `null` on the last page.
    next: Option<String>,
}

fn row(c: &ConversationSummary) -> Row<'_> {
    Row {
        id: &c.id,
        name: &c.name,
        app_id: &c.app_id,
        app_name: c.app_name.as_deref(),
        app_mode: c.app_mode.as_deref(),
        mode: &c.mode,
        messages: c.message_count,
        last_activity: c.last_activity,
        deleted: c.is_deleted,
    }
}

fn render(page: &Page) -> String {
    if page.conversations.is_empty() {
        return "no conversations".to_owned();
    }
    let rows: Vec<Vec<String>> = page
        .conversations
        .iter()
        .map(|c| {
            let name = if c.deleted {
                format!("[deleted] {}", c.name)
            } else {
                c.name.to_owned()
            };
            vec![
                c.id.to_owned(),
                cell(&name, 40),
                cell(c.app_name.unwrap_or("(missing app)"), 24),
                c.mode.to_owned(),
                thousands(c.messages),
                c.last_activity.format("%Y-%m-%d %H:%M").to_string(),
            ]
        })
        .collect();
    let mut out = table(
        &["id", "name", "app", "mode", "messages", "last activity"],
        &rows,
    );
    if let Some(next) = &page.next {
        out.push_str(&format!("\n\nmore: --after {next}"));
    }
    out
}

pub async fn run(context: &Context, args: &ConversationsArgs) -> CliResult {
    let store = context.open_for(Part::Conversations).await?;
    let limit = i64::from(args.limit.max(1));
    let filter = ConversationFilter {
        app_id: args.app.clone(),
        search: args.search.clone().filter(|s| !s.is_empty()),
        // One row more than asked tells whether another page exists.
        limit: limit + 1,
        after: args.after.as_deref().map(parse_cursor).transpose()?,
        include_deleted: args.include_deleted,
    };
    let mut conversations = store.list_conversations(&filter).await?;
    let next = (conversations.len() as i64 > limit).then(|| {
        conversations.truncate(limit as usize);
        format_cursor(&conversations[conversations.len() - 1].cursor())
    });
    let page = Page {
        conversations: conversations.iter().map(row).collect(),
        next,
    };
    emit(context.global.json, &page, render)?;
    Ok(ExitCode::Ok)
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
        assert!(err.message.contains("`yesterday`"));
    }
}
