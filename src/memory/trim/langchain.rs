//! LangChain's `trim_messages` (reference §C.1), parameter for parameter, as a plan.
//!
//! One deliberate difference: LangChain's `last` strategy counts the reversed list it searches;
//! this counts every candidate in its real order, so order-dependent counters (the plugin's
//! joined-text estimate) count what would be sent.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::count::MessageCounter;
use super::error::TrimError;
use super::plan::{Reason, Step, SystemRemoval, TrimPlan, with_content};
use crate::memory::budget::MessageTokens;
use crate::memory::model::{Content, ContentPart, PromptMessage, Role};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Keep the longest prefix that fits.
    First,
    /// Keep the longest suffix that fits (LangChain's default).
    #[default]
    Last,
}

impl FromStr for Strategy {
    type Err = TrimError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "first" => Ok(Strategy::First),
            "last" => Ok(Strategy::Last),
            other => Err(TrimError::UnknownStrategy(other.to_owned())),
        }
    }
}

/// How `allow_partial` cuts a message's text: LangChain's default splits on newlines, keeping
/// the newline on every piece but the last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TextSplitter {
    Separator(String),
}

impl Default for TextSplitter {
    fn default() -> Self {
        TextSplitter::Separator("\n".to_owned())
    }
}

impl TextSplitter {
    /// Python's `text.split(sep)` with the separator put back on every piece but the last.
    pub fn split<'t>(&self, text: &'t str) -> Vec<std::borrow::Cow<'t, str>> {
        let TextSplitter::Separator(separator) = self;
        if separator.is_empty() {
            return vec![std::borrow::Cow::Borrowed(text)];
        }
        let pieces: Vec<&str> = text.split(separator.as_str()).collect();
        let last = pieces.len() - 1;
        pieces
            .into_iter()
            .enumerate()
            .map(|(i, piece)| {
                if i < last {
                    std::borrow::Cow::Owned(format!("{piece}{separator}"))
                } else {
                    std::borrow::Cow::Borrowed(piece)
                }
            })
            .collect()
    }
}

/// `trim_messages`' keyword arguments. `token_counter` is the [`MessageCounter`] passed along.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrimOptions {
    pub max_tokens: i64,
    pub strategy: Strategy,
    pub allow_partial: bool,
    /// Types the kept list must end on (trailing others are dropped).
    pub end_on: Option<Vec<Role>>,
    /// Types the kept list must start on (`last` only; leading others are dropped).
    pub start_on: Option<Vec<Role>>,
    /// Keep a leading system message (`last` only).
    pub include_system: bool,
    pub text_splitter: TextSplitter,
}

impl TrimOptions {
    /// LangChain's defaults: `strategy="last"`, nothing else set.
    pub fn new(max_tokens: i64) -> Self {
        TrimOptions {
            max_tokens,
            strategy: Strategy::Last,
            allow_partial: false,
            end_on: None,
            start_on: None,
            include_system: false,
            text_splitter: TextSplitter::default(),
        }
    }

    /// LangChain's `ValueError`s.
    pub fn validate(&self) -> Result<(), TrimError> {
        if self.strategy == Strategy::First {
            if self.start_on.is_some() {
                return Err(TrimError::StartOnWithFirst);
            }
            if self.include_system {
                return Err(TrimError::IncludeSystemWithFirst);
            }
        }
        Ok(())
    }
}

/// Trims `messages` as LangChain's `trim_messages` does; the input is only read.
pub fn trim_messages(
    messages: &[PromptMessage],
    options: &TrimOptions,
    counter: &dyn MessageCounter,
) -> Result<TrimPlan, TrimError> {
    let counts: Vec<MessageTokens> = messages.iter().map(|m| counter.count_message(m)).collect();
    trim_messages_counted(messages, &counts, options, counter)
}

