//! The pure core: `update(state, event) -> effects`. No IO happens here; effects are requests
//! the job runner carries out, and their results come back as [`JobEvent`]s.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rustc_hash::FxHashSet;

use crate::inspect::budget::{BudgetSettings, BudgetView};
use crate::inspect::conversation::{ThreadMode, thread_nodes};
use crate::inspect::nodes::{ContextSource, NodeContextView, NodeThread, Timeline};
use crate::memory::thread::{ExtractionMode, extract_thread_traced};
use crate::memory::tokens::{CounterKind, Encoding};
use crate::memory::tree::NodeIndex;
use crate::store::{ConversationFilter, ConversationSummary};

pub mod chat_memories;
mod chat_memory_jobs;
mod details;
pub mod doctor;
pub(crate) mod memory_bases;
pub mod trim;

pub use memory_bases::{MbEffect, MbEvent, SyncResult};

use super::action::Action;
use super::keymap::KeyChord;
use super::state::tree_view::ThreadMarks;
use super::state::{
    AppState, BUDGET_STEP, BudgetRows, ConversationState, DemoState, Detail, ListState, LoadStatus,
    Loaded, MAX_BUDGET, NodeRow, NodesState, Overlay, PAGE_SIZE, POLL_EVERY_TICKS, Prompt, Screen,
    Tab, parse_budget,
};

/// What reaches the core.
#[derive(Debug)]
pub enum Event {
    Key(KeyEvent),
    Action(Action),
    Job(JobEvent),
    Tick,
    Resize,
}

/// Work for the job runner. Loads carry a generation: only the latest one's result is used.
#[derive(Debug, Clone)]
pub enum Effect {
    LoadList {
        generation: u64,
        filter: ConversationFilter,
    },
    /// Stops the list load that is running (a search scanning a large database).
    StopList,
    /// Tokens of each conversation's latest thread, for the visible page.
    CountThreads {
        generation: u64,
        ids: Vec<String>,
        settings: BudgetSettings,
        message_limit: i64,
    },
    LoadConversation {
        generation: u64,
        id: String,
    },
    ComputeBudget {
        generation: u64,
        loaded: Arc<Loaded>,
        leaf: NodeIndex,
        mode: ThreadMode,
        window: usize,
        settings: BudgetSettings,
    },
    /// Asks for the conversation's newest message id, to notice messages written elsewhere.
    PollNewest {
        id: String,
    },
    /// The thread at `leaf` as node memory reads it, its nodes and their latest context sizes.
    LoadNodes {
        generation: u64,
        conversation_id: String,
        /// `None`: the newest message, Dify's own query.
        leaf: Option<String>,
        settings: BudgetSettings,
    },
    /// One node's context from `source`, with its budget.
    LoadNodeContext {
        generation: u64,
        thread: Arc<NodeThread>,
        node_id: String,
        source: ContextSource,
        settings: BudgetSettings,
    },
    /// One node's executions across the thread's turns.
    LoadTimeline {
        generation: u64,
        thread: Arc<NodeThread>,
        node_id: String,
    },
    /// Memory bases: loads, syncs and writes.
    MemoryBases(MbEffect),
    /// The chat memories tab and the trim preview.
    ChatMemory(chat_memories::MemoryEffect),
    /// The doctor view's scan.
    Doctor(doctor::DoctorEffect),
}

/// What the nodes job reports: the thread and the pane's rows.
#[derive(Debug)]
pub struct LoadedNodes {
    pub thread: Arc<NodeThread>,
    pub rows: Vec<NodeRow>,
}

/// Results of effects.
#[derive(Debug)]
pub enum JobEvent {
    List {
        generation: u64,
        result: Result<Vec<ConversationSummary>, String>,
    },
    /// One row a scanning search found, before its page is complete.
    ListFound {
        generation: u64,
        row: ConversationSummary,
    },
    ThreadTokens {
        generation: u64,
        tokens: Vec<(String, u64)>,
    },
    Conversation {
        generation: u64,
        result: Result<Arc<Loaded>, String>,
    },
    Budget {
        generation: u64,
        result: Result<Box<BudgetView>, String>,
    },
    Newest {
        id: String,
        newest: Option<String>,
    },
    Nodes {
        generation: u64,
        result: Result<LoadedNodes, String>,
    },
    NodeContext {
        generation: u64,
        result: Result<Box<NodeContextView>, String>,
    },
    Timeline {
        generation: u64,
        result: Result<Timeline, String>,
    },
    MemoryBases(MbEvent),
    ChatMemory(chat_memories::MemoryJob),
    Doctor(doctor::DoctorEvent),
}

/// Applies one event. Marks the state dirty when the screen must be redrawn.
pub fn update(state: &mut AppState, event: Event) -> Vec<Effect> {
    let mut effects = Vec::new();
    let changed = match event {
        Event::Key(key) => on_key(state, key, &mut effects),
        Event::Action(action) => on_action(state, action, &mut effects),
        Event::Job(job) => on_job(state, job, &mut effects),
        Event::Tick => on_tick(state, &mut effects),
        Event::Resize => true,
    };
    state.dirty |= changed;
    effects
}

/// The first requests of a session: the first page of conversations and the memory bases,
/// each where the database holds them. The TUI opens on the first tab the database has.
pub fn start(state: &mut AppState) -> Vec<Effect> {
    let mut effects = Vec::new();
    if state.tab_missing(Tab::Conversations).is_none() {
        effects.push(reload_list(state, true));
    }
    if state.tab_missing(Tab::MemoryBases).is_none() {
        memory_bases::start(state, &mut effects);
    }
    if let Some(first) = Tab::ALL
        .into_iter()
        .find(|tab| state.tab_missing(*tab).is_none())
        .filter(|tab| *tab != Tab::Conversations)
    {
        show_tab(state, first, &mut effects);
    }
    effects
}

fn on_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        state.quit = true;
        return true;
    }
    if memory_bases::takes_text(state) {
        return memory_bases::text_key(state, key, effects);
    }
    if let Overlay::Prompt(prompt) = &mut state.overlay {
        let filtering = matches!(prompt, Prompt::Filter(_));
        let text = match prompt {
            Prompt::Filter(text) | Prompt::Command(text) => text,
        };
        match key.code {
            // Esc drops a filter typed so far (it applied as it was typed).
            KeyCode::Esc if filtering => {
                state.overlay = Overlay::None;
                if !state.list.filter.is_empty() {
                    filter_list(state, String::new(), effects);
                }
            }
            KeyCode::Esc => state.overlay = Overlay::None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let prompt = prompt.clone();
                state.overlay = Overlay::None;
                submit_prompt(state, prompt, effects);
                return true;
            }
            KeyCode::Char(c) => text.push(c),
            _ => return false,
        }
        // The list filters as the text is typed.
        if let Overlay::Prompt(Prompt::Filter(text)) = &state.overlay {
            let text = text.clone();
            filter_list(state, text, effects);
        }
        return true;
    }
    // Typing into a form: text fields take every character, number fields digits.
    if let Overlay::Form(form) = &mut state.overlay
        && let Some(value) = form.form.focused_value()
        && !key.modifiers.contains(KeyModifiers::CONTROL)
    {
        let typed = match key.code {
            KeyCode::Char(c) => value.type_char(c),
            KeyCode::Backspace => value.backspace(),
            _ => false,
        };
        if typed {
            form.error = None;
            return true;
        }
    }
    if state.overlay == Overlay::Trim
        && !key.modifiers.contains(KeyModifiers::CONTROL)
        && trim::type_key(state, key.code, effects)
    {
        return true;
    }
    let action =
        KeyChord::from_event(&key).and_then(|k| state.keymap.lookup(state.key_context(), k));
    match action {
        Some(action) => on_action(state, action, effects),
        None => false,
    }
}

fn on_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) -> bool {
    state.message = None;
    if state.overlay == Overlay::Help {
        if matches!(action, Action::ToggleHelp | Action::Back) {
            state.overlay = std::mem::take(&mut state.under_help);
        } else {
            scroll_text(&mut state.help_scroll, action);
        }
        return true;
    }
    if state.overlay == Overlay::Jobs {
        match action {
            Action::Open | Action::Details => details::open(state),
            _ => memory_bases::jobs_action(state, action, effects),
        }
        return true;
    }
    if let Overlay::Detail(detail) = &mut state.overlay {
        match action {
            Action::Back | Action::Open | Action::ShowWarnings | Action::Details => {
                let under = std::mem::take(&mut detail.under);
                state.overlay = *under;
            }
            Action::ToggleHelp => {
                state.under_help = std::mem::replace(&mut state.overlay, Overlay::Help);
                state.help_scroll = 0;
            }
            _ => scroll_text(&mut detail.scroll, action),
        }
        return true;
    }
    // The trim preview, a confirmation and a form take every key but help: popups own the
    // keyboard, so even a quit bound inside one never acts behind it.
    if action != Action::ToggleHelp {
        match state.overlay {
            Overlay::Trim => {
                trim::action(state, action, effects);
                return true;
            }
            Overlay::Confirm(_) => {
                chat_memories::confirm_action(state, action, effects);
                return true;
            }
            Overlay::Form(_) => {
                chat_memories::form_action(state, action, effects);
                return true;
            }
            Overlay::None
            | Overlay::Help
            | Overlay::Prompt(_)
            | Overlay::Jobs
            | Overlay::Detail(_) => {}
        }
    }
    match action {
        Action::Quit => state.quit = true,
        Action::ToggleHelp => {
            state.under_help = std::mem::replace(&mut state.overlay, Overlay::Help);
            state.help_scroll = 0;
        }
        Action::ToggleJobs => match state.tab_missing(Tab::MemoryBases) {
            Some(why) => state.message = Some(format!("no sync jobs: {why}")),
            None => memory_bases::open_jobs(state, effects),
        },
        Action::ShowWarnings => show_warnings(state),
        Action::Details => details::open(state),
        Action::CommandLine => state.overlay = Overlay::Prompt(Prompt::Command(String::new())),
        Action::NextTab => show_tab(state, state.screen.tab().cycled(1), effects),
        Action::PrevTab => show_tab(state, state.screen.tab().cycled(-1), effects),
        Action::ShowConversations => show_tab(state, Tab::Conversations, effects),
        Action::ShowChatMemories => show_tab(state, Tab::ChatMemories, effects),
        Action::ShowMemoryBases => show_tab(state, Tab::MemoryBases, effects),
        // A tab whose part the database lacks shows why, and does nothing else.
        _ if state.tab_missing(state.screen.tab()).is_some() => return false,
        _ => match state.screen {
            Screen::Conversations => list_action(state, action, effects),
            Screen::Conversation => conversation_action(state, action, effects),
            Screen::ChatMemories => chat_memories::action(state, action, effects),
            Screen::MemoryBases => memory_bases::action(state, action, effects),
            Screen::Doctor => doctor_action(state, action, effects),
        },
    }
    true
}

