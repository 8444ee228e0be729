//! The settings only some sources take (Langflow's flow, an ADK session's app and agent, an
//! advanced session's branch): each declared by its source with the commands it applies to, and
//! what a command was given, checked against them with one generated refusal.

use std::collections::BTreeMap;

use super::source_error::SourceError;

/// A command whose settings a source may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Conversations,
    History,
    Thread,
    Doctor,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Conversations => "conversations",
            Command::History => "history",
            Command::Thread => "thread",
            Command::Doctor => "doctor",
        }
    }
}

/// A setting one source's commands take: its flag, without the dashes, and what it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub flag: &'static str,
    pub commands: &'static [Command],
    pub help: &'static str,
}

/// The source settings a command was given, by flag (without the dashes), as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceOptions(BTreeMap<&'static str, String>);

impl SourceOptions {
    /// Adds `flag` when it was given.
    pub fn with(mut self, flag: &'static str, value: Option<impl ToString>) -> Self {
        if let Some(value) = value {
            self.0.insert(flag, value.to_string());
        }
        self
    }

    /// Adds `flag` when a switch was set.
    pub fn with_switch(self, flag: &'static str, set: bool) -> Self {
        self.with(flag, set.then_some("true"))
    }

    pub fn get(&self, flag: &str) -> Option<&str> {
        self.0.get(flag).map(String::as_str)
    }

    pub fn is_set(&self, flag: &str) -> bool {
        self.0.contains_key(flag)
    }

    /// `flag` as a number, with the error a user reads when it is not one.
    pub fn number<T: std::str::FromStr>(&self, flag: &str) -> Result<Option<T>, SourceError> {
        self.get(flag)
            .map(|text| {
                text.parse().map_err(|_| {
                    SourceError::usage(format!("--{flag} takes a number, not `{text}`"))
                })
            })
            .transpose()
    }

    /// Only the flags that `settings` take for `command`: what names a conversation (its
    /// scope, its view) handed to a command that needs only some of them.
    pub fn taken_by(mut self, settings: &[Setting], command: Command) -> SourceOptions {
        let takes = flags_for(settings, command);
        self.0.retain(|flag, _| takes.contains(flag));
        self
    }

    /// The flags given that `settings` (a source's) do not take for `command`: each refused
    /// with one message, naming the flags they do take.
    pub fn check(
        &self,
        source_name: &str,
        settings: &[Setting],
        command: Command,
    ) -> Result<(), SourceError> {
        let takes = flags_for(settings, command);
        let refused: Vec<String> = self
            .0
            .keys()
            .filter(|flag| !takes.contains(flag))
            .map(|flag| format!("--{flag}"))
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        let offered = match takes.as_slice() {
            [] => "no setting of its own".to_owned(),
            flags => flags
                .iter()
                .map(|f| format!("--{f}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        Err(SourceError::usage(format!(
            "{} {} not taken by `{}` on {} {source_name} database (it takes {offered})",
            refused.join(", "),
            if refused.len() == 1 { "is" } else { "are" },
            command.name(),
            crate::format::article(source_name),
        )))
    }
}

/// The flags of `settings` that `command` takes.
fn flags_for(settings: &[Setting], command: Command) -> Vec<&'static str> {
    settings
        .iter()
        .filter(|s| s.commands.contains(&command))
        .map(|s| s.flag)
        .collect()
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
