//! The counters Dify puts behind `get_llm_num_tokens`, per message, exact when summed.
//!
//! Reference §6. Each counter splits its count of a list into per-message [`MessageTokens`]
//! plus a per-list overhead, so that [`SuffixTotals`](crate::memory::budget::SuffixTotals)
//! gives the exact count of every suffix the pruning loop looks at.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::memory::budget::MessageTokens;
use crate::memory::model::{Content, ContentPart, PromptMessage, Role, ToolCall};

use super::encoding::{Encoding, PARALLEL_TEXT_BYTES, base_model, encoding_for_model};
use super::error::TokensError;
use super::parallel::map_in_place;
use super::python_repr::push_str_repr;
use super::split::last_safe_cut;

/// Messages a thread takes at a time in [`TokenCounter::count_each`].
const MESSAGES_PER_BATCH: usize = 256;

/// Which of Dify's counting behaviours to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CounterKind {
    /// The classic OpenAI formula (Dify ≤ 0.15 core, and the OpenAI plugin until 2026). Dify
    /// raises `NotImplementedError` for model families it does not list; this counts them with
    /// the standard 3 per message and +1 per name instead.
    OpenAi,
    /// The OpenAI plugin's 2026 estimate: the list's text joined by newlines, plus 3 per
    /// message and 3 per list.
    Plugin,
    /// Each message's text alone (text parts concatenated; roles, names, tool calls and files
    /// count nothing), with no per-message or per-list overhead. This is the core of what
    /// providers on Dify's GPT-2 fallback count: each wraps the text in its own prompt format
    /// (role prefixes, separators) before counting, so their counts are this plus a
    /// provider-specific overhead. An unknown model gets that fallback's tokenizer, r50k_base.
    Raw,
    /// Always 0: Dify 1.x's default (`PLUGIN_BASED_TOKEN_COUNTING_ENABLED=false`), under which
    /// token pruning never removes anything.
    Zero,
}

impl CounterKind {
    pub const ALL: [CounterKind; 4] = [
        CounterKind::OpenAi,
        CounterKind::Plugin,
        CounterKind::Raw,
        CounterKind::Zero,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CounterKind::OpenAi => "openai",
            CounterKind::Plugin => "plugin",
            CounterKind::Raw => "raw",
            CounterKind::Zero => "zero",
        }
    }

    /// The encoding used for a model tiktoken does not know: cl100k_base for the classic
    /// formula and o200k_base for the plugin, as Dify does; GPT-2's r50k_base for `raw`, the
    /// tokenizer of Dify's fallback. `zero` tokenizes nothing.
    pub fn fallback_encoding(self) -> Encoding {
        match self {
            CounterKind::OpenAi => Encoding::Cl100kBase,
            CounterKind::Plugin | CounterKind::Zero => Encoding::O200kBase,
            CounterKind::Raw => Encoding::R50kBase,
        }
    }
}

impl fmt::Display for CounterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CounterKind {
    type Err = TokensError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CounterKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| TokensError::UnknownCounter(s.to_owned()))
    }
}

/// The classic formula's per-message constants (OpenAI's ChatML accounting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChatMlOverhead {
    pub per_message: u8,
    /// Added for each `name` key, on top of the name's own tokens.
    pub per_name: i8,
}

impl ChatMlOverhead {
    /// Every model but one. Dify raises `NotImplementedError` for model families it does not
    /// list (anything but gpt-3.5-turbo, gpt-4* and o1/o3/o4); we count them with these.
    pub const STANDARD: ChatMlOverhead = ChatMlOverhead {
        per_message: 3,
        per_name: 1,
    };
    /// `gpt-3.5-turbo-0301`, where a name replaces the role.
    pub const GPT_35_TURBO_0301: ChatMlOverhead = ChatMlOverhead {
        per_message: 4,
        per_name: -1,
    };

    pub fn for_model(model: &str) -> ChatMlOverhead {
        if base_model(model).starts_with("gpt-3.5-turbo-0301") {
            ChatMlOverhead::GPT_35_TURBO_0301
        } else {
            ChatMlOverhead::STANDARD
        }
    }
}

/// Everything a per-message count depends on: two counters with the same id count every
/// message the same, which is what [`CountCache`](super::CountCache) keys on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterId {
    pub kind: CounterKind,
    pub encoding: Encoding,
    /// Used by [`CounterKind::OpenAi`] only; [`ChatMlOverhead::STANDARD`] for the others.
    pub overhead: ChatMlOverhead,
}

