//! The screen layout and the one draw function: a pure function of [`App`].

use super::app::{App, MmSel, Mode};
use super::widgets::lanes::{Admit, LaneSet, RulerMark, cells};
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
use crate::timeline::SegLane;
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

/// A set of lanes in the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// What the capture shows.
    Observed,
    /// A model run (index into `app.models`).
    Model(usize),
    /// Live: the CIDs the workload's threads read from their rseq areas.
    LiveSamples,
}

/// The stacked lane sets, top to bottom.
pub fn lane_sets(app: &App) -> Vec<SetKind> {
    let mut v = Vec::new();
    let live_only = app.live.as_ref().is_some_and(|l| !l.attached);
    if app.show_observed && !live_only {
        v.push(SetKind::Observed);
    }
    v.extend((0..app.models.len()).map(SetKind::Model));
    if app.live.is_some() {
        v.push(SetKind::LiveSamples);
    }
    if v.is_empty() {
        v.push(SetKind::Observed);
    }
    v
}

/// Whether a diff row goes under the sets (two or more to compare).
pub fn has_diff_row(sets: &[SetKind]) -> bool {
    sets.iter()
        .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
        .count()
        >= 2
}

/// Rows per CPU lane: two (CIDs and tasks) when the screen has room for them.
pub fn rows_per_cpu(area: Rect, ncpus: usize, sets: usize, titled: bool) -> u16 {
    let two = sets as u16 * set_rows(ncpus, 2, titled) + 1;
    if two <= lane_room(area) { 2 } else { 1 }
}

/// Rows the lanes may take: what is left after the title, the weight graph, the status bar
/// and at least 10 rows of cursor pane.
fn lane_room(area: Rect) -> u16 {
    area.height.saturating_sub(1 + 1 + 7 + 1 + 10).max(2)
}

/// Rows per CPU on the current screen.
pub fn screen_rpc(area: Rect, app: &App) -> u16 {
    rows_per_cpu(
        area,
        app.visible_cpus().len(),
        lane_sets(app).len(),
        titled(app),
    )
}

/// Whether each set gets a title row (when there is more than the observed set).
pub fn titled(app: &App) -> bool {
    !app.models.is_empty() || app.live.is_some()
}

/// Rows of one lane set: its title (if titled), its ruler, its CPUs.
pub fn set_rows(ncpus: usize, rpc: u16, titled: bool) -> u16 {
    ncpus as u16 * rpc + 1 + u16::from(titled)
}

/// The layout for `ncpus` lanes in each of `sets` stacked lane sets, plus `extra` rows.
/// The cursor pane keeps at least 10 rows where the screen allows.
pub fn layout(area: Rect, ncpus: usize, sets: usize, extra: u16, titled: bool) -> Areas {
    let rpc = rows_per_cpu(area, ncpus, sets, titled);
    let room = lane_room(area);
    let lane_rows = (sets as u16 * set_rows(ncpus, rpc, titled) + extra).min(room);
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

/// The layout of the current screen.
pub fn screen_layout(area: Rect, app: &App) -> Areas {
    let sets = lane_sets(app);
    let extra = u16::from(has_diff_row(&sets));
    layout(
        area,
        app.visible_cpus().len(),
        sets.len(),
        extra,
        titled(app),
    )
}

/// The area inside a pane's top border.
fn inner(r: Rect) -> Rect {
    Block::default().borders(Borders::TOP).inner(r)
}

/// What is under screen cell (col, row): the CPU lane (if on one) and the time.
pub fn hit(area: Rect, app: &App, col: u16, row: u16) -> Option<(Option<usize>, u64)> {
    let cpus = app.visible_cpus();
    let a = screen_layout(area, app);
    let lw = label_width(app.timeline.ncpus.max(cpus.len() as u32));
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
        let cpu = if pane == inner(a.lanes) {
            let rpc = screen_rpc(area, app);
            let t = u16::from(titled(app));
            let per_set = set_rows(cpus.len(), rpc, titled(app));
            let within = (row - pane.y) % per_set.max(1);
            if within <= t {
                None
            } else {
                cpus.get(((within - 1 - t) / rpc) as usize).copied()
            }
        } else {
            None
        };
        return Some((cpu, t));
    }
    None
}

