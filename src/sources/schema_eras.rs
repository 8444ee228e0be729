//! What a database has of its source's schema eras (the columns and tables that came or went
//! with the app's releases) and what memscope does because of them, as `info` shows it. A
//! source whose schema has eras gives it (`MemorySource::schema_eras`); its reads decide from
//! the catalog themselves.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A database's schema eras, in neutral words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaEras {
    /// Whose schema it is, for "Dify schema with …".
    pub schema: &'static str,
    /// Each optional part, by the name scripts read, and whether the database has it.
    pub parts: EraParts,
    /// The parts found, in words.
    pub found: String,
    /// What memscope does because of them, one line each.
    pub behaviours: Vec<&'static str>,
}

/// Optional parts of a schema and whether a database has each, in the source's order; written
/// as one JSON object of booleans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraParts(pub Vec<(&'static str, bool)>);

impl Serialize for EraParts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, has) in &self.0 {
            map.serialize_entry(name, has)?;
        }
        map.end()
    }
}
