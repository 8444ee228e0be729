//! `memscope` with no command: what the database holds and where to look first.

use std::ops::ControlFlow;

use serde::Serialize;

use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::format::{one_line, thousands};
use crate::inspect::document::conversations_of;
use crate::inspect::holdings::{KeptConversations, LIST_COMMAND, kept_conversations};
use crate::sources::conversation::{ListQuery, SourceOptions};
use crate::store::Part;

/// How many of the most recently active conversations the summary lists.
const RECENT: u32 = 8;

#[derive(Serialize)]
struct Summary {
    database: String,
    kind: String,
    holds: Vec<Part>,
    /// The conversations it keeps, when it keeps any.
    conversations: Option<KeptConversations>,
    read_only: bool,
    tables: Vec<(String, i64)>,
    recent_conversations: Vec<(String, String, i64)>,
}

/// Where to look next: the conversations where the database keeps any, then each other part.
fn next_steps(keeps_conversations: bool, holds: &[Part]) -> String {
    let conversations =
        keeps_conversations.then_some("memscope thread ID, memscope history ID, memscope doctor");
    let parts = holds.iter().filter_map(|part| match part {
        // Listed with the conversations.
        Part::Conversations | Part::Checkpoints => None,
        Part::NodeContexts => Some("memscope nodes ID"),
        Part::ChatMemories => Some("memscope chat-memory list"),
        Part::MemoryBases => Some("memscope mb list, memscope mb check"),
    });
    let steps: Vec<&str> = keeps_conversations
        .then_some(LIST_COMMAND)
        .into_iter()
        .chain(conversations)
        .chain(parts)
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
    let kept = s
        .conversations
        .map_or(String::new(), |kept| format!("\n{}", kept.describe()));
    format!(
        "memscope: {}{}\n{}{kept}\n\n{}{recent}\n\nTry: {}",
        s.database,
        if s.read_only { " (read-only)" } else { "" },
        s.kind,
        table(&["table", "rows"], &tables),
        next_steps(s.conversations.is_some(), &s.holds),
    )
}

pub async fn run(context: &Context) -> CliResult {
    let store = context.open().await?;
    let tables = store.table_counts().await?;
    let profile = store.profile();
    let recent = if profile.has(Part::Conversations) {
        let newest = ListQuery {
            search: None,
            after: None,
            limit: RECENT,
            options: SourceOptions::default(),
        };
        conversations_of(&store)?
            .list(&store, &newest, &mut |_| ControlFlow::Continue(()))
            .await?
            .conversations
    } else {
        Vec::new()
    };
    let conversations = kept_conversations(&store).await?;
    let holds: Vec<Part> = profile.parts().collect();
    // A database whose only holding is its conversations (Langflow's sessions) says so once.
    let kind = if holds.is_empty() && conversations.is_some() {
        format!("This is {}.", profile.describe())
    } else {
        format!(
            "This is {}, holding {}.",
            profile.describe(),
            profile.holdings()
        )
    };
    let summary = Summary {
        database: store.url().to_owned(),
        kind,
        holds,
        conversations,
        read_only: store.is_read_only(),
        tables: tables
            .into_iter()
            .map(|t| (t.table.to_owned(), t.rows))
            .collect(),
        recent_conversations: recent
            .into_iter()
            .map(|c| {
                let messages = c.messages.map_or(0, |n| n as i64);
                (c.id, c.title.unwrap_or_default(), messages)
            })
            .collect(),
    };
    emit(context.global.json, &summary, render)?;
    Ok(ExitCode::Ok)
}
