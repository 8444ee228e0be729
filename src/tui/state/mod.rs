//! Everything the TUI shows, as plain data: no terminal, no database. [`super::update`] changes
//! it; the components in [`super::ui`] draw it.
//!
//! Each screen's state is in its own module; this one holds the whole ([`AppState`]) and
//! re-exports the parts.

use super::keymap::{KeyContext, Keymap};
use crate::sources::conversation::{ConversationSource, ListColumn, ListSearch};

mod budget;
pub mod chat_memories;
pub mod checkpoints;
pub mod confirm;
mod conversation;
pub mod doctor;
pub mod form;
mod list;
mod load;
pub mod memory_bases;
mod nodes;
mod overlay;
pub mod prune;
mod screen;
pub mod screen_unit;
pub mod search;
pub mod session;
mod settings;
pub mod tree_screen;
pub mod tree_view;
pub mod trim;

pub use budget::{BudgetPanelState, BudgetRows};
pub use conversation::{ConversationState, DemoState, Loaded};
pub use list::{ListState, MatchSnippet, PAGE_SIZE, PagePosition, key_of};
pub use load::LoadStatus;
pub use nodes::{NodeRow, NodesState};
pub use overlay::{COMMANDS, Detail, FormPopup, FormPurpose, Overlay, Prompt, TextComparison};
pub use screen::{Screen, Tab};
pub use screen_unit::{ConversationScreens, ScreenUnit};
pub use settings::{BUDGET_STEP, MAX_BUDGET, MODELS, Settings, parse_budget};

use crate::memory::budget_view::BudgetView;
use chat_memories::ChatMemoriesState;
use checkpoints::CheckpointsState;
use doctor::DoctorState;
use memory_bases::{JobsState, MemoryBasesState};
use prune::{PruneState, UndoAsk};
use screen_unit::Around;
use session::SessionState;
use tree_screen::TreeScreenState;
use trim::{SummarizerInfo, TrimState};

/// How many messages `!` keeps: the newest, enough for a session's work.
pub const MESSAGE_LOG_LIMIT: usize = 200;

/// Ticks (of [`super::TICK`]) between two polls of the database for new messages.
pub const POLL_EVERY_TICKS: u64 = 8;

/// The whole state of the TUI.
#[derive(Debug, Clone)]
pub struct AppState {
    pub keymap: Keymap,
    pub screen: Screen,
    /// The screen the conversations tab shows when it is brought back to the front.
    pub conversations_screen: Screen,
    /// The conversation list, whatever the source.
    pub list: ListState,
    pub conversation: Option<ConversationState>,
    pub settings: Settings,
    pub overlay: Overlay,
    /// Lines the help popup is scrolled by.
    pub help_scroll: usize,
    /// The popup the help was opened over, back when the help closes.
    pub under_help: Overlay,
    /// The database, password redacted.
    pub database: String,
    pub read_only: bool,
    /// Whether the database's source trims a stored conversation in place (the command line
    /// applies it, archived for undo).
    pub trims_in_place: bool,
    /// Problems found in settings or data, counted in the status bar.
    pub config_warnings: Vec<String>,
    /// The last command-line or job message.
    pub message: Option<String>,
    /// This session's messages and memory-base warnings, oldest first, for `!` ([`MESSAGE_LOG_LIMIT`] kept).
    pub message_log: Vec<String>,
    /// The first run on the embedded demo: a footer line explains its warning and names help,
    /// until `!` or `?` has been pressed.
    pub first_run_hint: bool,
    pub ticks: u64,
    /// Whether the previous frame is out of date.
    pub dirty: bool,
    pub quit: bool,
    /// Source of generation numbers for "latest request wins".
    pub next_generation: u64,
    pub memory_bases: MemoryBasesState,
    /// Sync jobs, for the jobs popup and the status bar.
    pub jobs: JobsState,
    pub chat_memories: ChatMemoriesState,
    /// The trim preview, open over any history.
    pub trim: Option<TrimState>,
    pub summarizer: SummarizerInfo,
    /// Tabs whose part this database does not hold, with the reason shown in their place.
    pub missing_tabs: Vec<(Tab, String)>,
    pub budget_panel: BudgetPanelState,
    /// The doctor view's scan, from its start until the view is closed.
    pub doctor: Option<DoctorState>,
    /// Which screens the database's conversations open on.
    pub conversation_screens: ConversationScreens,
    /// What one conversation is called here ("session", "thread"), as its source says.
    pub noun: &'static str,
    /// What a doctor scan counts here, singular: "message", "checkpoint".
    pub scan_unit: &'static str,
    /// The columns its source adds to a short list, each a key of a row's extras.
    pub list_columns: Vec<ListColumn>,
    /// What its source's list search reads, to say where a row matched.
    pub list_search: ListSearch,
    /// The open session or thread.
    pub session: Option<SessionState>,
    /// The open session's tree (`t`), where its source's tree is not a checkpoint tree.
    pub tree: Option<TreeScreenState>,
    /// The open LangGraph thread's checkpoint tree.
    pub checkpoints: Option<CheckpointsState>,
    /// A checkpoint prune being planned or confirmed (the prune popup).
    pub prune: Option<PruneState>,
    /// `u` on a thread, while what it undoes is looked for.
    pub undo: Option<UndoAsk>,
    /// The database `:open` is opening, until it opened or failed.
    pub opening: Option<Opening>,
    /// The generation of the export under way (`E`).
    pub exporting: Option<u64>,
}

