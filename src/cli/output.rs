//! How commands speak: JSON for scripts, text for people, and exit codes that tell them apart.

use std::io::Write;

use serde::Serialize;

use crate::format::{display_width, pad};

/// Process exit codes, one table for every command, documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok = 0,
    /// `doctor` or `mb check` found problems.
    Findings = 1,
    /// The command line was wrong (clap's own code), or a destructive command lacks `--yes`.
    Usage = 2,
    /// The command failed: bad URL, not a memory database, unknown id, malformed input.
    Failure = 3,
    /// A memory-base session is already syncing (another process or job holds it).
    Conflict = 4,
    /// Stopped by Ctrl-C (128 + SIGINT, what a shell reports for a command it interrupted).
    Interrupted = 130,
}

/// A command's failure: the message an operator reads, a kind a script can match on, and the
/// way out when there is one. Printed on standard error, as one JSON object under `--json`.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: ExitCode,
    /// `usage`, `confirmation-required`, `not-found`, `ambiguous`, `not-in-this-database`,
    /// `config`, `database`, `read-only`, `conflict` or `failure`.
    pub kind: &'static str,
    /// What to do about it.
    pub hint: Option<String>,
    /// What an ambiguous name could mean (or the valid choices), for a script to pick from.
    pub candidates: Vec<String>,
}

impl CliError {
    pub fn new(code: ExitCode, kind: &'static str, message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code,
            kind,
            hint: None,
            candidates: Vec::new(),
        }
    }

    pub fn failure(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Failure, "failure", message)
    }

    /// A command line that cannot run as given (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Usage, "usage", message)
    }

    /// A destructive command run without `--yes` (exit 2): `what` says what it would destroy.
    pub fn needs_yes(what: impl std::fmt::Display) -> Self {
        CliError::new(
            ExitCode::Usage,
            "confirmation-required",
            format!("{what}; pass --yes to confirm"),
        )
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Failure, "not-found", message)
    }

    /// A command for another kind of database than this one (exit 3), as `StoreError::Lacks`.
    pub fn not_in_this_database(message: impl Into<String>) -> Self {
        CliError::new(ExitCode::Failure, "not-in-this-database", message)
            .with_hint("`memscope info` says what this database holds and which commands read it")
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The error as `--json` prints it: `{"error": {"kind", "message", "hint", "candidates",
    /// "exit_code"}}`; `hint` and `candidates` are left out when there are none.
    pub fn to_json(&self) -> serde_json::Value {
        let mut error = serde_json::json!({
            "kind": self.kind,
            "message": self.message,
            "exit_code": self.code as i32,
        });
        if let Some(hint) = &self.hint {
            error["hint"] = hint.clone().into();
        }
        if !self.candidates.is_empty() {
            error["candidates"] = self.candidates.clone().into();
        }
        serde_json::json!({ "error": error })
    }

    /// Prints the error on standard error: one JSON object under `--json`, else
    /// `memscope: message` and the hint on the next line.
    pub fn print(&self, json: bool) {
        let text = if json {
            self.to_json().to_string()
        } else {
            match &self.hint {
                Some(hint) => format!("memscope: {}\n  {hint}", self.message),
                None => format!("memscope: {}", self.message),
            }
        };
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }
}

impl<E: std::error::Error + 'static> From<E> for CliError {
    fn from(error: E) -> Self {
        let message = crate::store::error_chain_text(&error);
        let class = classify(&error);
        CliError {
            message,
            code: class.code,
            kind: class.kind,
            hint: class.hint,
            candidates: class.candidates,
        }
    }
}

/// The way out of an id that names no conversation, whatever the source calls one (a Dify
/// conversation, a Langflow session, a LangGraph thread).
pub const CONVERSATIONS_HINT: &str = crate::sources::conversation::LIST_HINT;

