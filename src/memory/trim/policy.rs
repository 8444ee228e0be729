//! Chat memory policies (seed 004, reference §B) on top of the same plans `trim_messages` makes.
//!
//! The context a policy trims is the predefined messages followed by the stored history. The
//! predefined messages and the history's leading system messages are pinned: always kept and
//! counted against the limit. Drop middle also keeps the first `keep_first` history messages.
//! What follows is cut group by group (a tool call with its results is one group), oldest first,
//! until the context fits; one summary then stands at the cut point.

use serde::{Deserialize, Serialize};

use super::count::{MessageCounter, list_tokens};
use super::error::TrimError;
use super::groups::{Group, group_messages};
use super::plan::{Reason, SUMMARY_PREFIX, Step, SummarySlot, TrimPlan, with_content};
use super::prompt::{DEFAULT_SUMMARIZE_PROMPT, summarize_prompt};
use crate::memory::budget::{MessageTokens, SuffixTotals};
use crate::memory::model::{Content, ContentPart, PromptMessage, Role};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitType {
    #[default]
    Messages,
    Tokens,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimMode {
    /// Trim whenever the context is over the limit.
    #[default]
    Continuous,
    /// Wait until the context is over `trigger`, then cut it to `target`.
    Threshold,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyStrategy {
    #[default]
    DropOldest,
    DropMiddle,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summarization {
    #[serde(default)]
    pub enabled: bool,
    /// The rules the summarizer follows; seed 004's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

const fn default_max_messages() -> u64 {
    20
}
const fn default_trigger() -> u64 {
    500
}
const fn default_target() -> u64 {
    100
}
const fn default_max_tokens() -> u64 {
    2000
}
const fn default_max_images() -> u64 {
    1
}
const fn default_summary_max_tokens() -> u64 {
    200
}

/// A chat memory's policy, in the JSON shape stored with it (see `sources/memscope/demo.rs`).
/// Missing keys take seed 004's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMemoryPolicy {
    #[serde(default)]
    pub limit_type: LimitType,
    #[serde(default)]
    pub trim_mode: TrimMode,
    #[serde(default = "default_max_messages")]
    pub max_messages: u64,
    /// Threshold mode, in the limit's unit (messages or tokens).
    #[serde(default = "default_trigger")]
    pub trigger: u64,
    #[serde(default = "default_target")]
    pub target: u64,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u64,
    /// Never keep fewer history messages than this, even over the limit.
    #[serde(default)]
    pub min_messages: u64,
    #[serde(default)]
    pub strategy: PolicyStrategy,
    /// Drop middle: history messages kept at the front after the pinned ones.
    #[serde(default)]
    pub keep_first: u64,
    #[serde(default)]
    pub clear_tool_results: bool,
    #[serde(default = "default_max_images")]
    pub max_images: u64,
    #[serde(default)]
    pub predefined_messages: Vec<PromptMessage>,
    #[serde(default)]
    pub summarization: Summarization,
    /// Tokens a summary may take; reserved for it when the limit is in tokens.
    #[serde(default = "default_summary_max_tokens")]
    pub summary_max_tokens: u64,
}

impl Default for ChatMemoryPolicy {
    fn default() -> Self {
        ChatMemoryPolicy::from_json("{}").expect("every key has a default")
    }
}

impl ChatMemoryPolicy {
    pub fn from_json(json: &str) -> Result<Self, TrimError> {
        let policy: ChatMemoryPolicy =
            serde_json::from_str(json).map_err(|e| TrimError::BadPolicy(e.to_string()))?;
        policy.validate()?;
        Ok(policy)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn validate(&self) -> Result<(), TrimError> {
        if self.trim_mode == TrimMode::Threshold && self.target > self.trigger {
            return Err(TrimError::BadPolicy(format!(
                "threshold target {} is above its trigger {}",
                self.target, self.trigger
            )));
        }
        Ok(())
    }

    /// Size over which trimming starts, and the size it trims to.
    fn trigger_and_target(&self) -> (u64, u64) {
        let limit = match self.limit_type {
            LimitType::Messages => self.max_messages,
            LimitType::Tokens => self.max_tokens,
        };
        match self.trim_mode {
            TrimMode::Continuous => (limit, limit),
            TrimMode::Threshold => (self.trigger, self.target),
        }
    }

    pub fn summarize_rules(&self) -> &str {
        self.summarization
            .prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or(DEFAULT_SUMMARIZE_PROMPT)
    }
}

/// Whether a message is a summary a previous trim inserted.
pub fn is_summary(message: &PromptMessage) -> bool {
    message.role == Role::System && message.content.text().starts_with(SUMMARY_PREFIX)
}

/// A policy bound to one history with its counts, ready to plan (again and again: a preview
/// replans on every parameter change without counting unchanged messages).
pub struct PolicyPlanner<'a> {
    policy: &'a ChatMemoryPolicy,
    context: Context<'a>,
    counts: Vec<MessageTokens>,
    counter: &'a dyn MessageCounter,
}

/// The context after emptying tool results and stubbing images, before any removal.
struct Prepared {
    modified: Vec<Option<(PromptMessage, Reason)>>,
    counts: Vec<MessageTokens>,
}

impl<'a> PolicyPlanner<'a> {
    /// `counts` are the history's, in order (a [`CountCache`](crate::memory::tokens::CountCache)
    /// gives them); plan indices cover the predefined messages first, then the history.
    pub fn new(
        policy: &'a ChatMemoryPolicy,
        history: &'a [PromptMessage],
        history_counts: &[MessageTokens],
        counter: &'a dyn MessageCounter,
    ) -> Result<Self, TrimError> {
        policy.validate()?;
        if history.len() != history_counts.len() {
            return Err(TrimError::CountsMismatch {
                messages: history.len(),
                counts: history_counts.len(),
            });
        }
        let context = Context {
            predefined: &policy.predefined_messages,
            history,
        };
        let mut counts: Vec<MessageTokens> = context
            .predefined
            .iter()
            .map(|m| counter.count_message(m))
            .collect();
        counts.extend_from_slice(history_counts);
        Ok(PolicyPlanner {
            policy,
            context,
            counts,
            counter,
        })
    }

    /// The predefined messages followed by the history: what plan indices refer to.
    pub fn context(&self) -> Vec<PromptMessage> {
        [self.context.predefined, self.context.history].concat()
    }

    pub fn message(&self, index: usize) -> &PromptMessage {
        &self.context[index]
    }

    pub fn predefined_len(&self) -> usize {
        self.policy.predefined_messages.len()
    }

    /// The plan the policy makes for this history.
    pub fn plan(&self) -> TrimPlan {
        self.plan_removing_at_most(None)
    }

    /// The plan with at most `max_groups` groups removed: how a summarizer that returned nothing
    /// retries with half the slice.
    pub fn plan_removing_at_most(&self, max_groups: Option<usize>) -> TrimPlan {
        let policy = self.policy;
        let overhead = self.counter.list_overhead();
        let tokens_before = list_tokens(self.counts.iter().copied(), overhead);
        let (trigger, target) = policy.trigger_and_target();
        let triggered = self.size(&self.counts) > trigger;
        if policy.trim_mode == TrimMode::Threshold && !triggered {
            return self.finish(&Prepared::untouched(self), &[], tokens_before);
        }
        let prepared = self.prepare(triggered);
        if self.size(&prepared.counts) <= target {
            return self.finish(&prepared, &[], tokens_before);
        }
        let head = self.protected_len();
        let groups: Vec<Group> = group_messages(self.context.tail(head))
            .into_iter()
            .map(|g| Group {
                start: g.start + head,
                end: g.end + head,
                orphan: g.orphan,
            })
            .collect();
        let history_len = self.context.len() - self.predefined_len();
        let summary_reserve = self.summary_reserve();
        // Sizes of the context without groups[..k], in O(1) each.
        let suffix = SuffixTotals::new(&prepared.counts, overhead);
        let head_inner: u64 = prepared.counts[..head]
            .iter()
            .map(|c| u64::from(c.inner))
            .sum();
        let size_cut_to = |end: usize| -> u64 {
            match policy.limit_type {
                LimitType::Messages => (self.context.len() - (end - head)) as u64,
                LimitType::Tokens if end < self.context.len() => head_inner + suffix.from(end),
                LimitType::Tokens => list_tokens(prepared.counts[..head].iter().copied(), overhead),
            }
        };
        let mut removed_groups = 0;
        let mut cut_end = head;
        for group in &groups {
            let over = size_cut_to(cut_end) + summary_reserve > target;
            let left = history_len.saturating_sub(group.end - head);
            let floor_allows = left as u64 >= policy.min_messages;
            let cap_allows = max_groups.is_none_or(|cap| removed_groups < cap);
            if !(over && floor_allows && cap_allows) {
                break;
            }
            removed_groups += 1;
            cut_end = group.end;
        }
        // A tool result never opens what is kept after the cut.
        if removed_groups > 0
            && let Some(next) = groups.get(removed_groups)
            && next.orphan
        {
            removed_groups += 1;
        }
        // Replacing a lone summary by a summary of it gains nothing, and would never settle.
        let removed = &groups[..removed_groups];
        if removed
            .iter()
            .all(|g| g.len() == 1 && is_summary(&self.context[g.start]))
        {
            return self.finish(&prepared, &[], tokens_before);
        }
        self.finish(&prepared, removed, tokens_before)
    }

    /// Pinned messages plus drop middle's first messages, extended to a whole group.
    fn protected_len(&self) -> usize {
        let predefined = self.predefined_len();
        let mut head = predefined;
        while head < self.context.len()
            && self.context[head].role == Role::System
            && !is_summary(&self.context[head])
        {
            head += 1;
        }
        if self.policy.strategy == PolicyStrategy::DropMiddle {
            let wanted = usize::try_from(self.policy.keep_first).unwrap_or(usize::MAX);
            let first = (head + wanted).min(self.context.len());
            // Extend to the end of the group holding the last kept-first message.
            head = group_messages(self.context.tail(head))
                .into_iter()
                .map(|g| g.end + head)
                .find(|&end| end >= first)
                .unwrap_or(first);
        }
        head
    }

    /// What a summary adds to the size, when there will be one.
    fn summary_reserve(&self) -> u64 {
        if !self.policy.summarization.enabled {
            return 0;
        }
        match self.policy.limit_type {
            LimitType::Messages => 1,
            LimitType::Tokens => {
                let marker = PromptMessage::text(Role::System, SUMMARY_PREFIX);
                u64::from(self.counter.count_message(&marker).inner)
                    + self.policy.summary_max_tokens
            }
        }
    }

    /// The context's size in the limit's unit.
    fn size(&self, counts: &[MessageTokens]) -> u64 {
        match self.policy.limit_type {
            LimitType::Messages => counts.len() as u64,
            LimitType::Tokens => list_tokens(counts.iter().copied(), self.counter.list_overhead()),
        }
    }

    /// Tool results emptied and older images stubbed, as the policy asks, with new counts.
    /// Tool results are emptied only when a trim fires; images are capped on every plan.
    fn prepare(&self, triggered: bool) -> Prepared {
        let mut prepared = Prepared::untouched(self);
        let history = self.predefined_len()..self.context.len();
        if triggered && self.policy.clear_tool_results {
            for index in history.clone() {
                let message = &self.context[index];
                if message.role == Role::Tool && !message.content.is_empty() {
                    let cleared = with_content(message, Content::Text(String::new()));
                    prepared.set(index, cleared, Reason::ToolResultCleared, self.counter);
                }
            }
        }
        let mut images_left = self.policy.max_images;
        for index in history.rev() {
            let current = prepared.message(index, &self.context);
            let Content::Parts(parts) = &current.content else {
                continue;
            };
            let mut stubbed = false;
            let mut new_parts = parts.clone();
            for part in new_parts.iter_mut().rev() {
                if let ContentPart::Image { source } = part {
                    if images_left > 0 {
                        images_left -= 1;
                    } else {
                        *part = ContentPart::Text {
                            text: image_stub(source),
                        };
                        stubbed = true;
                    }
                }
            }
            if stubbed {
                let message = with_content(current, Content::Parts(new_parts));
                prepared.set(index, message, Reason::ImageStubbed, self.counter);
            }
        }
        prepared
    }

    /// The plan: steps in order with the summary after the removed slice.
    fn finish(&self, prepared: &Prepared, removed: &[Group], tokens_before: u64) -> TrimPlan {
        let (cut_start, cut_end) = span(removed);
        let mut removal_reasons = Vec::with_capacity(cut_end - cut_start);
        for group in removed {
            for index in group.start..group.end {
                removal_reasons.push(if group.orphan {
                    Reason::OrphanToolResult
                } else if index > group.start {
                    Reason::ToolGroup
                } else {
                    Reason::OverLimit
                });
            }
        }
        let mut steps = Vec::with_capacity(self.context.len() + 1);
        for index in 0..self.context.len() {
            if (cut_start..cut_end).contains(&index) {
                let reason = removal_reasons[index - cut_start];
                steps.push(Step::Remove { index, reason });
                if index + 1 == cut_end && self.policy.summarization.enabled {
                    steps.push(Step::Summary);
                }
                continue;
            }
            steps.push(match &prepared.modified[index] {
                Some((message, reason)) => Step::Modify {
                    index,
                    message: message.clone(),
                    reason: *reason,
                },
                None => Step::Keep { index },
            });
        }
        let summary =
            (self.policy.summarization.enabled && cut_end > cut_start).then(|| SummarySlot {
                summarized: (cut_start..cut_end).collect(),
                groups: removed.len(),
                prompt: summarize_prompt(
                    self.policy.summarize_rules(),
                    (cut_start..cut_end).map(|i| prepared.message(i, &self.context)),
                ),
                text: None,
                summarizer: None,
            });
        let kept = prepared.counts[..cut_start]
            .iter()
            .chain(&prepared.counts[cut_end..])
            .copied();
        TrimPlan {
            steps,
            tokens_before,
            tokens_after: list_tokens(kept, self.counter.list_overhead()),
            summary,
        }
    }

    /// Puts a summary's text into the plan and counts the list with it.
    pub fn fill_summary(&self, plan: &mut TrimPlan, text: String, summarizer: &str) {
        let Some(slot) = plan.summary.as_mut() else {
            return;
        };
        slot.text = Some(text);
        slot.summarizer = Some(summarizer.to_owned());
        let summary_tokens = slot.message().map(|m| self.counter.count_message(&m));
        let counts = plan.steps.iter().filter_map(|step| match step {
            Step::Keep { index } => Some(self.counts[*index]),
            Step::Modify { message, .. } => Some(self.counter.count_message(message)),
            Step::Remove { .. } => None,
            Step::Summary => summary_tokens,
        });
        plan.tokens_after = list_tokens(counts, self.counter.list_overhead());
    }

    /// The messages a summary of `plan` covers.
    pub fn summarized<'p>(&'p self, plan: &'p TrimPlan) -> impl Iterator<Item = &'p PromptMessage> {
        plan.summary
            .iter()
            .flat_map(|slot| slot.summarized.iter().map(|&i| &self.context[i]))
    }

    pub fn counter(&self) -> &dyn MessageCounter {
        self.counter
    }

    pub fn summary_max_tokens(&self) -> usize {
        usize::try_from(self.policy.summary_max_tokens).unwrap_or(usize::MAX)
    }
}

impl Prepared {
    fn untouched(planner: &PolicyPlanner) -> Prepared {
        Prepared {
            modified: vec![None; planner.context.len()],
            counts: planner.counts.clone(),
        }
    }

    fn message<'m>(&'m self, index: usize, context: &'m Context) -> &'m PromptMessage {
        self.modified[index]
            .as_ref()
            .map_or(&context[index], |(message, _)| message)
    }

    fn set(
        &mut self,
        index: usize,
        message: PromptMessage,
        reason: Reason,
        counter: &dyn MessageCounter,
    ) {
        self.counts[index] = counter.count_message(&message);
        // An image stub on an emptied result keeps the first reason: both are shown as modified.
        let reason = self.modified[index]
            .as_ref()
            .map_or(reason, |(_, first)| *first);
        self.modified[index] = Some((message, reason));
    }
}

/// The predefined messages followed by the history, without copying either.
struct Context<'a> {
    predefined: &'a [PromptMessage],
    history: &'a [PromptMessage],
}

impl Context<'_> {
    fn len(&self) -> usize {
        self.predefined.len() + self.history.len()
    }

    /// Messages from `start` on; `start` is never inside the predefined messages.
    fn tail(&self, start: usize) -> &[PromptMessage] {
        &self.history[start - self.predefined.len()..]
    }
}

impl std::ops::Index<usize> for Context<'_> {
    type Output = PromptMessage;

    fn index(&self, index: usize) -> &PromptMessage {
        match index.checked_sub(self.predefined.len()) {
            Some(in_history) => &self.history[in_history],
            None => &self.predefined[index],
        }
    }
}

/// `[image: NAME]`, NAME the last path segment of the image's URL or path.
fn image_stub(source: &str) -> String {
    let without_query = source.split(['?', '#']).next().unwrap_or(source);
    let name = without_query
        .rsplit('/')
        .find(|segment| !segment.is_empty())
        .unwrap_or(source);
    format!("[image removed: {name}]")
}

/// The first and one-past-last index of contiguous groups (empty: 0..0).
fn span(groups: &[Group]) -> (usize, usize) {
    match (groups.first(), groups.last()) {
        (Some(first), Some(last)) => (first.start, last.end),
        _ => (0, 0),
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
