//! What `doctor` reports: one finding per problem, each naming the row an operator should look
//! at, with its kind (for counts and JSON) and one line for a terminal.
//!
//! In JSON a finding has the same keys whatever the source: `kind`, `conversation` (the
//! conversation, session or thread it is about, `null` for the whole database), `description`
//! (the line the CLI prints) and `extra` (the rest of what the finding says).

use serde::{Serialize, Serializer};
use serde_json::json;

use crate::sources::doctor::Found;

/// A finding of the scan of the source that made the database (a Dify conversation's thread,
/// a Langflow session's Agent memory, a LangGraph thread's cost).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding(pub Found);

/// The keys that name a finding's conversation in each source's words, taken out of `extra`.
const CONVERSATION_KEYS: [&str; 3] = ["conversation_id", "session_id", "thread_id"];

impl Serialize for Finding {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Finding(finding) = self;
        let mut extra = finding.extra();
        for key in CONVERSATION_KEYS {
            extra.remove(key);
        }
        json!({
            "kind": self.kind(),
            "conversation": self.conversation_id(),
            "description": self.describe(),
            "extra": extra,
        })
        .serialize(serializer)
    }
}

impl Finding {
    pub fn kind(&self) -> &'static str {
        let Finding(finding) = self;
        finding.kind()
    }

    /// The conversation the finding is about, when it is about one.
    pub fn conversation_id(&self) -> Option<&str> {
        let Finding(finding) = self;
        finding.conversation()
    }

    /// One line for a terminal.
    pub fn describe(&self) -> String {
        let Finding(finding) = self;
        finding.describe()
    }
}