/// Added once per non-empty list by the classic formula and the plugin ("every reply is
/// primed with `<im_start>assistant`").
const REPLY_PRIMING: u32 = 3;
/// The plugin's fixed `3 * len(messages)`.
const PLUGIN_PER_MESSAGE: u32 = 3;

/// A counter: a [`CounterKind`] bound to an encoding and the model's constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCounter {
    id: CounterId,
    model: Option<String>,
    fallback: bool,
    /// Threads a count may use; counts are the same for any number.
    threads: usize,
}

/// A counter as a script reads it: each part a field of its own, beside the sentence
/// [`TokenCounter::description`] gives people.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CounterFields {
    /// `openai`, `plugin`, `raw` or `zero`.
    pub counter_kind: &'static str,
    pub encoding: String,
    /// The encoding is the counter's fallback: tiktoken does not know the model.
    pub encoding_is_fallback: bool,
}

impl TokenCounter {
    pub fn fields(&self) -> CounterFields {
        CounterFields {
            counter_kind: self.id.kind.name(),
            encoding: self.id.encoding.to_string(),
            encoding_is_fallback: self.fallback,
        }
    }

    /// The counter Dify would use for `model`, falling back to the kind's
    /// [`fallback_encoding`](CounterKind::fallback_encoding) when tiktoken does not know it.
    pub fn for_model(kind: CounterKind, model: &str) -> TokenCounter {
        let known = encoding_for_model(model);
        let overhead = match kind {
            CounterKind::OpenAi => ChatMlOverhead::for_model(model),
            _ => ChatMlOverhead::STANDARD,
        };
        TokenCounter {
            id: CounterId {
                kind,
                encoding: known.unwrap_or(kind.fallback_encoding()),
                overhead,
            },
            model: Some(model.to_owned()),
            fallback: known.is_none() && kind != CounterKind::Zero,
            threads: 1,
        }
    }

    /// A counter for an explicit encoding, with the standard classic constants.
    pub fn with_encoding(kind: CounterKind, encoding: Encoding) -> TokenCounter {
        TokenCounter {
            id: CounterId {
                kind,
                encoding,
                overhead: ChatMlOverhead::STANDARD,
            },
            model: None,
            fallback: false,
            threads: 1,
        }
    }

    /// The same counter, counting on up to `threads` threads where it helps: many messages,
    /// or a text of a megabyte or more. One thread (the default) never spawns any.
    pub fn with_threads(mut self, threads: usize) -> TokenCounter {
        self.threads = threads.max(1);
        self
    }

    /// [`count_message`](Self::count_message) of every message, each counted once, spread
    /// over the counter's threads.
    pub fn count_each(&self, messages: &[PromptMessage]) -> Vec<MessageTokens> {
        let mut counts = vec![None; messages.len()];
        let single = TokenCounter {
            threads: 1,
            ..self.clone()
        };
        // Long messages are left out here and counted next, each over all the threads.
        map_in_place(
            messages,
            &mut counts,
            self.threads,
            MESSAGES_PER_BATCH,
            |message| {
                (self.threads < 2 || text_bytes(message) < PARALLEL_TEXT_BYTES)
                    .then(|| single.count_message(message))
            },
        );
        counts
            .into_iter()
            .zip(messages)
            .map(|(count, message)| count.unwrap_or_else(|| self.count_message(message)))
            .collect()
    }

    /// Tokens of `text` in this counter's encoding, on the counter's threads.
    fn encoded(&self, text: &str) -> usize {
        self.id.encoding.count_on(text, self.threads)
    }

    pub fn id(&self) -> CounterId {
        self.id
    }

    pub fn kind(&self) -> CounterKind {
        self.id.kind
    }

