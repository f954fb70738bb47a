//! The lanes pane: the stacked lane sets (what the capture shows, each model's slots, live the
//! CIDs the threads read), a title per set when there is more than one kind, and under two
//! compared sets a diff row.

use super::axis::{TimeAxis, time_under};
use super::lanes::{Admit, LaneSet, Lanes, RulerMark, cells};
use super::pane::{Hit, Pane, Rows};
use crate::timeline::SegLane;
use crate::ui::app::App;
use crate::ui::state::State;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::{Block, Borders, Widget};

pub struct LaneStack;

/// A set of lanes in the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// What the capture shows.
    Observed,
    /// A model run (index into the model views).
    Model(usize),
    /// Live: the CIDs the workload's threads read from their rseq areas.
    LiveSamples,
}

/// The stacked lane sets, top to bottom.
pub fn lane_sets(st: &State) -> Vec<SetKind> {
    let mut v = Vec::new();
    let live_only = st.samples.as_ref().is_some_and(|s| !s.attached);
    if st.models.show_observed && !live_only {
        v.push(SetKind::Observed);
    }
    v.extend((0..st.models.views.len()).map(SetKind::Model));
    if st.samples.is_some() && !st.view.threads {
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
pub fn rows_per_cpu(screen: Rect, ncpus: usize, sets: usize, titled: bool) -> u16 {
    let two = sets as u16 * set_rows(ncpus, 2, titled) + 1;
    if two <= lane_room(screen) { 2 } else { 1 }
}

/// Rows the lanes may take: what is left after the title, the weight graph, the status bar
/// and at least 10 rows of cursor pane.
fn lane_room(screen: Rect) -> u16 {
    screen.height.saturating_sub(1 + 1 + 7 + 1 + 10).max(2)
}

/// Rows per CPU (or per thread) on this screen.
pub fn screen_rpc(screen: Rect, st: &State) -> u16 {
    rows_per_cpu(screen, st.lane_row_count(), lane_sets(st).len(), titled(st))
}

/// Whether each set gets a title row (when there is more than the observed set, or in the
/// thread view, which names the process).
pub fn titled(st: &State) -> bool {
    !st.models.views.is_empty() || st.samples.is_some() || st.view.threads
}

/// Rows of one lane set: its title (if titled), its ruler, its CPUs.
pub fn set_rows(ncpus: usize, rpc: u16, titled: bool) -> u16 {
    ncpus as u16 * rpc + 1 + u16::from(titled)
}

/// The area inside a pane's top border.
fn inner(r: Rect) -> Rect {
    Block::default().borders(Borders::TOP).inner(r)
}

impl Pane for LaneStack {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        let st = &app.state;
        let sets = lane_sets(st);
        let extra = u16::from(has_diff_row(&sets) && !st.view.threads);
        let (ncpus, titled) = (st.lane_row_count().max(1), titled(st));
        let rpc = rows_per_cpu(screen, ncpus, sets.len(), titled);
        let lane_rows =
            (sets.len() as u16 * set_rows(ncpus, rpc, titled) + extra).min(lane_room(screen));
        // and the top border
        Rows::Fixed(lane_rows + 1)
    }

    fn draw(&self, app: &App, screen: Rect, area: Rect, buf: &mut Buffer) {
        let st = &app.state;
        let theme = &app.theme;
        let cpus = st.visible_cpus();
        let sets = lane_sets(st);
        let filter_note = match &st.sel.cpu_filter {
            _ if st.view.threads => {
                " thread lanes: the CID each thread holds (v: per-CPU lanes) ".to_string()
            }
            Some(_) => format!(" per-CPU CID slots (CPUs {cpus:?}; f to change) "),
            None => " per-CPU CID slots ".to_string(),
        };
        Block::default()
            .borders(Borders::TOP)
            .title(filter_note)
            .border_style(theme.dim())
            .render(area, buf);
        let rpc = screen_rpc(screen, st);
        let lanes_inner = inner(area);
        let with_titles = titled(st);
        let per_set = set_rows(st.lane_row_count().max(1), rpc, with_titles);
        // the CPUs of the current scan batch, highlighted in the model lanes
        let batch_cpus: Vec<u16> = st
            .models
            .views
            .first()
            .and_then(|m| m.scan_at(st.cursor_ts()))
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
            let (set, mut title) = lane_set(app, kind, &batch_cpus);
            if st.view.threads {
                title = super::thread_lanes::title(app, kind, &title);
            }
            let lanes_part = if with_titles {
                buf.set_string(
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
            if st.view.threads {
                super::thread_lanes::ThreadRows::of_set(app, kind, set.marks, rpc)
                    .render(lanes_part, buf);
            } else {
                Lanes {
                    app,
                    set,
                    cpus: &cpus,
                    rows_per_cpu: rpc,
                }
                .render(lanes_part, buf);
            }
            y += h;
        }
        if has_diff_row(&sets) && !st.view.threads && y < lanes_inner.y + lanes_inner.height {
            draw_diff_row(
                app,
                &sets,
                &cpus,
                Rect {
                    y,
                    height: 1,
                    ..lanes_inner
                },
                buf,
            );
        }
    }

    fn hit(&self, app: &App, screen: Rect, area: Rect, col: u16, row: u16) -> Option<Hit> {
        let st = &app.state;
        let cpus = st.visible_cpus();
        let lw = st.lane_label_width();
        let pane = inner(area);
        let t = time_under(pane, lw, st.view.t0, st.view.span, col, row)?;
        let rpc = screen_rpc(screen, st);
        let title_rows = u16::from(titled(st));
        let per_set = set_rows(st.lane_row_count().max(1), rpc, titled(st));
        let within = (row - pane.y) % per_set.max(1);
        let k = (within > title_rows).then(|| ((within - 1 - title_rows) / rpc) as usize);
        let cpu = match (&st.derived.threads, st.view.threads) {
            // on a thread's row: the CPU it runs on then
            (Some(th), true) => k
                .and_then(|k| th.tids.get(st.view.thread_scroll + k))
                .and_then(|&tid| th.observed.cpu_at(tid, t))
                .map(usize::from),
            (None, true) => None,
            _ => k.and_then(|k| cpus.get(k).copied()),
        };
        Some((cpu, t))
    }
}

/// The lanes of one set, with its ruler marks and title.
pub fn lane_set<'a>(app: &'a App, kind: SetKind, highlight: &'a [u16]) -> (LaneSet<'a>, String) {
    let st = &app.state;
    let theme = &app.theme;
    let sums = st
        .derived
        .summaries
        .as_ref()
        .filter(|s| s.sel == st.sel.selected());
    match kind {
        SetKind::Observed => {
            let mut marks: Vec<RulerMark> = st
                .timeline
                .lost_at
                .iter()
                .filter_map(|&i| st.trace.events.get(i))
                .map(|e| (e.ts, '!', theme.lost))
                .collect();
            marks.extend(st.timeline.alarms.iter().map(|a| (a.ts, 'X', theme.alarm)));
            let title = if st.samples.is_some() {
                "kernel: rseq_update events".to_string()
            } else {
                "observed: CIDs the tasks reported (rseq_update)".to_string()
            };
            (
                LaneSet {
                    lanes: &st.timeline.lanes,
                    end: st.timeline.last_ts,
                    admit: Admit::Selection,
                    names: &st.trace,
                    marks,
                    highlight: &[],
                    pyramids: sums.map(|s| &s.observed[..]),
                },
                title,
            )
        }
        SetKind::Model(k) => {
            let m = &st.models.views[k];
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
                && let Some(c) = m.run.mode_at(mm, st.cursor_ts())
            {
                let mode = match (c.percpu, c.transit) {
                    (_, true) => "transit",
                    (true, false) => "per-CPU",
                    (false, false) => "per-task",
                };
                title.push_str(&format!(" · mode {mode}"));
            }
            (
                LaneSet {
                    lanes: &m.lanes,
                    end: st.timeline.last_ts,
                    admit: if m.mm.is_some() {
                        Admit::Slots
                    } else {
                        Admit::AllTasks
                    },
                    names: &st.trace,
                    marks,
                    highlight,
                    pyramids: sums.and_then(|s| s.models.get(k)).map(|p| &p.0[..]),
                },
                title,
            )
        }
        SetKind::LiveSamples => {
            let samples = st.samples.as_ref().expect("LiveSamples only with samples"); // invariant: lane_sets follows st.samples
            (
                LaneSet {
                    lanes: &samples.timeline.lanes,
                    end: samples.timeline.last_ts,
                    admit: Admit::AllTasks,
                    names: &samples.trace,
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
fn draw_diff_row(app: &App, sets: &[SetKind], cpus: &[usize], area: Rect, buf: &mut Buffer) {
    let st = &app.state;
    let theme = &app.theme;
    let cmp: Vec<LaneSet> = sets
        .iter()
        .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
        .take(2)
        .map(|&k| lane_set(app, k, &[]).0)
        .collect();
    let lw = st.lane_label_width();
    let axis = TimeAxis {
        t0: st.view.t0,
        span: st.view.span,
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
    buf.set_string(
        area.x,
        area.y,
        format!("{:<w$}", "diff", w = lw as usize),
        theme.dim(),
    );
    for (x, &d) in diff.iter().enumerate() {
        let (ch, style) = match d {
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
        buf.set_string(area.x + lw + x as u16, area.y, ch, style);
    }
    let note = " ≠ CIDs differ (count = CPUs) ";
    if area.width as usize > note.len() + lw as usize {
        let x = area.x + area.width - note.len() as u16;
        let names: Vec<String> = sets
            .iter()
            .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
            .take(2)
            .map(|s| match s {
                SetKind::Model(k) => st.models.views[*k].run.policy.id().to_string(),
                _ => "observed".to_string(),
            })
            .collect();
        let label = format!(" {} vs {}:{note}", names[0], names[1]);
        let x = x.saturating_sub((label.len() - note.len()) as u16);
        buf.set_string(x, area.y, label, theme.dim());
    }
}
