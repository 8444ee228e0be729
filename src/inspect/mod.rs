//! What memscope shows, computed once for the CLI and the TUI alike: loading a conversation
//! from the store, then pure functions that derive its thread, its token budget and its
//! problems from the memory semantics.

pub mod agent_sessions;
pub mod budget_figures;
pub mod chat_memory_nodes;
pub mod diff;
pub mod doctor;
pub mod doctor_finding;
pub mod document;
pub mod export;
pub mod history;
pub mod holdings;
pub mod listing;
pub mod memory_bases;
pub mod nodes;
pub mod search_match;
pub mod sessions;
pub mod stored_trim;
pub mod syncers;
pub mod tree;
pub mod trim;
pub mod turn_trees;

use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};
use crate::sources::conversation::ambiguous_message;
use crate::store::{IdMatch, StoreError};

/// A typed id prefix that several ids start with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", ambiguous_message(what, prefix, candidates))]
pub struct AmbiguousId {
    pub what: &'static str,
    pub prefix: String,
    pub candidates: Vec<String>,
}

impl AmbiguousId {
    /// The one id `found` names; `Ok(None)` when none does.
    pub fn check(
        what: &'static str,
        prefix: &str,
        found: IdMatch,
    ) -> Result<Option<String>, AmbiguousId> {
        match found {
            IdMatch::One(id) => Ok(Some(id)),
            IdMatch::Unknown => Ok(None),
            IdMatch::Ambiguous(candidates) => Err(AmbiguousId {
                what,
                prefix: prefix.trim().to_owned(),
                candidates,
            }),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error(transparent)]
    Ambiguous(#[from] AmbiguousId),
    #[error("{0}")]
    BadSetting(String),
    /// The database keeps no conversations: what it is and holds instead.
    #[error("{0}")]
    NoConversations(String),
    #[error(transparent)]
    Source(#[from] crate::sources::conversation::SourceError),
    /// A node or other name that matched nothing, with the valid ones.
    #[error(transparent)]
    Unknown(#[from] crate::memory::names::Unknown),
    #[error("{title:?} is the title of several nodes ({}); give the id", ids.join(", "))]
    AmbiguousTitle { title: String, ids: Vec<String> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The counter for a model, a counter name and an optional encoding override, as the config and
/// the `--model`, `--counter` and `--encoding` flags name them.
pub fn token_counter(
    model: &str,
    counter: &str,
    encoding: Option<&str>,
) -> Result<TokenCounter, InspectError> {
    let kind: CounterKind = counter.parse().map_err(|_| {
        InspectError::BadSetting(format!(
            "unknown token counter `{counter}` (expected openai, plugin, raw or zero)"
        ))
    })?;
    match encoding.filter(|e| !e.is_empty()) {
        None => Ok(TokenCounter::for_model(kind, model)),
        Some(name) => {
            let encoding: Encoding = name.parse().map_err(|_| {
                InspectError::BadSetting(format!(
                    "unknown encoding `{name}` (expected cl100k_base, o200k_base, p50k_base or r50k_base)"
                ))
            })?;
            Ok(TokenCounter::with_encoding(kind, encoding))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_parsed_with_clear_errors() {
        assert_eq!(
            token_counter("gpt-4o", "zero", None).unwrap().kind(),
            CounterKind::Zero
        );
        assert_eq!(
            token_counter("gpt-4o", "openai", Some("cl100k_base"))
                .unwrap()
                .encoding(),
            Encoding::Cl100kBase
        );
        let err = token_counter("gpt-4o", "magic", None).unwrap_err();
        assert!(err.to_string().contains("`magic`"), "{err}");
        let err = token_counter("gpt-4o", "openai", Some("utf8")).unwrap_err();
        assert!(err.to_string().contains("`utf8`"), "{err}");
    }
}
