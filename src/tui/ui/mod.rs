//! Drawing: the frame (header, status bar, hint bar, prompt, help popup) around the screen in
//! front. Everything draws from `&AppState`: no IO, no waiting.

mod budget;
mod chat_memories;
mod checkpoints;
mod common;
mod conversation;
mod conversations;
mod diff;
mod doctor;
mod form;
mod jobs;
mod memory_bases;
mod nodes;
mod prune;
mod rows;
pub mod session;
mod tree_screen;
mod trim;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::keymap::KeyContext;
use super::state::{AppState, Detail, Overlay, Prompt, Screen, Tab};
use super::theme::Theme;
use crate::format::one_line;
pub use common::Component;
use common::{confirm_popup, fit_line, middle_cut, popup};

/// Below this size the layout cannot show its panes; a message says so instead.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 12;

const SPINNER: [char; 4] = ['|', '/', '-', '\\'];

fn component(state: &AppState) -> &'static dyn Component {
    match state.screen {
        Screen::Conversations => &conversations::ConversationList,
        Screen::Conversation => &conversation::ConversationView,
        Screen::Session => &session::SessionScreen,
        Screen::ChatMemories => &chat_memories::ChatMemoriesView,
        Screen::MemoryBases => &memory_bases::MemoryBasesView,
        Screen::Doctor => &doctor::DoctorView,
        Screen::Checkpoints => &checkpoints::CheckpointsView,
        Screen::Tree => &tree_screen::TreeScreen,
    }
}

/// Draws one frame.
pub fn draw(state: &AppState, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small: {}x{}, memscope needs {MIN_WIDTH}x{MIN_HEIGHT}",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(text)
                .style(theme.warning)
                .wrap(Default::default()),
            area,
        );
        return;
    }
    let [header, body, first_run, status, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(u16::from(state.first_run_hint)),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    if state.first_run_hint {
        draw_first_run_hint(state, theme, frame, first_run);
    }
    let screen = component(state);
    draw_header(state, theme, frame, header);
    match state.tab_missing(state.screen.tab()) {
        Some(why) => frame.render_widget(
            Paragraph::new(why)
                .style(theme.dim)
                .wrap(Default::default())
                .block(
                    Block::bordered().title(format!(" {} ", state.screen.tab().title(state.noun))),
                ),
            body,
        ),
        None => screen.render(state, theme, frame, body),
    }
    draw_status(state, theme, frame, status);
    match &state.overlay {
        Overlay::Prompt(prompt) => draw_prompt(prompt, theme, frame, bottom),
        _ => draw_hints(state, state.key_context(), theme, frame, bottom),
    }
    match &state.overlay {
        Overlay::Help => draw_help(state, theme, frame, body),
        Overlay::Trim => {
            if let Some(preview) = &state.trim {
                trim::draw_overlay(state, preview, theme, frame, body);
            }
        }
        Overlay::Confirm(confirm) => confirm_popup(state, &confirm.question, theme, frame, body),
        Overlay::Prune => {
            if let Some(planned) = &state.prune {
                prune::draw(state, planned, theme, frame, body);
            }
        }
        Overlay::Form(form) => form::draw(state, form, theme, frame, body),
        Overlay::Jobs => jobs::draw_jobs(state, theme, frame, body),
        Overlay::Detail(detail) => draw_detail(detail, theme, frame, body),
        Overlay::None | Overlay::Prompt(_) => {}
    }
}

fn draw_header(state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled("memscope ", theme.title)];
    // Every tab is named at any width (the one in front highlighted); the breadcrumbs after it
    // take what is left and end in … when they do not fit.
    for (number, tab) in Tab::ALL.into_iter().enumerate() {
        let style = if state.screen.tab() == tab {
            theme.selected
        } else {
            theme.dim
        };
        spans.push(Span::styled(
            format!(" {} {} ", number + 1, tab.title(state.noun)),
            style,
        ));
    }
    let crumbs = state.breadcrumbs();
    if !crumbs.is_empty() {
        let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
        let room = usize::from(area.width).saturating_sub(used + 1);
        spans.push(Span::styled(" ", theme.dim));
        spans.push(Span::styled(
            one_line(&format!("› {}", crumbs.join(" › ")), room),
            theme.text,
        ));
    }
    frame.render_widget(Line::from(spans), area);
}

