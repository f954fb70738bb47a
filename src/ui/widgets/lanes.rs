//! A lane per CPU across the visible window: each cell coloured and labelled by the CID held
//! there. One widget draws every kind of lane set: what the capture shows, a model's per-CPU
//! slots of the selected process, and (live) the CIDs threads read from their rseq areas.

use super::axis::TimeAxis;
use super::ruler::{RulerMark, RulerSpan};
use crate::events::Trace;
use crate::model::MmId;
use crate::timeline::{SegLane, Segment, lanes::summarize};
use crate::ui::app::App;
use crate::ui::glyphs::{self, Glyph};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;

/// Which segments of a lane a cell shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// The selected process (or every task with "all tasks").
    Selection,
    /// Every task (live samples: the workload's threads only).
    AllTasks,
    /// Every slot holding a CID or a running task (a model's slots of one mm).
    Slots,
    /// The tasks of one process (a capture beside the first: its workload).
    Mm(MmId),
}

/// What one set of lanes shows.
pub struct LaneSet<'a> {
    pub lanes: &'a [SegLane],
    /// When the last segment of each lane ends.
    pub end: u64,
    pub admit: Admit,
    /// Names tasks in the row under the CIDs.
    pub names: &'a Trace,
    /// The set's own ruler marks (lost events, alarms, triggers, scans, mode switches).
    pub marks: Vec<RulerMark>,
    /// Stretches of the ruler (each complete scan, in the mark of its trigger).
    pub spans: Vec<RulerSpan>,
    /// Compactions drawn on the lanes of the CPUs they scanned: (time, `t`/`r` glyph, CPUs),
    /// time-ordered.
    pub triggers: Vec<(u64, Glyph, &'a [u16])>,
    /// CPUs to highlight in the label column (the current scan batch).
    pub highlight: &'a [u16],
    /// Summary pyramids of these lanes under this admission (big captures).
    pub pyramids: Option<&'a [crate::timeline::summary::LanePyramid]>,
    /// The bound no CID may reach (possible CPUs): CIDs at or above it are drawn as alarms.
    pub bound: u32,
    /// Whether the set has duplicate-CID alarms, so that columns are checked for them.
    pub duplicates: bool,
    /// This set's time is the window's time + `shift` ns (a capture beside the first, aligned
    /// on its workload's start).
    pub shift: i64,
}

impl LaneSet<'_> {
    /// The window's axis moved to this set's time.
    pub fn axis(&self, axis: TimeAxis) -> TimeAxis {
        TimeAxis {
            t0: axis.t0.saturating_add_signed(self.shift),
            ..axis
        }
    }

    /// The cells of CPU `cpu` across the window (`axis` in this set's time).
    pub fn cells_of(&self, app: &App, cpu: usize, axis: TimeAxis) -> Vec<(Shown, Option<Segment>)> {
        let lane = self.lanes.get(cpu).unwrap_or(SegLane::empty());
        let pyr = self.pyramids.and_then(|p| p.get(cpu));
        cells(app, lane, self.end, self.admit, axis, pyr)
    }
}

pub struct Lanes<'a> {
    pub app: &'a App,
    pub set: &'a LaneSet<'a>,
    /// CPUs shown, top to bottom (the window of the lane stack).
    pub cpus: &'a [usize],
    /// Rows per CPU: 1 = CID cells only; 2 = CID cells and, under them, the task of each run.
    pub rows_per_cpu: u16,
    /// Width of the label column.
    pub label_width: u16,
}

/// What one cell shows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shown {
    /// Nothing of the selection here.
    Free,
    /// A task of the selection runs here but has no CID (no rseq, or not reported yet).
    NoCid,
    Cid {
        cid: i32,
        /// Confirmed by the task's report (observed), or held by a running task (model).
        confirmed: bool,
        /// The slot's flags (models): LAZY, TRANSIT, ONCPU.
        flags: crate::timeline::SlotFlags,
        /// A model slot kept while no task of the mm runs on the CPU.
        kept: bool,
    },
}

impl Shown {
    pub fn cid(&self) -> Option<i32> {
        match self {
            Shown::Cid { cid, .. } => Some(*cid),
            _ => None,
        }
    }

