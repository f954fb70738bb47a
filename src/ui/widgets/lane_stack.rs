//! The lanes pane: the stacked lane sets (what the capture shows, each model's slots, live the
//! CIDs the threads read) under one shared row of time labels; each set has a title (when there
//! is more than one kind) and a row of its marks; under two compared sets a diff row.
//!
//! In the thread view (`v`) each set has a lane per thread of the selected process instead of a
//! lane per CPU, under the same time row and marks rows.
//!
//! When the screen cannot hold it all, the stack degrades in a fixed order and says so: first a
//! row per lane instead of two, then a window of the lanes (the same for every set, while it
//! keeps at least four; ↑/↓ scroll it and it follows the cursor's CPUs, or its thread), then a
//! window of the sets with a notice row naming the hidden ones.

use super::axis::{TimeAxis, time_under};
use super::lane_plan::{Plan, SetKind, batch_cpus, lane_room, plan};
// the lane sets and their names, where they were before the plan had a file of its own
pub use super::lane_plan::{lane_sets, set_name};
use super::lanes::{Admit, LaneSet, Lanes, cells};
use super::pane::{Hit, Pane, Rows};
use super::ruler::{RulerMark, RulerSpan, draw_marks_row, draw_time_row};
use crate::timeline::SegLane;
use crate::ui::app::App;
use crate::ui::glyphs;
use crate::ui::keys::{Action, keys_for};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::{Block, Borders, Widget};
use std::ops::Range;

pub struct LaneStack;

/// The area inside a pane's top border.
fn inner(r: Rect) -> Rect {
    Block::default().borders(Borders::TOP).inner(r)
}

/// The pane's title: what it shows and what is out of sight.
fn border_title(app: &App, plan: &Plan) -> String {
    let st = &app.state;
    let v = keys_for(&app.bindings, Action::ToggleThreads);
    let mut t = if plan.threads && plan.max_lane_top() > 0 {
        // what is out of sight first: the title may be cut on a narrow screen
        format!(
            " thread lanes {}-{} shown of {}: {} {} scroll ({v}: per-CPU lanes)",
            plan.lane_top + 1,
            plan.lane_top + plan.lanes.len(),
            plan.nlanes,
            keys_for(&app.bindings, Action::ScrollUp),
            keys_for(&app.bindings, Action::ScrollDown),
        )
    } else if plan.threads {
        format!(" thread lanes: the CID each thread holds ({v}: per-CPU lanes)")
    } else {
        String::from(" per-CPU CID slots")
    };
    if super::lane_plan::focus_only(st) {
        let all = st.models.views.len() + usize::from(st.models.show_observed);
        if all > plan.sets.len() {
            t.push_str(&format!(
                " · {} of {all} lane sets: those the narration names",
                plan.sets.len()
            ));
        }
    }
    if !plan.threads && st.sel.cpu_filter.is_some() {
        t.push_str(&format!(
            " (CPUs {:?}; {} to change)",
            st.visible_cpus(),
            keys_for(&app.bindings, Action::FilterCpus)
        ));
    }
    if !plan.threads && plan.max_lane_top() > 0 {
        let (a, b) = (
            plan.lanes.first().copied().unwrap_or(0),
            plan.lanes.last().copied().unwrap_or(0),
        );
        t.push_str(&format!(
            " · CPUs {a}-{b} shown of {}: {} {} scroll, {} filters",
            plan.nlanes,
            keys_for(&app.bindings, Action::ScrollUp),
            keys_for(&app.bindings, Action::ScrollDown),
            keys_for(&app.bindings, Action::FilterCpus)
        ));
    }
    if plan.max_set_top() > 0 {
        t.push_str(&format!(
            " · {} of {} lane sets shown",
            plan.shown.len(),
            plan.sets.len()
        ));
    }
    t.push(' ');
    t
}

