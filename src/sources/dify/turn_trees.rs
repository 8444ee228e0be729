//! Dify's conversations through the turn-tree capability: the reads of `window.rs`, whose row
//! window rules (the app's memory window, Dify's 500 rows) reach the views as data.

use super::window::{load_conversation, load_window, load_windows};
use crate::sources::conversation::SourceFuture;
use crate::sources::turn_trees::{TurnConversation, TurnTrees, TurnWindow};
use crate::store::Store;

/// The regeneration trees of a Dify database (and of memscope's own schema).
pub struct DifyTurnTrees;

impl TurnTrees for DifyTurnTrees {
    fn conversation<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        requested: Option<i64>,
    ) -> SourceFuture<'a, TurnConversation> {
        Box::pin(load_conversation(store, id, requested))
    }

    fn window<'a>(
        &'a self,
        store: &'a Store,
        id: &'a str,
        requested: Option<i64>,
    ) -> SourceFuture<'a, TurnWindow> {
        Box::pin(async move { Ok(load_window(store, id, requested).await?.0) })
    }

    fn windows<'a>(
        &'a self,
        store: &'a Store,
        ids: &'a [String],
        requested: Option<i64>,
    ) -> SourceFuture<'a, Vec<TurnWindow>> {
        Box::pin(load_windows(store, ids, requested))
    }
}