    /// The glyph this cell is drawn with (alarm cells aside).
    pub fn glyph(&self) -> Glyph {
        match *self {
            Shown::Free => glyphs::FREE,
            Shown::NoCid => glyphs::NO_CID,
            Shown::Cid {
                confirmed,
                flags,
                kept,
                ..
            } => {
                if flags.contains(Segment::LAZY) {
                    glyphs::LAZY
                } else if flags.contains(Segment::TRANSIT) {
                    glyphs::TRANSIT
                } else if kept {
                    glyphs::KEPT
                } else if confirmed {
                    glyphs::CID
                } else {
                    glyphs::UNCONFIRMED
                }
            }
        }
    }
}

/// Whether `[a, b)` holds more segments of `lane` than a frame should walk per cell.
fn spans_many(lane: &SegLane, a: u64, b: u64) -> bool {
    match (lane.index_at(a), lane.index_at(b)) {
        (Some(i), Some(j)) => j - i > 64,
        (None, Some(j)) => j > 64,
        _ => false,
    }
}

/// What the cells of one lane show across the window.
pub fn cells(
    app: &App,
    lane: &SegLane,
    end: u64,
    admit: Admit,
    axis: TimeAxis,
    pyramid: Option<&crate::timeline::summary::LanePyramid>,
) -> Vec<(Shown, Option<Segment>)> {
    let admits = |s: &Segment| match admit {
        Admit::Selection => app.state.sel.admits(s),
        Admit::AllTasks => s.tid != 0,
        Admit::Slots => s.cid().is_some() || s.tid != 0,
        Admit::Mm(m) => s.tid != 0 && s.mm == m,
    };
    (0..axis.cols)
        .map(|x| {
            let (a, b) = axis.range(x);
            let seg = match pyramid {
                Some(p) => p.cell(lane, a, b, end, admits).seg,
                // Still loading (no summaries yet) and the column spans many segments: show
                // the segment at its middle rather than walk them all on every frame.
                None if app.state.loading.is_some() && spans_many(lane, a, b) => lane
                    .index_at(a + (b - a) / 2)
                    .map(|i| lane.at(i))
                    .filter(|s| admits(s)),
                None => summarize(lane, a, b, end, admits).seg,
            };
            let shown = match seg {
                None => Shown::Free,
                Some(s) => match s.cid() {
                    None => Shown::NoCid,
                    Some(cid) => Shown::Cid {
                        cid,
                        confirmed: s.flags.contains(Segment::CONFIRMED),
                        flags: s.flags & (Segment::LAZY | Segment::TRANSIT | Segment::ONCPU),
                        kept: admit == Admit::Slots && s.tid == 0,
                    },
                },
            };
            (shown, seg)
        })
        .collect()
}

/// Per column, the (mm, CID) pairs held on more than one CPU of the set: two tasks of one
/// process with one CID at once (observed: confirmed CIDs only, as the kernel's guarantee is
/// about CIDs the tasks can read).
pub fn duplicate_cids(app: &App, set: &LaneSet, axis: TimeAxis) -> Vec<Vec<(MmId, i32)>> {
    let mut per_col: Vec<Vec<(MmId, i32)>> = vec![Vec::new(); axis.cols as usize];
    for cpu in 0..set.lanes.len() {
        for (x, (shown, seg)) in set.cells_of(app, cpu, axis).into_iter().enumerate() {
            if let (Shown::Cid { cid, confirmed, .. }, Some(s)) = (shown, seg)
                && (confirmed || set.admit == Admit::Slots)
                && s.mm.is_real()
            {
                per_col[x].push((s.mm, cid));
            }
        }
    }
    for col in &mut per_col {
        col.sort_unstable();
        let mut dups: Vec<(MmId, i32)> = col
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        dups.dedup();
        *col = dups;
    }
    per_col
}

