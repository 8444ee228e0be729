//! The token budget panel: what `TokenBufferMemory` would send for the selected thread, where
//! pruning cuts, and whether the model can take it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::common::{placeholder, short_id};
use crate::format::{count, noun, one_line, thousands};
use crate::memory::budget_view::BudgetView;
use crate::memory::tokens::is_loaded;
use crate::tui::state::{AppState, BudgetRows, ConversationState, LoadStatus};
use crate::tui::theme::Theme;

pub fn draw(
    state: &AppState,
    conversation: &ConversationState,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let settings = &state.settings;
    let loaded = conversation.loaded.as_ref();
    let app_window = loaded.and_then(|l| l.conversation.info.app_window);
    // Drawn only with a budget, which only a loaded conversation has.
    let window = loaded.map_or(0, |l| settings.window(l.conversation.windows));
    let window_note = match (app_window, settings.app_window) {
        (Some(_), true) => "the app's window",
        (Some(_), false) => "Dify's default; the app's window ignored (W)",
        (None, _) => "Dify's default",
    };
    let panel = Panel {
        view: conversation.budget.as_ref(),
        status: &conversation.budget_status,
        of: BudgetOf::History {
            window,
            note: window_note,
        },
    };
    draw_panel(state, &panel, theme, frame, area);
}

/// What a budget panel counts: a conversation's history has a row window (the one in effect
/// and where it comes from) and a thread; a node context is the list the node keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetOf {
    History {
        window: usize,
        note: &'static str,
    },
    NodeContext,
    /// An open session's or thread's history (its rule and what it leaves out are the
    /// session's).
    Session,
}

/// A budget panel's contents: the view (absent until counted) and where its job stands.
pub struct Panel<'a> {
    pub view: Option<&'a BudgetView>,
    pub status: &'a LoadStatus,
    pub of: BudgetOf,
}

