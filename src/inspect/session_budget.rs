//! What the model is fed of a conversation without a regeneration tree, under a token budget:
//! for a Langflow session, exactly what its Agent's chat memory reads (`aget_agent_chat_history`
//! over the flow, the session and the owner, the newest `n_messages`), with what it leaves out;
//! for a LangGraph thread, its latest `messages` channel under the trim LangGraph recommends.
//! `history` prints the same figures.

use crate::memory::agent_history::{AgentHistory, AgentHistoryArgs, LeftOut, agent_history};
use crate::memory::budget::Pruned;
use crate::memory::history::{History, HistoryMessage, Side};
use crate::sources::langgraph::decode::budget::{MessagesBudget, RECOMMENDED_TRIM};
use crate::memory::model::Role;
use crate::memory::tokens::CountCache;

use crate::memory::budget_view::{BudgetSettings, BudgetView};
use super::sessions::{HistorySource, SessionView};

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
            Ok(checkpoint_budget(trimmed, ids, settings, cache))
        }
    }
}

/// What the Agent's memory read `fed` gives the model with `n_messages`, counted; `owned`: the
/// flow has an owner to scope the read to.
pub fn agent_memory_budget(
    fed: &AgentHistory,
    n_messages: u32,
    owned: bool,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> SessionBudget {
    let view = BudgetView::for_history(fed.prompt_history(n_messages as usize), settings, cache);
    let mut warnings = view.warnings();
    if !fed.error_text_fed.is_empty() {
        let n = fed.error_text_fed.len() as u64;
        warnings.push(format!(
            "{} without the error flag {} fed to the model as conversation",
            crate::format::count(n, "error message"),
            if n == 1 { "is" } else { "are" }
        ));
    }
    if !owned {
        warnings.push("the flow has no owner: Langflow's memory read returns nothing".into());
    }
    SessionBudget {
        rule: format!(
            "the Agent's memory: the newest {n_messages} messages of this flow, session and owner \
             without the error flag"
        ),
        fed: fed.messages.iter().map(|m| m.id.clone()).collect(),
        left_out: fed.left_out.clone(),
        error_text_fed: fed.error_text_fed.clone(),
        kept_above_cut: None,
        warnings,
        view,
        thread: None,
    }
}

/// The channel under LangGraph's recommended trim, as a budget view: the trim keeps a leading
/// system message and the newest messages from a human one on, so the cut sits before the
/// first kept message after the system one, and the system message is kept above it.
fn checkpoint_budget(
    trimmed: MessagesBudget,
    ids: Vec<String>,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> SessionBudget {
    let messages = trimmed
        .prompt
        .iter()
        .zip(&ids)
        .map(|(message, id)| HistoryMessage {
            message: message.clone(),
            source_id: id.clone(),
            side: match message.role {
                Role::User => Side::Query,
                _ => Side::Answer,
            },
        })
        .collect();
    let history = History {
        window: ids.len(),
        rows_given: ids.len(),
        thread: ids.clone(),
        popped: None,
        paused: Vec::new(),
        messages,
    };
    let mut view = BudgetView::for_history(history, settings, cache);
    let system_kept = trimmed.kept.first() == Some(&true)
        && trimmed.prompt.first().map(|m| m.role) == Some(Role::System);
    let first_after_system = trimmed
        .kept
        .iter()
        .enumerate()
        .skip(usize::from(system_kept))
        .find(|(_, kept)| **kept)
        .map_or(trimmed.kept.len(), |(index, _)| index);
    // Nothing dropped between the system message and the rest: no cut at all.
    let first_kept = match system_kept && first_after_system == 1 {
        true => 0,
        false => first_after_system,
    };
    let kept_above_cut = (system_kept && first_kept > 0).then_some(0);
    view.pruned = Pruned {
        first_kept,
        tokens_before: trimmed.tokens_before,
        tokens_after: trimmed.tokens_after,
    };
    if view.counter_kind != crate::memory::tokens::CounterKind::Zero {
        view.sent_tokens = trimmed.tokens_after;
    }
    SessionBudget {
        rule: format!("the whole channel, cut by {RECOMMENDED_TRIM}"),
        fed: ids,
        left_out: Vec::new(),
        error_text_fed: Vec::new(),
        kept_above_cut,
        warnings: view.warnings(),
        view,
        thread: Some(trimmed),
    }
}
