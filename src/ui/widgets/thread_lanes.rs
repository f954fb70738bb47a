//! Thread lanes (`v`): a row per thread of the selected process with the CID it holds over
//! time wherever it runs, and under it the CPU of each run — for what the capture shows and for
//! each model, under the same cursor and zoom as the CPU lanes. The rows are built in the
//! model layer ([`crate::model::ThreadLanes`]); this only draws them.

use super::lane_plan::{Plan, SetKind};
use super::lanes::{Admit, LaneSet, Shown, cell_text, cells};
use crate::events::Tid;
use crate::model::{MmId, ThreadLanes};
use crate::timeline::summary::LanePyramid;
use crate::timeline::{SegLane, Segment};
use crate::ui::app::App;
use crate::ui::glyphs;
use crate::ui::widgets::axis::TimeAxis;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::Widget;

/// The thread rows of one lane set (its title and marks row are the lane stack's).
pub struct ThreadRows<'a> {
    pub app: &'a App,
    /// None: no thread lanes (all tasks selected, or nothing ran).
    pub lanes: Option<&'a ThreadLanes>,
    /// Every thread of the process, by tid (the rows are indices into it).
    pub tids: &'a [Tid],
    /// The rows shown, top to bottom: indices into `tids` (the lane stack's window).
    pub rows: &'a [usize],
    /// Per row of `tids`.
    pub pyramids: Option<&'a [LanePyramid]>,
    pub rows_per_thread: u16,
    pub label_width: u16,
    /// The bound no CID may reach (possible CPUs): CIDs at or above it are drawn as alarms.
    pub bound: u32,
    /// Whether the set has duplicate-CID alarms, so that columns are checked for them.
    pub duplicates: bool,
    /// Whether a CID counts for duplicates unconfirmed too (models), as in the CPU lanes.
    pub any_cid: bool,
}