/// The notice row: which sets are above and below the window, and how to see them.
fn notice_text(app: &App, plan: &Plan) -> String {
    let st = &app.state;
    let names = |r: Range<usize>| -> String {
        plan.sets[r]
            .iter()
            .map(|&k| set_name(st, k))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    let side = |n: usize, arrow_dir: (&str, &str), names: String, key: String| {
        let (sets, them) = if n == 1 {
            ("lane set", "it")
        } else {
            ("lane sets", "them")
        };
        let (arrow, dir) = arrow_dir;
        format!("{arrow} {n} {sets} {dir}: {names} ({key} shows {them})")
    };
    if plan.shown.start > 0 {
        parts.push(side(
            plan.shown.start,
            ("▴", "above"),
            names(0..plan.shown.start),
            keys_for(&app.bindings, Action::ScrollUp),
        ));
    }
    let below = plan.sets.len() - plan.shown.end;
    if below > 0 {
        parts.push(side(
            below,
            ("▾", "below"),
            names(plan.shown.end..plan.sets.len()),
            keys_for(&app.bindings, Action::ScrollDown),
        ));
    }
    format!("{}; or enlarge the terminal", parts.join(" · "))
}

impl Pane for LaneStack {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        // the overview takes the lanes' place
        if app.state.overlays.overview.is_some() {
            return Rows::Hidden;
        }
        let p = plan(app, screen);
        // and the top border
        Rows::Fixed(p.rows.min(lane_room(app, screen)) + 1)
    }

    fn draw(&self, app: &App, screen: Rect, area: Rect, buf: &mut Buffer) {
        let st = &app.state;
        let theme = &app.theme;
        let plan = plan(app, screen);
        Block::default()
            .borders(Borders::TOP)
            .title(border_title(app, &plan))
            .border_style(theme.dim())
            .render(area, buf);
        let pane = inner(area);
        if pane.height == 0 {
            return;
        }
        let lw = plan.label_width;
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols: pane.width.saturating_sub(lw),
        };
        let bottom = pane.y + pane.height;
        let row = |y: u16| Rect {
            y,
            height: 1,
            ..pane
        };
        draw_time_row(app, axis, row(pane.y), lw, buf);
        // the CPUs of the current scan batch, highlighted in the model lanes
        let batch_cpus = batch_cpus(st);
        let mut y = pane.y + 1;
        for &kind in &plan.sets[plan.shown.clone()] {
            if y >= bottom {
                break;
            }
            let (set, mut title) = lane_set(app, kind, &batch_cpus);
            if plan.threads {
                title = super::thread_lanes::title(app, &plan, &title);
            }
            if plan.titled {
                buf.set_stringn(
                    pane.x,
                    y,
                    format!("▸ {title}"),
                    pane.width as usize,
                    theme.mark(theme.title).add_modifier(Modifier::BOLD),
                );
                y += 1;
            }
            if y < bottom {
                draw_marks_row(app, &set.marks, &set.spans, set.axis(axis), row(y), lw, buf);
                y += 1;
            }
            let h = (plan.lanes.len() as u16 * plan.rpc).min(bottom.saturating_sub(y));
            let part = Rect {
                y,
                height: h,
                ..pane
            };
            if plan.threads {
                super::thread_lanes::ThreadRows::of_set(app, kind, &set, &plan.lanes, plan.rpc, lw)
                    .render(part, buf);
            } else {
                Lanes {
                    app,
                    set: &set,
                    cpus: &plan.lanes,
                    rows_per_cpu: plan.rpc,
                    label_width: lw,
                }
                .render(part, buf);
            }
            y += h;
        }
        if plan.diff && y < bottom {
            draw_diff_row(app, &plan.sets, lw, row(y), buf);
            y += 1;
        }
        if plan.notice && y < bottom {
            buf.set_stringn(
                pane.x,
                y,
                notice_text(app, &plan),
                pane.width as usize,
                theme.mark(theme.title),
            );
        }
    }

    fn hit(&self, app: &App, screen: Rect, area: Rect, col: u16, row: u16) -> Option<Hit> {
        let st = &app.state;
        let plan = plan(app, screen);
        let pane = inner(area);
        let t = time_under(pane, plan.label_width, st.view.t0, st.view.span, col, row)?;
        // below the time row: each shown set's title, marks and lane rows
        let Some(mut within) = (row - pane.y).checked_sub(1) else {
            return Some((None, t));
        };
        for _ in plan.shown.clone() {
            let chrome = u16::from(plan.titled) + 1;
            if within < chrome {
                return Some((None, t));
            }
            within -= chrome;
            let lanes = plan.lanes.len() as u16 * plan.rpc;
            if within < lanes {
                let lane = plan.lanes.get((within / plan.rpc) as usize).copied();
                if !plan.threads {
                    return Some((lane, t));
                }
                // on a thread's row: the CPU it runs on then
                let cpu = st
                    .derived
                    .threads
                    .as_ref()
                    .and_then(|th| Some((th, *th.tids.get(lane?)?)))
                    .and_then(|(th, tid)| th.observed.cpu_at(tid, t))
                    .map(usize::from);
                return Some((cpu, t));
            }
            within -= lanes;
        }
        Some((None, t))
    }
}

