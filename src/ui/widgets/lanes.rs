//! A lane per CPU across the visible window: each cell coloured and labelled by the CID held
//! there. One widget draws every kind of lane set: what the capture shows, a model's per-CPU
//! slots of the selected process, and (live) the CIDs threads read from their rseq areas.

use super::{TimeAxis, label_width};
use crate::events::{Trace, fmt_dur};
use crate::timeline::{SegLane, Segment, lanes::summarize};
use crate::ui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
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
}

/// A mark on the ruler: time, character, colour.
pub type RulerMark = (u64, char, Color);

/// What one set of lanes shows.
pub struct LaneSet<'a> {
    pub lanes: &'a [SegLane],
    /// When the last segment of each lane ends.
    pub end: u64,
    pub admit: Admit,
    /// Names tasks in the row under the CIDs.
    pub names: &'a Trace,
    /// Extra ruler marks (lost events, alarms, triggers).
    pub marks: Vec<RulerMark>,
    /// CPUs to highlight in the label column (the current scan batch).
    pub highlight: &'a [u16],
    /// Summary pyramids of these lanes under this admission (big captures).
    pub pyramids: Option<&'a [crate::timeline::summary::LanePyramid]>,
}

pub struct Lanes<'a> {
    pub app: &'a App,
    pub set: LaneSet<'a>,
    /// CPUs shown, top to bottom (a filter may hide some; rows run out on huge machines).
    pub cpus: &'a [usize],
    /// Rows per CPU: 1 = CID cells only; 2 = CID cells and, under them, the task of each run.
    pub rows_per_cpu: u16,
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
        flags: u8,
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
        Admit::Selection => app.admits(s),
        Admit::AllTasks => s.tid != 0,
        Admit::Slots => s.cid().is_some() || s.tid != 0,
    };
    (0..axis.cols)
        .map(|x| {
            let (a, b) = axis.range(x);
            let seg = match pyramid {
                Some(p) => p.cell(lane, a, b, end, admits).seg,
                // Still loading (no summaries yet) and the column spans many segments: show
                // the segment at its middle rather than walk them all on every frame.
                None if app.loading.is_some() && spans_many(lane, a, b) => lane
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
                        confirmed: s.flags & Segment::CONFIRMED != 0,
                        flags: s.flags & (Segment::LAZY | Segment::TRANSIT | Segment::ONCPU),
                        kept: admit == Admit::Slots && s.tid == 0,
                    },
                },
            };
            (shown, seg)
        })
        .collect()
}

impl Widget for Lanes<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let set = &self.set;
        if area.height == 0 {
            return;
        }
        let lw = label_width(app.timeline.ncpus.max(self.cpus.len() as u32));
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: app.t0,
            span: app.span,
            cols,
        };
        let cursor_col = axis.col_of(app.cursor_ts());
        draw_ruler(app, &set.marks, axis, Rect { height: 1, ..area }, lw, buf);
        let rpc = self.rows_per_cpu.max(1);
        let rows = (area.height.saturating_sub(1) / rpc) as usize;
        let sel_cols = app.selection().map(|(a, b)| {
            let first = if a < axis.t0 { Some(0) } else { axis.col_of(a) };
            let last = if b >= axis.t0 + axis.span {
                Some(cols.saturating_sub(1))
            } else {
                axis.col_of(b)
            };
            (first, last)
        });
        for (r, &cpu) in self.cpus.iter().take(rows).enumerate() {
            let y = area.y + 1 + r as u16 * rpc;
            let label_style = if set.highlight.contains(&(cpu as u16)) {
                theme
                    .mark(theme.scan_batch)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                theme.text()
            };
            buf.set_string(
                area.x,
                y,
                format!("CPU{cpu:<w$}", w = (lw - 3) as usize),
                label_style,
            );
            let lane = set.lanes.get(cpu).unwrap_or(SegLane::empty());
            let pyr = set.pyramids.and_then(|p| p.get(cpu));
            let shown_segs = cells(app, lane, set.end, set.admit, axis, pyr);
            if rpc >= 2 {
                let segs: Vec<Option<Segment>> = shown_segs.iter().map(|c| c.1).collect();
                draw_task_row(app, set.names, &segs, area.x + lw, y + 1, buf);
            }
            let shown: Vec<Shown> = shown_segs.iter().map(|c| c.0).collect();
            let mut x = 0usize;
            while x < shown.len() {
                let run = shown[x..].iter().take_while(|&&s| s == shown[x]).count();
                let (text, style) = cell_text(app, shown[x], run);
                buf.set_string(area.x + lw + x as u16, y, text, style);
                x += run;
            }
            if let Some((Some(c0), Some(c1))) = sel_cols {
                for cx in c0..=c1.min(cols.saturating_sub(1)) {
                    let cell = &mut buf[(area.x + lw + cx, y)];
                    let st = if cell.symbol() == "·" || cell.symbol() == "-" {
                        cell.style().bg(theme.selection)
                    } else {
                        cell.style().add_modifier(Modifier::UNDERLINED)
                    };
                    cell.set_style(st);
                }
            }
            if let Some(cx) = cursor_col {
                let cell = &mut buf[(area.x + lw + cx, y)];
                let st = cell.style().add_modifier(Modifier::REVERSED);
                cell.set_style(st);
            }
        }
        if self.cpus.len() > rows && rows > 0 {
            let note = format!(" {} of {} CPUs shown: f filters ", rows, self.cpus.len());
            let x = area.x + area.width.saturating_sub(note.len() as u16);
            buf.set_string(x, area.y + area.height - 1, note, theme.dim());
        }
    }
}