fn draw_status(state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
    // The database goes first, placed once the rest is known: a long path is cut in the
    // middle (its file name stays) so the counts after it are never cut off unmarked.
    let mut spans = vec![Span::raw("")];
    if state.read_only {
        spans.push(Span::styled(" read-only ", theme.badge));
        spans.push(Span::raw(" "));
    }
    if !state.list.filter.is_empty() {
        spans.push(Span::styled(
            format!("filter: {} ", state.list.filter),
            theme.warning,
        ));
    }
    if state.busy() {
        let spinner = SPINNER[(state.ticks % SPINNER.len() as u64) as usize];
        spans.push(Span::styled(format!("{spinner} working "), theme.title));
    }
    let running = state.jobs.running();
    if running > 0 {
        spans.push(Span::styled(format!("⟳ jobs: {running} "), theme.title));
    }
    let warnings = state.warnings().len();
    if warnings > 0 {
        spans.push(Span::styled(
            format!("⚠ warnings: {warnings} (! lists them) "),
            theme.warning,
        ));
    }
    let others: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let room = usize::from(area.width).saturating_sub(others + 2);
    spans[0] = Span::styled(
        format!(" {} ", middle_cut(&state.database, room)),
        theme.text,
    );
    if let Some(message) = &state.message {
        // What does not fit ends in … and `!` shows it whole.
        let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
        let room = usize::from(area.width).saturating_sub(used);
        let shown = one_line(message, room);
        let cut = shown.ends_with('…') && !message.ends_with('…');
        spans.push(Span::styled(
            if cut {
                one_line(message, room.saturating_sub(8)) + " (! all)"
            } else {
                shown
            },
            theme.error,
        ));
    }
    frame.render_widget(Line::from(spans), area);
}

/// The first run's footer line: what the start-up warning is and where to read it, and help.
/// A line, not a popup, so every key still goes where it always goes.
fn draw_first_run_hint(state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let keymap = &state.keymap;
    let key = |action| {
        keymap
            .key_for(KeyContext::Global, action)
            .map_or_else(|| ":".to_owned(), |k| k.to_string())
    };
    // Help first: at 80 columns a cut must not take the one key that explains the others.
    let warnings = if state.warnings().is_empty() {
        String::new()
    } else {
        format!(
            " · {} reads the ⚠ warning (a demo story)",
            key(super::action::Action::ShowWarnings)
        )
    };
    let text = format!(
        " Demo's first run: {} lists every key{warnings} ",
        key(super::action::Action::ToggleHelp)
    );
    frame.render_widget(
        Line::styled(one_line(&text, usize::from(area.width)), theme.title),
        area,
    );
}

/// The hint bar: the context's keys in order as far as they fit, then always the way out and
/// help; `…` says the help (`?`) has the ones left out.
fn draw_hints(state: &AppState, context: KeyContext, theme: &Theme, frame: &mut Frame, area: Rect) {
    let (own, globals) = state
        .keymap
        .hints_offered(context, |action| state.offers(action));
    let width = |entries: &[(String, &str)]| -> usize {
        entries
            .iter()
            .map(|(keys, desc)| keys.chars().count() + desc.chars().count() + 3)
            .sum()
    };
    let available = usize::from(area.width);
    let reserved = width(&globals);
    let mut shown = Vec::new();
    let mut used = 0;
    let mut cut = false;
    for entry in &own {
        let needed = width(std::slice::from_ref(entry));
        // Room for this entry, the globals, and the `…` if more follow.
        if used + needed + reserved + 2 > available && entry != own.last().unwrap_or(entry)
            || used + needed + reserved > available
        {
            cut = true;
            break;
        }
        used += needed;
        shown.push(entry);
    }
    let mut spans = Vec::new();
    for (keys, desc) in shown.into_iter().chain(globals.iter()) {
        spans.push(Span::styled(format!(" {keys}"), theme.title));
        spans.push(Span::styled(format!(" {desc} "), theme.dim));
    }
    if cut {
        spans.push(Span::styled(" …", theme.dim));
    }
    // Narrower than the way out and help themselves: they too are cut, with `…`.
    frame.render_widget(fit_line(spans, available), area);
}

fn draw_prompt(prompt: &Prompt, theme: &Theme, frame: &mut Frame, area: Rect) {
    let (sigil, text) = match prompt {
        Prompt::Filter(text) | Prompt::Search(text) => ("/", text),
        Prompt::Command(text) => (":", text),
    };
    let line = Line::from(vec![
        Span::styled(sigil, theme.title),
        Span::styled(text.as_str(), theme.text),
        Span::styled("█", theme.dim),
    ]);
    frame.render_widget(line, area);
    frame.set_cursor_position((area.x + 1 + text.chars().count() as u16, area.y));
}

