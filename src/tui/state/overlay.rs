//! What is over the screen: the popup or the prompt, and the `:` commands a prompt takes.

use super::chat_memories::MemoryForm;
use super::confirm::Confirm;
use super::form::Form;
use super::memory_bases::BaseForm;
use crate::inspect::diff::DiffRow;

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
    /// A form: a chat memory's add or delete, a memory base's threshold, search or creation.
    Form(FormPopup),
    /// A value shown whole: a message, the warnings.
    Detail(Detail),
}

/// A form over the screen: its fields, what submitting it does, and how it went. Every form of
/// the TUI is one of these, with the same keys and the same popup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormPopup {
    pub title: String,
    pub purpose: FormPurpose,
    pub form: Form,
    /// What the popup says while nothing is wrong (what a field takes, say).
    pub note: Option<String>,
    /// Why the last submit was refused.
    pub error: Option<String>,
    /// Submitted, and waiting for the database's answer (what it checks): only esc acts meanwhile.
    pub waiting: Option<String>,
}

/// What submitting a form does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormPurpose {
    ChatMemory(MemoryForm),
    MemoryBase(BaseForm),
}

impl FormPopup {
    pub fn new(title: String, purpose: FormPurpose, form: Form) -> FormPopup {
        FormPopup {
            title,
            purpose,
            form,
            note: None,
            error: None,
            waiting: None,
        }
    }

    pub fn with_note(self, note: impl Into<String>) -> FormPopup {
        FormPopup {
            note: Some(note.into()),
            ..self
        }
    }

    /// The same form, open again with why its submit was refused.
    pub fn refused(self, error: String) -> FormPopup {
        FormPopup {
            error: Some(error),
            waiting: None,
            ..self
        }
    }

    /// The same form, waiting for the database to check `what`.
    pub fn waiting_for(self, what: impl Into<String>) -> FormPopup {
        FormPopup {
            error: None,
            waiting: Some(what.into()),
            ..self
        }
    }
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
