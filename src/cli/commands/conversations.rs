//! `conversations`: the list, most recently active first, one keyset page at a time.

use chrono::NaiveDateTime;
use serde::Serialize;

use super::page::Page;
use crate::cli::args::ConversationsArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, emit};
use crate::format::{one_line, thousands};
use crate::sources::dify::queries::{ConversationCursor, ConversationFilter, ConversationSummary};
use crate::store::{ConversationShape, Part};

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

fn render(page: &Page<Row>) -> String {
    page.render(
        &["id", "name", "app", "mode", "messages", "last activity"],
        |c| {
            let name = if c.deleted {
                format!("[deleted] {}", c.name)
            } else {
                c.name.to_owned()
            };
            vec![
                c.id.to_owned(),
                one_line(&name, 40),
                one_line(c.app_name.unwrap_or("(missing app)"), 24),
                c.mode.to_owned(),
                thousands(c.messages),
                c.last_activity.format("%Y-%m-%d %H:%M").to_string(),
            ]
        },
    )
}

pub async fn run(context: &Context, args: &ConversationsArgs) -> CliResult {
    let store = context.open().await?;
    if store.profile().capabilities().conversations == ConversationShape::FlowSessions {
        return super::langflow::conversations(context, &store, args).await;
    }
    if store.profile().capabilities().conversations == ConversationShape::CheckpointThreads {
        return super::langgraph::conversations(context, &store, args).await;
    }
    store.require(Part::Conversations)?;
    let limit = i64::from(args.limit.max(1));
    let filter = ConversationFilter {
        app_id: args.app.clone(),
        search: args.search.clone().filter(|s| !s.is_empty()),
        // One row more than asked tells whether another page exists.
        limit: limit + 1,
        after: args.after.as_deref().map(parse_cursor).transpose()?,
        include_deleted: args.include_deleted,
    };
    // A search without an index reads every message: rows print as the scan finds them.
    if !context.global.json && store.search_path(filter.search.as_deref()).is_scan() {
        return print_while_scanning(&store, &filter, limit).await;
    }
    let mut conversations = store.list_conversations(&filter).await?;
    let next = (conversations.len() as i64 > limit).then(|| {
        conversations.truncate(limit as usize);
        format_cursor(&conversations[conversations.len() - 1].cursor())
    });
    let rows: Vec<Row> = conversations.iter().map(row).collect();
    let page = Page {
        conversations: &rows,
        next,
    };
    emit(context.global.json, &page, render)?;
    Ok(ExitCode::Ok)
}

/// Widths of the streamed table: a row is printed before the next is known, so the columns
/// cannot fit their contents as [`render`]'s do.
const STREAM_WIDTHS: [usize; 6] = [36, 40, 24, 13, 8, 16];

fn stream_line(cells: [&str; 6]) -> String {
    let padded: Vec<String> = cells
        .iter()
        .zip(STREAM_WIDTHS)
        .enumerate()
        .map(|(i, (cell, w))| {
            if i == 4 {
                format!("{cell:>w$}")
            } else {
                format!("{cell:<w$}")
            }
        })
        .collect();
    padded.join("  ").trim_end().to_owned()
}

fn streamed_row(c: &ConversationSummary) -> String {
    let name = if c.is_deleted {
        format!("[deleted] {}", c.name)
    } else {
        c.name.clone()
    };
    stream_line([
        &c.id,
        &one_line(&name, 40),
        &one_line(c.app_name.as_deref().unwrap_or("(missing app)"), 24),
        &one_line(&c.mode, 13),
        &thousands(c.message_count),
        &c.last_activity.format("%Y-%m-%d %H:%M").to_string(),
    ])
}

/// The page as text, each row printed when the scan finds it. The row past `limit` is not
/// printed: it only says that another page exists.
async fn print_while_scanning(
    store: &crate::store::Store,
    filter: &ConversationFilter,
    limit: i64,
) -> CliResult {
    use std::io::Write;
    eprintln!("no text index in this database: scanning every message, rows print as found");
    let mut out = std::io::stdout();
    let mut printed = 0i64;
    let mut last = None;
    let mut more = false;
    let mut write_error = None;
    store
        .stream_conversations(filter, |c| {
            if printed == limit {
                more = true;
                return;
            }
            let mut text = String::new();
            if printed == 0 {
                text.push_str(&stream_line([
                    "id",
                    "name",
                    "app",
                    "mode",
                    "messages",
                    "last activity",
                ]));
                text.push('\n');
            }
            text.push_str(&streamed_row(&c));
            text.push('\n');
            printed += 1;
            last = Some(c.cursor());
            if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                write_error.get_or_insert(e);
            }
        })
        .await?;
    let tail = match (&last, more) {
        (None, _) => "no conversations\n".to_owned(),
        (Some(cursor), true) => format!("\nmore: --after {}\n", format_cursor(cursor)),
        (Some(_), false) => String::new(),
    };
    let written = match write_error {
        Some(e) => Err(e),
        None => out.write_all(tail.as_bytes()),
    };
    match written {
        // A closed pipe (`memscope … | head`) is not an error worth a message.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::Ok),
    }
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