/// A database being opened in place of this one (`:open URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub generation: u64,
    /// Its URL, password removed.
    pub url: String,
}

impl AppState {
    pub fn new(keymap: Keymap, settings: Settings, database: String, read_only: bool) -> AppState {
        AppState {
            keymap,
            screen: Screen::Conversations,
            conversations_screen: Screen::Conversations,
            list: ListState::default(),
            conversation: None,
            settings,
            overlay: Overlay::None,
            help_scroll: 0,
            under_help: Overlay::None,
            database,
            read_only,
            trims_in_place: false,
            config_warnings: Vec::new(),
            message: None,
            message_log: Vec::new(),
            first_run_hint: false,
            ticks: 0,
            dirty: true,
            quit: false,
            next_generation: 1,
            memory_bases: MemoryBasesState::default(),
            jobs: JobsState::default(),
            chat_memories: ChatMemoriesState::default(),
            trim: None,
            summarizer: SummarizerInfo::default(),
            missing_tabs: Vec::new(),
            budget_panel: BudgetPanelState::default(),
            doctor: None,
            conversation_screens: ConversationScreens::TurnTree,
            noun: "conversation",
            scan_unit: "message",
            list_columns: Vec::new(),
            list_search: ListSearch::default(),
            session: None,
            tree: None,
            checkpoints: None,
            prune: None,
            undo: None,
            opening: None,
            exporting: None,
        }
    }

    /// Whether `action` is offered here: creating and deleting a memory base are not where
    /// the database's source refuses them, switching views only where there are several, and
    /// undoing a session's trim only where its source trims in place.
    pub fn offers(&self, action: super::action::Action) -> bool {
        use super::action::Action;
        match action {
            Action::CreateBase | Action::DeleteBase => self.memory_bases.refused_changes.is_none(),
            // Only a conversation with several views has another to switch to.
            Action::NextView => self
                .session
                .as_ref()
                .and_then(|s| s.view.as_ref())
                .is_some_and(|v| v.views.is_some()),
            // An open session has a trim to undo only where its source trims in place.
            Action::Undo if self.screen == Screen::Session => self.trims_in_place,
            _ => true,
        }
    }

    /// Names and lists conversations as `conversations` (a source's capability) does.
    pub fn keeps(&mut self, conversations: &'static dyn ConversationSource) {
        self.noun = conversations.noun();
        let columns = conversations.list_columns().iter();
        self.list_columns = columns.filter(|column| column.brief).copied().collect();
        self.list_search = conversations.list_search();
    }

    /// Whether the list counts each row's tokens: only a tree of turns has a latest thread to
    /// count; a session's budget is counted when it is opened.
    pub fn list_counts_tokens(&self) -> bool {
        self.conversation_screens == ConversationScreens::TurnTree
    }

    /// Whether the list's rows open on the session screens rather than on a regeneration
    /// tree of turns.
    pub fn lists_sessions(&self) -> bool {
        self.conversation_screens != ConversationScreens::TurnTree
    }

    /// Where keys go now: the popup in front, else the screen.
    pub fn key_context(&self) -> KeyContext {
        if self.overlay == Overlay::Help {
            return KeyContext::Help;
        }
        self.context_with(&self.overlay)
    }

    /// The context the help popup describes first: the one it was opened over.
    pub fn help_context(&self) -> KeyContext {
        match self.overlay {
            Overlay::Help => self.context_with(&self.under_help),
            _ => self.key_context(),
        }
    }

    fn context_with(&self, overlay: &Overlay) -> KeyContext {
        match overlay {
            Overlay::Trim => KeyContext::TrimPreview,
            Overlay::Confirm(_) => KeyContext::Confirm,
            Overlay::Prune => KeyContext::Prune,
            Overlay::Form(_) => KeyContext::Form,
            Overlay::Jobs => KeyContext::Jobs,
            Overlay::Detail(_) => KeyContext::Detail,
            Overlay::None | Overlay::Help | Overlay::Prompt(_) => self.screen_key_context(),
        }
    }

    /// The budget the conversation screen shows: the node context's with the nodes pane open,
    /// else the thread's.
    pub fn shown_budget(&self) -> Option<&BudgetView> {
        if self.screen == Screen::Session {
            return self.session.as_ref()?.budget.as_ref().map(|b| &b.view);
        }
        let conversation = self.conversation.as_ref()?;
        match &conversation.nodes {
            Some(nodes) => nodes.context.as_ref().map(|view| &view.budget),
            None => conversation.budget.as_ref(),
        }
    }

