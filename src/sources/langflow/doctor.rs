//! `doctor` on a Langflow database: for every (flow, session), what its Agent's chat memory
//! feeds the model with the Agent's defaults (no context id, the newest 100 messages, the flow's
//! owner), and the problems an operator asks about: a session id several flows use, history
//! longer than the window, error text fed as conversation, messages without a flow or owner.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::{count, thousands};

use crate::memory::agent_history::{
    AGENT_DEFAULT_N_MESSAGES, AgentHistoryArgs, LangflowMessage, LeftOut, agent_history,
};
use crate::memory::tokens::{CountCache, TokenCounter};
use crate::sources::conversation::{Extra, SourceFuture};
use crate::sources::doctor::{
    ConversationDoctor, DoctorSettings, FindingTarget, Found, SourceFinding, SourceScan, extra_of,
};
use crate::sources::langflow::conversations::{LangflowConversation, conversations};
use crate::sources::langflow::messages::session_messages;
use crate::sources::opened::ConversationKey;
use crate::store::StoreError;
use crate::store::{CancelFlag, Store};

/// How many conversations one read of the list brings.
const PAGE: u32 = 500;

/// A problem of a Langflow session, as the Agent's memory sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LangflowFinding {
    /// One session id in the messages of several flows (the playground's default names do
    /// this); each flow's Agent reads only its own, but a person reading by session id sees all.
    SharedSession {
        session_id: String,
        /// The flows, as people name them.
        flows: Vec<String>,
    },
    /// More messages would be fed than the Agent's window: the oldest are silently forgotten.
    LongerThanWindow {
        session_id: String,
        flow: String,
        /// The flow's id; `None` for messages written without one.
        flow_id: Option<String>,
        window: u32,
        forgotten: usize,
    },
    /// Messages whose category is `error` without the error flag: their text is fed to the
    /// model as conversation.
    ErrorTextFed {
        session_id: String,
        flow: String,
        /// The flow's id; `None` for messages written without one.
        flow_id: Option<String>,
        message_ids: Vec<String>,
    },
    /// Messages no Agent's memory can read: without a flow (or of a deleted one), or without an
    /// owner.
    Unreachable {
        session_id: String,
        flow: String,
        /// The flow's id; `None` for messages written without one.
        flow_id: Option<String>,
        without_flow: usize,
        without_owner: usize,
    },
    /// What the Agent's memory feeds is over the token budget.
    OverBudget {
        session_id: String,
        flow: String,
        /// The flow's id; `None` for messages written without one.
        flow_id: Option<String>,
        tokens: u64,
        budget: i64,
        messages: usize,
    },
}

/// What one scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LangflowScan {
    /// (flow, session) pairs scanned.
    pub conversations: usize,
    pub messages: usize,
    pub findings: Vec<LangflowFinding>,
}

