//! What the TUI screen tests share: settings with a fixed counter, keys sent through `update`,
//! drawing into a TestBackend, and snapshots at the two sizes every screen is checked at.
//!
//! Use it from a test file with `#[macro_use] mod tui_support;`, and from a bench with
//! `#[path = "../tests/tui_support/mod.rs"] mod tui_support;`.

// Each test binary uses a different part of it.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use memscope::memory::budget_view::BudgetView;
use memscope::memory::history::assemble_history;
use memscope::memory::tokens::{CountCache, CounterKind, Encoding};
use memscope::tui::state::{AppState, Settings};
use memscope::tui::theme::Theme;
use memscope::tui::ui;
use memscope::tui::update::{Effect, Event, JobEvent, Load, LoadReport, Stamped, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Every screen is snapshotted at a roomy and at the smallest common terminal size.
pub const SIZES: [(u16, u16); 2] = [(120, 32), (80, 24)];
/// Screens reworked since also at a wide terminal, where cut text and stretched panels show.
pub const ALL_SIZES: [(u16, u16); 3] = [(160, 45), (120, 32), (80, 24)];

/// Raw cl100k counts (no per-message overhead) and a 2,000-token budget.
pub fn settings() -> Settings {
    Settings {
        models: vec!["gpt-4o".to_owned()],
        model_index: 0,
        counter: CounterKind::Raw,
        encoding: Some(Encoding::Cl100kBase),
        budget: 2000,
        message_limit: 0,
        app_window: true,
        context_windows: Default::default(),
    }
}

pub fn key(state: &mut AppState, c: char) -> Vec<Effect> {
    code(state, KeyCode::Char(c))
}

pub fn code(state: &mut AppState, code: KeyCode) -> Vec<Effect> {
    update(state, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// `state` drawn without colours, as NO_COLOR users see it.
pub fn render(state: &AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| ui::draw(state, &Theme::monochrome(), frame))
        .unwrap();
    terminal
}

pub fn screen_text(state: &AppState, width: u16, height: u16) -> String {
    render(state, width, height).backend().to_string()
}

#[allow(unused_macros)]
/// Snapshots `$state` at every size as `{name}_{width}x{height}`. A macro, so insta names the
/// snapshot files after the calling test file.
macro_rules! snapshot {
    ($name:expr, $state:expr) => {{
        for (width, height) in tui_support::SIZES {
            let terminal = tui_support::render($state, width, height);
            insta::assert_snapshot!(format!("{}_{width}x{height}", $name), terminal.backend());
        }
    }};
    ($name:expr, $state:expr, all_sizes) => {{
        for (width, height) in tui_support::ALL_SIZES {
            let terminal = tui_support::render($state, width, height);
            insta::assert_snapshot!(format!("{}_{width}x{height}", $name), terminal.backend());
        }
    }};
}

/// The bottom line of `state` drawn at `width`x`height`: the hint bar or the prompt.
pub fn hint_bar(state: &AppState, width: u16, height: u16) -> String {
    let text = screen_text(state, width, height);
    text.lines().last().unwrap_or_default().to_owned()
}

/// Runs every budget request among `effects` as the job runner would, and delivers the results.
pub fn run_budgets(state: &mut AppState, effects: Vec<Effect>, cache: &mut CountCache) {
    for effect in effects {
        if let Effect::Load(Stamped {
            generation,
            value:
                Load::Budget {
                    loaded,
                    leaf,
                    mode,
                    window,
                    settings,
                },
        }) = effect
        {
            let rows = loaded.budget_rows(leaf, mode, window);
            let view = BudgetView::for_history(
                assemble_history(&rows, &loaded.conversation.files, &settings.options),
                &settings,
                cache,
            );
            let result = Ok(Box::new(view));
            update(
                state,
                Event::Job(JobEvent::load(generation, LoadReport::Budget(result))),
            );
        }
    }
}
