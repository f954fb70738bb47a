//! The screen layout and the one draw function: a pure function of [`App`].

use super::app::{App, MmSel, Mode};
use super::widgets::{
    TimeAxis,
    accounting::AccountingPane,
    detail::{Detail, mm_label},
    help::Help,
    label_width,
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
pub fn rows_per_cpu(area: Rect, ncpus: usize) -> u16 {
    if ncpus as u16 * 2 + 22 <= area.height {
        2
    } else {
        1
    }
}

pub fn layout(area: Rect, ncpus: usize) -> Areas {
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

/// The area inside a pane's top border.
fn inner(r: Rect) -> Rect {
    Block::default().borders(Borders::TOP).inner(r)
}

/// What is under screen cell (col, row): the CPU lane (if on one) and the time.
pub fn hit(area: Rect, app: &App, col: u16, row: u16) -> Option<(Option<usize>, u64)> {
    let cpus = app.visible_cpus();
    let a = layout(area, cpus.len());
    let lw = label_width(app.timeline.ncpus);
    for pane in [inner(a.lanes), inner(a.weight)] {
        if row < pane.y || row >= pane.y + pane.height || col < pane.x + lw {
            continue;
        }
        if col >= pane.x + pane.width {
            continue;
        }
        let axis = TimeAxis {
            t0: app.t0,
            span: app.span,
            cols: pane.width - lw,
        };
        let (t, _) = axis.range(col - pane.x - lw);
        let cpu = if pane == inner(a.lanes) && row > pane.y {
            let rpc = rows_per_cpu(area, cpus.len());
            cpus.get(((row - pane.y - 1) / rpc) as usize).copied()
        } else {
            None
        };
        return Some((cpu, t));
    }
    None
}

pub fn draw(f: &mut Frame, app: &App) {
    let cpus = app.visible_cpus();
    let a = layout(f.area(), cpus.len());
    let theme = &app.theme;
    f.render_widget(Block::default().style(theme.text()), f.area());
    let sel = match app.selected() {
        MmSel::All => "all tasks".to_string(),
        MmSel::Mm(m) => mm_label(app, m),
    };
    let title = Line::from(vec![
        Span::styled(
            " cidscope ",
            theme.mark(theme.title).add_modifier(Modifier::BOLD),
        ),
        Span::styled("│ ", theme.dim()),
        Span::styled(sel, Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(
            format!("  [{}/{}]", app.mm_pos, app.mm_list.len()),
            theme.dim(),
        ),
        Span::styled(
            "   Tab: next process  /: search  ?: keys  q: quit",
            theme.dim(),
        ),
    ]);
    f.render_widget(title, a.title);
    let filter_note = match &app.cpu_filter {
        Some(_) => format!(" per-CPU CID slots (CPUs {cpus:?}; f to change) "),
        None => " per-CPU CID slots ".to_string(),
    };
    let lanes_block = Block::default()
        .borders(Borders::TOP)
        .title(filter_note)
        .border_style(theme.dim());
    f.render_widget(lanes_block, a.lanes);
    f.render_widget(
        Lanes {
            app,
            cpus: &cpus,
            rows_per_cpu: rows_per_cpu(f.area(), cpus.len()),
        },
        inner(a.lanes),
    );
    let wblock = Block::default()
        .borders(Borders::TOP)
        .title(" cidmask weight (observed: confirmed CIDs of running tasks) ")
        .border_style(theme.dim());
    f.render_widget(wblock, a.weight);
    f.render_widget(WeightGraph { app }, inner(a.weight));
    if app.accounting.is_some() {
        f.render_widget(AccountingPane { app }, a.detail);
    } else {
        f.render_widget(Detail { app }, a.detail);
    }
    let prompt = match &app.mode {
        Mode::Prompt { kind, text } => Some(format!("{}{text}▏", kind.label())),
        Mode::SetMark => Some("set marker: press a letter or digit (Esc cancels)".into()),
        Mode::JumpMark => {
            let names: String = app.marks.keys().collect();
            Some(format!(
                "jump to marker: press one of {names} (Esc cancels)"
            ))
        }
        Mode::Normal => app.message.clone(),
    };
    match prompt {
        Some(p) => f.render_widget(
            Line::styled(
                format!(" {p}"),
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ),
            a.status,
        ),
        None => f.render_widget(StatusBar { app }, a.status),
    }
    if app.show_help {
        f.render_widget(Help { app }, f.area());
    }
}
