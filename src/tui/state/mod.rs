//! Everything the TUI shows, as plain data: no terminal, no database. [`super::update`] changes
//! it; the components in [`super::ui`] draw it.

use std::cell::Cell;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::config::Resolved;
use crate::inspect::budget::{BudgetSettings, BudgetView};
use crate::inspect::conversation::{LoadedConversation, ThreadMode, ThreadNodes, effective_window};
use crate::inspect::nodes::{
    ContextSource, EmptyState, LatestContext, NodeContextView, NodeSummary, NodeThread, Timeline,
};
use crate::memory::history::HistoryOptions;
use crate::memory::model::StoredMessage;
use crate::memory::thread::ExtractionTrace;
use crate::memory::tokens::{CounterKind, Encoding, TokenCounter};
use crate::memory::tree::{MessageTree, NodeIndex};
use crate::store::Part;
use crate::store::{ConversationCursor, ConversationSummary};

use super::keymap::{KeyContext, Keymap};

pub mod chat_memories;
pub mod doctor;
pub mod form;
pub mod memory_bases;
pub mod tree_view;
pub mod trim;

use chat_memories::{ChatMemoriesState, Confirm, MemoryForm};
use doctor::DoctorState;
use memory_bases::{Dialog, JobsState, MemoryBasesState};
use tree_view::{ThreadMarks, TreeLines};
use trim::{SummarizerInfo, TrimState};

/// Conversations per list page: a keyset page, so every page costs the same.
pub const PAGE_SIZE: i64 = 50;
/// Ticks (of [`super::TICK`]) between two polls of the database for new messages.
pub const POLL_EVERY_TICKS: u64 = 8;
/// How much one `+`/`-` changes the budget.
pub const BUDGET_STEP: i64 = 250;
/// The largest budget: beyond any model's context window.
pub const MAX_BUDGET: i64 = 10_000_000;

/// A budget as typed on the command line or read from the config: 0 to [`MAX_BUDGET`] tokens.
pub fn parse_budget(text: &str) -> Result<i64, String> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(n) if (0..=MAX_BUDGET).contains(&n) => Ok(n),
        Ok(n) if n < 0 => Err(format!("budget {n} is below 0")),
        _ if text
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
            && !text.is_empty() =>
        {
            Err(format!(
                "budget {text} is above the largest, {MAX_BUDGET} tokens"
            ))
        }
        _ => Err(format!("budget {text:?} is not a whole number of tokens")),
    }
}

/// Models the model key cycles through (the configured one is added first if missing).
pub const MODELS: [&str; 6] = [
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-3-5-sonnet",
];

/// Where a view's data stands. Each pane shows it, so nothing is ever silently blank.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LoadStatus {
    #[default]
    Loading,
    Loaded,
    Failed(String),
}

impl LoadStatus {
    pub fn is_loading(&self) -> bool {
        matches!(self, LoadStatus::Loading)
    }
}

/// How budgets are computed; the keys of the budget panel change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub models: Vec<String>,
    pub model_index: usize,
    pub counter: CounterKind,
    /// `None`: the model's own encoding.
    pub encoding: Option<Encoding>,
    pub budget: i64,
    /// `history.message_limit` from the config (0 or less: none requested).
    pub message_limit: i64,
    /// Whether the app's memory window is honoured; off shows Dify's 500-row default.
    pub app_window: bool,
}

impl Settings {
    /// The configured settings; unknown counter or encoding names fall back to the defaults,
    /// which the status bar reports as a warning.
    pub fn from_config(resolved: &Resolved) -> (Settings, Vec<String>) {
        let tokens = &resolved.config.tokens;
        let mut warnings = Vec::new();
        let counter = tokens.counter.parse().unwrap_or_else(|_| {
            warnings.push(format!(
                "unknown counter {:?}: using openai",
                tokens.counter
            ));
            CounterKind::OpenAi
        });
        let encoding = match tokens.encoding.as_str() {
            "" => None,
            name => name.parse().map_or_else(
                |_| {
                    warnings.push(format!("unknown encoding {name:?}: using the model's"));
                    None
                },
                Some,
            ),
        };
        let mut models: Vec<String> = MODELS.iter().map(|m| (*m).to_owned()).collect();
        let model_index = models
            .iter()
            .position(|m| *m == tokens.model)
            .unwrap_or_else(|| {
                models.insert(0, tokens.model.clone());
                0
            });
        let budget = parse_budget(&tokens.budget.to_string()).unwrap_or_else(|e| {
            warnings.push(format!("[tokens] {e}: using 2000"));
            2000
        });
        let settings = Settings {
            models,
            model_index,
            counter,
            encoding,
            budget,
            message_limit: resolved.config.history.message_limit,
            app_window: true,
        };
        (settings, warnings)
    }