fn draw_help(state: &AppState, theme: &Theme, frame: &mut Frame, body: Rect) {
    let area = body.centered(Constraint::Percentage(96), Constraint::Percentage(96));
    // (keys, description) entries; a heading has no keys. The screen's own keys come first.
    let here = state.help_context();
    let mut contexts = vec![here, KeyContext::Global];
    contexts.extend(
        [
            KeyContext::Conversations,
            KeyContext::Doctor,
            KeyContext::Conversation,
            KeyContext::Nodes,
            KeyContext::ChatMemories,
            KeyContext::MemoryBases,
            KeyContext::Jobs,
            KeyContext::TrimPreview,
            // Confirmations and forms draw their own keys inside their popups.
        ]
        .into_iter()
        .filter(|context| *context != here),
    );
    contexts.dedup();
    let mut entries: Vec<(String, String)> = Vec::new();
    for context in contexts {
        entries.push((String::new(), context.title().to_owned()));
        for (keys, desc) in state
            .keymap
            .grouped_offered(context, |action| state.offers(action))
        {
            entries.push((keys, desc.to_owned()));
        }
    }
    entries.push((String::new(), "Markers".to_owned()));
    for (marker, meaning) in [
        ("●", "on the thread memory sends"),
        ("D", "only in Dify's extraction"),
        ("T", "only on the true tree path"),
        ("⚑", "where extraction and tree differ"),
        ("(1/2)", "regeneration: sibling 1 of 2"),
        ("▾ ▸", "expanded / collapsed"),
        ("Σ", "a summary written by a trim"),
        ("…", "cut: enter or ! shows it whole"),
    ] {
        entries.push((marker.to_owned(), meaning.to_owned()));
    }
    entries.push((String::new(), "Commands".to_owned()));
    for command in crate::tui::state::COMMANDS {
        entries.push((command.to_owned(), String::new()));
    }
    // One column at any size, keys aligned before their descriptions: side-by-side columns ran
    // into each other on wide terminals. What the height cannot show scrolls (j/k).
    let inner_width = usize::from(area.width.saturating_sub(2));
    let rows = entries.len();
    let height = usize::from(area.height.saturating_sub(2).max(1));
    let scroll = state.help_scroll.min(rows.saturating_sub(height));
    let title = if rows > height {
        format!(
            " Help: keys from [keys] in config.toml · j/k scroll ({}–{} of {rows}) · esc closes ",
            scroll + 1,
            (scroll + height).min(rows)
        )
    } else {
        " Help: keys from [keys] in config.toml · esc closes ".to_owned()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(one_line(&title, inner_width))
        .border_style(theme.title);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let key_width = entries
        .iter()
        .map(|(keys, _)| keys.chars().count())
        .max()
        .unwrap_or(0);
    let lines: Vec<Line> = entries
        .iter()
        .skip(scroll)
        .map(|(keys, desc)| {
            if keys.is_empty() {
                Line::styled(one_line(desc, inner_width), theme.title)
            } else {
                let room = inner_width.saturating_sub(key_width + 1);
                Line::from(vec![
                    Span::styled(format!("{keys:>key_width$} "), theme.warning),
                    Span::styled(one_line(desc, room), theme.text),
                ])
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A text shown whole: wrapped, scrolled with the moving keys.
fn draw_detail(detail: &Detail, theme: &Theme, frame: &mut Frame, body: Rect) {
    let area = body.centered(Constraint::Percentage(90), Constraint::Percentage(90));
    let inner_width = area.width.saturating_sub(2);
    let mut lines: Vec<Line> = detail
        .text
        .lines()
        .map(|line| Line::styled(line.to_owned(), theme.text))
        .collect();
    for comparison in &detail.comparisons {
        lines.extend(diff::comparison_lines(
            comparison,
            usize::from(inner_width),
            theme,
        ));
    }
    let total = budget::wrapped_height(&lines, inner_width);
    let height = area.height.saturating_sub(2);
    let scroll =
        (detail.scroll.min(usize::from(u16::MAX)) as u16).min(total.saturating_sub(height));
    let position = if total > height {
        format!(
            "· j/k scroll ({}–{} of {total}) ",
            scroll + 1,
            (scroll + height).min(total)
        )
    } else {
        String::new()
    };
    let title = format!("{}{position}· esc closes ", detail.title);
    let inner = popup(
        one_line(&title, usize::from(inner_width)),
        theme,
        frame,
        area,
    );
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        inner,
    );
}