/// The live budget: per message tokens, running totals from each message on, the cut line of
/// the pruning rule, and whether the model can take what is sent.
pub fn draw_panel(state: &AppState, panel: &Panel, theme: &Theme, frame: &mut Frame, area: Rect) {
    let settings = &state.settings;
    let focused = state.budget_panel.focused;
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(if focused { theme.title } else { theme.dim })
        .title_style(theme.title);
    let inner = block.inner(area);
    // The layout comes first: the title names the rows shown.
    let layout = panel.view.map(|view| {
        // A short panel keeps its lines for the rows: the window line goes (a taller terminal
        // shows it); the model line stays, it says what the counts are counted for.
        let compact = inner.height < COMPACT_BELOW;
        // The gauge and at least the header, the cut line and a sent row stay visible.
        let summary = fit_summary(
            summary_lines(state, view, panel.of, compact, theme),
            inner.width,
            inner.height.saturating_sub(4),
        );
        let summary_height =
            wrapped_height(&summary, inner.width).min(inner.height.saturating_sub(4));
        let areas: [Rect; 3] = Layout::vertical([
            Constraint::Length(summary_height),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(inner);
        (view, summary, areas)
    });
    let counting = if panel.status.is_loading() {
        " · counting…"
    } else {
        ""
    };
    let keys = if focused {
        " · j/k scroll · b leaves"
    } else {
        " · b: scroll"
    };
    let position = layout
        .as_ref()
        .and_then(|(view, _, [_, _, rows_area])| {
            let rows = BudgetRows::of(view);
            let height = usize::from(rows_area.height.saturating_sub(1));
            (height > 0 && rows.total > height).then(|| {
                let first = rows.offset(state.budget_panel.offset, height);
                format!(" · {}–{} of {}", first + 1, first + height, rows.total)
            })
        })
        .unwrap_or_default();
    let title = format!(
        " Budget max {}{counting}{position}{keys} ",
        thousands(settings.budget)
    );
    block = block.title(one_line(&title, usize::from(area.width.saturating_sub(2))));
    frame.render_widget(block, area);
    let Some((view, summary, [text_area, gauge_area, rows_area])) = layout else {
        let text = match panel.status {
            LoadStatus::Failed(error) => format!("Could not count tokens: {error}"),
            _ if !is_loaded(settings.counter().encoding()) => {
                format!("Loading the {} tokenizer…", settings.counter().encoding())
            }
            _ => "Counting tokens…".to_owned(),
        };
        frame.render_widget(placeholder(text, theme.dim), inner);
        return;
    };
    frame.render_widget(Paragraph::new(summary).wrap(Wrap { trim: true }), text_area);
    draw_gauge(view, theme, frame, gauge_area);
    draw_rows(state, view, panel.of, theme, frame, rows_area);
}

fn draw_gauge(view: &BudgetView, theme: &Theme, frame: &mut Frame, area: Rect) {
    let ratio = if view.max_tokens > 0 {
        (view.pruned.tokens_after as f64 / view.max_tokens as f64).min(1.0)
    } else {
        1.0
    };
    let over = view.pruned.tokens_after as i128 > i128::from(view.max_tokens);
    let label = format!(
        "{} / {} tokens kept",
        thousands(view.pruned.tokens_after),
        thousands(view.max_tokens)
    );
    labelled_bar(ratio, over, &label, theme, frame, area);
}

/// A bar with its label beside it, never over it: the label keeps its width (cut with … on a
/// narrow pane) and the bar takes the rest, at least 5 cells.
pub(crate) fn labelled_bar(
    ratio: f64,
    over: bool,
    label: &str,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let label = format!(" {label}");
    let label_width = (label.chars().count() as u16).min(area.width.saturating_sub(6));
    let [bar, text] =
        Layout::horizontal([Constraint::Min(5), Constraint::Length(label_width)]).areas(area);
    let filled = (f64::from(bar.width) * ratio.clamp(0.0, 1.0)).round() as usize;
    let empty = usize::from(bar.width).saturating_sub(filled);
    frame.render_widget(
        Line::from(vec![
            Span::styled(
                "█".repeat(filled),
                if over { theme.error } else { theme.gauge },
            ),
            Span::styled("░".repeat(empty), theme.dim),
        ]),
        bar,
    );
    frame.render_widget(
        Line::styled(
            one_line(&label, usize::from(label_width)),
            if over { theme.error } else { theme.text },
        ),
        text,
    );
}

/// Rows `lines` take at `width` once word-wrapped (an estimate that never undercounts by
/// more than a word per line).
pub(crate) fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let width = usize::from(width.max(1));
    lines
        .iter()
        .map(|line| {
            let mut rows = 1;
            let mut used = 0;
            for word in line.to_string().split(' ') {
                let len = word.chars().count();
                let needed = if used == 0 { len } else { used + 1 + len };
                if needed <= width {
                    used = needed;
                } else {
                    rows += 1 + len / width;
                    used = len % width;
                }
            }
            rows as u16
        })
        .sum()
}

/// How much a summary line tells, most first: a short panel keeps the lines it has room for
/// in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tells {
    /// Messages, tokens, dropped and sent: the line the panel is for.
    Numbers,
    /// What makes the numbers wrong to trust (the zero counter).
    Warning,
    /// Whether the model's context window takes what is sent.
    Fit,
    /// What the counts are counted for.
    Model,
    /// The row window, the rule and what is left out.
    Note,
}

/// The summary within `height` rows of `width`, in its own order: the lines that tell most
/// are kept first, each where it still fits whole. The numbers stay, cut with `…` where they
/// alone are too tall.
fn fit_summary<'a>(lines: Vec<(Tells, Line<'a>)>, width: u16, height: u16) -> Vec<Line<'a>> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&index| lines[index].0);
    // Per line: `None` left out, `Some(true)` whole, `Some(false)` cut to one row.
    let mut kept = vec![None; lines.len()];
    let mut used = 0;
    for index in order {
        let rows = wrapped_height(std::slice::from_ref(&lines[index].1), width);
        if used + rows <= height {
            kept[index] = Some(true);
            used += rows;
        } else if lines[index].0 == Tells::Numbers && used < height {
            kept[index] = Some(false);
            used += 1;
        }
    }
    lines
        .into_iter()
        .zip(kept)
        .filter_map(|((_, line), kept)| match kept? {
            true => Some(line),
            false => Some(Line::styled(
                one_line(&line.to_string(), usize::from(width)),
                line.style,
            )),
        })
        .collect()
}

/// Panels with fewer inner lines than this show the compact summary.
const COMPACT_BELOW: u16 = 16;

