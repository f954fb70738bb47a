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

/// The layout for `ncpus` lanes in each of `sets` stacked lane sets.
pub fn layout(area: Rect, ncpus: usize, sets: usize) -> Areas {
    let rpc = rows_per_cpu(area, ncpus * sets);
    let lane_rows =
        (sets as u16 * (ncpus as u16 * rpc + 1)).min(area.height.saturating_sub(14).max(2));
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
/// How many sets of lanes are stacked: the capture's, and (live) the rseq-area samples'.
pub fn lane_sets(app: &App) -> usize {
    match &app.live {
        Some(l) if l.attached => 2,
        _ => 1,
    }
}

pub fn hit(area: Rect, app: &App, col: u16, row: u16) -> Option<(Option<usize>, u64)> {
    let cpus = app.visible_cpus();
    let a = layout(area, cpus.len(), lane_sets(app));
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
    let sets = lane_sets(app);
    let a = layout(f.area(), cpus.len(), sets);
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
    let rpc = rows_per_cpu(f.area(), cpus.len() * sets);
    let lanes_inner = inner(a.lanes);
    match &app.live {
        None => f.render_widget(
            Lanes {
                app,
                trace: &app.trace,
                timeline: &app.timeline,
                all_tasks: false,
                cpus: &cpus,
                rows_per_cpu: rpc,
            },
            lanes_inner,
        ),
        Some(live) => {
            // kernel trace lanes (when attached) above the rseq-area sample lanes
            let parts =
                Layout::vertical(vec![Constraint::Ratio(1, sets as u32); sets]).split(lanes_inner);
            if live.attached {
                f.render_widget(
                    Lanes {
                        app,
                        trace: &app.trace,
                        timeline: &app.timeline,
                        all_tasks: false,
                        cpus: &cpus,
                        rows_per_cpu: rpc,
                    },
                    parts[0],
                );
            }
            let last = parts[sets - 1];
            f.render_widget(
                Lanes {
                    app,
                    trace: &live.samples,
                    timeline: &live.samples_tl,
                    all_tasks: true,
                    cpus: &cpus,
                    rows_per_cpu: rpc,
                },
                last,
            );
            let label = " user space: CIDs the threads read from their rseq areas ";
            let x = last.x + last.width.saturating_sub(label.len() as u16 + 1);
            f.buffer_mut().set_string(x, last.y, label, theme.dim());
            if live.attached {
                let label = " kernel: rseq_update events ";
                let x = parts[0].x + parts[0].width.saturating_sub(label.len() as u16 + 1);
                f.buffer_mut().set_string(x, parts[0].y, label, theme.dim());
            }
        }
    }
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