/// The lanes of one set, with its ruler marks and title.
fn lane_set<'a>(app: &'a App, kind: SetKind, highlight: &'a [u16]) -> (LaneSet<'a>, String) {
    let theme = &app.theme;
    match kind {
        SetKind::Observed => {
            let mut marks: Vec<RulerMark> = app
                .timeline
                .lost_at
                .iter()
                .filter_map(|&i| app.trace.events.get(i))
                .map(|e| (e.ts, '!', theme.lost))
                .collect();
            marks.extend(app.timeline.alarms.iter().map(|a| (a.ts, 'X', theme.alarm)));
            let title = if app.live.is_some() {
                "kernel: rseq_update events".to_string()
            } else {
                "observed: CIDs the tasks reported (rseq_update)".to_string()
            };
            let pyramids = app
                .summaries
                .as_ref()
                .filter(|s| s.sel == app.selected())
                .map(|s| &s.observed[..]);
            (
                LaneSet {
                    lanes: &app.timeline.lanes,
                    end: app.timeline.last_ts,
                    admit: Admit::Selection,
                    names: &app.trace,
                    marks,
                    highlight: &[],
                    pyramids,
                },
                title,
            )
        }
        SetKind::Model(k) => {
            let m = &app.models[k];
            let mut marks: Vec<RulerMark> = m
                .triggers()
                .map(|(ts, t)| match t {
                    crate::model::policies::Trigger::Tick => (ts, 't', theme.tick_marker),
                    crate::model::policies::Trigger::Resume => (ts, 'r', theme.resume_marker),
                })
                .collect();
            marks.extend(m.scan_starts().map(|ts| (ts, 'S', theme.scan_batch)));
            marks.extend(
                m.run
                    .modes
                    .iter()
                    .filter(|c| m.mm.is_none_or(|mm| mm == c.mm))
                    .map(|c| (c.ts, 'M', theme.transit_slot)),
            );
            marks.extend(m.run.alarms.iter().map(|a| (a.ts, 'X', theme.alarm)));
            let mut title = m.title();
            if let (Some(mm), crate::model::policies::PolicyKind::OwnerMode) = (m.mm, m.run.policy)
                && let Some(c) = m.run.mode_at(mm, app.cursor_ts())
            {
                let mode = match (c.percpu, c.transit) {
                    (_, true) => "transit",
                    (true, false) => "per-CPU",
                    (false, false) => "per-task",
                };
                title.push_str(&format!(" · mode {mode}"));
            }
            let pyramids = app
                .summaries
                .as_ref()
                .filter(|s| s.sel == app.selected())
                .and_then(|s| s.models.get(k))
                .map(|p| &p.0[..]);
            (
                LaneSet {
                    lanes: &m.lanes,
                    end: app.timeline.last_ts,
                    admit: if m.mm.is_some() {
                        Admit::Slots
                    } else {
                        Admit::AllTasks
                    },
                    names: &app.trace,
                    marks,
                    highlight,
                    pyramids,
                },
                title,
            )
        }
        SetKind::LiveSamples => {
            let live = app
                .live
                .as_ref()
                .expect("LiveSamples only with a live session"); // invariant: set kinds follow app.live
            (
                LaneSet {
                    lanes: &live.samples_tl.lanes,
                    end: live.samples_tl.last_ts,
                    admit: Admit::AllTasks,
                    names: &live.samples,
                    marks: Vec::new(),
                    highlight: &[],
                    pyramids: None,
                },
                "user space: CIDs the threads read from their rseq areas".to_string(),
            )
        }
    }
}