fn summary_lines<'a>(
    state: &AppState,
    view: &BudgetView,
    of: BudgetOf,
    compact: bool,
    theme: &Theme,
) -> Vec<(Tells, Line<'a>)> {
    let settings = &state.settings;
    let counter = settings.counter();
    let mut lines = vec![
        (
            Tells::Model,
            Line::styled(
                format!(
                    "{} · {} counter · {}",
                    settings.model(),
                    settings.counter,
                    counter.encoding()
                ),
                theme.dim,
            ),
        ),
        (
            Tells::Numbers,
            Line::styled(
                format!(
                    "{}, {} before pruning; {} dropped, {} sent",
                    count(view.counts.len() as u64, "prompt message"),
                    count(view.pruned.tokens_before, "token"),
                    thousands(dropped(state, view, of) as u64),
                    thousands((view.counts.len() - dropped(state, view, of)) as u64)
                ),
                theme.text,
            ),
        ),
    ];
    let history = &view.history;
    if let (BudgetOf::History { window, note }, false) = (of, compact) {
        let popped = if history.popped.is_some() {
            " (newest popped as the request's placeholder)"
        } else {
            ""
        };
        lines.push((
            Tells::Note,
            Line::styled(
                format!(
                    "row window {} ({note}): {} loaded, {} on the thread{popped}",
                    thousands(window as u64),
                    count(history.rows_given.min(window) as u64, "stored row"),
                    count(history.thread.len() as u64, "row")
                ),
                theme.dim,
            ),
        ));
    }
    if of == BudgetOf::Session {
        lines.extend(session_notes(state, compact, theme));
    }
    if view.zero_counter_trap() {
        lines.push((
            Tells::Warning,
            Line::styled(
                format!(
                    "counter zero (Dify 1.x default): every count is 0, so NOTHING is pruned; the \
                     model receives all {}, {} by the classic formula",
                    count(view.counts.len() as u64, "prompt message"),
                    count(view.sent_tokens, "token")
                ),
                theme.warning,
            ),
        ));
    }
    let sent = thousands(view.sent_tokens);
    let window = &view.context_window;
    let subject = window.subject(&view.model);
    let advice = window
        .advice(&view.model)
        .map_or(String::new(), |advice| format!("; {advice}"));
    let fit = match (view.fits_context(), window.tokens()) {
        (Some(true), Some(tokens)) => Line::styled(
            format!(
                "fits {subject} ({sent} of {} tokens){advice}",
                thousands(tokens)
            ),
            theme.ok,
        ),
        (Some(false), Some(tokens)) => Line::styled(
            format!(
                "does NOT fit {subject}: {sent} of {} tokens{advice}",
                thousands(tokens)
            ),
            theme.error,
        ),
        _ => Line::styled(format!("{sent} tokens sent{advice}"), theme.dim),
    };
    lines.push((Tells::Fit, fit));
    lines
}

