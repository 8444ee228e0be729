//! `tokens`: counts for a JSON list of chat messages, per message and in total.
//!
//! The list is counted while it is read, a batch of messages at a time, so that memory holds
//! the input text, one batch and a few bytes per message rather than every message at once.

use std::fmt;

use serde::Deserializer as _;
use serde::Serialize;
use serde::de::{Error as _, SeqAccess, Visitor};
use serde_json::Value;

use crate::cli::args::TokensArgs;
use crate::cli::context::{Context, counter_from, read_input};
use crate::cli::output::{CliError, CliResult, ExitCode, emit, table};
use crate::format::{one_line, thousands};
use crate::memory::budget::MessageTokens;
use crate::memory::model::PromptMessage;
use crate::memory::tokens::TokenCounter;
use crate::memory::wire::{parse_message, parse_messages};

#[derive(Serialize)]
struct Line {
    index: usize,
    role: &'static str,
    tokens: u32,
}

#[derive(Serialize)]
struct Report {
    /// The counter in words; the fields after it are its machine form.
    counter: String,
    #[serde(flatten)]
    counter_fields: crate::memory::tokens::CounterFields,
    model: String,
    messages: Vec<Line>,
    /// The list's count, overhead included: what the counter says of the whole list.
    total: u64,
    list_overhead: u32,
    #[serde(skip)]
    previews: Vec<String>,
}

/// Characters of content shown per row.
const PREVIEW_CHARS: usize = 60;
/// A batch is counted once it holds this many bytes of text or this many messages.
const BATCH_BYTES: usize = 4 << 20;
const BATCH_MESSAGES: usize = 1 << 16;

fn preview(message: &PromptMessage) -> String {
    let text = message.content.text();
    // One character more than is shown, so that `cell` still marks the cut.
    let shown = text
        .char_indices()
        .nth(PREVIEW_CHARS + 1)
        .map_or(&text[..], |(end, _)| &text[..end]);
    one_line(shown, PREVIEW_CHARS)
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
                preview.clone(),
            ]
        })
        .collect();
    format!(
        "{}\n\n{}\n\ntotal {} ({} for the list itself)",
        r.counter,
        table(&["#", "role", "tokens", "content"], &rows),
        crate::format::count(r.total, "token"),
        r.list_overhead
    )
}

/// Per-message counts, roles and (for the table) previews, gathered batch by batch.
struct Counted<'c> {
    counter: &'c TokenCounter,
    with_previews: bool,
    batch: Vec<PromptMessage>,
    batch_bytes: usize,
    counts: Vec<MessageTokens>,
    roles: Vec<&'static str>,
    previews: Vec<String>,
}

impl Counted<'_> {
    fn push(&mut self, message: PromptMessage) {
        self.batch_bytes += message.content.text().len();
        self.batch.push(message);
        if self.batch_bytes >= BATCH_BYTES || self.batch.len() >= BATCH_MESSAGES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.counts.extend(self.counter.count_each(&self.batch));
        for message in self.batch.drain(..) {
            self.roles.push(message.role.as_str());
            if self.with_previews {
                self.previews.push(preview(&message));
            }
        }
        self.batch_bytes = 0;
    }
}

impl<'de> Visitor<'de> for &mut Counted<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while let Some(item) = items.next_element::<Value>()? {
            let message = parse_message(&item).map_err(A::Error::custom)?;
            // The JSON value holds a copy of the message's text: gone before counting.
            drop(item);
            self.push(message);
        }
        self.flush();
        Ok(())
    }
}

pub fn run(context: &Context, args: &TokensArgs) -> CliResult {
    let text = read_input(&args.input)?;
    let (counter, model) = counter_from(context, &args.tokens)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counter = counter.with_threads(threads);
    let mut counted = Counted {
        counter: &counter,
        with_previews: !context.global.json,
        batch: Vec::new(),
        batch_bytes: 0,
        counts: Vec::new(),
        roles: Vec::new(),
        previews: Vec::new(),
    };
    let mut reader = serde_json::Deserializer::from_str(&text);
    let streamed = reader
        .deserialize_seq(&mut counted)
        .and_then(|()| reader.end());
    if streamed.is_err() {
        // Whatever went wrong, the whole-list parser words it as every command does.
        let messages = parse_messages(&text)
            .map_err(|e| CliError::failure(format!("{}: {e}", args.input.display())))?;
        counted.batch.clear();
        counted.batch_bytes = 0;
        counted.counts.clear();
        counted.roles.clear();
        counted.previews.clear();
        messages
            .into_iter()
            .for_each(|message| counted.push(message));
        counted.flush();
    }
    drop(text);
    let Counted {
        counts,
        roles,
        previews,
        ..
    } = counted;
    let list_overhead = if counts.is_empty() {
        0
    } else {
        counter.list_overhead()
    };
    // Each message was counted once; the list's total is the sum of those counts.
    let messages: Vec<Line> = counts
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(index, (tokens, role))| Line {
            index,
            role,
            tokens: if index + 1 == counts.len() {
                tokens.last
            } else {
                tokens.inner
            },
        })
        .collect();
    let report = Report {
        counter: counter.description(),
        counter_fields: counter.fields(),
        model,
        total: messages
            .iter()
            .map(|line| u64::from(line.tokens))
            .sum::<u64>()
            + u64::from(list_overhead),
        messages,
        list_overhead,
        previews,
    };
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}
