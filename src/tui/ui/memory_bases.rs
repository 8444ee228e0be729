//! The memory bases tab: the bases table, the selected base's sessions with their pending
//! gauges (or the KB search results). Its forms are the one form popup.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, LineGauge, Row};

use super::common::{Component, middle_cut, placeholder, selectable_table, short_id};
use super::rows::{RowCells, layout_rows};
use crate::format::{one_line, thousands};
use crate::inspect::memory_bases::{BaseState, BaseStatus, SessionStatus};
use crate::tui::action::Action;
use crate::tui::keymap::KeyContext;
use crate::tui::state::memory_bases::{Focus, MemoryBasesState, SearchState};
use crate::tui::state::{AppState, LoadStatus};
use crate::tui::theme::Theme;

pub struct MemoryBasesView;

/// Below this width the tables drop their widest columns.
const NARROW: u16 = 100;

impl Component for MemoryBasesView {
    fn render(&self, state: &AppState, theme: &Theme, frame: &mut Frame, area: Rect) {
        let tab = &state.memory_bases;
        let bases_height = (tab.bases.len() as u16 + 3).clamp(5, area.height / 2);
        let [top, bottom] =
            Layout::vertical([Constraint::Length(bases_height), Constraint::Min(3)]).areas(area);
        draw_bases(tab, theme, frame, top);
        match &tab.search {
            Some(search) => draw_search(state, search, theme, frame, bottom),
            None => draw_sessions(tab, theme, frame, bottom),
        }
    }
}

fn pane<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(if focused { theme.title } else { theme.dim })
        .title_style(theme.title)
}

fn draw_bases(tab: &MemoryBasesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let block = pane(
        format!(" Memory bases ({}) ", tab.bases.len()),
        tab.focus == Focus::Bases,
        theme,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match &tab.status {
        LoadStatus::Loading if tab.bases.is_empty() => {
            frame.render_widget(placeholder("Loading memory bases…", theme.dim), inner);
            return;
        }
        LoadStatus::Failed(error) => {
            let text = format!("Could not load memory bases: {error}\n\nr: try again");
            frame.render_widget(placeholder(text, theme.error), inner);
            return;
        }
        _ if tab.bases.is_empty() => {
            let text = match &tab.refused_changes {
                Some(refused) => format!("No memory bases in this database: {}.", refused.create),
                None => "No memory bases in this database. n creates one on a flow.".to_owned(),
            };
            frame.render_widget(placeholder(text, theme.dim), inner);
            return;
        }
        _ => {}
    }
    let wide = area.width >= NARROW;
    let mut header = vec!["Name", "Flow", "Threshold", "Capture"];
    if wide {
        header.push("KB");
    }
    header.extend(["Sessions", "Processed", "Status"]);
    if wide {
        header.push("Warning");
    }
    let rows = tab.bases.iter().map(|status| base_row(status, wide, theme));
    let mut widths = vec![
        Constraint::Fill(3),
        Constraint::Fill(2),
        Constraint::Length(12),
        Constraint::Length(7),
    ];
    if wide {
        widths.push(Constraint::Fill(3));
    }
    widths.extend([
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
    ]);
    if wide {
        widths.push(Constraint::Fill(3));
    }
    selectable_table(
        Row::new(header).style(theme.title),
        rows,
        &widths,
        tab.selected,
        theme,
        frame,
        inner,
    );
}

fn base_row<'a>(status: &BaseStatus, wide: bool, theme: &Theme) -> (Vec<Span<'a>>, Style) {
    let base = &status.base;
    let state_style = match status.status {
        BaseState::Ok => theme.ok,
        BaseState::Syncing => theme.title,
        BaseState::Mismatch => theme.warning,
    };
    let mut cells = vec![
        Span::raw(base.name.clone()),
        Span::raw(
            base.flow_name
                .clone()
                .unwrap_or_else(|| short_id(&base.flow_id).into_owned()),
        ),
        Span::raw(format!(
            "{} {}",
            thousands(base.threshold),
            base.threshold_unit
        )),
        Span::raw(if base.auto_capture { "auto" } else { "manual" }),
    ];
    if wide {
        cells.push(Span::raw(base.kb_name.clone()));
    }
    cells.extend([
        Span::raw(thousands(base.sessions)),
        Span::raw(thousands(base.total_processed)),
        Span::styled(status.status.as_str(), state_style),
    ]);
    if wide {
        let warning = status
            .mismatches
            .first()
            .map_or_else(String::new, |m| format!("⚠ {m}"));
        cells.push(Span::styled(warning, theme.warning));
    }
    (cells, theme.text)
}