impl LangflowFinding {
    /// The flow whose session the finding is about; `None` for a session id several flows use,
    /// or for messages without a flow.
    pub fn flow_id(&self) -> Option<&str> {
        match self {
            LangflowFinding::SharedSession { .. } => None,
            LangflowFinding::LongerThanWindow { flow_id, .. }
            | LangflowFinding::ErrorTextFed { flow_id, .. }
            | LangflowFinding::Unreachable { flow_id, .. }
            | LangflowFinding::OverBudget { flow_id, .. } => flow_id.as_deref(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            LangflowFinding::SharedSession { .. } => "shared_session",
            LangflowFinding::LongerThanWindow { .. } => "longer_than_window",
            LangflowFinding::ErrorTextFed { .. } => "error_text_fed",
            LangflowFinding::Unreachable { .. } => "unreachable_messages",
            LangflowFinding::OverBudget { .. } => "over_budget",
        }
    }

    pub fn session_id(&self) -> &str {
        match self {
            LangflowFinding::SharedSession { session_id, .. }
            | LangflowFinding::LongerThanWindow { session_id, .. }
            | LangflowFinding::ErrorTextFed { session_id, .. }
            | LangflowFinding::Unreachable { session_id, .. }
            | LangflowFinding::OverBudget { session_id, .. } => session_id,
        }
    }

    /// One line for a terminal.
    pub fn describe(&self) -> String {
        match self {
            LangflowFinding::SharedSession { session_id, flows } => format!(
                "session {session_id:?} is used by {} flows: {}; each flow's Agent reads only its own",
                flows.len(),
                flows.join(", ")
            ),
            LangflowFinding::LongerThanWindow {
                session_id,
                flow,
                window,
                forgotten,
                ..
            } => format!(
                "session {session_id:?} of {flow}: the Agent's memory feeds the newest {}; {} not fed",
                count(*window, "message"),
                match forgotten {
                    1 => "1 older one is".to_owned(),
                    n => format!("{} older ones are", thousands(*n as u64)),
                }
            ),
            LangflowFinding::ErrorTextFed {
                session_id,
                flow,
                message_ids,
                ..
            } => format!(
                "session {session_id:?} of {flow}: {} without the error flag {} fed to the model \
                 as conversation ({})",
                count(message_ids.len() as u64, "error message"),
                if message_ids.len() == 1 { "is" } else { "are" },
                message_ids.join(", ")
            ),
            LangflowFinding::Unreachable {
                session_id,
                flow,
                without_flow,
                without_owner,
                ..
            } => format!(
                "session {session_id:?} of {flow}: {} without a flow and {} without an owner, \
                 which no Agent's memory reads",
                count(*without_flow as u64, "message"),
                thousands(*without_owner as u64),
            ),
            LangflowFinding::OverBudget {
                session_id,
                flow,
                tokens,
                budget,
                messages,
                ..
            } => format!(
                "session {session_id:?} of {flow}: the Agent's memory feeds {} of {}, over the \
                 budget of {}",
                count(*messages as u64, "message"),
                count(*tokens, "token"),
                thousands(*budget),
            ),
        }
    }
}

impl SourceFinding for LangflowFinding {
    fn kind(&self) -> &'static str {
        LangflowFinding::kind(self)
    }

    fn conversation(&self) -> Option<&str> {
        Some(self.session_id())
    }

    fn describe(&self) -> String {
        LangflowFinding::describe(self)
    }

    fn extra(&self) -> Extra {
        extra_of(self, "session_id")
    }

    fn leads_to(&self) -> FindingTarget {
        match self {
            LangflowFinding::SharedSession { session_id, flows } => FindingTarget::Search {
                text: session_id.clone(),
                why: format!(
                    "session {session_id:?} is used by {} flows: the list shows one row for each",
                    flows.len()
                ),
            },
            _ => FindingTarget::Conversation(ConversationKey::scoped(
                self.session_id(),
                self.flow_id().map(str::to_owned),
            )),
        }
    }
}

/// `doctor` on a Langflow database: every (flow, session) as its Agent's memory reads it.
pub struct LangflowDoctor;

impl ConversationDoctor for LangflowDoctor {
    fn to_scan<'a>(&'a self, store: &'a Store) -> SourceFuture<'a, u64> {
        Box::pin(async move { Ok(messages_to_scan(store).await?) })
    }

    fn scan<'a>(
        &'a self,
        store: &'a Store,
        settings: &'a DoctorSettings,
        stop: &'a CancelFlag,
        progress: &'a mut (dyn FnMut(u64) + Send),
    ) -> SourceFuture<'a, Option<SourceScan>> {
        Box::pin(async move {
            let scan = run_until(store, &settings.counter, settings.budget, stop, progress).await?;
            Ok(scan.map(|scan| SourceScan {
                conversations: scan.conversations,
                messages: scan.messages,
                findings: scan.findings.into_iter().map(Found::new).collect(),
                ..SourceScan::default()
            }))
        })
    }
}

/// How a person names a conversation's flow.
fn flow_label(conversation: &LangflowConversation) -> String {
    match (&conversation.flow, &conversation.flow_id) {
        (Some(name), _) => name.clone(),
        (None, Some(id)) => format!("deleted flow {id}"),
        (None, None) => "no flow".to_owned(),
    }
}

/// The session ids found in several flows' messages, one finding each.
pub fn shared_sessions(conversations: &[LangflowConversation]) -> Vec<LangflowFinding> {
    let mut flows: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for conversation in conversations {
        flows
            .entry(&conversation.id)
            .or_default()
            .push(flow_label(conversation));
    }
    flows
        .into_iter()
        .filter(|(_, flows)| flows.len() > 1)
        .map(|(session_id, mut flows)| {
            flows.sort();
            LangflowFinding::SharedSession {
                session_id: session_id.to_owned(),
                flows,
            }
        })
        .collect()
}