/// Under compared sets: per column, how many CPUs show different CIDs in the first two sets.
fn draw_diff_row(app: &App, sets: &[SetKind], cpus: &[usize], area: Rect, f: &mut Frame) {
    let theme = &app.theme;
    let cmp: Vec<LaneSet> = sets
        .iter()
        .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
        .take(2)
        .map(|&k| lane_set(app, k, &[]).0)
        .collect();
    let lw = label_width(app.timeline.ncpus.max(cpus.len() as u32));
    let axis = TimeAxis {
        t0: app.t0,
        span: app.span,
        cols: area.width.saturating_sub(lw),
    };
    let mut diff = vec![0u32; axis.cols as usize];
    for &cpu in cpus {
        let a = cmp[0].lanes.get(cpu).unwrap_or(SegLane::empty());
        let b = cmp[1].lanes.get(cpu).unwrap_or(SegLane::empty());
        let ca = cells(
            app,
            a,
            cmp[0].end,
            cmp[0].admit,
            axis,
            cmp[0].pyramids.and_then(|p| p.get(cpu)),
        );
        let cb = cells(
            app,
            b,
            cmp[1].end,
            cmp[1].admit,
            axis,
            cmp[1].pyramids.and_then(|p| p.get(cpu)),
        );
        for (x, (p, q)) in ca.iter().zip(&cb).enumerate() {
            if let (Some(u), Some(v)) = (p.0.cid(), q.0.cid())
                && u != v
            {
                diff[x] += 1;
            }
        }
    }
    let buf = f.buffer_mut();
    buf.set_string(
        area.x,
        area.y,
        format!("{:<w$}", "diff", w = lw as usize),
        theme.dim(),
    );
    for (x, &d) in diff.iter().enumerate() {
        let (ch, st) = match d {
            0 => ("·".to_string(), theme.dim()),
            1 => (
                "≠".to_string(),
                theme.mark(theme.alarm).add_modifier(Modifier::BOLD),
            ),
            n => (
                n.min(9).to_string(),
                theme.mark(theme.alarm).add_modifier(Modifier::BOLD),
            ),
        };
        buf.set_string(area.x + lw + x as u16, area.y, ch, st);
    }
    let note = " ≠ CIDs differ (count = CPUs) ";
    if area.width as usize > note.len() + lw as usize {
        let x = area.x + area.width - note.len() as u16;
        let names: Vec<String> = sets
            .iter()
            .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
            .take(2)
            .map(|s| match s {
                SetKind::Model(k) => app.models[*k].run.policy.id().to_string(),
                _ => "observed".to_string(),
            })
            .collect();
        let label = format!(" {} vs {}:{note}", names[0], names[1]);
        let x = x.saturating_sub((label.len() - note.len()) as u16);
        buf.set_string(x, area.y, label, theme.dim());
    }
}

pub fn draw(f: &mut Frame, app: &App) {
    let cpus = app.visible_cpus();
    let sets = lane_sets(app);
    let a = screen_layout(f.area(), app);
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
    let rpc = screen_rpc(f.area(), app);
    let lanes_inner = inner(a.lanes);
    let with_titles = titled(app);
    let per_set = set_rows(cpus.len(), rpc, with_titles);
    // the CPUs of the current scan batch, highlighted in the model lanes
    let batch_cpus: Vec<u16> = app
        .models
        .first()
        .and_then(|m| m.scan_at(app.cursor_ts()))
        .filter(|(p, _, _)| !p.complete)
        .map(|(_, cpus, _)| cpus)
        .unwrap_or_default();
    let mut y = lanes_inner.y;
    for &kind in &sets {
        let h = per_set.min((lanes_inner.y + lanes_inner.height).saturating_sub(y));
        if h == 0 {
            break;
        }
        let part = Rect {
            y,
            height: h,
            ..lanes_inner
        };
        let (set, title) = lane_set(app, kind, &batch_cpus);
        let lanes_part = if with_titles {
            f.buffer_mut().set_string(
                part.x,
                part.y,
                format!("▸ {title}"),
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            );
            Rect {
                y: part.y + 1,
                height: part.height.saturating_sub(1),
                ..part
            }
        } else {
            part
        };
        f.render_widget(
            Lanes {
                app,
                set,
                cpus: &cpus,
                rows_per_cpu: rpc,
            },
            lanes_part,
        );
        y += h;
    }
    if has_diff_row(&sets) && y < lanes_inner.y + lanes_inner.height {
        draw_diff_row(
            app,
            &sets,
            &cpus,
            Rect {
                y,
                height: 1,
                ..lanes_inner
            },
            f,
        );
    }
    let wblock = Block::default()
        .borders(Borders::TOP)
        .title(super::widgets::weight::title(app))
        .border_style(theme.dim());
    f.render_widget(wblock, a.weight);
    f.render_widget(WeightGraph { app }, inner(a.weight));
    let mut detail = a.detail;
    if app.demo.is_some() {
        let h = super::widgets::narration::height(app, detail.width).min(detail.height);
        f.render_widget(
            super::widgets::narration::Narration { app },
            Rect {
                height: h,
                ..detail
            },
        );
        detail.y += h;
        detail.height -= h;
    }
    if app.accounting.is_some() {
        f.render_widget(AccountingPane { app }, detail);
    } else {
        f.render_widget(Detail { app }, detail);
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
