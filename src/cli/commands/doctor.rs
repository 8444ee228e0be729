//! `doctor`: scan a database for memory problems; exit 1 when there are any.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cli::args::DoctorArgs;
use crate::cli::context::{Context, counter_from};
use crate::cli::output::{CliResult, ExitCode, emit};
use crate::format::{count, thousands};
use crate::inspect::doctor::{DoctorReport, DoctorSettings, Finding, scanned_unit};
use crate::inspect::document::{DocumentHead, check_settings, conversations_of};
use crate::sources::conversation::{Command, SourceOptions};

#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    head: DocumentHead,
    /// What the database calls a conversation ("thread" on a LangGraph database).
    #[serde(skip)]
    noun: &'static str,
    conversations: usize,
    messages: usize,
    /// Conversations deleted in Dify, not scanned (Dify no longer shows or uses them).
    deleted_skipped: i64,
    /// Messages whose workflow run Dify archived: not findings.
    archived_runs: i64,
    budget: i64,
    counter: String,
    /// Findings per kind, all counted.
    counts: BTreeMap<&'static str, usize>,
    /// At most `--max-per-kind` of each kind.
    findings: Vec<Finding>,
    /// Why Dify's files were not checked (no object storage configured); `null` when they were
    /// or the database has none.
    files_not_checked: Option<&'static str>,
}

/// Why a Dify database's files were not checked, and how to have them checked.
const NO_STORAGE: &str = "no object storage is configured, so uploaded files, node memory files \
                          and offloaded outputs were not checked; pass --dify-env with Dify's \
                          settings, or set [storage] in the config file";

fn render(r: &Report) -> String {
    let mut out = format!(
        "scanned {}, {} (budget {} tokens, counter {})\n",
        count(r.conversations as u64, r.noun),
        count(r.messages as u64, "message"),
        thousands(r.budget),
        r.counter
    );
    if r.deleted_skipped > 0 {
        out.push_str(&format!(
            "{} deleted {} not scanned (Dify no longer shows or uses them)\n",
            thousands(i128::from(r.deleted_skipped)),
            crate::format::noun(r.deleted_skipped as u64, "conversation")
        ));
    }
    if r.archived_runs > 0 {
        out.push_str(&format!(
            "{} {} a workflow run Dify archived (not a missing run)\n",
            thousands(i128::from(r.archived_runs)),
            if r.archived_runs == 1 {
                "message points to"
            } else {
                "messages point to"
            }
        ));
    }
    if let Some(why) = r.files_not_checked {
        out.push_str(&format!("files not checked: {why}\n"));
    }
    if r.counts.is_empty() {
        out.push_str("no findings\n");
        return out;
    }
    for (kind, count) in &r.counts {
        out.push_str(&format!("\n{kind}: {count}\n"));
        for finding in r.findings.iter().filter(|f| f.kind() == *kind) {
            out.push_str(&format!("  {}\n", finding.describe()));
        }
        let shown = r.findings.iter().filter(|f| f.kind() == *kind).count();
        if shown < *count {
            out.push_str(&format!("  … and {} more\n", count - shown));
        }
    }
    out
}

fn limit_per_kind(
    report: DoctorReport,
    max_per_kind: usize,
) -> (BTreeMap<&'static str, usize>, Vec<Finding>) {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    for finding in report.findings {
        let seen = counts.entry(finding.kind()).or_default();
        *seen += 1;
        if *seen <= max_per_kind {
            kept.push(finding);
        }
    }
    (counts, kept)
}

pub async fn run(context: &Context, args: &DoctorArgs) -> CliResult {
    let store = context.open().await?;
    let (counter, _) = counter_from(context, &args.tokens)?;
    let settings = DoctorSettings {
        counter,
        budget: args.budget.unwrap_or(context.resolved.config.tokens.budget),
        storage: context.files_storage(&store)?,
        keep_last: usize::try_from(args.keep_last).unwrap_or(usize::MAX),
        options: SourceOptions::default().with("limit", args.limit),
    };
    check_settings(&store, &settings.options, Command::Doctor)?;
    let report = if std::io::stderr().is_terminal() {
        let total = crate::inspect::doctor::messages_to_scan(&store).await?;
        let mut bar = ProgressLine::new(total, scanned_unit(&store));
        let report =
            crate::inspect::doctor::run_with_progress(&store, &settings, |n| bar.show(n)).await;
        bar.clear();
        report?
    } else {
        crate::inspect::doctor::run(&store, &settings).await?
    };
    let (conversations, messages, deleted_skipped, archived_runs) = (
        report.conversations,
        report.messages,
        report.deleted_skipped,
        report.archived_runs,
    );
    let files_not_checked = report.files_not_checked.then_some(NO_STORAGE);
    let (counts, findings) = limit_per_kind(report, args.max_per_kind);
    let any = !counts.is_empty();
    let report = Report {
        head: DocumentHead::of(&store),
        noun: conversations_of(&store)?.noun(),
        conversations,
        messages,
        deleted_skipped,
        archived_runs,
        budget: settings.budget,
        counter: settings.counter.description(),
        counts,
        findings,
        files_not_checked,
    };
    emit(context.global.json, &report, render)?;
    Ok(if any {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}

/// A one-line progress bar on stderr (a terminal), redrawn at most ten times a second.
struct ProgressLine {
    total: u64,
    /// What is counted, singular: "message", or "checkpoint" on a LangGraph database.
    rows: &'static str,
    drawn: Option<Instant>,
}

impl ProgressLine {
    const INTERVAL: Duration = Duration::from_millis(100);
    const WIDTH: u64 = 30;

    fn new(total: u64, rows: &'static str) -> Self {
        ProgressLine {
            total,
            rows,
            drawn: None,
        }
    }

    fn show(&mut self, scanned: u64) {
        if self.drawn.is_some_and(|at| at.elapsed() < Self::INTERVAL) {
            return;
        }
        self.drawn = Some(Instant::now());
        let line = progress_text(self.rows, scanned, self.total, Self::WIDTH);
        let mut err = std::io::stderr().lock();
        // A progress line that cannot be drawn is no reason to stop the scan.
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.drawn.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

/// `scanning messages [#####     ] 45%  450,000 / 1,000,000` (Ctrl-C cancels).
fn progress_text(rows: &str, scanned: u64, total: u64, width: u64) -> String {
    let total = total.max(scanned).max(1);
    let filled = (scanned * width / total) as usize;
    format!(
        "scanning {rows}s [{}{}] {:>3}%  {} / {}  (Ctrl-C cancels)",
        "#".repeat(filled),
        " ".repeat(width as usize - filled),
        scanned * 100 / total,
        thousands(scanned as i128),
        thousands(total as i128)
    )
}

#[cfg(test)]
mod tests {
    use super::progress_text;

    #[test]
    fn the_progress_bar_fills_with_the_scan() {
        assert_eq!(
            progress_text("message", 0, 1_000, 10),
            "scanning messages [          ]   0%  0 / 1,000  (Ctrl-C cancels)"
        );
        assert_eq!(
            progress_text("message", 450, 1_000, 10),
            "scanning messages [####      ]  45%  450 / 1,000  (Ctrl-C cancels)"
        );
        // Rows added since the count: the bar stays full instead of overflowing.
        assert_eq!(
            progress_text("checkpoint", 1_200, 1_000, 10),
            "scanning checkpoints [##########] 100%  1,200 / 1,200  (Ctrl-C cancels)"
        );
    }
}
