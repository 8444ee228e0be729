//! `tokens`: counts for a JSON list of chat messages, per message and in total.

use serde::Serialize;

use crate::cli::args::TokensArgs;
use crate::cli::output::{CliError, CliResult, ExitCode, cell, emit, table, thousands};
use crate::cli::{Context, counter_from, read_input};
use crate::memory::wire::parse_messages;

#[derive(Serialize)]
struct Line {
    index: usize,
    role: &'static str,
    tokens: u32,
}

#[derive(Serialize)]
struct Report {
    counter: String,
    messages: Vec<Line>,
    /// The list's count, overhead included: what the counter says of the whole list.
    total: u64,
    list_overhead: u32,
    #[serde(skip)]
    previews: Vec<String>,
}

fn render(r: &Report) -> String {
    let rows: Vec<Vec<String>> = r
        .messages
        .iter()
        .zip(&r.previews)
        .map(|(line, preview)| {
            vec![
                line.index.to_string(),
                line.role.to_owned(),
                thousands(line.tokens),
                cell(preview, 60),
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
    let text = read_input(&args.input)?;
    let messages = parse_messages(&text)
        .map_err(|e| CliError::failure(format!("{}: {e}", args.input.display())))?;
    let (counter, _) = counter_from(context, &args.tokens)?;
    let count = messages.len();
    let report = Report {
        counter: counter.description(),
        messages: messages
            .iter()
            .enumerate()
            .map(|(index, message)| {
                let tokens = counter.count_message(message);
                Line {
                    index,
                    role: message.role.as_str(),
                    tokens: if index + 1 == count {
                        tokens.last
                    } else {
                        tokens.inner
                    },
                }
            })
            .collect(),
        total: counter.count_list(&messages),
        list_overhead: if messages.is_empty() {
            0
        } else {
            counter.list_overhead()
        },
        previews: messages
            .iter()
            .map(|m| m.content.text().into_owned())
            .collect(),
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}