/// The history around the cut line: message tokens and the total from each message on, which
/// is what pruning compares with the budget. By default the cut line and the sent rows show;
/// once focused (`b`) the rows scroll.
fn draw_rows(
    state: &AppState,
    view: &BudgetView,
    of: BudgetOf,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let height = usize::from(area.height);
    if height == 0 {
        return;
    }
    let width = usize::from(area.width);
    let messages = &view.history.messages;
    if messages.is_empty() {
        let text = match of {
            BudgetOf::History { .. } => "The history is empty: nothing is sent.",
            BudgetOf::NodeContext => "The context is empty: nothing is sent.",
            BudgetOf::Session => "Nothing is fed to the model.",
        };
        frame.render_widget(placeholder(text, theme.dim), area);
        return;
    }
    let rows = BudgetRows::of(view);
    let body = height - 1;
    state.budget_panel.height.set(body);
    let offset = rows.offset(state.budget_panel.offset, body);
    let cut = rows.cut;
    let mut lines = vec![Line::styled(
        one_line("   #  role       tokens  from here  message", width),
        theme.title,
    )];
    for entry in offset..(offset + body).min(rows.total) {
        if cut > 0 && entry == cut {
            let above = dropped(state, view, of);
            lines.push(Line::styled(
                one_line(
                    &format!(
                        "──── cut: {} {} above {} dropped, {} below {} sent ────",
                        thousands(above as u64),
                        noun(above as u64, "message"),
                        if above == 1 { "is" } else { "are" },
                        thousands((messages.len() - cut) as u64),
                        if messages.len() - cut == 1 {
                            "is"
                        } else {
                            "are"
                        }
                    ),
                    width,
                ),
                theme.error,
            ));
            continue;
        }
        let index = if cut > 0 && entry > cut {
            entry - 1
        } else {
            entry
        };
        let message = &messages[index];
        let error_text = of == BudgetOf::Session && flagged(state, &message.source_id);
        let kept_above = of == BudgetOf::Session && kept_above_cut(state) == Some(index);
        let text = format!(
            "{index:>4}  {:<9} {:>6}  {:>9}  {} {}{}",
            message.message.role.as_str(),
            thousands(view.message_tokens(index)),
            thousands(view.totals.from(index)),
            short_id(&message.source_id),
            match (error_text, kept_above) {
                (true, _) => "⚑ error text: ",
                (false, true) => "sent above the cut: ",
                (false, false) => "",
            },
            message.message.content.text()
        );
        let style = match (index < cut && !kept_above, error_text) {
            (true, _) => theme.dim,
            (false, true) => theme.warning,
            (false, false) => theme.text,
        };
        lines.push(Line::from(Span::styled(one_line(&text, width), style)));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// The open session's rule and what it leaves out, counted; a short panel keeps one line for
/// what is left out and drops the rule.
fn session_notes<'a>(state: &AppState, compact: bool, theme: &Theme) -> Vec<(Tells, Line<'a>)> {
    let Some(budget) = state.session.as_ref().and_then(|s| s.budget.as_ref()) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if !compact {
        lines.push((Tells::Note, Line::styled(budget.rule.clone(), theme.dim)));
    }
    let left_out: Vec<String> = budget
        .left_out
        .iter()
        .map(|left_out| {
            let count = left_out.messages as u64;
            match compact {
                true => format!("{} {}", thousands(count), left_out.short),
                false => format!(
                    "{} {} {}",
                    thousands(count),
                    noun(count, "message"),
                    left_out.description
                ),
            }
        })
        .collect();
    let style = theme.warning;
    match compact {
        true if !left_out.is_empty() => {
            lines.push((
                Tells::Note,
                Line::styled(format!("left out: {}", left_out.join(", ")), style),
            ));
        }
        true => {}
        false => lines.extend(left_out.into_iter().map(|text| {
            (
                Tells::Note,
                Line::styled(format!("left out: {text}"), style),
            )
        })),
    }
    if !budget.flagged.is_empty() {
        lines.push((
            Tells::Warning,
            Line::styled(
                format!(
                    "⚑ {}: {}",
                    budget.flagged_why,
                    thousands(budget.flagged.len() as u64)
                ),
                theme.error,
            ),
        ));
    }
    lines
}

/// The open session's message above the cut that is sent anyway.
fn kept_above_cut(state: &AppState) -> Option<usize> {
    state.session.as_ref()?.budget.as_ref()?.kept_above_cut
}

/// Messages the cut drops: those above it, but one a trim keeps there.
fn dropped(state: &AppState, view: &BudgetView, of: BudgetOf) -> usize {
    let kept_above = of == BudgetOf::Session && kept_above_cut(state).is_some();
    view.dropped() - usize::from(kept_above)
}

/// Whether message `id` of the open session is error-category text fed to the model.
fn flagged(state: &AppState, id: &str) -> bool {
    state
        .session
        .as_ref()
        .and_then(|s| s.budget.as_ref())
        .is_some_and(|b| b.flagged.iter().any(|fed| fed == id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn a_short_panel_keeps_the_line_with_the_numbers() {
        let lines = || {
            vec![
                (
                    Tells::Model,
                    Line::raw("gpt-4o · raw counter · cl100k_base"),
                ),
                (
                    Tells::Numbers,
                    Line::raw("6 prompt messages, 12 tokens before pruning; 1 dropped, 5 sent"),
                ),
                (Tells::Note, Line::raw("left out: 2 other flows")),
                (
                    Tells::Fit,
                    Line::raw("fits gpt-4o's context window (8 of 128,000 tokens)"),
                ),
            ]
        };
        let all: Vec<String> = lines().iter().map(|(_, line)| line.to_string()).collect();
        let kept = |height| texts(&fit_summary(lines(), 46, height));
        // Room for everything: nothing goes.
        assert_eq!(kept(8), all);
        // The note goes, then the model line; each kept where it still fits, in its order.
        assert_eq!(kept(4), [all[1].clone(), all[3].clone()]);
        assert_eq!(kept(3), [all[0].clone(), all[1].clone()]);
        assert_eq!(kept(2), [all[1].clone()]);
        // One row: the numbers cut, ending in ….
        assert_eq!(kept(1), ["6 prompt messages, 12 tokens before pruning; …"]);
        assert!(kept(0).is_empty());
    }
}
