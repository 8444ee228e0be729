//! Langflow's conversations: its `message` table read as one conversation per (flow, session),
//! a session's messages, and the rows its Agent's chat memory reads
//! ([`crate::memory::agent_history`] computes what that memory feeds the model).

pub mod conversations;
pub mod messages;

pub use conversations::{LangflowConversation, LangflowConversationPage, conversations};
pub use messages::{FlowRef, SessionFlows, session_flows, session_messages};