    pub fn model(&self) -> &str {
        &self.models[self.model_index]
    }

    pub fn counter(&self) -> TokenCounter {
        match self.encoding {
            Some(encoding) => TokenCounter::with_encoding(self.counter, encoding),
            None => TokenCounter::for_model(self.counter, self.model()),
        }
    }

    pub fn budget_settings(&self) -> BudgetSettings {
        BudgetSettings {
            counter: self.counter(),
            max_tokens: self.budget,
            model: self.model().to_owned(),
            options: HistoryOptions::default(),
        }
    }

    /// The row window for a conversation whose app has `app_window`.
    pub fn window(&self, app_window: Option<i64>) -> usize {
        let app = app_window.filter(|_| self.app_window);
        effective_window(Some(self.message_limit), app).0
    }
}

/// The conversation list: one keyset page at a time.
#[derive(Debug, Clone, Default)]
pub struct ListState {
    pub status: LoadStatus,
    pub rows: Vec<ConversationSummary>,
    pub selected: usize,
    /// The applied `/` filter.
    pub filter: String,
    /// Conversations deleted in Dify are listed (marked), as `x` toggles; hidden by default.
    pub include_deleted: bool,
    /// Cursors of the pages before the shown one, and the shown page's own: they describe
    /// `rows`, so the page number always matches what is on screen.
    pub previous_pages: Vec<Option<ConversationCursor>>,
    pub page_after: Option<ConversationCursor>,
    /// The page being loaded, which becomes the shown one when its rows arrive.
    pub loading_page: Option<PagePosition>,
    /// Page steps (`]` +1, `[` -1) pressed while a page loads: each is taken from the page that
    /// actually loaded, never from rows still on screen.
    pub queued_steps: i64,
    pub generation: u64,
    /// Tokens of each listed conversation's latest thread, filled in by a background job.
    pub thread_tokens: rustc_hash::FxHashMap<String, u64>,
    pub tokens_generation: u64,
    /// Rows a search that scans has found so far, shown while it runs (a scan reports each
    /// row as it finds it); emptied when the page arrives.
    pub found_so_far: Vec<ConversationSummary>,
}

/// Where a list page starts: the cursors of the pages before it and its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagePosition {
    pub previous_pages: Vec<Option<ConversationCursor>>,
    pub after: Option<ConversationCursor>,
}

impl PagePosition {
    pub fn number(&self) -> usize {
        self.previous_pages.len() + 1
    }
}

impl ListState {
    pub fn has_next_page(&self) -> bool {
        self.rows.len() as i64 >= PAGE_SIZE
    }

    /// The number of the page whose rows are shown.
    pub fn page_number(&self) -> usize {
        self.previous_pages.len() + 1
    }

    /// The page the keys pressed so far lead to, while it loads: `None` when the shown page is
    /// the last one asked for.
    pub fn target_page(&self) -> Option<usize> {
        let loading = self.loading_page.as_ref()?;
        let target = loading.number() as i64 + self.queued_steps;
        Some(target.max(1) as usize)
    }

    /// The cursor the next list load starts after: the loading page's, else the shown one's.
    pub fn requested_after(&self) -> Option<ConversationCursor> {
        match &self.loading_page {
            Some(page) => page.after.clone(),
            None => self.page_after.clone(),
        }
    }

    /// The position `step` pages (+1 or -1) from the shown page, if there is such a page.
    pub fn step_from_shown(&self, step: i64) -> Option<PagePosition> {
        if step > 0 {
            if !self.has_next_page() {
                return None;
            }
            let mut previous_pages = self.previous_pages.clone();
            previous_pages.push(self.page_after.clone());
            let after = self.rows.last().map(ConversationSummary::cursor);
            Some(PagePosition {
                previous_pages,
                after,
            })
        } else {
            let mut previous_pages = self.previous_pages.clone();
            let after = previous_pages.pop()?;
            Some(PagePosition {
                previous_pages,
                after,
            })
        }
    }

