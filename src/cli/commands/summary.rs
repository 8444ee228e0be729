//! `memscope` with no command: what the database holds and where to look first.

use serde::Serialize;

use crate::cli::Context;
use crate::cli::output::{CliResult, ExitCode, cell, emit, table, thousands};
use crate::store::ConversationFilter;

#[derive(Serialize)]
struct Summary {
    database: String,
    read_only: bool,
    tables: Vec<(String, i64)>,
    recent_conversations: Vec<(String, String, i64)>,
}

fn render(s: &Summary) -> String {
    let tables: Vec<Vec<String>> = s
        .tables
        .iter()
        .map(|(t, n)| vec![t.clone(), thousands(*n)])
        .collect();
    let recent: Vec<Vec<String>> = s
        .recent_conversations
        .iter()
        .map(|(id, name, n)| vec![id.clone(), cell(name, 50), n.to_string()])
        .collect();
    format!(
        "memscope: {}{}\n\n{}\n\nMost recently active conversations:\n{}\n\n\
         Try: memscope thread ID, memscope history ID, memscope doctor, memscope --help",
        s.database,
        if s.read_only { " (read-only)" } else { "" },
        table(&["table", "rows"], &tables),
        table(&["id", "name", "messages"], &recent),
    )
}

pub async fn run(context: &Context) -> CliResult {
    let store = context.open().await?;
    let tables = store.table_counts().await?;
    let recent = store
        .list_conversations(&ConversationFilter {
            limit: 8,
            ..ConversationFilter::default()
        })
        .await?;
    let summary = Summary {
        database: store.url().to_owned(),
        read_only: store.is_read_only(),
        tables: tables
            .into_iter()
            .map(|t| (t.table.to_owned(), t.rows))
            .collect(),
        recent_conversations: recent
            .into_iter()
            .map(|c| (c.id, c.name, c.message_count))
            .collect(),
    };
    emit(context.global.json, &summary, render)?;
    Ok(ExitCode::Ok)
}