/// The lanes of one set, with its ruler marks and title.
fn lane_set<'a>(app: &'a App, kind: SetKind, highlight: &'a [u16]) -> (LaneSet<'a>, String) {
    let st = &app.state;
    let sums = st
        .derived
        .summaries
        .as_ref()
        .filter(|s| s.sel == st.sel.selected());
    let mm = st.sel.selected_mm();
    match kind {
        SetKind::Observed => {
            let mut marks: Vec<RulerMark> = st
                .timeline
                .lost_at
                .iter()
                .filter_map(|&i| st.trace.events.get(i))
                .map(|e| (e.ts, glyphs::LOST))
                .collect();
            let alarms = st
                .timeline
                .alarms
                .iter()
                .filter(|a| mm.is_none_or(|m| a.mm() == m));
            marks.extend(alarms.clone().map(|a| (a.ts, glyphs::ALARM)));
            let duplicates = alarms
                .clone()
                .any(|a| matches!(a.kind, crate::model::alarm::AlarmKind::DuplicateCid { .. }));
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
                    spans: Vec::new(),
                    triggers: Vec::new(),
                    highlight: &[],
                    pyramids: sums.map(|s| &s.observed[..]),
                    // what the capture cannot support is not drawn as an alarm either
                    bound: if st.timeline.judged.bound {
                        st.timeline.ncpus.max(1)
                    } else {
                        u32::MAX
                    },
                    duplicates: duplicates && st.timeline.judged.duplicates,
                    shift: 0,
                },
                title,
            )
        }
        SetKind::Model(k) => {
            let m = &st.models.views[k];
            // each compaction as its trigger; the later batches of a scan continue its mark
            let trigger_glyphs = |t: crate::model::policies::Trigger| match t {
                crate::model::policies::Trigger::Tick => {
                    (glyphs::TICK, glyphs::TICK_BATCH, glyphs::LANE_TICK)
                }
                crate::model::policies::Trigger::Resume => {
                    (glyphs::RESUME, glyphs::RESUME_BATCH, glyphs::LANE_RESUME)
                }
            };
            let mut marks: Vec<RulerMark> = m
                .trigger_marks
                .iter()
                .map(|t| {
                    let (start, batch, _) = trigger_glyphs(t.trigger);
                    (t.ts, if t.starts { start } else { batch })
                })
                .collect();
            let triggers: Vec<(u64, glyphs::Glyph, &[u16])> = m
                .trigger_marks
                .iter()
                .map(|t| (t.ts, trigger_glyphs(t.trigger).2, m.cpus_scanned(t)))
                .collect();
            let mut spans: Vec<RulerSpan> = Vec::new();
            for s in m.scan_spans() {
                match (s.trigger, s.end) {
                    (None, _) => marks.push((s.start, glyphs::SCAN)),
                    (Some(t), Some(end)) if end > s.start => {
                        spans.push((s.start, end, trigger_glyphs(t).1))
                    }
                    _ => {}
                }
            }
            marks.extend(
                m.run
                    .modes
                    .iter()
                    .filter(|c| m.mm.is_none_or(|mm| mm == c.mm))
                    .map(|c| (c.ts, glyphs::MODE)),
            );
            let alarms = m
                .run
                .alarms
                .iter()
                .filter(|a| m.mm.is_none_or(|mm| a.mm() == mm));
            marks.extend(alarms.clone().map(|a| (a.ts, glyphs::ALARM)));
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
                    spans,
                    triggers,
                    highlight,
                    pyramids: sums.and_then(|s| s.models.get(k)).map(|p| &p.0[..]),
                    bound: st.timeline.ncpus.max(1),
                    duplicates: alarms.clone().any(|a| {
                        matches!(a.kind, crate::model::alarm::AlarmKind::DuplicateCid { .. })
                    }),
                    shift: 0,
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
                    spans: Vec::new(),
                    triggers: Vec::new(),
                    highlight: &[],
                    pyramids: None,
                    bound: samples.timeline.ncpus.max(st.timeline.ncpus).max(1),
                    duplicates: false,
                    shift: 0,
                },
                "user space: CIDs the threads read from their rseq areas".to_string(),
            )
        }
        SetKind::Capture(i) => {
            let c = &st.compare.others[i];
            let shift = crate::ui::compare::shift(st.compare.start, c);
            let mm = c.mm.unwrap_or(crate::model::MmId::UNKNOWN);
            let label =
                c.mm.and_then(|m| c.timeline.mms.get(m.0 as usize))
                    .map_or("no process with CIDs".into(), |m| m.label());
            let marks = c
                .timeline
                .lost_at
                .iter()
                .filter_map(|&e| c.trace.events.get(e))
                .map(|e| (e.ts, glyphs::LOST))
                .chain(
                    c.timeline
                        .alarms
                        .iter()
                        .filter(|a| a.mm() == mm)
                        .map(|a| (a.ts, glyphs::ALARM)),
                )
                .collect();
            (
                LaneSet {
                    lanes: &c.timeline.lanes,
                    end: c.timeline.last_ts,
                    admit: Admit::Mm(mm),
                    names: &c.trace,
                    marks,
                    spans: Vec::new(),
                    triggers: Vec::new(),
                    highlight: &[],
                    pyramids: None,
                    bound: c.timeline.ncpus.max(1),
                    duplicates: false,
                    shift,
                },
                format!(
                    "{}: {label}, observed (its time {}{})",
                    c.name,
                    if shift >= 0 { "+" } else { "−" },
                    crate::events::fmt_dur(shift.unsigned_abs())
                ),
            )
        }
    }
}