    /// Back to the first page (a new filter, or the filter cleared).
    pub fn reset_pages(&mut self) {
        self.previous_pages.clear();
        self.page_after = None;
        self.loading_page = None;
        self.queued_steps = 0;
        self.selected = 0;
    }
}

/// A loaded conversation with its tree, shared with background jobs.
#[derive(Debug)]
pub struct Loaded {
    pub conversation: LoadedConversation,
    pub tree: MessageTree,
    /// The tree's lines with nothing collapsed: built with the tree, off the UI thread.
    pub expanded_lines: Arc<TreeLines>,
}

impl Loaded {
    pub fn new(conversation: LoadedConversation) -> Loaded {
        let tree = conversation.tree();
        let expanded_lines = Arc::new(TreeLines::build(&tree, |_| false));
        Loaded {
            conversation,
            tree,
            expanded_lines,
        }
    }

    pub fn message(&self, node: NodeIndex) -> &StoredMessage {
        &self.conversation.rows[self.tree.row(node)]
    }

    /// The rows memory would load if `leaf` were the newest message: in Dify's modes, the
    /// rows up to it, newest first, at most `window`; in tree mode, the tree path alone.
    pub fn budget_rows(
        &self,
        leaf: NodeIndex,
        mode: ThreadMode,
        window: usize,
    ) -> Vec<StoredMessage> {
        match mode {
            ThreadMode::Tree => self.conversation.path_newest_first(&self.tree, leaf),
            ThreadMode::Dify | ThreadMode::Fixed => self.conversation.rows[..=self.tree.row(leaf)]
                .iter()
                .rev()
                .take(window)
                .cloned()
                .collect(),
        }
    }
}

/// The extraction demo: Dify's walk replayed one examined row at a time.
#[derive(Debug, Clone)]
pub struct DemoState {
    pub trace: ExtractionTrace,
    /// Steps shown so far (1 = the first row examined).
    pub shown: usize,
}

impl DemoState {
    pub fn current(&self) -> Option<&crate::memory::thread::ExtractionStep> {
        self.trace.steps.get(self.shown.checked_sub(1)?)
    }

    /// Ids kept so far.
    pub fn thread_so_far(&self) -> impl Iterator<Item = &str> {
        self.trace.steps[..self.shown]
            .iter()
            .filter(|s| s.decision != crate::memory::thread::StepDecision::Skipped)
            .map(|s| s.id.as_str())
    }
}

/// A node of the nodes pane with the size of its latest context on the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    pub summary: NodeSummary,
    pub latest: Option<LatestContext>,
}

/// The nodes pane of a chatflow conversation at the selected leaf, and the selected node's
/// context and timeline, each loaded by its own job.
#[derive(Debug, Clone)]
pub struct NodesState {
    /// The message whose thread the pane shows; `None`: the newest, as Dify reads it.
    pub leaf: Option<String>,
    pub status: LoadStatus,
    pub generation: u64,
    pub thread: Option<Arc<NodeThread>>,
    pub rows: Vec<NodeRow>,
    pub selected: usize,
    pub source: ContextSource,
    pub context: Option<NodeContextView>,
    pub context_status: LoadStatus,
    pub context_generation: u64,
    pub timeline: Option<Timeline>,
    pub timeline_status: LoadStatus,
    pub timeline_generation: u64,
}

impl NodesState {
    pub fn new(leaf: Option<String>, generation: u64) -> NodesState {
        NodesState {
            leaf,
            status: LoadStatus::Loading,
            generation,
            thread: None,
            rows: Vec::new(),
            selected: 0,
            source: ContextSource::default(),
            context: None,
            context_status: LoadStatus::Loading,
            context_generation: 0,
            timeline: None,
            timeline_status: LoadStatus::Loading,
            timeline_generation: 0,
        }
    }

    pub fn selected_node(&self) -> Option<&NodeSummary> {
        self.rows.get(self.selected).map(|row| &row.summary)
    }

    /// Why node memory does not apply to this conversation, when it does not.
    pub fn empty(&self) -> Option<EmptyState> {
        let thread = self.thread.as_ref()?;
        if !thread.is_chatflow() {
            return Some(EmptyState::NotAChatflow {
                app_mode: thread.info.app_mode.clone(),
            });
        }
        thread.turns.is_empty().then_some(EmptyState::NoThreadRuns)
    }

