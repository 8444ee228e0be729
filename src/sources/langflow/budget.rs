//! What the Agent's chat memory feeds the model of a session, counted under a token budget,
//! with what an operator should know about it.

use crate::memory::agent_history::{AgentHistory, LeftOut};
use crate::memory::budget_view::{BudgetSettings, BudgetView};
use crate::memory::tokens::CountCache;
use crate::sources::conversation::LeftOutCount;

/// A session's Agent memory read under a budget.
#[derive(Debug, Clone)]
pub struct AgentBudget {
    pub view: BudgetView,
    /// The rule that chose the messages, in words.
    pub rule: String,
    /// Ids of the messages the model is fed, before the token cut.
    pub fed: Vec<String>,
    /// Messages of the session not fed, per reason: only counted.
    pub left_out: Vec<(LeftOut, usize)>,
    /// Fed messages whose category is error: their text reaches the model.
    pub error_text_fed: Vec<String>,
    pub warnings: Vec<String>,
}

/// What the Agent's memory read `fed` gives the model with `n_messages`, counted; `owned`: the
/// flow has an owner to scope the read to.
pub fn agent_budget(
    fed: &AgentHistory,
    n_messages: u32,
    owned: bool,
    settings: &BudgetSettings,
    cache: &mut CountCache,
) -> AgentBudget {
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
    AgentBudget {
        rule: format!(
            "the Agent's memory: the newest {n_messages} messages of this flow, session and owner \
             without the error flag"
        ),
        fed: fed.messages.iter().map(|m| m.id.clone()).collect(),
        left_out: fed.left_out.clone(),
        error_text_fed: fed.error_text_fed.clone(),
        warnings,
        view,
    }
}

/// Messages left out per reason, as every source counts them.
pub fn counted(left_out: &[(LeftOut, usize)]) -> Vec<LeftOutCount> {
    left_out
        .iter()
        .map(|(reason, count)| LeftOutCount {
            reason: serde_json::json!(reason)
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            description: reason.describe().to_owned(),
            short: reason.short().to_owned(),
            messages: *count,
        })
        .collect()
}