/// Text and style of a run of `run` equal cells.
fn cell_text(app: &App, shown: Shown, run: usize) -> (String, Style) {
    let theme = &app.theme;
    match shown {
        Shown::Free => ("·".repeat(run), theme.dim()),
        Shown::NoCid => ("-".repeat(run), theme.dim()),
        Shown::Cid {
            cid,
            confirmed,
            flags,
            kept,
        } => {
            let label = cid.to_string();
            let mut t: String = if label.len() <= run {
                label
            } else {
                label[label.len() - run..].to_string()
            };
            let (fill, style) = if flags & Segment::LAZY != 0 {
                // released at the CPU's next switch-out
                (
                    '~',
                    theme.mark(theme.lazy_slot).add_modifier(Modifier::BOLD),
                )
            } else if flags & Segment::TRANSIT != 0 {
                (
                    '≈',
                    theme.mark(theme.transit_slot).add_modifier(Modifier::BOLD),
                )
            } else if kept {
                // held in the CPU's slot while no task of the mm runs there
                ('▒', theme.cid_stale_style(cid))
            } else if confirmed {
                (' ', theme.cid_style(cid))
            } else {
                ('░', theme.cid_stale_style(cid))
            };
            while t.chars().count() < run {
                t.push(fill);
            }
            (t, style)
        }
    }
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
                buf.set_string(x0 + x as u16, y, format!("▏{label}"), app.theme.dim());
            } else if run >= 1 {
                buf.set_string(x0 + x as u16, y, "▏", app.theme.dim());
            }
        }
        x += run;
    }
}

/// Time labels every ~16 columns, the set's marks, the user's markers and the cursor.
fn draw_ruler(
    app: &App,
    marks: &[RulerMark],
    axis: TimeAxis,
    area: Rect,
    lw: u16,
    buf: &mut Buffer,
) {
    let theme = &app.theme;
    buf.set_string(
        area.x,
        area.y,
        format!("{:<w$}", "time", w = lw as usize),
        theme.dim(),
    );
    let step = 16u16;
    let mut x = 0u16;
    while x + 8 < axis.cols {
        let (a, _) = axis.range(x);
        let label = format!(
            "|+{}",
            fmt_dur(a.saturating_sub(app.origin())).replace(' ', "")
        );
        buf.set_string(area.x + lw + x, area.y, &label, theme.dim());
        x += step.max(label.len() as u16 + 2);
    }
    for &(ts, ch, color) in marks {
        if let Some(cx) = axis.col_of(ts) {
            buf.set_string(area.x + lw + cx, area.y, ch.to_string(), theme.mark(color));
        }
    }
    for (name, &ts) in &app.marks {
        if let Some(cx) = axis.col_of(ts) {
            buf.set_string(
                area.x + lw + cx,
                area.y,
                name.to_string(),
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            );
        }
    }
    for (name, ts) in [("A", app.sel_a), ("B", app.sel_b)] {
        if let Some(cx) = ts.and_then(|t| axis.col_of(t)) {
            buf.set_string(
                area.x + lw + cx,
                area.y,
                name,
                theme.mark(theme.cursor).add_modifier(Modifier::BOLD),
            );
        }
    }
    if let Some(cx) = axis.col_of(app.cursor_ts()) {
        buf.set_string(area.x + lw + cx, area.y, "▼", theme.mark(theme.cursor));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};
    use crate::ui::app::LoadMsg;

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
        assert!(app.loading.is_some());
        let end = app.timeline.last_ts;
        let axis = TimeAxis {
            t0: app.timeline.first_ts,
            span: end - app.timeline.first_ts,
            cols: 40,
        };
        let mut sampled = 0;
        for lane in &app.timeline.lanes {
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
        for lane in &app.timeline.lanes {
            let shown = cells(&app, lane, end, Admit::AllTasks, axis, None);
            for (x, (_, seg)) in shown.iter().enumerate() {
                let (a, b) = axis.range(x as u16);
                let exact = summarize(lane, a, b, end, |s: &Segment| s.tid != 0).seg;
                assert_eq!(*seg, exact, "column {x}");
            }
        }
    }
}