    pub fn encoding(&self) -> Encoding {
        self.id.encoding
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Whether the model was unknown and the kind's fallback encoding is in use.
    pub fn used_fallback(&self) -> bool {
        self.fallback
    }

    /// Tokens of `text` in this counter's encoding; 0 for [`CounterKind::Zero`].
    pub fn count_text(&self, text: &str) -> usize {
        match self.id.kind {
            CounterKind::Zero => 0,
            _ => self.encoded(text),
        }
    }

    /// This message's share of a list count; see [`MessageTokens`].
    pub fn count_message(&self, message: &PromptMessage) -> MessageTokens {
        match self.id.kind {
            CounterKind::OpenAi => MessageTokens::flat(self.classic_tokens(message)),
            CounterKind::Plugin => self.plugin_tokens(message),
            CounterKind::Raw => {
                MessageTokens::flat(saturate(self.encoded(&message.content.text())))
            }
            CounterKind::Zero => MessageTokens::default(),
        }
    }

    /// Tokens a non-empty list costs beyond its messages.
    pub fn list_overhead(&self) -> u32 {
        match self.id.kind {
            CounterKind::OpenAi | CounterKind::Plugin => REPLY_PRIMING,
            CounterKind::Raw | CounterKind::Zero => 0,
        }
    }

    /// The count of the whole list, as the counter would give it; 0 for an empty list (Dify
    /// never counts one: memory returns `[]` before counting).
    pub fn count_list(&self, messages: &[PromptMessage]) -> u64 {
        let Some((last, earlier)) = messages.split_last() else {
            return 0;
        };
        let inner: u64 = earlier
            .iter()
            .map(|message| u64::from(self.count_message(message).inner))
            .sum();
        inner + u64::from(self.count_message(last).last) + u64::from(self.list_overhead())
    }

    /// One line for an operator: what is counted, with which encoding, and any fallback.
    pub fn description(&self) -> String {
        let encoding = match (&self.model, self.fallback) {
            (Some(model), true) => format!(
                "{} (fallback: tiktoken does not know model {model:?})",
                self.id.encoding
            ),
            (Some(model), false) => format!("{} (model {model})", self.id.encoding),
            (None, _) => self.id.encoding.to_string(),
        };
        let overhead = self.id.overhead;
        match self.id.kind {
            CounterKind::OpenAi => format!(
                "openai: classic OpenAI formula, {encoding}; {} per message, {:+} per name, \
                 {REPLY_PRIMING} per list",
                overhead.per_message, overhead.per_name
            ),
            CounterKind::Plugin => format!(
                "plugin: OpenAI plugin 2026 estimate, {encoding}; newline-joined text, \
                 {PLUGIN_PER_MESSAGE} per message, {REPLY_PRIMING} per list"
            ),
            CounterKind::Raw => format!("raw: message text only, {encoding}; no overhead"),
            CounterKind::Zero => {
                "zero: token counting disabled (Dify 1.x default); nothing is ever pruned".into()
            }
        }
    }

    /// Dify's `_num_tokens_from_messages` for one message. The message becomes its OpenAI dict
    /// (`role`, `content`, then `function_call` and `name` when present) and every value is
    /// counted as `str(value)`:
    /// - A tool message is `{"role": "function", "content", "name": tool_call_id}`; a message
    ///   name, when set, replaces that `name`.
    /// - An assistant message with tool calls gets `function_call = {name, arguments}` of the
    ///   first call only, counted as Python's `str()` of that dict. Dify's `tool_calls` branch
    ///   (which counts keys twice) never runs: the dict has no `tool_calls` key, and a list
    ///   value would have been flattened to its text parts (`""`) before that branch anyway.
    /// - List content: only user messages turn their parts into `{"type": "text"}` dicts, so
    ///   only they count their text parts; other roles keep part objects, which the text filter
    ///   skips, so their list content counts `""`. Images and files count 0 everywhere.
    fn classic_tokens(&self, message: &PromptMessage) -> u32 {
        let count = |text: &str| i64::try_from(self.encoded(text)).unwrap_or(i64::MAX);
        let (role, name) = match message.role {
            Role::Tool => (
                "function",
                Some(
                    non_empty(&message.name)
                        .unwrap_or_else(|| message.tool_call_id.as_deref().unwrap_or("")),
                ),
            ),
            role => (role.as_str(), non_empty(&message.name)),
        };
        let mut tokens = i64::from(self.id.overhead.per_message)
            + count(role)
            + count(&classic_content(message));
        if message.role == Role::Assistant {
            if let Some(call) = message.tool_calls.first() {
                tokens += count(&function_call_str(call));
            }
        }
        if let Some(name) = name {
            tokens += count(name) + i64::from(self.id.overhead.per_name);
        }
        u32::try_from(tokens.max(0)).unwrap_or(u32::MAX)
    }

    /// The plugin's `len(enc("\n".join(parts)))`, split per message.
    ///
    /// A message's segment is its parts joined by `"\n"`; `last` counts the segment alone and
    /// `inner` counts it with the `"\n"` that follows when another message comes next. Counting
    /// `segment + "\n"` alone is not exact: under the GPT-2 pattern (p50k, r50k) a trailing
    /// whitespace run is one piece at the end of a text (`\s+(?!\S)`) but splits before a
    /// letter, so e.g. `"x\n" + "\n"` is 1 token at the end and 2 before more text. What follows
    /// is always a letter, though: the next segment starts with its role name. So `inner`
    /// counts the segment followed by `"\n"` and one probe letter, minus the probe's token.
    /// This is exact for all four encodings because no pattern matches across a newline
    /// followed by a letter, and the only look-ahead (`(?!\S)`) reads one character, which is
    /// a letter in both cases.
    ///
    /// The segment is tokenized once, not twice: only its tail after the last safe cut (see
    /// `split.rs`; usually the last word) is counted both alone and before the probe, since
    /// the count of what comes before the cut cannot depend on what follows it.
    fn plugin_tokens(&self, message: &PromptMessage) -> MessageTokens {
        const NEXT_SEGMENT_PROBE: &str = "\na";
        const LETTER_TOKENS: usize = 1;

        let mut text = plugin_segment(message);
        let segment_len = text.len();
        let cut = last_safe_cut(&text);
        text.push_str(NEXT_SEGMENT_PROBE);
        let head = self.encoded(&text[..cut]);
        let last = head + self.encoded(&text[cut..segment_len]);
        let inner = head + self.encoded(&text[cut..]) - LETTER_TOKENS;
        MessageTokens {
            inner: saturate(inner).saturating_add(PLUGIN_PER_MESSAGE),
            last: saturate(last).saturating_add(PLUGIN_PER_MESSAGE),
        }
    }
}

impl fmt::Display for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description())
    }
}