    pub fn is_loading(&self) -> bool {
        self.status.is_loading()
            || (self.selected_node().is_some()
                && (self.context_status.is_loading() || self.timeline_status.is_loading()))
    }
}

/// The budget panel's rows (of the conversation or of the node context in front): which one
/// is first on screen. Until the user scrolls, the rows are placed so the cut line and every
/// sent row show.
#[derive(Debug, Clone, Default)]
pub struct BudgetPanelState {
    /// Whether up/down scroll the panel's rows instead of moving in the tree or node list.
    pub focused: bool,
    /// The first row entry shown, once scrolled; `None`: the cut line's default place.
    pub offset: Option<usize>,
    /// Row lines the panel had at the last draw (the panel's size is known only there).
    pub height: Cell<usize>,
}

/// A budget view's rows as the panel lists them: the messages, with the cut line as its own
/// entry before the first sent message when anything is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRows {
    /// Entries: messages plus the cut line.
    pub total: usize,
    /// The cut line's entry (0 and no line when nothing is dropped).
    pub cut: usize,
}

impl BudgetRows {
    pub fn of(view: &BudgetView) -> BudgetRows {
        let messages = view.history.messages.len();
        let cut = view.dropped();
        BudgetRows {
            total: messages + usize::from(cut > 0),
            cut,
        }
    }

    /// The first entry shown by default: the cut line and all sent rows when they fit (with the
    /// dropped rows just above), else the cut line on top and as many sent rows as fit.
    pub fn default_offset(self, height: usize) -> usize {
        let last_start = self.total.saturating_sub(height);
        if self.total - self.cut >= height {
            self.cut.min(last_start)
        } else {
            last_start
        }
    }

    /// The first entry shown for a scroll `offset` (`None`: the default), kept in range.
    pub fn offset(self, offset: Option<usize>, height: usize) -> usize {
        offset
            .unwrap_or_else(|| self.default_offset(height))
            .min(self.total.saturating_sub(height))
    }
}

impl BudgetPanelState {
    /// Moves the rows by `delta` entries (clamped), starting from what is on screen.
    pub fn scroll(&mut self, rows: BudgetRows, delta: isize) {
        let height = self.height.get();
        let current = rows.offset(self.offset, height);
        let last_start = rows.total.saturating_sub(height);
        self.offset = Some(current.saturating_add_signed(delta).min(last_start));
    }
}

/// The open conversation.
#[derive(Debug, Clone)]
pub struct ConversationState {
    pub id: String,
    pub status: LoadStatus,
    pub loaded: Option<Arc<Loaded>>,
    pub generation: u64,
    pub selected: NodeIndex,
    /// Position of the selection among the visible tree lines.
    pub cursor: usize,
    pub collapsed: FxHashSet<NodeIndex>,
    /// The visible tree lines under `collapsed`, rebuilt only when it changes.
    pub lines: Arc<TreeLines>,
    pub mode: ThreadMode,
    pub thread: Option<ThreadNodes>,
    /// Each node's mark: on the thread, or on one side of the divergence.
    pub marks: ThreadMarks,
    pub budget: Option<BudgetView>,
    pub budget_status: LoadStatus,
    pub budget_generation: u64,
    pub demo: Option<DemoState>,
    /// The newest row when last loaded: polling compares against it.
    pub newest_id: Option<String>,
    /// Open when the nodes pane is shown instead of the tree.
    pub nodes: Option<NodesState>,
}

impl ConversationState {
    pub fn new(id: String, generation: u64, mode: ThreadMode) -> ConversationState {
        ConversationState {
            id,
            status: LoadStatus::Loading,
            loaded: None,
            generation,
            selected: 0,
            cursor: 0,
            collapsed: FxHashSet::default(),
            lines: Arc::default(),
            mode,
            thread: None,
            marks: ThreadMarks::default(),
            budget: None,
            budget_status: LoadStatus::Loading,
            budget_generation: 0,
            demo: None,
            newest_id: None,
            nodes: None,
        }
    }

    pub fn is_collapsed(&self, node: NodeIndex) -> bool {
        self.collapsed.contains(&node)
    }

    /// Rebuilds the visible lines after `collapsed` changed (nothing collapsed: the loaded
    /// tree's own lines, shared).
    pub fn relayout(&mut self, loaded: &Loaded) {
        self.lines = if self.collapsed.is_empty() {
            loaded.expanded_lines.clone()
        } else {
            Arc::new(TreeLines::build(&loaded.tree, |n| {
                self.collapsed.contains(&n)
            }))
        };
    }
}

