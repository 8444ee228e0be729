//! Why a trim cannot be planned: options LangChain rejects, names that do not parse, a bad
//! policy.

/// What `trim_messages` and policies refuse, in LangChain's words where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrimError {
    #[error("start_on parameter is only valid with strategy='last'")]
    StartOnWithFirst,
    #[error("include_system parameter is only valid with strategy='last'")]
    IncludeSystemWithFirst,
    #[error("Unrecognized strategy='{0}'. Supported strategies are 'last' and 'first'.")]
    UnknownStrategy(String),
    #[error(
        "'token_counter' expected to be a model that implements 'get_num_tokens_from_messages()' \
         or a function. Received {0:?} (use messages, openai, plugin, raw or zero)"
    )]
    UnknownCounter(String),
    #[error("unknown message type {0:?} (expected system, human/user, ai/assistant or tool)")]
    UnknownMessageType(String),
    #[error("{counts} counts given for {messages} messages")]
    CountsMismatch { messages: usize, counts: usize },
    #[error("bad chat memory policy: {0}")]
    BadPolicy(String),
}

/// Message types as `start_on`/`end_on` name them: `human`/`user`, `ai`/`assistant`,
/// `system`, `tool`.
pub fn parse_message_types(names: &[String]) -> Result<Vec<crate::memory::model::Role>, TrimError> {
    names
        .iter()
        .map(|name| {
            crate::memory::model::Role::parse(name)
                .ok_or_else(|| TrimError::UnknownMessageType(name.clone()))
        })
        .collect()
}