impl<'a> ThreadRows<'a> {
    /// The thread rows of set `kind` of the lane stack, `set` its CPU lanes.
    pub fn of_set(
        app: &'a App,
        kind: SetKind,
        set: &LaneSet,
        rows: &'a [usize],
        rows_per_thread: u16,
        label_width: u16,
    ) -> ThreadRows<'a> {
        let st = &app.state;
        let k = match kind {
            SetKind::Model(m) => m + 1,
            _ => 0,
        };
        let th = st.derived.threads.as_ref();
        ThreadRows {
            app,
            lanes: th.and_then(|t| t.set(k)),
            tids: th.map_or(&[][..], |t| &t.tids[..]),
            rows,
            pyramids: th
                .and_then(|t| t.pyramids.as_ref())
                .and_then(|p| p.get(k))
                .map(|p| &p[..]),
            rows_per_thread,
            label_width,
            bound: set.bound,
            duplicates: set.duplicates,
            any_cid: set.admit == Admit::Slots,
        }
    }

    /// The cells of thread row `i` (an index into `tids`) across the window.
    fn cells_of(
        &self,
        lanes: &ThreadLanes,
        i: usize,
        axis: TimeAxis,
    ) -> Vec<(Shown, Option<Segment>)> {
        let app = self.app;
        let lane = self
            .tids
            .get(i)
            .and_then(|&tid| lanes.lane_of(tid))
            .unwrap_or(SegLane::empty());
        let pyr = self.pyramids.and_then(|p| p.get(i));
        cells(
            app,
            lane,
            app.state.timeline.last_ts,
            Admit::AllTasks,
            axis,
            pyr,
        )
    }

    /// Per column, the (mm, CID) pairs two threads hold at once (over every thread, not only
    /// the rows shown), as the CPU lanes find them.
    fn duplicate_cids(&self, lanes: &ThreadLanes, axis: TimeAxis) -> Vec<Vec<(MmId, i32)>> {
        let mut per_col: Vec<Vec<(MmId, i32)>> = vec![Vec::new(); axis.cols as usize];
        for i in 0..self.tids.len() {
            for (x, (shown, seg)) in self.cells_of(lanes, i, axis).into_iter().enumerate() {
                if let (Shown::Cid { cid, confirmed, .. }, Some(s)) = (shown, seg)
                    && (confirmed || self.any_cid)
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
}

/// The set's title in the thread view: the set and the process whose threads are shown.
pub fn title(app: &App, plan: &Plan, set_title: &str) -> String {
    let st = &app.state;
    if st.derived.threads.is_none() {
        return format!(
            "{set_title} · thread lanes show one process: {} picks one",
            crate::ui::keys::keys_for(&app.bindings, crate::ui::keys::Action::PickProcess)
        );
    }
    let who = match st.sel.selected_mm() {
        Some(mm) => st.mm_label(mm),
        None => "?".into(),
    };
    format!(
        "{set_title} · {} of {who}",
        crate::ui::words::count(plan.nlanes as u64, "thread")
    )
}

impl Widget for ThreadRows<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let st = &app.state;
        let theme = &app.theme;
        if area.height == 0 {
            return;
        }
        let Some(lanes) = self.lanes else {
            return;
        };
        let lw = self.label_width;
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols,
        };
        let cursor_col = axis.col_of(st.cursor_ts());
        let rpt = self.rows_per_thread.max(1);
        let rows = (area.height / rpt) as usize;
        let dups = if self.duplicates {
            self.duplicate_cids(lanes, axis)
        } else {
            Vec::new()
        };
        for (r, &i) in self.rows.iter().take(rows).enumerate() {
            let Some(&tid) = self.tids.get(i) else {
                continue;
            };
            let y = area.y + r as u16 * rpt;
            buf.set_string(
                area.x,
                y,
                format!("{tid:<w$}", w = lw as usize),
                theme.text(),
            );
            let shown_segs = self.cells_of(lanes, i, axis);
            // a cell breaking a guarantee: its CID at or above the bound, or held twice
            let shown: Vec<(Shown, bool)> = shown_segs
                .iter()
                .enumerate()
                .map(|(x, &(shown, seg))| {
                    let alarm = match (shown, seg) {
                        (Shown::Cid { cid, .. }, Some(seg)) => {
                            cid < 0
                                || cid as u32 >= self.bound
                                || dups.get(x).is_some_and(|d| d.contains(&(seg.mm, cid)))
                        }
                        _ => false,
                    };
                    (shown, alarm)
                })
                .collect();
            let mut x = 0usize;
            while x < shown.len() {
                let run = shown[x..].iter().take_while(|&&s| s == shown[x]).count();
                let (text, style) = cell_text(app, shown[x].0, shown[x].1, run);
                buf.set_string(area.x + lw + x as u16, y, text, style);
                x += run;
            }
            if rpt >= 2 {
                let comm: String = st
                    .trace
                    .comm_of(tid)
                    .chars()
                    .take(lw.saturating_sub(1) as usize)
                    .collect();
                buf.set_string(area.x, y + 1, comm, theme.dim());
                let cells: Vec<Shown> = shown.iter().map(|c| c.0).collect();
                draw_cpu_row(app, lanes, tid, &cells, axis, area.x + lw, y + 1, buf);
            }
            if let Some(cell) =
                cursor_col.and_then(|cx| super::cell::cell_in(buf, area, area.x + lw + cx, y))
            {
                let style = cell.style().add_modifier(Modifier::REVERSED);
                cell.set_style(style);
            }
        }
    }
}

/// Under a thread's CIDs: the CPU of each run, as `▏CPU1` where it fits.
#[allow(clippy::too_many_arguments)]
fn draw_cpu_row(
    app: &App,
    lanes: &ThreadLanes,
    tid: Tid,
    shown: &[Shown],
    axis: TimeAxis,
    x0: u16,
    y: u16,
    buf: &mut Buffer,
) {
    let cpu_of = |x: usize| -> Option<u16> {
        if shown[x] == Shown::Free {
            return None;
        }
        let (a, b) = axis.range(x as u16);
        lanes.cpu_at(tid, a + (b - a) / 2)
    };
    let cpus: Vec<Option<u16>> = (0..shown.len()).map(cpu_of).collect();
    let style = glyphs::THREAD_CPU.style(&app.theme, 0);
    let mut x = 0usize;
    while x < cpus.len() {
        let run = cpus[x..].iter().take_while(|&&c| c == cpus[x]).count();
        if let Some(c) = cpus[x] {
            let label = format!("▏CPU{c}");
            let text = if label.chars().count() <= run {
                label
            } else {
                "▏".to_string()
            };
            buf.set_string(x0 + x as u16, y, text, style);
        }
        x += run;
    }
}