/// Which screen is in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Conversations,
    Conversation,
    ChatMemories,
    MemoryBases,
    /// The doctor's scan of the whole database, opened from the conversation list.
    Doctor,
}

impl Screen {
    pub fn tab(self) -> Tab {
        match self {
            Screen::Conversations | Screen::Conversation | Screen::Doctor => Tab::Conversations,
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

    pub fn title(self) -> &'static str {
        match self {
            Tab::Conversations => "Conversations",
            Tab::ChatMemories => "Chat memories",
            Tab::MemoryBases => "Memory bases",
        }
    }

    /// The tab `step` places after this one, wrapping around.
    pub fn cycled(self, step: isize) -> Tab {
        let at = Tab::ALL.iter().position(|t| *t == self).unwrap_or(0) as isize;
        let len = Tab::ALL.len() as isize;
        Tab::ALL[(at + step).rem_euclid(len) as usize]
    }
}

/// A text being typed at the bottom of the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    Filter(String),
    Command(String),
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
}

impl Detail {
    pub fn new(title: String, text: String) -> Detail {
        Detail {
            title,
            text,
            scroll: 0,
            under: Box::default(),
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

/// The whole state of the TUI.
#[derive(Debug, Clone)]
pub struct AppState {
    pub keymap: Keymap,
    pub screen: Screen,
    /// The screen the conversations tab shows when it is brought back to the front.
    pub conversations_screen: Screen,
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
    /// Problems found in settings or data, counted in the status bar.
    pub config_warnings: Vec<String>,
    /// The last command-line or job message.
    pub message: Option<String>,
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
            config_warnings: Vec::new(),
            message: None,
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
        }
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
            Overlay::Trim => return KeyContext::TrimPreview,
            Overlay::Confirm(_) => return KeyContext::Confirm,
            Overlay::Form(_) => return KeyContext::Form,
            Overlay::Jobs => return KeyContext::Jobs,
            Overlay::Detail(_) => return KeyContext::Detail,
            Overlay::None | Overlay::Help | Overlay::Prompt(_) => {}
        }
        let dialog = match self.screen {
            Screen::MemoryBases => self.memory_bases.dialog.as_ref(),
            _ => None,
        };
        if let Some(context) = dialog.and_then(Dialog::key_context) {
            return context;
        }
        match self.screen {
            Screen::Conversations => KeyContext::Conversations,
            Screen::Conversation if self.nodes().is_some() => KeyContext::Nodes,
            Screen::Conversation => KeyContext::Conversation,
            Screen::ChatMemories => KeyContext::ChatMemories,
            Screen::MemoryBases => KeyContext::MemoryBases,
            Screen::Doctor => KeyContext::Doctor,
        }
    }

    /// The budget the conversation screen shows: the node context's with the nodes pane open,
    /// else the thread's.
    pub fn shown_budget(&self) -> Option<&BudgetView> {
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

    /// Whether any background load is under way, for the spinner.
    pub fn busy(&self) -> bool {
        let conversation_busy = self.screen == Screen::Conversation
            && self.conversation.as_ref().is_some_and(|c| {
                c.status.is_loading()
                    || c.budget_status.is_loading()
                    || c.nodes.as_ref().is_some_and(NodesState::is_loading)
            });
        let memory_bases_busy =
            self.screen == Screen::MemoryBases && self.memory_bases.is_loading();
        self.list.status.is_loading()
            || conversation_busy
            || memory_bases_busy
            || self.chat_memories_busy()
    }

    fn chat_memories_busy(&self) -> bool {
        let memories = &self.chat_memories;
        let tab = self.screen == Screen::ChatMemories
            && (memories.status.is_loading()
                || memories
                    .open
                    .as_ref()
                    .is_some_and(|m| m.status.is_loading()));
        let trim = self.trim.as_ref().is_some_and(|t| {
            t.status.is_loading()
                || t.summary_status
                    .as_ref()
                    .is_some_and(LoadStatus::is_loading)
        });
        tab || trim || memories.writing
    }

    /// Warnings in effect: settings, the open conversation's anomalies, its budget, memory-base
    /// mismatches and the watcher's failure.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.config_warnings.clone();
        warnings.extend(self.memory_bases.warnings());
        warnings.extend(self.jobs.watcher_error.clone());
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