/// The checks of one (flow, session): `rows` are the conversation's messages, oldest first.
pub fn check_session(
    conversation: &LangflowConversation,
    rows: &[LangflowMessage],
    counter: &TokenCounter,
    budget: i64,
    cache: &mut CountCache,
) -> Vec<LangflowFinding> {
    let session_id = conversation.id.clone();
    let flow = flow_label(conversation);
    let mut findings = Vec::new();
    let flow_gone = conversation.flow_id.is_none() || conversation.flow.is_none();
    let without_flow = if flow_gone { rows.len() } else { 0 };
    let without_owner = rows.iter().filter(|m| m.owner.is_none()).count();
    if without_flow + without_owner > 0 {
        findings.push(LangflowFinding::Unreachable {
            session_id: session_id.clone(),
            flow: flow.clone(),
            flow_id: conversation.flow_id.clone(),
            without_flow,
            without_owner,
        });
    }
    let fed = agent_history(
        rows,
        &AgentHistoryArgs {
            flow_id: conversation.flow_id.clone(),
            session_id: session_id.clone(),
            context_id: None,
            owner: conversation.owner.clone(),
            n_messages: Some(AGENT_DEFAULT_N_MESSAGES),
        },
    );
    let forgotten = fed.left_out(LeftOut::PastWindow);
    if forgotten > 0 {
        findings.push(LangflowFinding::LongerThanWindow {
            session_id: session_id.clone(),
            flow: flow.clone(),
            flow_id: conversation.flow_id.clone(),
            window: AGENT_DEFAULT_N_MESSAGES,
            forgotten,
        });
    }
    if !fed.error_text_fed.is_empty() {
        findings.push(LangflowFinding::ErrorTextFed {
            session_id: session_id.clone(),
            flow: flow.clone(),
            flow_id: conversation.flow_id.clone(),
            message_ids: fed.error_text_fed.clone(),
        });
    }
    let history = fed.prompt_history(AGENT_DEFAULT_N_MESSAGES as usize);
    let messages: Vec<_> = history.prompt_messages().cloned().collect();
    let tokens = cache.count_list(counter, &messages);
    if tokens as i128 > budget as i128 {
        findings.push(LangflowFinding::OverBudget {
            session_id,
            flow,
            flow_id: conversation.flow_id.clone(),
            tokens,
            budget,
            messages: messages.len(),
        });
    }
    findings
}

/// Every conversation of the database, newest activity first.
async fn all_conversations(store: &Store) -> Result<Vec<LangflowConversation>, StoreError> {
    let mut all = Vec::new();
    loop {
        let page = conversations(store, None, all.len() as u64, PAGE).await?;
        all.extend(page.conversations);
        if !page.has_more {
            return Ok(all);
        }
    }
}

/// Scans every (flow, session) until `stop` is cancelled (then `None`), telling `progress` how
/// many messages it has read after each.
pub async fn run_until(
    store: &Store,
    counter: &TokenCounter,
    budget: i64,
    stop: &CancelFlag,
    mut progress: impl FnMut(u64),
) -> Result<Option<LangflowScan>, StoreError> {
    let conversations = all_conversations(store).await?;
    let mut report = LangflowScan {
        conversations: conversations.len(),
        findings: shared_sessions(&conversations),
        ..LangflowScan::default()
    };
    let mut cache = CountCache::new(4_096);
    for conversation in &conversations {
        if stop.is_cancelled() {
            return Ok(None);
        }
        let rows =
            session_messages(store, &conversation.id, conversation.flow_id.as_deref()).await?;
        // Without a flow id the read above has every flow's rows; keep the flowless ones.
        let rows: Vec<LangflowMessage> = rows
            .into_iter()
            .filter(|m| conversation.flow_id.is_some() || m.flow_id.is_none())
            .collect();
        report.messages += rows.len();
        report.findings.extend(check_session(
            conversation,
            &rows,
            counter,
            budget,
            &mut cache,
        ));
        progress(report.messages as u64);
    }
    Ok(Some(report))
}

/// How many messages a scan reads, for a progress gauge: a count, so rows written since may
/// take a scan past it.
pub async fn messages_to_scan(store: &Store) -> Result<u64, StoreError> {
    let conversations = all_conversations(store).await?;
    Ok(conversations.iter().map(|c| c.messages.max(0) as u64).sum())
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