/// [`trim_messages`] with each message's count given (from a cache): only partial messages are
/// counted again.
pub fn trim_messages_counted(
    messages: &[PromptMessage],
    counts: &[MessageTokens],
    options: &TrimOptions,
    counter: &dyn MessageCounter,
) -> Result<TrimPlan, TrimError> {
    options.validate()?;
    if counts.len() != messages.len() {
        return Err(TrimError::CountsMismatch {
            messages: messages.len(),
            counts: counts.len(),
        });
    }
    let overhead = counter.list_overhead();
    let mut reasons: Vec<Reason> = vec![Reason::OverLimit; messages.len()];
    let kept = match options.strategy {
        Strategy::First => {
            let order: Vec<usize> = (0..messages.len()).collect();
            Search::new(messages, counts, counter, &order, false).run(
                options.max_tokens,
                options,
                &mut reasons,
            )
        }
        Strategy::Last => last_max_tokens(messages, counts, options, counter, &mut reasons),
    };
    let kept_tokens = super::count::list_tokens(kept.iter().map(|k| k.tokens), overhead);
    let tokens_before = super::count::list_tokens(counts.iter().copied(), overhead);
    let mut steps = Vec::with_capacity(messages.len());
    let mut next = kept.iter().peekable();
    for (index, reason) in reasons.into_iter().enumerate() {
        match next.peek() {
            Some(k) if k.index == index => {
                steps.push(match &k.replacement {
                    Some(message) => Step::Modify {
                        index,
                        message: message.clone(),
                        reason: Reason::PartialContent,
                    },
                    None => Step::Keep { index },
                });
                next.next();
            }
            _ => steps.push(Step::Remove { index, reason }),
        }
    }
    Ok(TrimPlan {
        steps,
        tokens_before,
        tokens_after: kept_tokens,
        summary: None,
    })
}

/// The system messages `plan` removes from `input`, each with why: `options` are the
/// `trim_messages` options it was planned with, `None` for a chat memory policy (which keeps
/// the leading system messages).
pub fn system_removals(
    plan: &TrimPlan,
    input: &[PromptMessage],
    options: Option<&TrimOptions>,
) -> Vec<SystemRemoval> {
    plan.removed()
        .filter(|(index, _)| input.get(*index).is_some_and(|m| m.role == Role::System))
        .map(|(index, reason)| {
            let why = match options {
                Some(o) if o.strategy == Strategy::First => {
                    "strategy first keeps the oldest messages that fit, and it is not among them"
                }
                Some(o) if !o.include_system => {
                    "include_system is off, so trim_messages cuts the system prompt like any \
                     other message"
                }
                Some(_) => "include_system keeps only a leading system message, and this one is not first",
                None => "the policy keeps only the leading system messages, and this one is further down",
            };
            SystemRemoval {
                index,
                reason,
                why: why.to_owned(),
            }
        })
        .collect()
}

/// A kept message: an input index, with new content when it was kept partially.
#[derive(Debug, Clone)]
struct Kept {
    index: usize,
    replacement: Option<PromptMessage>,
    tokens: MessageTokens,
}

fn is_type(message: &PromptMessage, types: &[Role]) -> bool {
    types.contains(&message.role)
}

/// `_last_max_tokens`: drop trailing non-`end_on` messages, set a leading system message aside,
/// run the prefix search on the reversed rest with `end_on=start_on`, put the system back.
fn last_max_tokens(
    messages: &[PromptMessage],
    counts: &[MessageTokens],
    options: &TrimOptions,
    counter: &dyn MessageCounter,
    reasons: &mut [Reason],
) -> Vec<Kept> {
    let mut end = messages.len();
    if let Some(end_on) = &options.end_on {
        while end > 0 && !is_type(&messages[end - 1], end_on) {
            end -= 1;
            reasons[end] = Reason::EndOn;
        }
    }
    let overhead = counter.list_overhead();
    let system =
        (options.include_system && end > 0 && messages[0].role == Role::System).then_some(0);
    let start = usize::from(system.is_some());
    let mut budget = options.max_tokens;
    if system.is_some() {
        let system_tokens = super::count::list_tokens([counts[0]], overhead);
        budget = (budget - i64::try_from(system_tokens).unwrap_or(i64::MAX)).max(0);
    }
    let order: Vec<usize> = (start..end).rev().collect();
    let mut kept =
        Search::new(messages, counts, counter, &order, true).run(budget, options, reasons);
    kept.reverse();
    if system.is_some() {
        kept.insert(
            0,
            Kept {
                index: 0,
                replacement: None,
                tokens: counts[0],
            },
        );
    }
    kept
}

/// `_first_max_tokens` over `order`: input indices in search order (reversed for `last`).
struct Search<'a> {
    messages: &'a [PromptMessage],
    counts: &'a [MessageTokens],
    counter: &'a dyn MessageCounter,
    overhead: u32,
    order: &'a [usize],
    reversed: bool,
}

