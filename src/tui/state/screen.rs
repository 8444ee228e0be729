//! What is in front: the screen, its tab, and the popup or prompt over it.

use super::chat_memories::MemoryForm;
use super::confirm::Confirm;
use crate::inspect::diff::DiffRow;
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

/// The `:` commands, as the help lists them and an unknown command's message names them.
pub const COMMANDS: [&str; 8] = [
    ":conv ID",
    ":open URL",
    ":doctor",
    ":budget N",
    ":model NAME",
    ":counter NAME",
    ":encoding NAME",
    ":q",
];

/// A text being typed at the bottom of the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    Filter(String),
    Command(String),
    /// A search in the open conversation's, session's or thread's messages.
    Search(String),
}

/// A popup or prompt over the screen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Overlay {
    #[default]
    None,
    Help,
    Prompt(Prompt),
    /// The sync jobs popup.
    Jobs,
    /// The trim preview ([`AppState::trim`]).
    Trim,
    /// A write waiting for yes or no.
    Confirm(Confirm),
    /// A checkpoint prune's plan waiting for yes or no ([`super::AppState::prune`]).
    Prune,
    /// A chat memory form (add, delete).
    Form(MemoryForm),
    /// A value shown whole: a message, the warnings.
    Detail(Detail),
}

/// A popup showing a text whole, wrapped and scrolled: what a cell or a line had to cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    pub title: String,
    pub text: String,
    /// Lines scrolled (the popup clamps it to its height).
    pub scroll: usize,
    /// The popup it was opened over (the jobs list), back in front when it closes.
    pub under: Box<Overlay>,
    /// Texts shown side by side after `text` (a node turn where two records disagree).
    pub comparisons: Vec<TextComparison>,
}

/// Two versions of one text, shown side by side with what differs marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextComparison {
    pub heading: String,
    pub left_title: String,
    pub right_title: String,
    pub rows: Vec<DiffRow>,
}

impl Detail {
    pub fn new(title: String, text: String) -> Detail {
        Detail {
            title,
            text,
            scroll: 0,
            under: Box::default(),
            comparisons: Vec::new(),
        }
    }

    /// The same detail, opened over `under`.
    pub fn over(self, under: Overlay) -> Detail {
        Detail {
            under: Box::new(under),
            ..self
        }
    }
}
