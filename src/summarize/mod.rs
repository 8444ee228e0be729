//! Summarizers for trims: the offline extractive one (the default), and any OpenAI-compatible
//! chat-completions endpoint. Network IO lives here, outside the pure `memory` core.

mod client;

pub use client::{ChatCompletionsClient, ChatCompletionsConfig};

use crate::memory::trim::{EXTRACTIVE_LABEL, PolicyPlanner, TrimPlan, extractive_summary};

/// Why a summary could not be had. Every variant names the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    #[error("summarizer {url} did not answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("cannot reach summarizer {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("summarizer {url} answered HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },
    #[error("summarizer {url} sent an unreadable answer: {detail}")]
    BadResponse { url: String, detail: String },
    #[error("cannot set up the summarizer client: {0}")]
    Client(String),
}

/// Which summarizer writes the summary of a trim.
#[derive(Debug, Clone)]
pub enum Summarizer {
    /// Most informative sentences of the removed messages, within the policy's token cap.
    Extractive,
    ChatCompletions(ChatCompletionsClient),
}

impl Summarizer {
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
    while let Some(groups) = plan.summary.as_ref().map(|s| s.groups) {
        let text = summarizer.summarize(planner, &plan).await?;
        let text = text.trim();
        if !text.is_empty() {
            planner.fill_summary(&mut plan, text.to_owned(), &summarizer.label());
            return Ok(plan);
        }
        plan = planner.plan_removing_at_most(Some(groups / 2));
    }
    Ok(plan)
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
    }
}