impl Widget for Lanes<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let st = &app.state;
        let theme = &app.theme;
        let set = self.set;
        if area.height == 0 {
            return;
        }
        let lw = self.label_width;
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols,
        };
        let cursor_col = axis.col_of(st.cursor_ts());
        let rpc = self.rows_per_cpu.max(1);
        let rows = (area.height / rpc) as usize;
        let sel_cols = st.sel.range().map(|(a, b)| {
            let first = if a < axis.t0 { Some(0) } else { axis.col_of(a) };
            let last = if b >= axis.t0 + axis.span {
                Some(cols.saturating_sub(1))
            } else {
                axis.col_of(b)
            };
            (first, last)
        });
        // the cursor and A-B columns are the window's; the cells are the set's own time
        let set_axis = set.axis(axis);
        let dups = if set.duplicates {
            duplicate_cids(app, set, set_axis)
        } else {
            Vec::new()
        };
        for (r, &cpu) in self.cpus.iter().take(rows).enumerate() {
            let y = area.y + r as u16 * rpc;
            let label_style = if set.highlight.contains(&(cpu as u16)) {
                glyphs::BATCH_CPU.style(theme, 0)
            } else {
                theme.text()
            };
            buf.set_string(
                area.x,
                y,
                format!("CPU{cpu:<w$}", w = (lw - 3) as usize),
                label_style,
            );
            let shown_segs = set.cells_of(app, cpu, set_axis);
            if rpc >= 2 {
                let segs: Vec<Option<Segment>> = shown_segs.iter().map(|c| c.1).collect();
                draw_task_row(app, set.names, &segs, area.x + lw, y + 1, buf);
            }
            // a cell breaking a guarantee: its CID at or above the bound, or held twice
            let alarming = |x: usize, shown: Shown| match (shown, shown_segs[x].1) {
                (Shown::Cid { cid, .. }, Some(seg)) => {
                    cid < 0
                        || cid as u32 >= set.bound
                        || dups.get(x).is_some_and(|d| d.contains(&(seg.mm, cid)))
                }
                _ => false,
            };
            let shown: Vec<(Shown, bool)> = shown_segs
                .iter()
                .enumerate()
                .map(|(x, c)| (c.0, alarming(x, c.0)))
                .collect();
            let mut x = 0usize;
            while x < shown.len() {
                let run = shown[x..].iter().take_while(|&&s| s == shown[x]).count();
                let (text, style) = cell_text(app, shown[x].0, shown[x].1, run);
                buf.set_string(area.x + lw + x as u16, y, text, style);
                x += run;
            }
            // the compactions that scanned this CPU: their trigger where the eye is, on the
            // task row (or, one row per CPU, over the CID cell, keeping its colour)
            let trig_y = if rpc >= 2 { y + 1 } else { y };
            let first = set.triggers.partition_point(|t| t.0 < set_axis.t0);
            for &(ts, glyph, cpus) in set.triggers[first..]
                .iter()
                .take_while(|t| t.0 < set_axis.t0.saturating_add(set_axis.span))
            {
                if !cpus.contains(&(cpu as u16)) {
                    continue;
                }
                let Some(cx) = set_axis.col_of(ts) else {
                    continue;
                };
                if let Some(cell) = super::cell::cell_in(buf, area, area.x + lw + cx, trig_y) {
                    let mut style = glyph.style(theme, 0);
                    if rpc < 2 {
                        style.bg = cell.style().bg;
                    }
                    cell.set_symbol(glyph.sym);
                    cell.set_style(style);
                }
            }
            if let Some((Some(c0), Some(c1))) = sel_cols {
                for cx in c0..=c1.min(cols.saturating_sub(1)) {
                    let Some(cell) = super::cell::cell_in(buf, area, area.x + lw + cx, y) else {
                        continue;
                    };
                    let st = if cell.symbol() == glyphs::FREE.sym
                        || cell.symbol() == glyphs::NO_CID.sym
                    {
                        cell.style().patch(glyphs::RANGE.style(theme, 0))
                    } else {
                        cell.style().add_modifier(Modifier::UNDERLINED)
                    };
                    cell.set_style(st);
                }
            }
            if let Some(cell) =
                cursor_col.and_then(|cx| super::cell::cell_in(buf, area, area.x + lw + cx, y))
            {
                let st = cell.style().add_modifier(Modifier::REVERSED);
                cell.set_style(st);
            }
        }
    }
}

