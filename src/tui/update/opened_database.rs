//! A database opened for the app (at start-up, or by `:open`): the store the job runner works
//! on, and what the state takes of it. A leaf: the effects carry it, and `database.rs` and the
//! runner make it.

use crate::inspect::doctor::scanned_unit;
use crate::inspect::document::conversations_of;
use crate::inspect::stored_trim::stored_trim_of;
use crate::sources::conversation::ConversationSource;
use crate::sources::{MemorySource, checkpoint_history_of, turn_trees_of};
use crate::store::{BaseChange, Ingestion, Part, Profile, Store};
use crate::tui::state::memory_bases::RefusedChanges;
use crate::tui::state::{AppState, ConversationScreens, Tab};

/// A database opened for the app: the store the job runner switches to, and what the state
/// takes of it.
#[derive(Clone)]
pub struct OpenedDatabase {
    pub store: Store,
    /// Its URL, password removed.
    pub database: String,
    pub read_only: bool,
    /// The tabs whose part it lacks, each with the line that says why.
    pub missing_tabs: Vec<(Tab, String)>,
    /// Which screens its conversations open on.
    pub conversation_screens: ConversationScreens,
    /// Its source's conversations, where it keeps any.
    pub conversations: Option<&'static dyn ConversationSource>,
    /// What a doctor scan counts in it, singular.
    pub scan_unit: &'static str,
    /// What `n` and `D` answer where its memory bases are never created or deleted here.
    pub refused_changes: Option<RefusedChanges>,
    /// Whether its source trims a stored conversation in place (an OpenAI Agents SDK session).
    pub trims_in_place: bool,
}

impl std::fmt::Debug for OpenedDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedDatabase")
            .field("database", &self.database)
            .field("read_only", &self.read_only)
            .field("conversation_screens", &self.conversation_screens)
            .finish_non_exhaustive()
    }
}

impl OpenedDatabase {
    pub fn of(store: Store) -> OpenedDatabase {
        let profile = store.profile();
        OpenedDatabase {
            conversations: conversations_of(&store).ok(),
            scan_unit: scanned_unit(&store),
            database: store.url().to_owned(),
            read_only: store.is_read_only(),
            missing_tabs: missing_tabs(profile),
            conversation_screens: conversation_screens(profile.source),
            refused_changes: refused_changes(profile),
            trims_in_place: stored_trim_of(&store).is_some(),
            store,
        }
    }
}

/// Whether memscope syncs this database's memory bases (not on a database Langflow made).
pub fn syncs_here(store: &Store) -> bool {
    store.profile().has(Part::MemoryBases)
        && store.profile().capabilities().ingestion == Ingestion::Memscope
}

/// Which screens `source`'s conversations open on: its turn trees' where it has them, else its
/// checkpoint history's, else its messages on the session screens.
fn conversation_screens(source: &dyn MemorySource) -> ConversationScreens {
    if turn_trees_of(source).is_some() {
        ConversationScreens::TurnTree
    } else if checkpoint_history_of(source).is_some() {
        ConversationScreens::CheckpointThread
    } else {
        ConversationScreens::Messages
    }
}

/// The tabs whose part the database lacks, each with the line that says why. Turn trees are
/// kept in the conversation tables, which a database of memscope's own schema may lack; every
/// other source that is recognised holds what its conversations tab lists.
fn missing_tabs(profile: &Profile) -> Vec<(Tab, String)> {
    let held = |tab: Tab| match tab {
        Tab::Conversations if turn_trees_of(profile.source).is_none() => true,
        Tab::Conversations | Tab::ChatMemories | Tab::MemoryBases => profile.has(tab.part()),
    };
    Tab::ALL
        .into_iter()
        .filter(|tab| !held(*tab))
        .map(|tab| (tab, format!("This is {}.", profile.lacks(tab.part()))))
        .collect()
}

fn refused_changes(profile: &Profile) -> Option<RefusedChanges> {
    Some(RefusedChanges {
        create: profile.refuses_base_change(BaseChange::Create)?,
        delete: profile.refuses_base_change(BaseChange::Delete)?,
    })
}

/// Takes what a newly opened database gives the state; the first start-up did it too.
pub fn take(state: &mut AppState, database: &OpenedDatabase) {
    state.database = database.database.clone();
    state.read_only = database.read_only;
    state.missing_tabs = database.missing_tabs.clone();
    state.conversation_screens = database.conversation_screens;
    state.scan_unit = database.scan_unit;
    if let Some(conversations) = database.conversations {
        state.keeps(conversations);
    }
    state.memory_bases.refused_changes = database.refused_changes.clone();
    state.trims_in_place = database.trims_in_place;
}
