//! The screen layout and the one draw function: a pure function of [`App`].

use super::app::{App, MmSel};
use super::widgets::{
    detail::{Detail, mm_label},
    help::Help,
    lanes::Lanes,
    status::StatusBar,
    weight::WeightGraph,
};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

/// Where each pane goes for a given screen size.
pub struct Areas {
    pub title: Rect,
    pub lanes: Rect,
    pub weight: Rect,
    pub detail: Rect,
    pub status: Rect,
}

/// Rows per CPU lane: two (CIDs and tasks) when the screen has room for them.
pub fn rows_per_cpu(area: Rect, ncpus: u32) -> u16 {
    if ncpus as u16 * 2 + 22 <= area.height {
        2
    } else {
        1
    }
}

pub fn layout(area: Rect, ncpus: u32) -> Areas {
    let rpc = rows_per_cpu(area, ncpus);
    let lane_rows = (ncpus as u16 * rpc + 1).min(area.height.saturating_sub(14).max(2));
    let [title, lanes, weight, detail, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(lane_rows + 1),
        Constraint::Length(7),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        title,
        lanes,
        weight,
        detail,
        status,
    }
}

pub fn draw(f: &mut Frame, app: &App) {
    let a = layout(f.area(), app.timeline.ncpus);
    let theme = &app.theme;
    f.render_widget(Block::default().style(theme.text()), f.area());
    let sel = match app.selected() {
        MmSel::All => "all tasks".to_string(),
        MmSel::Mm(m) => mm_label(app, m),
    };
    let title = Line::from(vec![
        Span::styled(
            " cidscope ",
            Style::default()
                .fg(theme.title)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled("│ ", theme.dim()),
        Span::styled(sel, Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(
            format!("  [{}/{}]", app.mm_pos, app.mm_list.len()),
            theme.dim(),
        ),
        Span::styled("   Tab: next process  ?: keys  q: quit", theme.dim()),
    ]);
    f.render_widget(title, a.title);
    let lanes_block = Block::default()
        .borders(Borders::TOP)
        .title(" per-CPU CID slots ")
        .border_style(theme.dim());
    let inner = lanes_block.inner(a.lanes);
    f.render_widget(lanes_block, a.lanes);
    f.render_widget(
        Lanes {
            app,
            first_cpu: 0,
            rows_per_cpu: rows_per_cpu(f.area(), app.timeline.ncpus),
        },
        inner,
    );
    let wblock = Block::default()
        .borders(Borders::TOP)
        .title(" cidmask weight (observed: confirmed CIDs of running tasks) ")
        .border_style(theme.dim());
    let winner = wblock.inner(a.weight);
    f.render_widget(wblock, a.weight);
    f.render_widget(WeightGraph { app }, winner);
    f.render_widget(Detail { app }, a.detail);
    f.render_widget(StatusBar { app }, a.status);
    if app.show_help {
        f.render_widget(Help { app }, f.area());
    }
}