    /// The open nodes pane.
    pub fn nodes(&self) -> Option<&NodesState> {
        self.conversation.as_ref()?.nodes.as_ref()
    }

    pub fn generation(&mut self) -> u64 {
        self.next_generation += 1;
        self.next_generation
    }

    /// Why `tab` is empty, when this database does not hold its part.
    pub fn tab_missing(&self, tab: Tab) -> Option<&str> {
        self.missing_tabs
            .iter()
            .find(|(missing, _)| *missing == tab)
            .map(|(_, why)| why.as_str())
    }

    /// Shows `message` in the status line and keeps it in the log `!` opens.
    pub fn say(&mut self, message: String) {
        self.log(message.clone());
        self.message = Some(message);
    }

    /// Adds `entry` to the log unless it is the newest entry already (a refusal repeated).
    pub fn log(&mut self, entry: String) {
        if self.message_log.last() == Some(&entry) {
            return;
        }
        if self.message_log.len() == MESSAGE_LOG_LIMIT {
            self.message_log.remove(0);
        }
        self.message_log.push(entry);
    }

    /// Whether any background load is under way, for the spinner: the list's (which loads
    /// behind the other screens too), the screen in front's, a prune's plan, a database being
    /// opened, a trim preview's count or summary, or a chat memory being written.
    pub fn busy(&self) -> bool {
        let screen_busy = self.unit(self.screen).is_some_and(|unit| unit.busy());
        let planning = self.prune.as_ref().is_some_and(|p| p.status.is_loading());
        let trim = self.trim.as_ref().is_some_and(|t| {
            t.status.is_loading()
                || t.summary_status
                    .as_ref()
                    .is_some_and(LoadStatus::is_loading)
        });
        self.list.status.is_loading()
            || screen_busy
            || planning
            || self.opening.is_some()
            || trim
            || self.chat_memories.writing
    }

    /// Warnings in effect: settings, the open conversation's anomalies, its budget, memory-base
    /// mismatches and the watcher's failure.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.config_warnings.clone();
        warnings.extend(self.memory_bases.warnings());
        warnings.extend(self.jobs.watcher_error.clone());
        if let Some(session) = self.session.as_ref() {
            warnings.extend(session.view.iter().flat_map(|v| v.warnings.iter().cloned()));
            warnings.extend(
                session
                    .budget
                    .iter()
                    .flat_map(|b| b.warnings.iter().cloned()),
            );
        }
        if let Some(conversation) = self.conversation.as_ref() {
            if let Some(loaded) = &conversation.loaded {
                warnings.extend(loaded.tree.anomalies().iter().map(ToString::to_string));
            }
            if let Some(budget) = &conversation.budget {
                warnings.extend(budget.warnings());
            }
            if let Some(view) = conversation.nodes.as_ref().and_then(|n| n.context.as_ref()) {
                warnings.extend(view.budget.warnings());
            }
        }
        warnings
    }
}

impl AppState {
    /// What the screens' answers depend on beyond their own state.
    fn around(&self) -> Around<'_> {
        Around {
            conversation_screens: self.conversation_screens,
            open_session: self.session.as_ref().map(|s| s.key.id.as_str()),
        }
    }

    /// The state of `screen`: a list's always, an opened one's (a conversation, session, thread,
    /// tree or scan) once it was opened.
    pub fn unit(&self, screen: Screen) -> Option<&dyn ScreenUnit> {
        fn unit<T: ScreenUnit>(state: &T) -> &dyn ScreenUnit {
            state
        }
        match screen {
            Screen::Conversations => Some(&self.list),
            Screen::ChatMemories => Some(&self.chat_memories),
            Screen::MemoryBases => Some(&self.memory_bases),
            Screen::Conversation => self.conversation.as_ref().map(unit),
            Screen::Session => self.session.as_ref().map(unit),
            Screen::Doctor => self.doctor.as_ref().map(unit),
            Screen::Checkpoints => self.checkpoints.as_ref().map(unit),
            Screen::Tree => self.tree.as_ref().map(unit),
        }
    }

    /// Whether `screen` has what it shows: a list always, an opened one once it was opened.
    pub fn is_open(&self, screen: Screen) -> bool {
        self.unit(screen).is_some()
    }

    /// The keys the screen in front takes with no popup over it. A screen whose state is gone
    /// takes the list's.
    fn screen_key_context(&self) -> KeyContext {
        let unit = self.unit(self.screen).unwrap_or(&self.list);
        unit.key_context(&self.around())
    }

    /// The header's breadcrumbs for the screen in front.
    pub fn breadcrumbs(&self) -> Vec<String> {
        self.unit(self.screen)
            .map_or_else(Vec::new, |unit| unit.breadcrumbs(&self.around()))
    }

    /// What `y` copies on the screen in front.
    pub fn selected_id(&self) -> Option<(&'static str, String)> {
        self.unit(self.screen)?.selected_id()
    }
}
