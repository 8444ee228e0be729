//! What is in front: the screen and its tab. A leaf, so that every screen's state can name
//! where esc goes.

use crate::store::Part;

/// Which screen is in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Conversations,
    Conversation,
    /// A conversation without a regeneration tree: a Langflow session, a LangGraph thread.
    Session,
    ChatMemories,
    MemoryBases,
    /// The doctor's scan of the whole database, opened from the conversation list.
    Doctor,
    /// A LangGraph thread: its checkpoint tree and the selected checkpoint.
    Checkpoints,
    /// An open session's tree: its invocations, branches or log, the path the model sees marked.
    Tree,
}

impl Screen {
    pub fn tab(self) -> Tab {
        match self {
            Screen::Conversations
            | Screen::Conversation
            | Screen::Session
            | Screen::Doctor
            | Screen::Checkpoints
            | Screen::Tree => Tab::Conversations,
            Screen::ChatMemories => Tab::ChatMemories,
            Screen::MemoryBases => Tab::MemoryBases,
        }
    }
}

/// The top-level tabs: one per kind of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Conversations,
    ChatMemories,
    MemoryBases,
}

impl Tab {
    pub const ALL: [Tab; 3] = [Tab::Conversations, Tab::ChatMemories, Tab::MemoryBases];

    /// The part of a database the tab shows.
    pub fn part(self) -> Part {
        match self {
            Tab::Conversations => Part::Conversations,
            Tab::ChatMemories => Part::ChatMemories,
            Tab::MemoryBases => Part::MemoryBases,
        }
    }

    /// The tab's label: the first is named by what the database's conversations are
    /// (`conversation`: "Conversations", `thread`: "Threads").
    pub fn title(self, conversation_noun: &str) -> String {
        match self {
            Tab::Conversations => {
                let mut letters = conversation_noun.chars();
                letters.next().map_or_else(String::new, |first| {
                    format!("{}{}s", first.to_uppercase(), letters.as_str())
                })
            }
            Tab::ChatMemories => "Chat memories".to_owned(),
            Tab::MemoryBases => "Memory bases".to_owned(),
        }
    }

    /// The tab `step` places after this one, wrapping around.
    pub fn cycled(self, step: isize) -> Tab {
        let at = Tab::ALL.iter().position(|t| *t == self).unwrap_or(0) as isize;
        let len = Tab::ALL.len() as isize;
        Tab::ALL[(at + step).rem_euclid(len) as usize]
    }
}