/// The doctor view's keys, its scan's effects wrapped for the runner.
fn doctor_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let mut asked = Vec::new();
    if let Some(id) = doctor::action(state, action, &mut asked) {
        open_conversation(state, id, effects);
    }
    effects.extend(asked.into_iter().map(Effect::Doctor));
}

/// The moving keys over a scrolled text (help, a detail popup); the popup clamps the scroll to
/// what its height leaves hidden.
fn scroll_text(scroll: &mut usize, action: Action) {
    match action {
        Action::Up => *scroll = scroll.saturating_sub(1),
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::PageUp => *scroll = scroll.saturating_sub(10),
        Action::PageDown => *scroll = scroll.saturating_add(10),
        Action::Top => *scroll = 0,
        Action::Bottom => *scroll = usize::MAX / 2,
        _ => {}
    }
}

/// The warnings in effect and the last message, whole, in a popup (the status line can only
/// count and cut them).
fn show_warnings(state: &mut AppState) {
    let warnings = state.warnings();
    let mut text = String::new();
    if let Some(message) = &state.message {
        text.push_str(&format!("Last message:\n{message}\n\n"));
    }
    if warnings.is_empty() {
        text.push_str("No warnings.");
    } else {
        for (number, warning) in warnings.iter().enumerate() {
            text.push_str(&format!("{}. {warning}\n", number + 1));
        }
    }
    let title = match warnings.len() {
        0 => " Messages ".to_owned(),
        1 => " 1 warning ".to_owned(),
        n => format!(" {n} warnings "),
    };
    state.overlay = Overlay::Detail(Detail::new(title, text));
}

/// Brings `tab` to the front. The conversations tab comes back on the screen it was left on;
/// the other tabs reload their lists, which other processes may have changed.
fn show_tab(state: &mut AppState, tab: Tab, effects: &mut Vec<Effect>) {
    let current = state.screen.tab();
    if current == tab {
        return;
    }
    if current == Tab::Conversations {
        state.conversations_screen = state.screen;
    }
    state.screen = match tab {
        Tab::Conversations if state.conversation.is_some() || state.doctor.is_some() => {
            state.conversations_screen
        }
        Tab::Conversations => Screen::Conversations,
        Tab::ChatMemories => Screen::ChatMemories,
        Tab::MemoryBases => Screen::MemoryBases,
    };
    // A tab whose part the database lacks only says why: there is nothing to load.
    if state.tab_missing(tab).is_some() {
        return;
    }
    match tab {
        Tab::Conversations => {}
        Tab::ChatMemories => chat_memories::enter(state, effects),
        Tab::MemoryBases => memory_bases::enter(state, effects),
    }
}

fn submit_prompt(state: &mut AppState, prompt: Prompt, effects: &mut Vec<Effect>) {
    match prompt {
        Prompt::Filter(text) => filter_list(state, text, effects),
        Prompt::Command(text) => run_command(state, &text, effects),
    }
}

/// Filters the list by `text` from its first page, unless that filter is the one shown. The
/// rows of the old filter go at once, so nothing stale stands under the new one while it loads.
fn filter_list(state: &mut AppState, text: String, effects: &mut Vec<Effect>) {
    let filter = text.trim().to_owned();
    if filter == state.list.filter {
        return;
    }
    state.list.filter = filter;
    state.list.reset_pages();
    state.list.rows.clear();
    effects.push(reload_list(state, true));
}

fn run_command(state: &mut AppState, text: &str, effects: &mut Vec<Effect>) {
    let mut words = text.split_whitespace();
    let (Some(command), argument) = (words.next(), words.next()) else {
        return;
    };
    match (command, argument) {
        ("q" | "quit", _) => state.quit = true,
        ("conv", Some(_)) if state.tab_missing(Tab::Conversations).is_some() => {
            state.message = state.tab_missing(Tab::Conversations).map(str::to_owned);
        }
        ("conv", Some(id)) => open_conversation(state, id.to_owned(), effects),
        ("doctor", _) if state.tab_missing(Tab::Conversations).is_some() => {
            state.message = state.tab_missing(Tab::Conversations).map(str::to_owned);
        }
        ("doctor", _) => effects.extend(doctor::open(state).map(Effect::Doctor)),
        ("budget", Some(n)) => match parse_budget(n) {
            Ok(budget) => set_budget(state, budget),
            Err(e) => state.message = Some(e),
        },
        ("model", Some(name)) => {
            let settings = &mut state.settings;
            settings.model_index = match settings.models.iter().position(|m| m == name) {
                Some(index) => index,
                None => {
                    settings.models.push(name.to_owned());
                    settings.models.len() - 1
                }
            };
            settings_changed(state, effects);
        }
        ("counter", Some(name)) => match name.parse::<CounterKind>() {
            Ok(counter) => {
                state.settings.counter = counter;
                settings_changed(state, effects);
            }
            Err(e) => state.message = Some(e.to_string()),
        },
        ("encoding", Some(name)) => match name.parse::<Encoding>() {
            Ok(encoding) => {
                state.settings.encoding = Some(encoding);
                settings_changed(state, effects);
            }
            Err(e) => state.message = Some(e.to_string()),
        },
        _ => {
            state.message = Some(format!(
                "unknown command :{text} (:conv ID, :doctor, :budget N, :model NAME, \
                 :counter NAME, :encoding NAME, :q)"
            ))
        }
    }
}

fn reload_list(state: &mut AppState, show_loading: bool) -> Effect {
    let generation = state.generation();
    state.list.generation = generation;
    state.list.found_so_far.clear();
    if show_loading {
        state.list.status = LoadStatus::Loading;
    }
    Effect::LoadList {
        generation,
        filter: ConversationFilter {
            app_id: None,
            search: Some(state.list.filter.clone()).filter(|f| !f.is_empty()),
            limit: PAGE_SIZE,
            after: state.list.requested_after(),
            include_deleted: state.list.include_deleted,
        },
    }
}

/// `]` (+1) or `[` (-1). While a page loads the step waits for it: the next cursor comes from
/// the rows that page brings, not from the rows still on screen.
fn step_page(state: &mut AppState, step: i64, effects: &mut Vec<Effect>) {
    let list = &mut state.list;
    if list.loading_page.is_some() {
        list.queued_steps += step;
        return;
    }
    if let Some(page) = list.step_from_shown(step) {
        list.loading_page = Some(page);
        list.selected = 0;
        effects.push(reload_list(state, true));
    }
}

/// The loaded page becomes the shown one; a step queued meanwhile starts from it.
fn page_arrived(state: &mut AppState, effects: &mut Vec<Effect>) -> bool {
    let list = &mut state.list;
    if let Some(page) = list.loading_page.take() {
        list.previous_pages = page.previous_pages;
        list.page_after = page.after;
        list.selected = 0;
    }
    let step = list.queued_steps.signum();
    if step == 0 {
        return false;
    }
    list.queued_steps -= step;
    match list.step_from_shown(step) {
        Some(page) => {
            list.loading_page = Some(page);
            effects.push(reload_list(state, true));
            true
        }
        None => {
            // The first or last page: the rest of the burst has nowhere to go.
            list.queued_steps = 0;
            false
        }
    }
}

fn list_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let list = &mut state.list;
    let last = list.rows.len().saturating_sub(1);
    match action {
        Action::Up => list.selected = list.selected.saturating_sub(1),
        Action::Down => list.selected = (list.selected + 1).min(last),
        Action::PageUp => list.selected = list.selected.saturating_sub(10),
        Action::PageDown => list.selected = (list.selected + 10).min(last),
        Action::Top => list.selected = 0,
        Action::Bottom => list.selected = last,
        Action::Open => {
            if let Some(row) = list.rows.get(list.selected) {
                let id = row.id.clone();
                open_conversation(state, id, effects);
            }
        }
        Action::Filter => {
            state.overlay = Overlay::Prompt(Prompt::Filter(list.filter.clone()));
        }
        Action::NextPage => step_page(state, 1, effects),
        Action::PrevPage => step_page(state, -1, effects),
        Action::ToggleDeleted => {
            list.include_deleted = !list.include_deleted;
            list.reset_pages();
            list.selected = 0;
            state.message = Some(
                if list.include_deleted {
                    "deleted conversations shown, marked ✗ (Dify hides them)"
                } else {
                    "deleted conversations hidden, as in Dify"
                }
                .to_owned(),
            );
            effects.push(reload_list(state, true));
        }
        Action::Refresh => effects.push(reload_list(state, true)),
        Action::Doctor => effects.extend(doctor::open(state).map(Effect::Doctor)),
        Action::Back if searching_first_page(list) => stop_search(state, effects),
        Action::Back if !list.filter.is_empty() => filter_list(state, String::new(), effects),
        _ => {}
    }
}