impl<'a> Search<'a> {
    fn new(
        messages: &'a [PromptMessage],
        counts: &'a [MessageTokens],
        counter: &'a dyn MessageCounter,
        order: &'a [usize],
        reversed: bool,
    ) -> Search<'a> {
        Search {
            messages,
            counts,
            counter,
            overhead: counter.list_overhead(),
            order,
            reversed,
        }
    }

    /// Tokens of the first `taken` messages of the order plus `extra` after them (in search
    /// order), counted in the list's real order.
    fn count(&self, taken: usize, extra: Option<MessageTokens>) -> i128 {
        let items = self.order[..taken]
            .iter()
            .map(|&i| self.counts[i])
            .chain(extra);
        let total = if self.reversed {
            let mut real: Vec<MessageTokens> = items.collect();
            real.reverse();
            super::count::list_tokens(real, self.overhead)
        } else {
            super::count::list_tokens(items, self.overhead)
        };
        i128::from(total)
    }

    /// Keeps what fits in `max_tokens`, then drops the kept messages after the last one of
    /// the types the search ends on: `end_on`, or `start_on` when it runs reversed.
    fn run(&self, max_tokens: i64, options: &TrimOptions, reasons: &mut [Reason]) -> Vec<Kept> {
        let (end_on, end_reason) = if self.reversed {
            (options.start_on.as_deref(), Reason::StartOn)
        } else {
            (options.end_on.as_deref(), Reason::EndOn)
        };
        let n = self.order.len();
        let max = i128::from(max_tokens);
        let whole = |position: usize| Kept {
            index: self.order[position],
            replacement: None,
            tokens: self.counts[self.order[position]],
        };
        let mut kept: Vec<Kept>;
        if self.count(n, None) <= max {
            kept = (0..n).map(whole).collect();
        } else {
            // Counts only grow with the prefix, so the longest prefix that fits is a partition.
            let fits = (0..=n)
                .collect::<Vec<_>>()
                .partition_point(|&k| self.count(k, None) <= max);
            let taken = fits.saturating_sub(1);
            kept = (0..taken).map(whole).collect();
            if options.allow_partial && taken < n {
                kept.extend(self.partial(taken, max, &options.text_splitter));
            }
        }
        if let Some(end_on) = end_on {
            while let Some(last) = kept.last() {
                let message = last
                    .replacement
                    .as_ref()
                    .unwrap_or(&self.messages[last.index]);
                if is_type(message, end_on) {
                    break;
                }
                reasons[last.index] = end_reason;
                kept.pop();
            }
        }
        kept
    }

    /// The part of the next message that still fits: whole content blocks first (dropped from
    /// the far end one at a time), else the text splits that fit (binary search).
    fn partial(&self, taken: usize, max: i128, splitter: &TextSplitter) -> Option<Kept> {
        let index = self.order[taken];
        let message = &self.messages[index];
        let keep = |content: Content| {
            let replacement = with_content(message, content);
            let tokens = self.counter.count_message(&replacement);
            Kept {
                index,
                replacement: Some(replacement),
                tokens,
            }
        };
        // LangChain leaves the loop with one block: the nearest one, searched for text next.
        let mut nearest_block: Option<&ContentPart> = None;
        if let Content::Parts(parts) = &message.content {
            let n = parts.len();
            for blocks in (1..n).rev() {
                let range = if self.reversed {
                    n - blocks..n
                } else {
                    0..blocks
                };
                let candidate = keep(Content::Parts(parts[range].to_vec()));
                if self.count(taken, Some(candidate.tokens)) <= max {
                    return Some(candidate);
                }
            }
            nearest_block = if self.reversed {
                parts.last()
            } else {
                parts.first()
            };
        }
        let text = match &message.content {
            Content::Text(text) => Some(text.as_str()),
            Content::Parts(_) => nearest_block.and_then(ContentPart::text),
        }
        .filter(|text| !text.is_empty())?;
        let mut splits = splitter.split(text);
        if self.reversed {
            splits.reverse();
        }
        // LangChain adds the prefix's count and the partial message's own list count.
        let base = self.count(taken, None);
        let join = |k: usize| -> String {
            let mut chosen: Vec<&str> = splits[..k].iter().map(|s| s.as_ref()).collect();
            if self.reversed {
                chosen.reverse();
            }
            chosen.concat()
        };
        let alone = |k: usize| {
            let tokens = self
                .counter
                .count_message(&with_content(message, Content::Text(join(k))));
            i128::from(super::count::list_tokens([tokens], self.overhead))
        };
        let fits = (0..=splits.len())
            .collect::<Vec<_>>()
            .partition_point(|&k| k == 0 || base + alone(k) <= max);
        let splits_kept = fits.saturating_sub(1);
        (splits_kept > 0).then(|| keep(Content::Text(join(splits_kept))))
    }
}

#[cfg(test)]
#[path = "langchain_tests.rs"]
mod tests;
