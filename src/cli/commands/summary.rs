//! `memscope` with no command: what the database holds and where to look first.

use serde::Serialize;

use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::format::{one_line, thousands};
use crate::sources::dify::queries::ConversationFilter;
use crate::store::Part;

#[derive(Serialize)]
struct Summary {
    database: String,
    kind: String,
    holds: Vec<Part>,
    read_only: bool,
    tables: Vec<(String, i64)>,
    recent_conversations: Vec<(String, String, i64)>,
}

/// Where to look next, for each part the database holds.
fn next_steps(holds: &[Part]) -> String {
    let steps: Vec<&str> = holds
        .iter()
        .map(|part| match part {
            Part::Conversations => "memscope thread ID, memscope history ID, memscope doctor",
            Part::NodeContexts => "memscope nodes ID",
            Part::ChatMemories => "memscope chat-memory list",
            Part::MemoryBases => "memscope mb list, memscope mb check",
            Part::Checkpoints => {
                "memscope conversations, memscope thread THREAD, memscope history THREAD"
            }
        })
        .chain(["memscope --help"])
        .collect();
    steps.join(", ")
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
        .map(|(id, name, n)| vec![id.clone(), one_line(name, 50), n.to_string()])
        .collect();
    let recent = if s.holds.contains(&Part::Conversations) {
        format!(
            "\n\nMost recently active conversations:\n{}",
            table(&["id", "name", "messages"], &recent)
        )
    } else {
        String::new()
    };
    format!(
        "memscope: {}{}\n{}\n\n{}{recent}\n\nTry: {}",
        s.database,
        if s.read_only { " (read-only)" } else { "" },
        s.kind,
        table(&["table", "rows"], &tables),
        next_steps(&s.holds),
    )
}

pub async fn run(context: &Context) -> CliResult {
    let store = context.open().await?;
    let tables = store.table_counts().await?;
    let profile = store.profile();
    let recent = if profile.has(Part::Conversations) {
        store
            .list_conversations(&ConversationFilter {
                limit: 8,
                ..ConversationFilter::default()
            })
            .await?
    } else {
        Vec::new()
    };
    let summary = Summary {
        database: store.url().to_owned(),
        kind: format!(
            "This is {}, holding {}.",
            profile.describe(),
            profile.holdings()
        ),
        holds: profile.parts().collect(),
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
