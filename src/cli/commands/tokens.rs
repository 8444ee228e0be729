//! `tokens`: counts for a JSON list of chat messages, per message and in total.

use serde::Serialize;

use crate::cli::args::TokensArgs;
use crate::cli::output::{CliError, CliResult, ExitCode, cell, emit, table, thousands};
use crate::cli::{Context, counter_from, read_input};
use crate::memory::model::PromptMessage;
use crate::memory::wire::parse_messages;

#[derive(Serialize)]
struct Line {
    index: usize,
    role: &'static str,
    tokens: u32,
}

#[derive(Serialize)]
struct Report<'a> {
    counter: String,
    messages: Vec<Line>,
    /// The list's count, overhead included: what the counter says of the whole list.
    total: u64,
    list_overhead: u32,
    #[serde(skip)]
    source: &'a [PromptMessage],
}

/// Characters of content shown per row.
const PREVIEW_CHARS: usize = 60;

fn render(r: &Report) -> String {
    let rows: Vec<Vec<String>> = r
        .messages
        .iter()
        .zip(r.source)
        .map(|(line, message)| {
            let text = message.content.text();
            // One character more than is shown, so that `cell` still marks the cut.
            let shown = text
                .char_indices()
                .nth(PREVIEW_CHARS + 1)
                .map_or(&text[..], |(end, _)| &text[..end]);
            vec![
                line.index.to_string(),
                line.role.to_owned(),
                line.tokens.to_string(),
                cell(shown, PREVIEW_CHARS),
            ]
        })
        .collect();
    format!(
        "{}\n\n{}\n\ntotal {} tokens ({} for the list itself)",
        r.counter,
        table(&["#", "role", "tokens", "content"], &rows),
        thousands(r.total),
        r.list_overhead
    )
}

pub fn run(context: &Context, args: &TokensArgs) -> CliResult {
    let messages = {
        let text = read_input(&args.input)?;
        parse_messages(&text)
            .map_err(|e| CliError::failure(format!("{}: {e}", args.input.display())))?
    };
    let (counter, _) = counter_from(context, &args.tokens)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counter = counter.with_threads(threads);
    // Each message is counted once; the list's total is the sum of those counts.
    let counts = counter.count_each(&messages);
    let list_overhead = if messages.is_empty() {
        0
    } else {
        counter.list_overhead()
    };
    let lines: Vec<Line> = messages
        .iter()
        .zip(&counts)
        .enumerate()
        .map(|(index, (message, tokens))| Line {
            index,
            role: message.role.as_str(),
            tokens: if index + 1 == counts.len() {
                tokens.last
            } else {
                tokens.inner
            },
        })
        .collect();
    let report = Report {
        counter: counter.description(),
        total: lines.iter().map(|line| u64::from(line.tokens)).sum::<u64>()
            + u64::from(list_overhead),
        messages: lines,
        list_overhead,
        source: &messages,
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}