fn draw_sessions(tab: &MemoryBasesState, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(status) = tab.selected_base() else {
        frame.render_widget(pane(" Sessions ".to_owned(), false, theme), area);
        return;
    };
    let base = &status.base;
    let title = format!(
        " Sessions of {} · KB {} · {} ",
        base.name, base.kb_name, base.embedding_model
    );
    let block = pane(title, tab.focus == Focus::Sessions, theme);
    let mut inner = block.inner(area);
    frame.render_widget(block, area);
    if !status.mismatches.is_empty() && inner.height > 1 {
        let reasons: Vec<String> = status.mismatches.iter().map(ToString::to_string).collect();
        let text = format!("⚠ mismatch: {} · R regenerates", reasons.join("; "));
        let line = Line::styled(one_line(&text, usize::from(inner.width)), theme.warning);
        frame.render_widget(line, Rect { height: 1, ..inner });
        inner.y += 1;
        inner.height -= 1;
    }
    match &tab.sessions_status {
        LoadStatus::Loading if tab.sessions.is_empty() => {
            frame.render_widget(placeholder("Loading sessions…", theme.dim), inner);
            return;
        }
        LoadStatus::Failed(error) => {
            let text = format!("Could not load the sessions: {error}");
            frame.render_widget(placeholder(text, theme.error), inner);
            return;
        }
        _ if tab.sessions.is_empty() => {
            let text = "No tracked sessions yet: S syncs the flow's sessions.";
            frame.render_widget(placeholder(text, theme.dim), inner);
            return;
        }
        _ => {}
    }
    let wide = area.width >= NARROW;
    let header = ["Session", "Pending", "", "Cursor", "Processed", "Last sync"];
    let rows = layout_rows(
        &header,
        &session_columns(wide),
        tab.sessions.len(),
        tab.session_selected,
        theme,
        frame,
        inner,
    );
    for row in rows {
        let selected = row.index == tab.session_selected;
        let focused = tab.focus == Focus::Sessions;
        draw_session(
            &tab.sessions[row.index],
            selected,
            focused,
            &row,
            theme,
            frame,
        );
    }
}

fn session_columns(wide: bool) -> Vec<Constraint> {
    vec![
        Constraint::Fill(2),
        // "13/20 bot replies" whole.
        Constraint::Length(if wide { 20 } else { 17 }),
        // At 80 columns the gauge gives its room to the session's name.
        if wide {
            Constraint::Fill(1)
        } else {
            Constraint::Length(6)
        },
        Constraint::Length(9),
        Constraint::Length(10),
        Constraint::Length(if wide { 17 } else { 12 }),
    ]
}

fn draw_session(
    session: &SessionStatus,
    selected: bool,
    focused: bool,
    row: &RowCells,
    theme: &Theme,
    frame: &mut Frame,
) {
    let area = row.area;
    let style = if selected && focused {
        theme.selected
    } else {
        theme.text
    };
    if selected {
        frame.render_widget(Block::default().style(style), area);
    }
    let marker = if selected { "> " } else { "  " };
    let wide = area.width >= NARROW;
    let info = &session.session;
    let last_sync = info.last_sync_at.map_or_else(
        || "never".to_owned(),
        |t| {
            let format = if wide {
                "%Y-%m-%d %H:%M"
            } else {
                "%m-%d %H:%M"
            };
            t.format(format).to_string()
        },
    );
    let texts = [
        info.session_id.clone(),
        session.pending_label(),
        String::new(),
        info.cursor_id
            .as_deref()
            .map_or("-".to_owned(), |c| short_id(c).into_owned()),
        thousands(info.total_processed),
        last_sync,
    ];
    for (index, (text, cell)) in texts.iter().zip(row.cells.iter()).enumerate() {
        if index == 2 {
            let gauge_style = if session.due {
                theme.warning
            } else {
                theme.gauge
            };
            let gauge = LineGauge::default()
                .ratio(session.ratio())
                .label(if session.due { "due" } else { "" })
                .filled_symbol("█")
                .unfilled_symbol("░")
                .filled_style(gauge_style)
                .unfilled_style(theme.dim)
                .style(style);
            frame.render_widget(gauge, *cell);
        } else if index == 0 {
            // Session names often share a prefix: cut in the middle, they stay apart.
            let width = usize::from(cell.width).saturating_sub(marker.len());
            let name = format!("{marker}{}", middle_cut(text, width));
            frame.render_widget(Span::styled(name, style), *cell);
        } else {
            let width = usize::from(cell.width);
            frame.render_widget(Span::styled(one_line(text, width), style), *cell);
        }
    }
}

fn draw_search(
    state: &AppState,
    search: &SearchState,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let title = format!(
        " Search {:?} in {} · top {} · esc closes ",
        search.query,
        search.base_name,
        crate::tui::state::memory_bases::SEARCH_TOP_K
    );
    let block = pane(title, true, theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match &search.status {
        LoadStatus::Loading => {
            frame.render_widget(placeholder("Searching…", theme.dim), inner);
            return;
        }
        LoadStatus::Failed(error) => {
            frame.render_widget(
                placeholder(format!("Search failed: {error}"), theme.error),
                inner,
            );
            return;
        }
        LoadStatus::Loaded if search.hits.is_empty() => {
            let text = match &search.missing_folder {
                Some(folder) => {
                    let regenerate = state
                        .keymap
                        .key_for(KeyContext::MemoryBases, Action::Regenerate)
                        .map_or_else(String::new, |key| format!(" ({key} regenerates it)"));
                    format!("No hits: the knowledge-base folder {folder} is missing{regenerate}.")
                }
                None => {
                    "No hits: the knowledge base is empty or has not been synced yet.".to_owned()
                }
            };
            frame.render_widget(placeholder(text, theme.dim), inner);
            return;
        }
        LoadStatus::Loaded => {}
    }
    let rows = search.hits.iter().map(|hit| {
        let sender = hit
            .metadata
            .get("sender")
            .and_then(|s| s.as_str())
            .unwrap_or("-")
            .to_owned();
        let cells = vec![
            Span::raw(format!("{:.3}", 1.0 - hit.distance)),
            Span::raw(hit.session_id.clone()),
            Span::raw(sender),
            Span::raw(hit.content.clone()),
        ];
        (cells, theme.text)
    });
    let widths = [
        Constraint::Length(6),
        Constraint::Length(18),
        Constraint::Length(8),
        Constraint::Fill(1),
    ];
    let header = Row::new(["Score", "Session", "Sender", "Snippet"]).style(theme.title);
    selectable_table(header, rows, &widths, search.selected, theme, frame, inner);
}
