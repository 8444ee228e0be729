//! What a screen says of itself beside what it draws: the keys it takes, whether a load of its
//! own is under way, where it sits below its tab (the header's breadcrumbs) and what `y` copies
//! there, and which conversation `E` exports. Each screen's state answers in its own module; `AppState::unit` finds the state of a
//! screen, and only while it has something to show, which is what a tab switch restores. A leaf:
//! the screens' states implement it without importing the whole state.

use super::screen::Screen;
use crate::sources::opened::ConversationKey;
use crate::tui::keymap::KeyContext;

/// Which screens a conversation of the open database opens on: those of the capability its
/// source offers for it, the richest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationScreens {
    /// A tree of question-and-answer turns, its regenerations as branches.
    TurnTree,
    /// A thread of checkpoints, and the checkpoint tree behind it.
    CheckpointThread,
    /// Its messages and the memory fed of them, on the session screens.
    Messages,
}

/// What a screen's answers may depend on beyond its own state.
#[derive(Debug, Clone, Copy)]
pub struct Around<'a> {
    /// Which screens the database's conversations open on.
    pub conversation_screens: ConversationScreens,
    /// The open session's id (a session's tree is of it).
    pub open_session: Option<&'a str>,
}

/// A screen's answers about itself, whatever it draws.
pub trait ScreenUnit {
    /// The keys the screen takes with no popup over it.
    fn key_context(&self, around: &Around) -> KeyContext;

    /// Whether a load of the screen's own is under way, for the spinner.
    fn busy(&self) -> bool;

    /// Where the screen sits below its tab's list, for the header; none on a list.
    fn breadcrumbs(&self, _around: &Around) -> Vec<String> {
        Vec::new()
    }

    /// What `y` copies here: what the selected row is, and its id.
    fn selected_id(&self) -> Option<(&'static str, String)>;

    /// Where esc goes from here, while that screen still shows something (else the list);
    /// `None` where esc is no way back (a list, a tab, the doctor's scan).
    fn back_to(&self) -> Option<Screen> {
        None
    }

    /// The open conversation `E` exports here, and the checkpoint it is exported at; none
    /// where no conversation is open.
    fn exported(&self) -> Option<(ConversationKey, Option<String>)> {
        None
    }
}