/// Under compared sets: per column, how many CPUs show different CIDs in the first two sets.
fn draw_diff_row(app: &App, sets: &[SetKind], lw: u16, area: Rect, buf: &mut Buffer) {
    let st = &app.state;
    let theme = &app.theme;
    let cmp: Vec<LaneSet> = sets
        .iter()
        .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
        .take(2)
        .map(|&k| lane_set(app, k, &[]).0)
        .collect();
    let axis = TimeAxis {
        t0: st.view.t0,
        span: st.view.span,
        cols: area.width.saturating_sub(lw),
    };
    // every visible CPU counts, not only the window's: the row sums the whole machine
    let mut diff = vec![0u32; axis.cols as usize];
    for cpu in st.visible_cpus() {
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
            0 => (
                glyphs::DIFF_SAME.sym.to_string(),
                glyphs::DIFF_SAME.style(theme, 0),
            ),
            1 => (
                glyphs::DIFF_ONE.sym.to_string(),
                glyphs::DIFF_ONE.style(theme, 0),
            ),
            n => (n.min(9).to_string(), glyphs::DIFF_MANY.style(theme, 0)),
        };
        buf.set_string(area.x + lw + x as u16, area.y, ch, style);
    }
    let note = " ≠ CIDs differ (count = CPUs) ";
    if area.width as usize > note.len() + lw as usize {
        let x = area.x + area.width - note.chars().count() as u16;
        let names: Vec<String> = sets
            .iter()
            .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
            .take(2)
            .map(|&s| set_name(st, s))
            .collect();
        let label = format!(" {} vs {}:{note}", names[0], names[1]);
        let x = x.saturating_sub((label.chars().count() - note.chars().count()) as u16);
        buf.set_string(x, area.y, label, theme.dim());
    }
}