/// Text and style of a run of `run` equal cells.
pub fn cell_text(app: &App, shown: Shown, alarm: bool, run: usize) -> (String, Style) {
    let theme = &app.theme;
    let glyph = shown.glyph();
    let Some(cid) = shown.cid() else {
        return (glyph.sym.repeat(run), glyph.style(theme, 0));
    };
    let label = cid.to_string();
    let mut t: String = if label.len() <= run {
        label
    } else {
        label[label.len() - run..].to_string()
    };
    // the fill after the number: the glyph's own character (a space on a CID's colour)
    let fill = match glyph.sym.chars().nth(1) {
        Some(c) if glyph != glyphs::CID => c,
        _ => ' ',
    };
    while t.chars().count() < run {
        t.push(fill);
    }
    let style = if alarm {
        glyphs::ALARM_CELL.style(theme, cid)
    } else {
        glyph.style(theme, cid)
    };
    (t, style)
}

/// Under the CID cells: the task of each run of columns, as `comm-tid` where it fits.
fn draw_task_row(
    app: &App,
    trace: &Trace,
    segs: &[Option<Segment>],
    x0: u16,
    y: u16,
    buf: &mut Buffer,
) {
    let style = glyphs::TASK.style(&app.theme, 0);
    let mut x = 0usize;
    while x < segs.len() {
        let tid = segs[x].map(|s| s.tid);
        let run = segs[x..]
            .iter()
            .take_while(|s| s.map(|s| s.tid) == tid)
            .count();
        if let Some(tid) = tid.filter(|&t| t != 0) {
            let mut label = format!("{}-{tid}", trace.comm_of(tid));
            if label.chars().count() + 1 > run {
                label = tid.to_string();
            }
            if label.len() < run {
                buf.set_string(x0 + x as u16, y, format!("▏{label}"), style);
            } else if run >= 1 {
                buf.set_string(x0 + x as u16, y, "▏", style);
            }
        }
        x += run;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};
    use crate::ui::state::LoadMsg;

    /// While a capture loads, a column holding many segments shows one of its own segments (the
    /// one at its middle); once loaded, every column shows the exact dominant segment.
    #[test]
    fn a_loading_frame_samples_busy_columns_and_a_loaded_one_is_exact() {
        let data = crate::testing::synth_ftrace(60_000, 4, 3, 4, 7);
        let trace =
            load_bytes("synth.txt", &data, &LoadOptions::default()).expect("synthetic trace");
        let mut app = App::loading(
            "synth.txt",
            trace.origin.file_format().expect("a file"),
            Default::default(),
        );
        let d = crate::events::TraceDelta {
            events: trace.events.iter().collect(),
            new_strings: (1..trace.strings.len() as u32)
                .map(|i| trace.strings.get(crate::events::StrId(i)).into())
                .collect(),
            tasks: trace.tasks.iter().map(|(&t, &m)| (t, m)).collect(),
            ..Default::default()
        };
        app.on_load(LoadMsg::Delta(d));
        assert!(app.state.loading.is_some());
        let tl = &app.state.timeline;
        let end = tl.last_ts;
        let axis = TimeAxis {
            t0: tl.first_ts,
            span: end - tl.first_ts,
            cols: 40,
        };
        let mut sampled = 0;
        for lane in &tl.lanes {
            let shown = cells(&app, lane, end, Admit::AllTasks, axis, None);
            for (x, (_, seg)) in shown.iter().enumerate() {
                let (a, b) = axis.range(x as u16);
                if !spans_many(lane, a, b) {
                    continue;
                }
                sampled += 1;
                if let Some(s) = seg {
                    let i = lane
                        .index_at(a + (b - a) / 2)
                        .expect("a segment at the middle");
                    assert_eq!(*s, lane.at(i), "column {x}");
                    assert!(s.tid != 0);
                }
            }
        }
        assert!(sampled > 0, "the synthetic trace has busy columns");
        app.on_load(LoadMsg::Done(Ok(())));
        for lane in &app.state.timeline.lanes {
            let shown = cells(&app, lane, end, Admit::AllTasks, axis, None);
            for (x, (_, seg)) in shown.iter().enumerate() {
                let (a, b) = axis.range(x as u16);
                let exact = summarize(lane, a, b, end, |s: &Segment| s.tid != 0).seg;
                assert_eq!(*seg, exact, "column {x}");
            }
        }
    }
}
