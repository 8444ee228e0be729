//! What the user can ask for. Bindable actions have a snake_case name (the keymap's vocabulary)
//! and a default description for the help popup and the hint bar.

use serde::Deserialize;

/// A user-level command, produced by the keymap or the `:` command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Quit,
    Back,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    ToggleHelp,
    CommandLine,
    Filter,
    Refresh,
    NextPage,
    PrevPage,
    Collapse,
    Expand,
    ToggleThreadMode,
    JumpLatest,
    BudgetUp,
    BudgetDown,
    NextModel,
    NextCounter,
    NextEncoding,
    ToggleRowWindow,
    ToggleDemo,
    DemoStep,
    DemoStepBack,
}

impl Action {
    /// Every bindable action, in help order.
    pub const ALL: [Action; 28] = [
        Action::Quit,
        Action::Back,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::Open,
        Action::ToggleHelp,
        Action::CommandLine,
        Action::Filter,
        Action::Refresh,
        Action::NextPage,
        Action::PrevPage,
        Action::Collapse,
        Action::Expand,
        Action::ToggleThreadMode,
        Action::JumpLatest,
        Action::BudgetUp,
        Action::BudgetDown,
        Action::NextModel,
        Action::NextCounter,
        Action::NextEncoding,
        Action::ToggleRowWindow,
        Action::ToggleDemo,
        Action::DemoStep,
        Action::DemoStepBack,
    ];

    /// The description used when a binding does not give its own.
    pub fn default_description(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Back => "back / close",
            Action::Up => "up",
            Action::Down => "down",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Top => "first",
            Action::Bottom => "last",
            Action::Open => "open",
            Action::ToggleHelp => "help",
            Action::CommandLine => "command line",
            Action::Filter => "filter",
            Action::Refresh => "reload",
            Action::NextPage => "next page",
            Action::PrevPage => "previous page",
            Action::Collapse => "collapse / parent",
            Action::Expand => "expand",
            Action::ToggleThreadMode => "Dify thread / tree path",
            Action::JumpLatest => "latest leaf",
            Action::BudgetUp => "budget +",
            Action::BudgetDown => "budget -",
            Action::NextModel => "next model",
            Action::NextCounter => "next counter",
            Action::NextEncoding => "next encoding",
            Action::ToggleRowWindow => "row window 500 / app's",
            Action::ToggleDemo => "extraction demo",
            Action::DemoStep => "demo: next step",
            Action::DemoStepBack => "demo: previous step",
        }
    }
}