/// Whether a search's first page is loading: what Esc stops (a later page's load is left to
/// finish, since the page it replaces is still on screen).
fn searching_first_page(list: &ListState) -> bool {
    list.status.is_loading() && !list.filter.is_empty() && list.loading_page.is_none()
}

/// Stops the running search; what it found so far becomes the page, and the filter stays.
fn stop_search(state: &mut AppState, effects: &mut Vec<Effect>) {
    effects.push(Effect::StopList);
    // Anything the stopped job still sends is dropped.
    state.list.generation = state.generation();
    let list = &mut state.list;
    list.rows = std::mem::take(&mut list.found_so_far);
    list.selected = 0;
    list.status = LoadStatus::Loaded;
    state.message = Some(format!(
        "search stopped: {} found before it stopped (r searches again, esc clears the filter)",
        list.rows.len()
    ));
}

fn open_conversation(state: &mut AppState, id: String, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    state.budget_panel = Default::default();
    let mode = state
        .conversation
        .as_ref()
        .map_or(ThreadMode::Dify, |c| c.mode);
    state.conversation = Some(ConversationState::new(id.clone(), generation, mode));
    state.screen = Screen::Conversation;
    effects.push(Effect::LoadConversation { generation, id });
}

fn conversation_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    if state.conversation.is_none() {
        state.screen = Screen::Conversations;
        return;
    }
    if budget_panel_action(state, action) {
        return;
    }
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    if conversation.nodes.is_some() && nodes_action(state, action, effects) {
        return;
    }
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let loaded = conversation.loaded.clone();
    match (action, loaded) {
        (Action::Back, _) => {
            if conversation.demo.take().is_some() {
                refresh_thread(state, effects);
            } else if state.doctor.is_some() {
                // Opened from a doctor finding: back to the findings.
                state.screen = Screen::Doctor;
            } else {
                state.screen = Screen::Conversations;
            }
        }
        (Action::Refresh, _) => {
            conversation.generation = generation;
            conversation.status = LoadStatus::Loading;
            let id = conversation.id.clone();
            effects.push(Effect::LoadConversation { generation, id });
        }
        (Action::BudgetUp, _) => set_budget(state, state.settings.budget + BUDGET_STEP),
        (Action::BudgetDown, _) => set_budget(state, state.settings.budget - BUDGET_STEP),
        (Action::TrimPreview, _) => trim::open_for_thread(state, effects),
        (Action::NextModel, _) => {
            let settings = &mut state.settings;
            settings.model_index = (settings.model_index + 1) % settings.models.len();
            settings_changed(state, effects);
        }
        (Action::NextCounter, _) => {
            let all = CounterKind::ALL;
            let at = all.iter().position(|c| *c == state.settings.counter);
            state.settings.counter = all[at.map_or(0, |i| (i + 1) % all.len())];
            settings_changed(state, effects);
        }
        (Action::NextEncoding, _) => {
            let all = Encoding::ALL;
            state.settings.encoding = match state.settings.encoding {
                None => Some(all[0]),
                Some(current) => {
                    let at = all.iter().position(|e| *e == current).unwrap_or(all.len());
                    all.get(at + 1).copied()
                }
            };
            settings_changed(state, effects);
        }
        (Action::ToggleRowWindow, _) => {
            state.settings.app_window = !state.settings.app_window;
            refresh_thread(state, effects);
        }
        (Action::ToggleThreadMode, _) => {
            conversation.mode = match conversation.mode {
                ThreadMode::Dify => ThreadMode::Tree,
                ThreadMode::Tree => ThreadMode::Fixed,
                ThreadMode::Fixed => ThreadMode::Dify,
            };
            refresh_thread(state, effects);
        }
        (_, None) => {}
        (Action::ToggleNodes, Some(loaded)) if !loaded.tree.is_empty() => {
            let leaf = (loaded.tree.latest_leaf() != Some(conversation.selected))
                .then(|| loaded.tree.id(conversation.selected).to_owned());
            conversation.nodes = Some(NodesState::new(leaf, generation));
            reload_nodes(state, effects);
        }
        (Action::ToggleDemo, Some(loaded)) => {
            if conversation.demo.take().is_none() {
                let window = state
                    .settings
                    .window(loaded.conversation.info.memory_window);
                let rows = loaded.conversation.window_newest_first(window);
                let trace = extract_thread_traced(&rows, ExtractionMode::Dify);
                conversation.demo = Some(DemoState { trace, shown: 1 });
                select_demo_row(conversation, &loaded);
            }
            refresh_thread(state, effects);
        }
        (Action::DemoStep | Action::DemoStepBack, Some(loaded)) => {
            let Some(demo) = conversation.demo.as_mut() else {
                return;
            };
            demo.shown = match action {
                Action::DemoStep => (demo.shown + 1).min(demo.trace.steps.len()),
                _ => demo.shown.saturating_sub(1).max(1),
            };
            select_demo_row(conversation, &loaded);
            refresh_thread(state, effects);
        }
        (Action::JumpLatest, Some(loaded)) => {
            if let Some(latest) = loaded.tree.latest_leaf() {
                select_node(conversation, &loaded, latest);
                refresh_thread(state, effects);
            }
        }
        (Action::Collapse, Some(loaded)) => {
            let node = conversation.selected;
            if !loaded.tree.children(node).is_empty() && !conversation.is_collapsed(node) {
                conversation.collapsed.insert(node);
                conversation.relayout(&loaded);
            } else if let Some(parent) = loaded.tree.parent(node) {
                select_node(conversation, &loaded, parent);
                refresh_thread(state, effects);
            }
        }
        (Action::Expand, Some(loaded)) => {
            let node = conversation.selected;
            if conversation.collapsed.remove(&node) {
                conversation.relayout(&loaded);
            }
        }
        (Action::Up | Action::Down | Action::PageUp | Action::PageDown, Some(_)) => {
            let delta: isize = match action {
                Action::Up => -1,
                Action::Down => 1,
                Action::PageUp => -10,
                _ => 10,
            };
            let target = conversation.cursor.saturating_add_signed(delta);
            move_cursor(conversation, target);
            refresh_thread(state, effects);
        }
        (Action::Top | Action::Bottom, Some(_)) => {
            let target = if action == Action::Top { 0 } else { usize::MAX };
            move_cursor(conversation, target);
            refresh_thread(state, effects);
        }
        _ => {}
    }
}

/// `b` gives the budget panel the moving keys (its rows scroll) and takes them back; esc
/// leaves it too. `false`: not the panel's key.
fn budget_panel_action(state: &mut AppState, action: Action) -> bool {
    let panel = &mut state.budget_panel;
    if action == Action::FocusBudget {
        panel.focused = !panel.focused;
        return true;
    }
    if !panel.focused {
        return false;
    }
    let delta = match action {
        Action::Back => {
            panel.focused = false;
            return true;
        }
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -10,
        Action::PageDown => 10,
        Action::Top => isize::MIN / 2,
        Action::Bottom => isize::MAX / 2,
        _ => return false,
    };
    let Some(view) = state.shown_budget() else {
        return true;
    };
    let rows = BudgetRows::of(view);
    state.budget_panel.scroll(rows, delta);
    true
}

/// Keys of the open nodes pane; `false` leaves the action to the conversation (budget keys).
fn nodes_action(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) -> bool {
    let Some(nodes) = state.conversation.as_mut().and_then(|c| c.nodes.as_mut()) else {
        return false;
    };
    let last = nodes.rows.len().saturating_sub(1);
    let target = match action {
        Action::Back | Action::ToggleNodes => {
            if let Some(conversation) = state.conversation.as_mut() {
                conversation.nodes = None;
            }
            return true;
        }
        Action::Refresh => {
            reload_nodes(state, effects);
            return true;
        }
        Action::NextSource => {
            nodes.source = nodes.source.next();
            load_node(state, false, effects);
            return true;
        }
        Action::TrimPreview => {
            trim::open_for_node(state, effects);
            return true;
        }
        Action::Up => nodes.selected.saturating_sub(1),
        Action::Down => (nodes.selected + 1).min(last),
        Action::PageUp => nodes.selected.saturating_sub(10),
        Action::PageDown => (nodes.selected + 10).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return false,
    };
    if target != nodes.selected {
        nodes.selected = target;
        nodes.context = None;
        nodes.timeline = None;
        load_node(state, true, effects);
    }
    true
}

/// Asks for the nodes pane at its leaf; what is shown stays until the answer comes.
fn reload_nodes(state: &mut AppState, effects: &mut Vec<Effect>) {
    let generation = state.generation();
    let settings = state.settings.budget_settings();
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(nodes) = conversation.nodes.as_mut() else {
        return;
    };
    nodes.generation = generation;
    nodes.status = LoadStatus::Loading;
    effects.push(Effect::LoadNodes {
        generation,
        conversation_id: conversation.id.clone(),
        leaf: nodes.leaf.clone(),
        settings,
    });
}

/// Asks for the selected node's context, and its timeline when the node or thread changed.
fn load_node(state: &mut AppState, with_timeline: bool, effects: &mut Vec<Effect>) {
    let context_generation = state.generation();
    let timeline_generation = state.generation();
    let settings = state.settings.budget_settings();
    let Some(nodes) = state.conversation.as_mut().and_then(|c| c.nodes.as_mut()) else {
        return;
    };
    let (Some(thread), Some(node)) = (nodes.thread.clone(), nodes.selected_node()) else {
        return;
    };
    let node_id = node.node_id.clone();
    state.budget_panel.offset = None;
    nodes.context_generation = context_generation;
    nodes.context_status = LoadStatus::Loading;
    if with_timeline {
        nodes.timeline_generation = timeline_generation;
        nodes.timeline_status = LoadStatus::Loading;
        effects.push(Effect::LoadTimeline {
            generation: timeline_generation,
            thread: thread.clone(),
            node_id: node_id.clone(),
        });
    }
    effects.push(Effect::LoadNodeContext {
        generation: context_generation,
        thread,
        node_id,
        source: nodes.source,
        settings,
    });
}

