//! What the model is fed of a conversation without a regeneration tree, under a token budget:
//! for a Langflow session, exactly what its Agent's chat memory reads (`aget_agent_chat_history`
//! over the flow, the session and the owner, the newest `n_messages`), with what it leaves out;
//! for a LangGraph thread, its latest `messages` channel under the trim LangGraph recommends.
//! `history` prints the same figures.

use crate::memory::agent_history::{AgentHistory, AgentHistoryArgs, LeftOut, agent_history};
use crate::memory::tokens::CountCache;
use crate::sources::langflow::budget::agent_budget;
use crate::sources::langgraph::budget::checkpoint_budget;
use crate::sources::langgraph::decode::budget::MessagesBudget;

use super::sessions::{HistorySource, SessionView};
use crate::memory::budget_view::{BudgetSettings, BudgetView};

/// A conversation's history under a budget, with what an operator should know about it.
#[derive(Debug, Clone)]
pub struct SessionBudget {
    pub view: BudgetView,
    /// The rule that chose the messages and the cut, in words.
    pub rule: String,
    /// Ids of the messages the model is fed, before the token cut.
    pub fed: Vec<String>,
    /// Messages of the conversation not fed, per reason: only counted.
    pub left_out: Vec<(LeftOut, usize)>,
    /// Fed messages whose category is error: their text reaches the model.
    pub error_text_fed: Vec<String>,
    /// A message above the cut that is sent anyway: the system message a trim with
    /// `include_system` keeps.
    pub kept_above_cut: Option<usize>,
    pub warnings: Vec<String>,
    /// A LangGraph thread's channel as its trim cut it: where a trim preview starts
    /// ([`super::trim::thread_trim`]).
    pub thread: Option<MessagesBudget>,
}

impl SessionBudget {
    /// Whether message `id` of the conversation reaches the model: read by its memory and
    /// below the cut the budget shows, or the message a trim keeps above it. What a message
    /// list marks (● sent, ○ not), the same rule for every source.
    pub fn is_sent(&self, id: &str) -> bool {
        let first_kept = self.view.pruned.first_kept;
        self.view
            .history
            .messages
            .iter()
            .enumerate()
            .any(|(index, m)| {
                m.source_id == id && (index >= first_kept || self.kept_above_cut == Some(index))
            })
    }
}

/// `view`'s history under `settings`: for a Langflow session with the Agent's `n_messages`.
pub fn session_budget(
    view: &SessionView,
    n_messages: u32,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> Result<SessionBudget, String> {
    match &view.source {
        HistorySource::AgentMemory {
            rows,
            flow_id,
            owner,
        } => {
            let args = AgentHistoryArgs {
                flow_id: flow_id.clone(),
                session_id: view.key.id.clone(),
                context_id: None,
                owner: owner.clone(),
                n_messages: Some(n_messages),
            };
            let fed = agent_history(rows, &args);
            Ok(agent_memory_budget(
                &fed,
                n_messages,
                owner.is_some(),
                settings,
                cache,
            ))
        }
        HistorySource::Checkpoint { messages, .. } => {
            let trimmed = MessagesBudget::compute(messages, &settings.counter, settings.max_tokens)
                .map_err(|e| e.to_string())?;
            let ids = view.messages.iter().map(|m| m.message.id.clone()).collect();
            Ok(thread_budget(trimmed, ids, settings, cache))
        }
    }
}

/// [`agent_budget`] as a conversation's budget.
pub fn agent_memory_budget(
    fed: &AgentHistory,
    n_messages: u32,
    owned: bool,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> SessionBudget {
    let budget = agent_budget(fed, n_messages, owned, settings, cache);
    SessionBudget {
        view: budget.view,
        rule: budget.rule,
        fed: budget.fed,
        left_out: budget.left_out,
        error_text_fed: budget.error_text_fed,
        kept_above_cut: None,
        warnings: budget.warnings,
        thread: None,
    }
}

/// [`checkpoint_budget`] as a conversation's budget.
fn thread_budget(
    trimmed: MessagesBudget,
    ids: Vec<String>,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> SessionBudget {
    let budget = checkpoint_budget(trimmed, ids, settings, cache);
    SessionBudget {
        view: budget.view,
        rule: budget.rule,
        fed: budget.fed,
        left_out: Vec::new(),
        error_text_fed: Vec::new(),
        kept_above_cut: budget.kept_above_cut,
        warnings: budget.warnings,
        thread: Some(budget.trimmed),
    }
}
