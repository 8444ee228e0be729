//! The turn-tree capability of the database's source (`sources/turn_trees.rs`), which the TUI's
//! conversation screen and `trim --conversation` load their rows through.

use crate::sources::conversation::SourceError;
use crate::sources::turn_trees::TurnTrees;
use crate::sources::turn_trees_of;
use crate::store::{Part, Store};

/// The database's regeneration trees of turns; a database whose source keeps none lacks
/// conversations of that shape, which the error says as a missing part does.
pub fn turn_trees(store: &Store) -> Result<&'static dyn TurnTrees, SourceError> {
    turn_trees_of(store.profile().source).ok_or_else(|| store.lacks(Part::Conversations).into())
}