/// Puts the cursor on visible line `target` (clamped).
fn move_cursor(conversation: &mut ConversationState, target: usize) {
    let Some(last) = conversation.lines.len().checked_sub(1) else {
        return;
    };
    let position = target.min(last);
    if let Some(line) = conversation.lines.get(position) {
        conversation.cursor = position;
        conversation.selected = line.node;
    }
}

/// Selects `node`, opening its collapsed ancestors so it is visible.
fn select_node(conversation: &mut ConversationState, loaded: &Loaded, node: NodeIndex) {
    let mut opened = false;
    let mut ancestor = loaded.tree.parent(node);
    // Bounded like the tree's own walks, whatever the links.
    for _ in 0..loaded.tree.len() {
        let Some(current) = ancestor else { break };
        opened |= conversation.collapsed.remove(&current);
        ancestor = loaded.tree.parent(current);
    }
    if opened {
        conversation.relayout(loaded);
    }
    conversation.selected = node;
    conversation.cursor = conversation.lines.line_of(node).unwrap_or(0);
}

fn select_demo_row(conversation: &mut ConversationState, loaded: &Loaded) {
    let examined = conversation
        .demo
        .as_ref()
        .and_then(|demo| demo.current())
        .and_then(|step| loaded.tree.find(&step.id));
    if let Some(node) = examined {
        select_node(conversation, loaded, node);
    }
}

fn set_budget(state: &mut AppState, budget: i64) {
    state.settings.budget = budget.clamp(0, MAX_BUDGET);
    // The cut line moved: show it again.
    state.budget_panel.offset = None;
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let node_budget = conversation
        .nodes
        .as_mut()
        .and_then(|n| n.context.as_mut())
        .map(|view| &mut view.budget);
    for view in conversation.budget.iter_mut().chain(node_budget) {
        view.set_budget(state.settings.budget);
    }
}

/// Recomputes the thread marks for the selection and asks for its budget.
fn refresh_thread(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(loaded) = conversation.loaded.clone().filter(|l| !l.tree.is_empty()) else {
        return;
    };
    let window = state
        .settings
        .window(loaded.conversation.info.memory_window);
    let thread = thread_nodes(
        &loaded.conversation,
        &loaded.tree,
        Some(conversation.selected),
        conversation.mode,
        window,
    );
    let nodes = loaded.tree.len();
    // The demo marks its own walk; the divergence is for the finished views.
    conversation.marks = match &conversation.demo {
        Some(demo) => ThreadMarks::of_walk(
            nodes,
            demo.thread_so_far().filter_map(|id| loaded.tree.find(id)),
        ),
        None => ThreadMarks::of_thread(nodes, &thread),
    };
    conversation.thread = Some(thread);
    recompute_budget(state, effects);
}

/// The model, counter or encoding changed: counts made with the old ones are stale.
fn settings_changed(state: &mut AppState, effects: &mut Vec<Effect>) {
    state.list.thread_tokens.clear();
    // The pane's token column and the node's budget are counted with them too.
    reload_nodes(state, effects);
    recompute_budget(state, effects);
}

fn recompute_budget(state: &mut AppState, effects: &mut Vec<Effect>) {
    let next_generation = state.generation();
    state.budget_panel.offset = None;
    let Some(conversation) = state.conversation.as_mut() else {
        return;
    };
    let Some(loaded) = conversation.loaded.clone().filter(|l| !l.tree.is_empty()) else {
        return;
    };
    conversation.budget_generation = next_generation;
    conversation.budget_status = LoadStatus::Loading;
    let mut settings = state.settings.budget_settings();
    if conversation.mode == ThreadMode::Fixed {
        settings.options.extraction = ExtractionMode::Fixed;
    }
    effects.push(Effect::ComputeBudget {
        generation: next_generation,
        window: state
            .settings
            .window(loaded.conversation.info.memory_window),
        leaf: conversation.selected,
        mode: conversation.mode,
        settings,
        loaded,
    });
}

/// Token counts kept for conversations no longer listed: a few pages' worth, so paging back
/// shows them at once, while paging through a million conversations keeps the map bounded.
pub const KEPT_THREAD_COUNTS: usize = 8 * PAGE_SIZE as usize;

/// Drops the counts of conversations off the shown page once more than
/// [`KEPT_THREAD_COUNTS`] are held; coming back to them recounts from the count cache.
fn forget_unlisted_counts(list: &mut ListState) {
    if list.thread_tokens.len() <= KEPT_THREAD_COUNTS {
        return;
    }
    let listed: FxHashSet<&str> = list.rows.iter().map(|r| r.id.as_str()).collect();
    list.thread_tokens
        .retain(|id, _| listed.contains(id.as_str()));
}

fn on_job(state: &mut AppState, job: JobEvent, effects: &mut Vec<Effect>) -> bool {
    match job {
        JobEvent::ListFound { generation, row } => {
            let list = &mut state.list;
            if generation != list.generation || !list.status.is_loading() {
                return false;
            }
            list.found_so_far.push(row);
        }
        JobEvent::List { generation, result } => {
            if generation != state.list.generation {
                return false;
            }
            state.list.found_so_far.clear();
            match result {
                Ok(rows) => {
                    let paged = state.list.loading_page.is_some();
                    if paged {
                        state.list.selected = 0;
                    }
                    let selected_id = state
                        .list
                        .rows
                        .get(state.list.selected)
                        .map(|r| r.id.clone());
                    state.list.selected = selected_id
                        .and_then(|id| rows.iter().position(|r| r.id == id))
                        .unwrap_or(state.list.selected)
                        .min(rows.len().saturating_sub(1));
                    // Count only what is new or changed: polls reload the page every few
                    // seconds and must not recount it.
                    let unchanged: FxHashSet<(&str, i64)> = state
                        .list
                        .rows
                        .iter()
                        .map(|r| (r.id.as_str(), r.message_count))
                        .collect();
                    let to_count: Vec<String> = rows
                        .iter()
                        .filter(|r| {
                            !state.list.thread_tokens.contains_key(&r.id)
                                || !unchanged.contains(&(r.id.as_str(), r.message_count))
                        })
                        .map(|r| r.id.clone())
                        .collect();
                    state.list.rows = rows;
                    state.list.status = LoadStatus::Loaded;
                    forget_unlisted_counts(&mut state.list);
                    if paged && page_arrived(state, effects) {
                        // Passed through on the way to a later page: nothing to count.
                        return true;
                    }
                    if !to_count.is_empty() {
                        let tokens_generation = state.generation();
                        state.list.tokens_generation = tokens_generation;
                        effects.push(Effect::CountThreads {
                            generation: tokens_generation,
                            ids: to_count,
                            settings: state.settings.budget_settings(),
                            message_limit: state.settings.message_limit,
                        });
                    }
                }
                Err(error) => {
                    // The shown page stays what it was; the burst stops.
                    state.list.loading_page = None;
                    state.list.queued_steps = 0;
                    state.list.status = LoadStatus::Failed(error);
                }
            }
        }
        JobEvent::ThreadTokens { generation, tokens } => {
            if generation != state.list.tokens_generation {
                return false;
            }
            state.list.thread_tokens.extend(tokens);
        }
        JobEvent::Conversation { generation, result } => {
            let Some(conversation) = state
                .conversation
                .as_mut()
                .filter(|c| c.generation == generation)
            else {
                return false;
            };
            match result {
                Ok(loaded) => {
                    let previous = conversation.loaded.take();
                    let followed_latest = previous
                        .as_ref()
                        .is_none_or(|p| p.tree.latest_leaf() == Some(conversation.selected));
                    let kept = previous
                        .as_ref()
                        .filter(|_| !followed_latest)
                        .and_then(|p| loaded.tree.find(p.tree.id(conversation.selected)));
                    let target = kept.or_else(|| loaded.tree.latest_leaf());
                    // `:conv` may have named it by a prefix.
                    conversation.id = loaded.conversation.info.id.clone();
                    conversation.collapsed.clear();
                    conversation.relayout(&loaded);
                    conversation.newest_id = loaded.conversation.rows.last().map(|r| r.id.clone());
                    conversation.status = LoadStatus::Loaded;
                    conversation.loaded = Some(loaded.clone());
                    if let Some(node) = target {
                        select_node(conversation, &loaded, node);
                    }
                    refresh_thread(state, effects);
                }
                Err(error) => {
                    // Nothing left to count: the spinner stops with the load.
                    conversation.budget_status = LoadStatus::Failed(error.clone());
                    conversation.status = LoadStatus::Failed(error);
                }
            }
        }
        JobEvent::Budget { generation, result } => {
            let Some(conversation) = state
                .conversation
                .as_mut()
                .filter(|c| c.budget_generation == generation)
            else {
                return false;
            };
            match result {
                Ok(mut view) => {
                    // The budget may have changed while the job ran.
                    view.set_budget(state.settings.budget);
                    conversation.budget = Some(*view);
                    conversation.budget_status = LoadStatus::Loaded;
                }
                Err(error) => conversation.budget_status = LoadStatus::Failed(error),
            }
        }
        JobEvent::Newest { id, newest } => {
            let generation = state.generation();
            let Some(conversation) = state
                .conversation
                .as_mut()
                .filter(|c| c.id == id && c.status == LoadStatus::Loaded && c.newest_id != newest)
            else {
                return false;
            };
            conversation.generation = generation;
            effects.push(Effect::LoadConversation { generation, id });
            return false;
        }
        JobEvent::Nodes { generation, result } => {
            let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| n.generation)
            else {
                return false;
            };
            match result {
                Ok(loaded) => {
                    let selected_id = nodes.selected_node().map(|n| n.node_id.clone());
                    let selected = selected_id
                        .and_then(|id| loaded.rows.iter().position(|r| r.summary.node_id == id))
                        .unwrap_or(0);
                    nodes.selected = selected;
                    nodes.rows = loaded.rows;
                    nodes.thread = Some(loaded.thread);
                    nodes.status = LoadStatus::Loaded;
                    load_node(state, true, effects);
                }
                Err(error) => nodes.status = LoadStatus::Failed(error),
            }
        }
        JobEvent::NodeContext { generation, result } => {
            let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| {
                n.context_generation
            }) else {
                return false;
            };
            match result {
                Ok(mut view) => {
                    // The budget may have changed while the job ran.
                    view.budget.set_budget(state.settings.budget);
                    nodes.context = Some(*view);
                    nodes.context_status = LoadStatus::Loaded;
                }
                Err(error) => nodes.context_status = LoadStatus::Failed(error),
            }
        }
        JobEvent::Timeline { generation, result } => {
            let Some(nodes) = waiting_nodes(&mut state.conversation, generation, |n| {
                n.timeline_generation
            }) else {
                return false;
            };
            match result {
                Ok(timeline) => {
                    nodes.timeline = Some(timeline);
                    nodes.timeline_status = LoadStatus::Loaded;
                }
                Err(error) => nodes.timeline_status = LoadStatus::Failed(error),
            }
        }
        JobEvent::MemoryBases(event) => return memory_bases::on_job(state, event, effects),
        JobEvent::ChatMemory(job) => return chat_memories::on_job(state, job, effects),
        JobEvent::Doctor(event) => return doctor::on_job(state, event),
    }
    true
}

