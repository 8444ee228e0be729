//! What a source says of how it stores its conversations, as `info` shows it: one line for
//! people and the figures behind it for scripts (a checkpoint saver's threads, checkpoints,
//! writes and bytes). A source that has such figures reads them
//! (`ConversationSource::stored_figures`).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value as Json;

/// A source's figures on its stored conversations, in neutral words.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFigures {
    /// The figures in words: "SqliteSaver: 2 threads, 9 checkpoints, …".
    pub line: String,
    /// Each figure by the name scripts read, in the source's order; written as one JSON object.
    pub figures: Vec<(&'static str, Json)>,
}

impl Serialize for StoredFigures {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.figures.len()))?;
        for (name, value) in &self.figures {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}
