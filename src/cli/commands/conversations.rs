//! `conversations`: the list, most recently active first, one page at a time, the same command
//! and JSON shape for every source. A search that reads every message prints rows as it finds
//! them.

use std::io::Write;
use std::ops::ControlFlow;

use crate::cli::args::ConversationsArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::format::{fit, one_line, pad};
use crate::inspect::document::conversations_of;
use crate::inspect::listing::{self, ConversationList, headers, list_conversations, list_scans};
use crate::sources::conversation::{ListColumn, ListQuery, ListedConversation, SourceOptions};
use crate::store::Store;

/// Widest id and title a row prints; ids are short enough to be whole.
const ID_WIDTH: usize = 36;
const TITLE_WIDTH: usize = 40;
const MESSAGES_WIDTH: usize = 8;
const ACTIVITY_WIDTH: usize = 16;

/// A row's cells, the id, title and the source's columns cut to their widths.
fn cells(c: &ListedConversation, columns: &[ListColumn]) -> Vec<String> {
    let mut widths = vec![ID_WIDTH, TITLE_WIDTH];
    widths.extend(columns.iter().map(|column| column.width));
    listing::cells(c, columns)
        .into_iter()
        .enumerate()
        .map(|(i, cell)| match widths.get(i) {
            Some(width) => one_line(&cell, *width),
            None => cell,
        })
        .collect()
}

/// Why each listed row could not be read whole, in full.
fn problems(rows: &[ListedConversation]) -> String {
    rows.iter()
        .filter_map(|c| Some(format!("\nunreadable: {}: {}", c.id, c.problem.as_deref()?)))
        .collect()
}

fn render(page: &ConversationList, columns: &[ListColumn]) -> String {
    if page.conversations.is_empty() {
        return format!("no {}s", page.noun);
    }
    let rows: Vec<Vec<String>> = page
        .conversations
        .iter()
        .map(|c| cells(c, columns))
        .collect();
    let mut out = table(&headers(columns), &rows);
    if let Some(next) = &page.next {
        out += &format!("\n\nmore: --after {next}");
    }
    out + &problems(&page.conversations)
}

fn query(args: &ConversationsArgs) -> ListQuery {
    ListQuery {
        search: args.search.clone().filter(|s| !s.is_empty()),
        after: args.after.clone(),
        limit: args.limit.max(1),
        options: SourceOptions::default()
            .with("app", args.app.as_ref())
            .with("user", args.user.as_ref())
            .with_switch("include-deleted", args.include_deleted),
    }
}

pub async fn run(context: &Context, args: &ConversationsArgs) -> CliResult {
    let store = context.open().await?;
    let query = query(args);
    let columns = conversations_of(&store)?.list_columns();
    // A search that reads every message prints rows as it finds them.
    if !context.global.json && list_scans(&store, &query)? {
        return print_while_scanning(&store, &query, columns).await;
    }
    let page = list_conversations(&store, &query, &mut |_| ControlFlow::Continue(())).await?;
    emit(context.global.json, &page, |page| render(page, columns))?;
    Ok(ExitCode::Ok)
}

/// Widths of the streamed table: a row is printed before the next is known, so the columns
/// cannot fit their contents as [`render`]'s do.
fn stream_line(cells: &[String], columns: &[ListColumn]) -> String {
    let mut widths = vec![ID_WIDTH, TITLE_WIDTH];
    widths.extend(columns.iter().map(|c| c.width));
    widths.extend([MESSAGES_WIDTH, ACTIVITY_WIDTH]);
    let messages = widths.len() - 2;
    let padded: Vec<String> = cells
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(i, (cell, width))| match i == messages {
            true => format!("{:>width$}", fit(cell, width)),
            false => pad(&fit(cell, width), width),
        })
        .collect();
    padded.join("  ").trim_end().to_owned()
}

/// The page as text, each row printed when the scan finds it.
async fn print_while_scanning(
    store: &Store,
    query: &ListQuery,
    columns: &[ListColumn],
) -> CliResult {
    eprintln!("searching every message: rows print as found (Ctrl-C stops)");
    let mut out = std::io::stdout();
    let mut printed = 0usize;
    let mut write_error = None;
    let header: Vec<String> = headers(columns).into_iter().map(str::to_owned).collect();
    let page = list_conversations(store, query, &mut |row| {
        let mut text = String::new();
        if printed == 0 {
            text += &stream_line(&header, columns);
            text.push('\n');
        }
        text += &stream_line(&cells(row, columns), columns);
        text.push('\n');
        printed += 1;
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                write_error.get_or_insert(e);
                ControlFlow::Break(())
            }
        }
    })
    .await?;
    let mut tail = match (&page.next, page.conversations.is_empty()) {
        (_, true) => format!("no {}s", page.noun),
        (Some(next), false) => format!("\nmore: --after {next}"),
        (None, false) => String::new(),
    };
    tail += &problems(&page.conversations);
    if !tail.is_empty() {
        tail.push('\n');
    }
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