/// The open nodes pane, when `generation` is still the latest of the load `latest` names: an
/// older result is dropped.
fn waiting_nodes(
    conversation: &mut Option<ConversationState>,
    generation: u64,
    latest: fn(&NodesState) -> u64,
) -> Option<&mut NodesState> {
    conversation
        .as_mut()
        .and_then(|c| c.nodes.as_mut())
        .filter(|n| latest(n) == generation)
}

fn on_tick(state: &mut AppState, effects: &mut Vec<Effect>) -> bool {
    state.ticks += 1;
    let shown = state.tab_missing(state.screen.tab()).is_none();
    if shown && state.ticks % POLL_EVERY_TICKS == 0 && state.overlay == Overlay::None {
        match state.screen {
            Screen::Conversations if state.list.status == LoadStatus::Loaded => {
                effects.push(reload_list(state, false));
            }
            Screen::Conversation => {
                if let Some(c) = state
                    .conversation
                    .as_ref()
                    .filter(|c| c.status == LoadStatus::Loaded)
                {
                    effects.push(Effect::PollNewest { id: c.id.clone() });
                }
            }
            Screen::Conversations | Screen::Doctor => {}
            Screen::ChatMemories => chat_memories::poll(state, effects),
            Screen::MemoryBases => memory_bases::poll(state, effects),
        }
    }
    if state.tab_missing(Tab::MemoryBases).is_none() {
        memory_bases::tick(state, effects);
    }
    // Only the spinner animates.
    state.busy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::conversation::LoadedConversation;
    use crate::memory::model::StoredMessage;
    use crate::memory::tokens::{CountCache, TokenCounter};
    use crate::store::ConversationInfo;
    use crate::tui::keymap::{KeyContext, Keymap};
    use crate::tui::state::Settings;

    pub(crate) fn settings() -> Settings {
        Settings {
            models: vec!["gpt-4o".to_owned(), "gpt-4".to_owned()],
            model_index: 0,
            counter: CounterKind::Raw,
            encoding: Some(Encoding::Cl100kBase),
            budget: 2000,
            message_limit: 0,
            app_window: true,
        }
    }

    pub(super) fn state() -> AppState {
        AppState::new(
            Keymap::default_keys(),
            settings(),
            "sqlite://test.db".to_owned(),
            false,
        )
    }

    fn time(seconds: i64) -> chrono::NaiveDateTime {
        chrono::DateTime::from_timestamp(1_700_000_000 + seconds, 0)
            .unwrap()
            .naive_utc()
    }

    fn message(id: &str, parent: Option<&str>, at: i64) -> StoredMessage {
        let (query, answer) = (format!("question {id}"), format!("answer {id}"));
        StoredMessage::turn(id, "c1", parent, query, answer, time(at))
    }

    pub(super) fn summary(id: &str) -> ConversationSummary {
        ConversationSummary {
            id: id.to_owned(),
            name: format!("conversation {id}"),
            app_id: "app".to_owned(),
            app_name: Some("app".to_owned()),
            app_mode: Some("chat".to_owned()),
            mode: "chat".to_owned(),
            message_count: 3,
            last_activity: time(0),
            updated_at: time(0),
            is_deleted: false,
        }
    }

    /// a → b, a → b2 (regeneration of b), b → c.
    pub(crate) fn loaded() -> Arc<Loaded> {
        let rows = vec![
            message("a", None, 0),
            message("b", Some("a"), 10),
            message("b2", Some("a"), 20),
            message("c", Some("b"), 30),
        ];
        let info = ConversationInfo {
            id: "c1".to_owned(),
            name: "first".to_owned(),
            mode: "chat".to_owned(),
            status: "normal".to_owned(),
            from_source: "api".to_owned(),
            dialogue_count: 4,
            app_id: "app".to_owned(),
            app_name: Some("app".to_owned()),
            app_mode: Some("chat".to_owned()),
            memory_window: None,
            created_at: time(0),
            updated_at: time(30),
            is_deleted: false,
            answered_rows_only: false,
        };
        Arc::new(Loaded::new(LoadedConversation {
            info,
            rows,
            files: Vec::new(),
        }))
    }

    pub(super) fn key(c: char) -> Event {
        Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
    }

    pub(super) fn code(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    pub(super) fn list_loaded(state: &mut AppState, ids: &[&str]) -> Vec<Effect> {
        let generation = state.list.generation;
        let rows = ids.iter().map(|id| summary(id)).collect();
        update(
            state,
            Event::Job(JobEvent::List {
                generation,
                result: Ok(rows),
            }),
        )
    }

    /// Opens the fixture conversation and delivers its load.
    fn opened() -> AppState {
        let mut state = state();
        start(&mut state);
        list_loaded(&mut state, &["c1"]);
        let effects = update(&mut state, code(KeyCode::Enter));
        let generation = match &effects[..] {
            [Effect::LoadConversation { generation, id }] if id == "c1" => *generation,
            other => panic!("expected a conversation load, got {other:?}"),
        };
        update(
            &mut state,
            Event::Job(JobEvent::Conversation {
                generation,
                result: Ok(loaded()),
            }),
        );
        state
    }

    fn budget_effect(effects: &[Effect]) -> (u64, Vec<StoredMessage>, BudgetSettings) {
        effects
            .iter()
            .find_map(|e| match e {
                Effect::ComputeBudget {
                    generation,
                    loaded,
                    leaf,
                    mode,
                    window,
                    settings,
                } => Some((
                    *generation,
                    loaded.budget_rows(*leaf, *mode, *window),
                    settings.clone(),
                )),
                _ => None,
            })
            .expect("a budget request")
    }

    fn conversation(state: &AppState) -> &ConversationState {
        state.conversation.as_ref().unwrap()
    }

    /// Ids of the nodes the tree pane marks as on the thread.
    fn thread_ids(state: &AppState) -> Vec<String> {
        let c = conversation(state);
        let loaded = c.loaded.as_ref().unwrap();
        (0..loaded.tree.len())
            .filter(|&node| c.marks.on_thread(node))
            .map(|node| loaded.tree.id(node).to_owned())
            .collect()
    }

    fn on_thread(state: &AppState, id: &str) -> bool {
        thread_ids(state).iter().any(|t| t == id)
    }

    fn selected_id(state: &AppState) -> String {
        let c = conversation(state);
        c.loaded.as_ref().unwrap().tree.id(c.selected).to_owned()
    }

    #[test]
    fn start_loads_the_first_page_and_shows_loading() {
        let mut state = state();
        let effects = start(&mut state);
        assert!(matches!(
            &effects[..],
            [Effect::LoadList { filter, .. }, ..] if filter.after.is_none() && filter.search.is_none()
        ));
        assert_eq!(state.list.status, LoadStatus::Loading);
        assert!(state.busy());
    }

    #[test]
    fn stale_list_results_are_dropped() {
        let mut state = state();
        start(&mut state);
        let stale = state.list.generation;
        update(&mut state, Event::Action(Action::Refresh));
        state.dirty = false;
        let effects = update(
            &mut state,
            Event::Job(JobEvent::List {
                generation: stale,
                result: Ok(vec![summary("old")]),
            }),
        );
        assert!(effects.is_empty());
        assert!(state.list.rows.is_empty());
        assert!(!state.dirty, "a dropped result needs no frame");
        list_loaded(&mut state, &["new"]);
        assert_eq!(state.list.rows[0].id, "new");
    }

    #[test]
    fn loaded_list_asks_for_thread_tokens_of_the_page() {
        let mut state = state();
        start(&mut state);
        let effects = list_loaded(&mut state, &["x", "y"]);
        let Some(Effect::CountThreads {
            ids, generation, ..
        }) = effects.first()
        else {
            panic!("expected a token count, got {effects:?}");
        };
        assert_eq!(ids, &["x", "y"]);
        let generation = *generation;
        update(
            &mut state,
            Event::Job(JobEvent::ThreadTokens {
                generation,
                tokens: vec![("x".to_owned(), 42)],
            }),
        );
        assert_eq!(state.list.thread_tokens.get("x"), Some(&42));
    }

    #[test]
    fn a_poll_recounts_only_new_or_changed_conversations() {
        let mut state = state();
        start(&mut state);
        let effects = list_loaded(&mut state, &["x", "y"]);
        let Some(Effect::CountThreads { generation, .. }) = effects.first() else {
            panic!("{effects:?}");
        };
        let generation = *generation;
        let tokens = vec![("x".to_owned(), 1), ("y".to_owned(), 2)];
        update(
            &mut state,
            Event::Job(JobEvent::ThreadTokens { generation, tokens }),
        );
        let polled: Vec<Effect> = (0..POLL_EVERY_TICKS)
            .flat_map(|_| update(&mut state, Event::Tick))
            .collect();
        assert!(matches!(&polled[..], [Effect::LoadList { .. }]));
        assert!(list_loaded(&mut state, &["x", "y"]).is_empty());
        let generation = state.list.generation;
        let mut changed = summary("y");
        changed.message_count += 1;
        let rows = vec![summary("new"), summary("x"), changed];
        let effects = update(
            &mut state,
            Event::Job(JobEvent::List {
                generation,
                result: Ok(rows),
            }),
        );
        assert!(matches!(&effects[..], [Effect::CountThreads { ids, .. }] if ids == &["new", "y"]));
        for c in ":counter zero".chars() {
            update(&mut state, key(c));
        }
        update(&mut state, code(KeyCode::Enter));
        assert!(
            state.list.thread_tokens.is_empty(),
            "another counter makes the counts stale"
        );
    }

    #[test]
    fn list_errors_and_empty_pages_are_states() {
        let mut state = state();
        start(&mut state);
        let generation = state.list.generation;
        update(
            &mut state,
            Event::Job(JobEvent::List {
                generation,
                result: Err("connection refused".to_owned()),
            }),
        );
        assert_eq!(
            state.list.status,
            LoadStatus::Failed("connection refused".to_owned())
        );
        update(&mut state, Event::Action(Action::Refresh));
        list_loaded(&mut state, &[]);
        assert_eq!(state.list.status, LoadStatus::Loaded);
        assert!(state.list.rows.is_empty());
        update(&mut state, Event::Action(Action::Down));
        assert_eq!(state.list.selected, 0);
    }

    #[test]
    fn a_scanning_search_shows_rows_as_found_and_esc_stops_it() {
        let mut state = state();
        start(&mut state);
        list_loaded(&mut state, &["x"]);
        update(&mut state, key('/'));
        for c in "needle".chars() {
            update(&mut state, key(c));
        }
        update(&mut state, code(KeyCode::Enter));
        let generation = state.list.generation;
        let found = |state: &mut AppState, id: &str, generation: u64| {
            update(
                state,
                Event::Job(JobEvent::ListFound {
                    generation,
                    row: summary(id),
                }),
            )
        };
        found(&mut state, "a", generation);
        found(&mut state, "stale", generation - 1);
        found(&mut state, "b", generation);
        let ids =
            |rows: &[ConversationSummary]| rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&state.list.found_so_far), ["a", "b"]);
        assert_eq!(state.list.status, LoadStatus::Loading);

        let effects = update(&mut state, code(KeyCode::Esc));
        assert!(matches!(&effects[..], [Effect::StopList]), "{effects:?}");
        assert_eq!(state.list.status, LoadStatus::Loaded);
        assert_eq!(
            ids(&state.list.rows),
            ["a", "b"],
            "what was found becomes the page"
        );
        assert_eq!(state.list.filter, "needle", "the filter stays");
        assert!(state.list.found_so_far.is_empty());
        // What the stopped job still sends is dropped.
        found(&mut state, "late", generation);
        update(
            &mut state,
            Event::Job(JobEvent::List {
                generation,
                result: Ok(vec![summary("late")]),
            }),
        );
        assert_eq!(ids(&state.list.rows), ["a", "b"]);
        // A second Esc clears the filter, as before.
        assert!(matches!(
            &update(&mut state, code(KeyCode::Esc))[..],
            [Effect::LoadList { filter, .. }] if filter.search.is_none()
        ));
    }

    #[test]
    fn filter_prompt_types_letters_not_commands_and_filters_as_typed() {
        let mut state = state();
        start(&mut state);
        list_loaded(&mut state, &["x"]);
        update(&mut state, key('/'));
        let searched = |effects: &[Effect]| match effects {
            [Effect::LoadList { filter, .. }] => filter.search.clone(),
            other => panic!("expected one list load, got {other:?}"),
        };
        // Every letter filters at once; the old rows go, so none stand under the new filter.
        assert_eq!(
            searched(&update(&mut state, key('j'))).as_deref(),
            Some("j")
        );
        assert!(state.list.rows.is_empty());
        assert_eq!(state.list.status, LoadStatus::Loading);
        assert_eq!(
            searched(&update(&mut state, key('q'))).as_deref(),
            Some("jq")
        );
        assert_eq!(
            state.overlay,
            Overlay::Prompt(Prompt::Filter("jq".to_owned()))
        );
        assert!(!state.quit, "q typed into the filter does not quit");
        assert_eq!(
            searched(&update(&mut state, code(KeyCode::Backspace))).as_deref(),
            Some("j")
        );
        update(&mut state, key('q'));
        // Enter keeps the filter already applied: nothing to load again.
        assert!(update(&mut state, code(KeyCode::Enter)).is_empty());
        assert_eq!(state.overlay, Overlay::None);
        assert_eq!(state.list.filter, "jq");
        // Once the search has answered, Esc clears the filter (while it runs, Esc stops it).
        list_loaded(&mut state, &[]);
        assert_eq!(searched(&update(&mut state, code(KeyCode::Esc))), None);
        // Esc in the prompt drops what was typed.
        update(&mut state, key('/'));
        update(&mut state, key('z'));
        assert_eq!(searched(&update(&mut state, code(KeyCode::Esc))), None);
        assert_eq!(state.list.filter, "");
    }

    #[test]
    fn x_shows_and_hides_deleted_conversations_from_the_first_page() {
        let mut state = state();
        start(&mut state);
        let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("c{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        list_loaded(&mut state, &refs);
        update(&mut state, key(']'));
        list_loaded(&mut state, &refs);
        assert_eq!(state.list.page_number(), 2);
        let effects = update(&mut state, key('x'));
        assert!(matches!(
            &effects[..],
            [Effect::LoadList { filter, .. }] if filter.include_deleted && filter.after.is_none()
        ));
        assert!(
            state
                .message
                .as_deref()
                .unwrap()
                .contains("deleted conversations shown")
        );
        let effects = update(&mut state, key('x'));
        assert!(matches!(
            &effects[..],
            [Effect::LoadList { filter, .. }] if !filter.include_deleted
        ));
        assert!(
            state
                .message
                .as_deref()
                .unwrap()
                .contains("hidden, as in Dify")
        );
    }

    #[test]
    fn pages_follow_the_keyset_cursor_and_come_back() {
        let mut state = state();
        start(&mut state);
        let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("c{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        list_loaded(&mut state, &refs);
        let effects = update(&mut state, key(']'));
        let last = ids.last().unwrap();
        assert!(matches!(
            &effects[..],
            [Effect::LoadList { filter, .. }] if filter.after.as_ref().map(|c| &c.id) == Some(last)
        ));
        // The label names the rows on screen until the next page's rows arrive.
        assert_eq!(state.list.page_number(), 1);
        assert_eq!(state.list.target_page(), Some(2));
        let ids2: Vec<String> = (0..PAGE_SIZE).map(|i| format!("d{i}")).collect();
        let refs2: Vec<&str> = ids2.iter().map(String::as_str).collect();
        list_loaded(&mut state, &refs2);
        assert_eq!(state.list.page_number(), 2);
        assert_eq!(state.list.target_page(), None);
        let effects = update(&mut state, key('['));
        assert!(
            matches!(&effects[..], [Effect::LoadList { filter, .. }] if filter.after.is_none())
        );
        list_loaded(&mut state, &refs);
        assert_eq!(state.list.page_number(), 1);
    }

    /// Delivers page `page` (`PAGE_SIZE` rows named `p{page}-{row}`); returns the list loads it
    /// chains.
    fn page_loaded(state: &mut AppState, page: usize) -> Vec<Effect> {
        let ids: Vec<String> = (0..PAGE_SIZE).map(|i| format!("p{page}-{i:02}")).collect();
        list_loaded(state, &ids.iter().map(String::as_str).collect::<Vec<_>>())
            .into_iter()
            .filter(|e| matches!(e, Effect::LoadList { .. }))
            .collect()
    }

    #[test]
    fn paging_far_keeps_a_bounded_number_of_thread_counts() {
        let mut state = state();
        start(&mut state);
        for page in 1..=200 {
            page_loaded(&mut state, page);
            let generation = state.list.tokens_generation;
            let tokens = state.list.rows.iter().map(|r| (r.id.clone(), 7)).collect();
            update(
                &mut state,
                Event::Job(JobEvent::ThreadTokens { generation, tokens }),
            );
            let listed = &state.list.rows;
            assert!(
                listed
                    .iter()
                    .all(|r| state.list.thread_tokens.contains_key(&r.id)),
                "the shown page keeps its counts"
            );
            update(&mut state, key(']'));
        }
        let held = state.list.thread_tokens.len();
        assert!(
            held <= KEPT_THREAD_COUNTS + PAGE_SIZE as usize,
            "{held} counts held after 200 pages"
        );
    }

    #[test]
    fn a_burst_of_next_page_keys_chains_from_each_loaded_page() {
        let mut state = state();
        start(&mut state);
        page_loaded(&mut state, 1);
        let mut requests = Vec::new();
        for _ in 0..40 {
            requests.extend(update(&mut state, key(']')));
        }
        // One request at a time: the others wait for the page they start from.
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(state.list.page_number(), 1);
        assert_eq!(state.list.target_page(), Some(41));
        for page in 2..=41 {
            let Some(Effect::LoadList { filter, .. }) = requests.pop() else {
                panic!("page {page} was not asked for");
            };
            let previous_last = format!("p{}-{:02}", page - 1, PAGE_SIZE - 1);
            assert_eq!(
                filter.after.as_ref().map(|c| c.id.as_str()),
                Some(previous_last.as_str()),
                "page {page} starts after the last row of page {}",
                page - 1
            );
            requests = page_loaded(&mut state, page);
            assert_eq!(state.list.page_number(), page);
            assert_eq!(state.list.rows[0].id, format!("p{page}-00"));
        }
        assert!(requests.is_empty(), "{requests:?}");
        assert_eq!(state.list.target_page(), None);
        // And back: a burst of `[` walks the same cursors down.
        for _ in 0..3 {
            requests.extend(update(&mut state, key('[')));
        }
        assert_eq!(requests.len(), 1);
        for page in (38..=40).rev() {
            let chained = page_loaded(&mut state, page);
            assert_eq!(state.list.page_number(), page);
            assert_eq!(chained.len(), usize::from(page > 38), "page {page}");
        }
    }

    #[test]
    fn a_failed_page_stops_the_burst_and_keeps_the_shown_page() {
        let mut state = state();
        start(&mut state);
        page_loaded(&mut state, 1);
        update(&mut state, key(']'));
        update(&mut state, key(']'));
        let generation = state.list.generation;
        let effects = update(
            &mut state,
            Event::Job(JobEvent::List {
                generation,
                result: Err("disk I/O error".to_owned()),
            }),
        );
        assert!(effects.is_empty());
        assert_eq!(state.list.page_number(), 1);
        assert_eq!(state.list.target_page(), None);
    }

    #[test]
    fn short_page_has_no_next_page() {
        let mut state = state();
        start(&mut state);
        list_loaded(&mut state, &["only"]);
        assert!(update(&mut state, key(']')).is_empty());
    }

    #[test]
    fn opening_selects_the_latest_leaf_and_marks_its_thread() {
        let state = opened();
        assert_eq!(state.screen, Screen::Conversation);
        assert_eq!(selected_id(&state), "c");
        let mut thread = thread_ids(&state);
        thread.sort();
        assert_eq!(thread, ["a", "b", "c"]);
    }

    #[test]
    fn thread_mode_toggle_flags_the_divergence_on_an_older_branch() {
        let mut state = opened();
        // Visible order: a, b, c, b2. Select b2, a regeneration that is not the newest row.
        update(&mut state, Event::Action(Action::Bottom));
        assert_eq!(selected_id(&state), "b2");
        let thread = conversation(&state).thread.clone().unwrap();
        assert_eq!(thread.mode, ThreadMode::Dify);
        assert_ne!(
            thread.comparison,
            crate::memory::thread::ThreadComparison::Same
        );
        assert!(on_thread(&state, "c"));
        update(&mut state, key('t'));
        assert_eq!(conversation(&state).mode, ThreadMode::Tree);
        assert!(on_thread(&state, "b2") && !on_thread(&state, "c"));
        let effects = update(&mut state, key('t'));
        assert_eq!(conversation(&state).mode, ThreadMode::Fixed);
        let (_, _, settings) = budget_effect(&effects);
        assert_eq!(
            settings.options.extraction,
            ExtractionMode::Fixed,
            "memory runs the fix too"
        );
    }

    /// The fixture conversation, reloaded, with its budget counted and delivered.
    pub(super) fn opened_with_budget() -> AppState {
        let mut state = opened();
        let effects = update(&mut state, Event::Action(Action::Refresh));
        let generation = match &effects[..] {
            [Effect::LoadConversation { generation, .. }] => *generation,
            other => panic!("{other:?}"),
        };
        let effects = update(
            &mut state,
            Event::Job(JobEvent::Conversation {
                generation,
                result: Ok(loaded()),
            }),
        );
        let (generation, rows, settings) = budget_effect(&effects);
        let view = BudgetView::compute(&rows, &[], &settings, &mut CountCache::new(100));
        update(
            &mut state,
            Event::Job(JobEvent::Budget {
                generation,
                result: Ok(Box::new(view)),
            }),
        );
        state
    }

    #[test]
    fn budget_keys_move_the_cut_line_without_a_job() {
        let mut state = opened_with_budget();
        let before = conversation(&state).budget.clone().unwrap();
        assert_eq!(before.dropped(), 0);
        update(&mut state, Event::Action(Action::BudgetDown));
        for _ in 0..10 {
            assert!(update(&mut state, key('-')).is_empty());
        }
        let after = conversation(&state).budget.clone().unwrap();
        assert_eq!(after.max_tokens, 0);
        assert_eq!(state.settings.budget, 0, "the budget never goes negative");
        assert_eq!(after.dropped(), after.counts.len() - 1);
        update(&mut state, key('+'));
        assert_eq!(
            conversation(&state).budget.as_ref().unwrap().max_tokens,
            BUDGET_STEP
        );
    }

    #[test]
    fn zero_counter_is_requested_and_keeps_everything() {
        let mut state = opened();
        state.settings.counter = CounterKind::Plugin;
        let effects = update(&mut state, key('c'));
        assert_eq!(state.settings.counter, CounterKind::Raw);
        let (_, _, settings) = budget_effect(&effects);
        assert_eq!(settings.counter.kind(), CounterKind::Raw);
        let effects = update(&mut state, key('c'));
        let (generation, rows, settings) = budget_effect(&effects);
        assert_eq!(settings.counter.kind(), CounterKind::Zero);
        let view = BudgetView::compute(&rows, &[], &settings, &mut CountCache::new(100));
        update(
            &mut state,
            Event::Job(JobEvent::Budget {
                generation,
                result: Ok(Box::new(view)),
            }),
        );
        update(&mut state, Event::Action(Action::BudgetDown));
        let view = conversation(&state).budget.clone().unwrap();
        assert!(view.zero_counter_trap());
        assert_eq!(view.dropped(), 0);
    }

    #[test]
    fn stale_budgets_are_dropped() {
        let mut state = opened();
        let first = budget_effect(&update(&mut state, key('j'))).0;
        update(&mut state, key('k'));
        let counter = TokenCounter::with_encoding(CounterKind::Raw, Encoding::Cl100kBase);
        let settings = BudgetSettings {
            counter,
            max_tokens: 10,
            model: "gpt-4o".to_owned(),
            options: Default::default(),
        };
        let view = BudgetView::compute(&[], &[], &settings, &mut CountCache::new(10));
        update(
            &mut state,
            Event::Job(JobEvent::Budget {
                generation: first,
                result: Ok(Box::new(view)),
            }),
        );
        assert!(conversation(&state).budget.is_none());
        assert!(conversation(&state).budget_status.is_loading());
    }

    #[test]
    fn collapse_hides_children_then_goes_to_parent() {
        let mut state = opened();
        update(&mut state, Event::Action(Action::Top));
        assert_eq!(selected_id(&state), "a");
        update(&mut state, key('h'));
        assert!(conversation(&state).is_collapsed(conversation(&state).selected));
        update(&mut state, Event::Action(Action::Bottom));
        assert_eq!(selected_id(&state), "a", "only the root is visible");
        update(&mut state, key('l'));
        update(&mut state, key('j'));
        assert_eq!(selected_id(&state), "b");
        update(&mut state, key('h'));
        update(&mut state, key('h'));
        assert_eq!(selected_id(&state), "a");
    }

    #[test]
    fn jump_latest_opens_collapsed_ancestors() {
        let mut state = opened();
        update(&mut state, Event::Action(Action::Top));
        update(&mut state, key('h'));
        update(&mut state, key('L'));
        assert_eq!(selected_id(&state), "c");
        assert_eq!(conversation(&state).cursor, 2);
    }

    #[test]
    fn demo_steps_walk_the_extraction_and_select_the_examined_row() {
        let mut state = opened();
        update(&mut state, key('d'));
        let demo = conversation(&state).demo.clone().unwrap();
        assert_eq!(demo.shown, 1);
        assert_eq!(selected_id(&state), "c", "the newest row is examined first");
        update(&mut state, key('n'));
        assert_eq!(selected_id(&state), "b2");
        assert!(!on_thread(&state, "b2"), "a sibling is skipped");
        update(&mut state, key('n'));
        assert_eq!(selected_id(&state), "b");
        assert!(on_thread(&state, "b"));
        for _ in 0..10 {
            update(&mut state, key('n'));
        }
        let c = conversation(&state);
        assert_eq!(
            c.demo.as_ref().unwrap().shown,
            c.demo.as_ref().unwrap().trace.steps.len()
        );
        update(&mut state, code(KeyCode::Esc));
        assert!(conversation(&state).demo.is_none());
        assert_eq!(
            state.screen,
            Screen::Conversation,
            "esc leaves the demo first"
        );
        update(&mut state, code(KeyCode::Esc));
        assert_eq!(state.screen, Screen::Conversations);
    }

    #[test]
    fn commands_set_budget_model_counter_and_quit() {
        let mut state = opened();
        let type_command = |state: &mut AppState, text: &str| {
            update(state, key(':'));
            for c in text.chars() {
                update(state, key(c));
            }
            update(state, code(KeyCode::Enter))
        };
        type_command(&mut state, "budget 123");
        assert_eq!(state.settings.budget, 123);
        let effects = type_command(&mut state, "model llama-3-70b");
        assert_eq!(state.settings.model(), "llama-3-70b");
        assert_eq!(budget_effect(&effects).2.model, "llama-3-70b");
        type_command(&mut state, "counter zero");
        assert_eq!(state.settings.counter, CounterKind::Zero);
        type_command(&mut state, "counter nonsense");
        assert!(state.message.as_deref().unwrap().contains("nonsense"));
        type_command(&mut state, "frobnicate");
        assert!(state.message.as_deref().unwrap().contains(":conv ID"));
        let effects = type_command(&mut state, "conv other");
        assert!(matches!(&effects[..], [Effect::LoadConversation { id, .. }] if id == "other"));
        type_command(&mut state, "q");
        assert!(state.quit);
    }

    #[test]
    fn help_opens_scrolls_and_closes_and_owns_the_keyboard() {
        let mut state = state();
        update(&mut state, key('?'));
        assert_eq!(state.overlay, Overlay::Help);
        update(&mut state, key('j'));
        update(&mut state, key('j'));
        assert_eq!(
            state.overlay,
            Overlay::Help,
            "navigation does not close help"
        );
        assert_eq!(state.help_scroll, 2, "j scrolls the help");
        update(&mut state, key('k'));
        assert_eq!(state.help_scroll, 1);
        update(&mut state, key('g'));
        assert_eq!(state.help_scroll, 0);
        update(&mut state, code(KeyCode::Esc));
        assert_eq!(state.overlay, Overlay::None);
        update(&mut state, key('?'));
        update(&mut state, key('q'));
        assert!(
            !state.quit,
            "the help is a popup: q does not quit behind it"
        );
        assert_eq!(state.overlay, Overlay::Help);
        update(&mut state, key('?'));
        assert_eq!(state.overlay, Overlay::None, "? closes the help");
        update(&mut state, key('q'));
        assert!(state.quit);
    }

    #[test]
    fn polling_reloads_only_when_the_newest_message_changed() {
        let mut state = opened();
        let polls: Vec<Effect> = (0..POLL_EVERY_TICKS)
            .flat_map(|_| update(&mut state, Event::Tick))
            .collect();
        assert!(matches!(&polls[..], [Effect::PollNewest { id }] if id == "c1"));
        let same = update(
            &mut state,
            Event::Job(JobEvent::Newest {
                id: "c1".to_owned(),
                newest: Some("c".to_owned()),
            }),
        );
        assert!(same.is_empty());
        let changed = update(
            &mut state,
            Event::Job(JobEvent::Newest {
                id: "c1".to_owned(),
                newest: Some("d".to_owned()),
            }),
        );
        assert!(matches!(&changed[..], [Effect::LoadConversation { id, .. }] if id == "c1"));
    }

    #[test]
    fn a_reload_follows_the_latest_leaf_when_it_was_selected() {
        let mut state = opened();
        let mut rows = loaded().conversation.rows.clone();
        rows.push(message("d", Some("c"), 40));
        let conversation_data = LoadedConversation {
            info: loaded().conversation.info.clone(),
            rows,
            files: Vec::new(),
        };
        let generation = state.generation();
        state.conversation.as_mut().unwrap().generation = generation;
        update(
            &mut state,
            Event::Job(JobEvent::Conversation {
                generation,
                result: Ok(Arc::new(Loaded::new(conversation_data))),
            }),
        );
        assert_eq!(selected_id(&state), "d");
    }

    #[test]
    fn ticks_redraw_only_while_busy() {
        let mut state = opened();
        let generation = conversation(&state).budget_generation;
        update(
            &mut state,
            Event::Job(JobEvent::Budget {
                generation,
                result: Err("boom".to_owned()),
            }),
        );
        state.dirty = false;
        update(&mut state, Event::Tick);
        assert!(!state.dirty);
        update(&mut state, Event::Action(Action::Refresh));
        state.dirty = false;
        update(&mut state, Event::Tick);
        assert!(state.dirty, "the spinner moves");
    }

    #[test]
    fn ctrl_c_quits_even_while_typing() {
        let mut state = state();
        update(&mut state, key(':'));
        update(
            &mut state,
            Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        );
        assert!(state.quit);
    }

    /// A chatflow thread of one turn for the nodes pane.
    fn node_thread() -> Arc<NodeThread> {
        let info = loaded().conversation.info.clone();
        Arc::new(NodeThread {
            info: ConversationInfo {
                app_mode: Some(crate::inspect::nodes::CHATFLOW_MODE.to_owned()),
                ..info
            },
            leaf: None,
            turns: vec![crate::memory::node_context::ThreadTurn {
                message_id: "c".to_owned(),
                workflow_run_id: "run-c".to_owned(),
            }],
            dangling: Vec::new(),
        })
    }

    fn node_row(node_id: &str) -> NodeRow {
        NodeRow {
            summary: crate::inspect::nodes::NodeSummary {
                node_id: node_id.to_owned(),
                node_type: "llm".to_owned(),
                title: node_id.to_uppercase(),
                executions: 1,
                on_thread: 1,
                latest_run: Some("run-c".to_owned()),
            },
            latest: None,
        }
    }

    fn nodes_generation(effects: &[Effect]) -> u64 {
        effects
            .iter()
            .find_map(|e| match e {
                Effect::LoadNodes { generation, .. } => Some(*generation),
                _ => None,
            })
            .expect("a nodes load")
    }

    /// The fixture conversation with its nodes pane open and loaded (nodes `llm1`, `llm2`).
    fn nodes_open() -> (AppState, Vec<Effect>) {
        let mut state = opened();
        let generation = nodes_generation(&update(&mut state, key('o')));
        let effects = update(
            &mut state,
            Event::Job(JobEvent::Nodes {
                generation,
                result: Ok(LoadedNodes {
                    thread: node_thread(),
                    rows: vec![node_row("llm1"), node_row("llm2")],
                }),
            }),
        );
        (state, effects)
    }

    fn context_request(effects: &[Effect]) -> (u64, String, ContextSource) {
        effects
            .iter()
            .find_map(|e| match e {
                Effect::LoadNodeContext {
                    generation,
                    node_id,
                    source,
                    ..
                } => Some((*generation, node_id.clone(), *source)),
                _ => None,
            })
            .expect("a node context load")
    }

    fn empty_context(source: ContextSource) -> Box<NodeContextView> {
        let sources = crate::inspect::nodes::NodeSources {
            node_id: "llm1".to_owned(),
            memory_file: crate::inspect::nodes::MemoryFileRead::Missing {
                path: "llm1.json".to_owned(),
            },
            last_run: Vec::new(),
        };
        let context = crate::inspect::nodes::node_context(&node_thread(), &sources, source);
        let settings = settings().budget_settings();
        Box::new(NodeContextView::compute(
            context,
            &settings,
            &mut CountCache::new(10),
        ))
    }

    #[test]
    fn opening_the_nodes_pane_at_the_latest_leaf_reads_dify_s_own_thread() {
        let mut state = opened();
        let effects = update(&mut state, key('o'));
        assert!(matches!(
            &effects[..],
            [Effect::LoadNodes { leaf: None, conversation_id, .. }] if conversation_id == "c1"
        ));
        assert_eq!(state.key_context(), KeyContext::Nodes);
        update(&mut state, key('o'));
        assert!(state.nodes().is_none(), "o closes the pane again");
        // Another leaf: its tree path.
        update(&mut state, key('k'));
        let effects = update(&mut state, key('o'));
        assert!(
            matches!(&effects[..], [Effect::LoadNodes { leaf: Some(_), .. }]),
            "{effects:?}"
        );
    }

    #[test]
    fn loaded_nodes_ask_for_the_first_node_s_context_and_timeline() {
        let (state, effects) = nodes_open();
        let (_, node_id, source) = context_request(&effects);
        assert_eq!((node_id.as_str(), source), ("llm1", ContextSource::Outputs));
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::LoadTimeline { node_id, .. } if node_id == "llm1"))
        );
        assert!(state.busy());
    }

    #[test]
    fn only_the_latest_node_context_request_is_shown() {
        let (mut state, effects) = nodes_open();
        let (stale, _, _) = context_request(&effects);
        let (latest, _, source) = context_request(&update(&mut state, key('s')));
        assert_eq!(source, ContextSource::Prompts);
        let stale_result = JobEvent::NodeContext {
            generation: stale,
            result: Ok(empty_context(ContextSource::Outputs)),
        };
        update(&mut state, Event::Job(stale_result));
        assert!(
            state.nodes().unwrap().context.is_none(),
            "a stale result is dropped"
        );
        let latest_result = JobEvent::NodeContext {
            generation: latest,
            result: Ok(empty_context(ContextSource::Prompts)),
        };
        update(&mut state, Event::Job(latest_result));
        let nodes = state.nodes().unwrap();
        let view = nodes.context.as_ref().unwrap();
        assert_eq!(view.context.source, ContextSource::Prompts);
        assert_eq!(nodes.context_status, LoadStatus::Loaded);
    }

    #[test]
    fn a_failed_node_context_is_an_error_state_not_a_crash() {
        let (mut state, effects) = nodes_open();
        let (generation, _, _) = context_request(&effects);
        let failed = JobEvent::NodeContext {
            generation,
            result: Err("database is locked".to_owned()),
        };
        update(&mut state, Event::Job(failed));
        let nodes = state.nodes().unwrap();
        assert_eq!(
            nodes.context_status,
            LoadStatus::Failed("database is locked".to_owned())
        );
    }

    #[test]
    fn moving_to_another_node_clears_its_view_and_loads_it() {
        let (mut state, effects) = nodes_open();
        let (generation, _, _) = context_request(&effects);
        let result = JobEvent::NodeContext {
            generation,
            result: Ok(empty_context(ContextSource::Outputs)),
        };
        update(&mut state, Event::Job(result));
        let effects = update(&mut state, key('j'));
        assert_eq!(context_request(&effects).1, "llm2");
        assert!(state.nodes().unwrap().context.is_none());
        assert!(
            update(&mut state, key('j')).is_empty(),
            "already the last node"
        );
    }

    #[test]
    fn a_new_counter_recounts_the_nodes_pane_and_the_budget_moves_its_cut() {
        let (mut state, _) = nodes_open();
        let effects = update(&mut state, key('c'));
        let generation = nodes_generation(&effects);
        assert_eq!(state.nodes().unwrap().generation, generation);
        update(&mut state, key('+'));
        assert_eq!(state.settings.budget, 2000 + BUDGET_STEP);
        update(&mut state, code(KeyCode::Esc));
        assert!(state.nodes().is_none());
        assert_eq!(state.key_context(), KeyContext::Conversation);
    }
}