/// How an error is reported: its exit code, its kind, the way out and the ids it could mean.
struct Class {
    code: ExitCode,
    kind: &'static str,
    hint: Option<String>,
    candidates: Vec<String>,
}

impl Class {
    fn new(code: ExitCode, kind: &'static str) -> Class {
        Class {
            code,
            kind,
            hint: None,
            candidates: Vec::new(),
        }
    }

    fn failure() -> Class {
        Class::new(ExitCode::Failure, "failure")
    }

    /// Nothing has this id (exit 3), with what lists the ids there are.
    fn not_found(hint: impl Into<String>) -> Class {
        Class {
            hint: Some(hint.into()),
            ..Class::new(ExitCode::Failure, "not-found")
        }
    }

    /// Several things match what was typed (exit 3): the message and `candidates` name them.
    fn ambiguous(candidates: Vec<String>) -> Class {
        Class {
            hint: Some("give more of the id, or one of the candidates".to_owned()),
            candidates,
            ..Class::new(ExitCode::Failure, "ambiguous")
        }
    }

    fn with_hint(mut self, hint: Option<String>) -> Class {
        self.hint = hint;
        self
    }
}

/// The exit code, kind and way out of an error from the layers below the CLI.
fn classify(error: &(dyn std::error::Error + 'static)) -> Class {
    use crate::inspect::{AmbiguousId, InspectError};
    use crate::sources::conversation::{Refusal, SourceError};
    use crate::store::StoreError;
    use crate::sync::SyncError;
    if let Some(store) = error.downcast_ref::<StoreError>() {
        let kind = match store {
            StoreError::ReadOnly { .. } | StoreError::ForeignWrite { .. } => "read-only",
            StoreError::Lacks { .. } => "not-in-this-database",
            _ => "database",
        };
        return Class::new(ExitCode::Failure, kind).with_hint(store.hint());
    }
    if error.is::<crate::config::ConfigError>() {
        return Class::new(ExitCode::Failure, "config");
    }
    if let Some(ambiguous) = error.downcast_ref::<AmbiguousId>() {
        return Class::ambiguous(ambiguous.candidates.clone());
    }
    if let Some(source) = error.downcast_ref::<SourceError>() {
        return match source {
            SourceError::Store(store) => classify(store),
            SourceError::Refused { kind, hint, .. } => {
                let class = match kind {
                    Refusal::Usage => Class::new(ExitCode::Usage, "usage"),
                    Refusal::NotFound => Class::new(ExitCode::Failure, "not-found"),
                    Refusal::Ambiguous(candidates) => Class::ambiguous(candidates.clone()),
                    Refusal::Config => Class::new(ExitCode::Failure, "config"),
                    Refusal::Database => Class::new(ExitCode::Failure, "database"),
                    Refusal::Failure => Class::failure(),
                };
                match hint {
                    Some(_) => class.with_hint(hint.clone()),
                    None => class,
                }
            }
        };
    }
    if let Some(inspect) = error.downcast_ref::<InspectError>() {
        return match inspect {
            InspectError::Store(store) => classify(store),
            InspectError::Ambiguous(ambiguous) => classify(ambiguous),
            InspectError::Source(source) => classify(source),
            InspectError::NoConversations(_) => {
                Class::new(ExitCode::Failure, "not-in-this-database")
            }
            InspectError::AmbiguousTitle { ids, .. } => Class::ambiguous(ids.clone()),
            InspectError::Unknown(_) => Class::new(ExitCode::Failure, "not-found"),
            InspectError::BadSetting(_) => Class::failure(),
        };
    }
    if let Some(trim) = error.downcast_ref::<crate::inspect::trim::TrimInspectError>() {
        use crate::inspect::trim::TrimInspectError;
        return match trim {
            TrimInspectError::Store(store) => classify(store),
            TrimInspectError::Ambiguous(ambiguous) => classify(ambiguous),
            TrimInspectError::UnknownMemory(_) => {
                Class::not_found("`memscope chat-memory list` lists the chat memories")
            }
            _ => Class::failure(),
        };
    }
    if let Some(base) = error.downcast_ref::<crate::inspect::memory_bases::BaseError>() {
        use crate::inspect::memory_bases::BaseError;
        return match base {
            BaseError::Store(store) => classify(store),
            BaseError::Sync(sync) => classify(sync),
            BaseError::NoFlow(_) => Class::new(ExitCode::Failure, "not-found"),
            _ => Class::failure(),
        };
    }
    if let Some(sync) = error.downcast_ref::<SyncError>() {
        return match sync {
            SyncError::Store(store) => classify(store),
            SyncError::Conflict { .. } => Class::new(ExitCode::Conflict, "conflict"),
            SyncError::Unknown(_) => Class::new(ExitCode::Failure, "not-found"),
            SyncError::NotFound(_) => Class::not_found("`memscope mb list` lists the memory bases"),
            _ => Class::failure(),
        };
    }
    Class::failure()
}

pub type CliResult<T = ExitCode> = Result<T, CliError>;

/// A destructive command's guard: without `--yes` it refuses (exit 2), saying what it would do.
pub fn confirm(yes: bool, what: impl std::fmt::Display) -> CliResult<()> {
    if yes {
        Ok(())
    } else {
        Err(CliError::needs_yes(what))
    }
}

/// Prints `value` as pretty JSON, or as the text `human` renders.
pub fn emit<T: Serialize>(
    json: bool,
    value: &T,
    human: impl FnOnce(&T) -> String,
) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    let text = if json {
        serde_json::to_string_pretty(value).map_err(CliError::from)?
    } else {
        human(value)
    };
    // A closed pipe (`memscope … | head`) is not an error worth a message.
    match writeln!(out, "{}", text.trim_end_matches('\n')) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Right-aligns numbers and pads text into a fixed-width table for terminal output.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| display_width(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(display_width(cell));
        }
    }
    let numeric: Vec<bool> = (0..columns)
        .map(|i| {
            !rows.is_empty()
                && rows.iter().all(|r| {
                    r.get(i)
                        .is_some_and(|c| c.chars().all(|ch| ch.is_ascii_digit() || ch == ','))
                })
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if numeric[i] {
                    format!("{cell:>w$}", w = widths[i])
                } else {
                    pad(cell, widths[i])
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// The line that opens a report on a conversation Dify has deleted; empty for any other.
pub fn deleted_banner(deleted: bool) -> &'static str {
    if deleted {
        "deleted in Dify: its API and console no longer show this conversation; shown as stored\n"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_numbers_right() {
        let t = table(
            &["name", "n"],
            &[vec!["a".into(), "5".into()], vec!["bb".into(), "10".into()]],
        );
        assert_eq!(t, "name   n\na      5\nbb    10");
    }

    #[test]
    fn a_refusal_keeps_its_candidates_and_its_way_out() {
        use crate::sources::conversation::{Refusal, SourceError};
        let candidates = vec!["Support (a1)".to_owned(), "Sales (b2)".to_owned()];
        let err = CliError::from(
            SourceError::new(Refusal::Ambiguous(candidates.clone()), "in several")
                .with_hint("choose one with --flow NAME|ID"),
        );
        assert_eq!((err.kind, err.code), ("ambiguous", ExitCode::Failure));
        let json = err.to_json();
        assert_eq!(json["error"]["candidates"], serde_json::json!(candidates));
        assert_eq!(json["error"]["hint"], "choose one with --flow NAME|ID");
        let unknown = CliError::from(SourceError::not_found("no such session"));
        assert_eq!(unknown.kind, "not-found");
        assert_eq!(unknown.hint.as_deref(), Some(CONVERSATIONS_HINT));
    }

    #[test]
    fn error_chain_is_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let err = CliError::from(io);
        assert_eq!(err.message, "denied");
        assert_eq!(err.code, ExitCode::Failure);
    }
}