fn saturate(tokens: usize) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// Python's truthiness test on an optional string: `None` and `""` are both "no name".
fn non_empty(name: &Option<String>) -> Option<&str> {
    name.as_deref().filter(|name| !name.is_empty())
}

fn classic_content(message: &PromptMessage) -> Cow<'_, str> {
    match (&message.content, message.role) {
        (Content::Text(text), _) => Cow::Borrowed(text),
        (Content::Parts(_), Role::User) => message.content.text(),
        (Content::Parts(_), _) => Cow::Borrowed(""),
    }
}

/// `str({"name": ..., "arguments": ...})` as Python prints it.
fn function_call_str(call: &ToolCall) -> String {
    let mut out = String::with_capacity(call.name.len() + call.arguments.len() + 32);
    out.push_str("{'name': ");
    push_str_repr(&mut out, &call.name);
    out.push_str(", 'arguments': ");
    push_str_repr(&mut out, &call.arguments);
    out.push('}');
    out
}

/// The plugin's parts for one message, joined by `"\n"`: role, name or `""`, the text parts
/// concatenated, then each tool call's id, function name and arguments (assistant messages
/// only, as the plugin reads `tool_calls` from assistant messages alone).
fn plugin_segment(message: &PromptMessage) -> String {
    let text = message.content.text();
    let name = message.name.as_deref().unwrap_or("");
    let mut parts: Vec<&str> = vec![message.role.as_str(), name, &text];
    if message.role == Role::Assistant {
        for call in &message.tool_calls {
            parts.extend([
                call.id.as_str(),
                call.name.as_str(),
                call.arguments.as_str(),
            ]);
        }
    }
    // Room for the separators and the probe `plugin_tokens` appends, so that a long segment
    // is never copied into a buffer twice its size.
    let bytes = parts.iter().map(|part| part.len() + 1).sum::<usize>() + 2;
    let mut segment = String::with_capacity(bytes);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            segment.push('\n');
        }
        segment.push_str(part);
    }
    segment
}

/// Bytes of text a message holds, to tell long messages from the rest.
fn text_bytes(message: &PromptMessage) -> usize {
    let content = match &message.content {
        Content::Text(text) => text.len(),
        Content::Parts(parts) => parts
            .iter()
            .map(|part| match part {
                ContentPart::Text { text } => text.len(),
                _ => 0,
            })
            .sum(),
    };
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|call| call.arguments.len())
        .sum();
    content + calls
}

#[cfg(test)]
#[path = "counter_tests.rs"]
mod tests;
