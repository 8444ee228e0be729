//! Summarizers for trims: the offline extractive one (the default), and any OpenAI-compatible
//! chat-completions endpoint. Network IO lives here, outside the pure `memory` core.

mod client;

pub use client::{ChatCompletionsClient, ChatCompletionsConfig, SummarizeError};

use std::ops::ControlFlow;
use std::time::Duration;

use crate::config::{SummarizerConfig, SummarizerKindConfig};
use crate::memory::trim::{EXTRACTIVE_LABEL, PolicyPlanner, TrimPlan, extractive_summary};

/// Which summarizer writes the summary of a trim.
#[derive(Debug, Clone)]
pub enum Summarizer {
    /// Most informative sentences of the removed messages, within the policy's token cap.
    Extractive,
    ChatCompletions(ChatCompletionsClient),
}

impl Summarizer {
    /// The summarizer `[summarizer]` configures.
    pub fn from_config(config: &SummarizerConfig) -> Result<Summarizer, SummarizeError> {
        Ok(match config.kind {
            SummarizerKindConfig::Extractive => Summarizer::Extractive,
            SummarizerKindConfig::ChatCompletions => {
                Summarizer::ChatCompletions(ChatCompletionsClient::new(&ChatCompletionsConfig {
                    base_url: config.base_url.clone(),
                    model: config.model.clone(),
                    api_key_env: config.api_key_env.clone(),
                    timeout: Duration::from_secs(config.timeout_seconds.max(1)),
                    max_tokens: Some(config.max_tokens).filter(|n| *n > 0),
                })?)
            }
        })
    }

    /// Whether summaries are written offline, cheaply enough for every keystroke of a preview.
    pub fn is_offline(&self) -> bool {
        matches!(self, Summarizer::Extractive)
    }

    /// How the UI names it.
    pub fn label(&self) -> String {
        match self {
            Summarizer::Extractive => EXTRACTIVE_LABEL.to_owned(),
            Summarizer::ChatCompletions(client) => client.label(),
        }
    }

    async fn summarize(
        &self,
        planner: &PolicyPlanner<'_>,
        plan: &TrimPlan,
    ) -> Result<String, SummarizeError> {
        let cap = planner.summary_max_tokens();
        match self {
            Summarizer::Extractive => Ok(extractive_summary(
                planner.summarized(plan),
                cap,
                planner.counter(),
            )),
            Summarizer::ChatCompletions(client) => {
                let prompt = plan.summary.as_ref().map_or("", |s| s.prompt.as_str());
                client.complete(prompt, cap as u64).await
            }
        }
    }
}

/// Fills the plan's summary. An empty summary halves the removed slice (in groups) and tries
/// again; when one group is left and still nothing comes back, nothing is removed.
pub async fn summarize_plan(
    planner: &PolicyPlanner<'_>,
    mut plan: TrimPlan,
    summarizer: &Summarizer,
) -> Result<TrimPlan, SummarizeError> {
    while plan.summary.is_some() {
        let text = summarizer.summarize(planner, &plan).await?;
        match settle(planner, plan, &text, &summarizer.label()) {
            ControlFlow::Break(done) => return Ok(done),
            ControlFlow::Continue(smaller) => plan = smaller,
        }
    }
    Ok(plan)
}

/// [`summarize_plan`] with the extractive summarizer, without waiting on anything: a preview
/// can call it on every keystroke.
pub fn extractive_plan(planner: &PolicyPlanner<'_>, mut plan: TrimPlan) -> TrimPlan {
    while plan.summary.is_some() {
        let text = extractive_summary(
            planner.summarized(&plan),
            planner.summary_max_tokens(),
            planner.counter(),
        );
        match settle(planner, plan, &text, EXTRACTIVE_LABEL) {
            ControlFlow::Break(done) => return done,
            ControlFlow::Continue(smaller) => plan = smaller,
        }
    }
    plan
}

/// One round of the retry: a non-empty `text` fills the plan; an empty one halves the slice.
fn settle(
    planner: &PolicyPlanner<'_>,
    mut plan: TrimPlan,
    text: &str,
    label: &str,
) -> ControlFlow<TrimPlan, TrimPlan> {
    let text = text.trim();
    let groups = plan.summary.as_ref().map_or(0, |s| s.groups);
    if text.is_empty() {
        return ControlFlow::Continue(planner.plan_removing_at_most(Some(groups / 2)));
    }
    planner.fill_summary(&mut plan, text.to_owned(), label);
    ControlFlow::Break(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::budget::MessageTokens;
    use crate::memory::model::{PromptMessage, Role};
    use crate::memory::trim::{ChatMemoryPolicy, MessageCount, MessageCounter};

    #[tokio::test]
    async fn nothing_to_summarize_removes_nothing() {
        let policy =
            ChatMemoryPolicy::from_json(r#"{"max_messages":1,"summarization":{"enabled":true}}"#)
                .unwrap();
        let history = vec![
            PromptMessage::text(Role::Tool, ""),
            PromptMessage::text(Role::User, ""),
            PromptMessage::text(Role::Assistant, " "),
        ];
        let counts: Vec<MessageTokens> = history
            .iter()
            .map(|m| MessageCount.count_message(m))
            .collect();
        let planner = PolicyPlanner::new(&policy, &history, &counts, &MessageCount).unwrap();
        let plan = summarize_plan(&planner, planner.plan(), &Summarizer::Extractive)
            .await
            .unwrap();
        assert!(plan.is_noop());
        let offline = extractive_plan(&planner, planner.plan());
        assert!(offline.is_noop());
    }

    #[tokio::test]
    async fn the_offline_plan_is_the_extractive_summarizer_s() {
        let policy =
            ChatMemoryPolicy::from_json(r#"{"max_messages":2,"summarization":{"enabled":true}}"#)
                .unwrap();
        let history: Vec<PromptMessage> = (0..6)
            .map(|i| PromptMessage::text(Role::User, format!("The order {i} shipped to Lyon.")))
            .collect();
        let counts: Vec<MessageTokens> = history
            .iter()
            .map(|m| MessageCount.count_message(m))
            .collect();
        let planner = PolicyPlanner::new(&policy, &history, &counts, &MessageCount).unwrap();
        let offline = extractive_plan(&planner, planner.plan());
        let awaited = summarize_plan(&planner, planner.plan(), &Summarizer::Extractive)
            .await
            .unwrap();
        assert_eq!(offline, awaited);
        let slot = offline.summary.unwrap();
        assert!(slot.text.unwrap().contains("Lyon"));
        assert_eq!(slot.summarizer.as_deref(), Some(EXTRACTIVE_LABEL));
    }

    #[test]
    fn the_config_chooses_and_sets_up_the_summarizer() {
        let mut config = crate::config::merge(None).unwrap().summarizer;
        assert!(Summarizer::from_config(&config).unwrap().is_offline());
        config.kind = SummarizerKindConfig::ChatCompletions;
        config.base_url = "http://127.0.0.1:9/v1/".into();
        config.model = "tiny".into();
        let summarizer = Summarizer::from_config(&config).unwrap();
        assert!(!summarizer.is_offline());
        assert_eq!(
            summarizer.label(),
            "tiny via http://127.0.0.1:9/v1/chat/completions"
        );
    }
}
