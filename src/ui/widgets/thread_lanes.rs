//! Thread lanes (`v`): a row per thread of the selected process with the CID it holds over
//! time wherever it runs, and under it the CPU of each run — for what the capture shows and for
//! each model, under the same cursor and zoom as the CPU lanes. The rows are built in the
//! model layer ([`crate::model::ThreadLanes`]); this only draws them.

use super::detail::mm_label;
use super::lane_stack::SetKind;
use super::lanes::{Admit, RulerMark, Shown, cell_text, cells, draw_ruler};
use crate::events::Tid;
use crate::model::ThreadLanes;
use crate::timeline::SegLane;
use crate::timeline::summary::LanePyramid;
use crate::ui::app::App;
use crate::ui::widgets::axis::TimeAxis;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::Widget;

/// The thread rows of one lane set.
pub struct ThreadRows<'a> {
    pub app: &'a App,
    /// None: no thread lanes (all tasks selected, or nothing ran).
    pub lanes: Option<&'a ThreadLanes>,
    /// The rows, top to bottom (from the scroll position on).
    pub tids: &'a [Tid],
    pub pyramids: Option<&'a [LanePyramid]>,
    pub marks: Vec<RulerMark>,
    pub rows_per_thread: u16,
}

impl<'a> ThreadRows<'a> {
    /// The rows of set `kind` of the lane stack.
    pub fn of_set(
        app: &'a App,
        kind: SetKind,
        marks: Vec<RulerMark>,
        rows_per_thread: u16,
    ) -> ThreadRows<'a> {
        let st = &app.state;
        let k = match kind {
            SetKind::Model(m) => m + 1,
            _ => 0,
        };
        let th = st.derived.threads.as_ref();
        let scroll = st.view.thread_scroll;
        ThreadRows {
            app,
            lanes: th.and_then(|t| t.set(k)),
            tids: th.map_or(&[][..], |t| &t.tids[scroll.min(t.tids.len())..]),
            pyramids: th
                .and_then(|t| t.pyramids.as_ref())
                .and_then(|p| p.get(k))
                .map(|p| &p[scroll.min(p.len())..]),
            marks,
            rows_per_thread,
        }
    }
}

/// The set's title in the thread view: the set, the process and which rows are shown.
pub fn title(app: &App, _kind: SetKind, set_title: &str) -> String {
    let st = &app.state;
    let Some(th) = &st.derived.threads else {
        return format!("{set_title} · thread lanes show one process: P picks one");
    };
    let who = match st.sel.selected_mm() {
        Some(mm) => mm_label(st, mm),
        None => "?".into(),
    };
    let n = th.tids.len();
    let first = st.view.thread_scroll.min(n.saturating_sub(1)) + 1;
    format!("{set_title} · {n} threads of {who} from row {first} (↑↓ scroll)")
}

impl Widget for ThreadRows<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let st = &app.state;
        let theme = &app.theme;
        if area.height == 0 {
            return;
        }
        let lw = st.lane_label_width();
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols,
        };
        draw_ruler(app, &self.marks, axis, Rect { height: 1, ..area }, lw, buf);
        let Some(lanes) = self.lanes else {
            return;
        };
        let cursor_col = axis.col_of(st.cursor_ts());
        let rpt = self.rows_per_thread.max(1);
        let rows = (area.height.saturating_sub(1) / rpt) as usize;
        for (r, &tid) in self.tids.iter().take(rows).enumerate() {
            let y = area.y + 1 + r as u16 * rpt;
            buf.set_string(
                area.x,
                y,
                format!("{tid:<w$}", w = lw as usize),
                theme.text(),
            );
            let lane = lanes.lane_of(tid).unwrap_or(SegLane::empty());
            let pyr = self.pyramids.and_then(|p| p.get(r));
            let shown: Vec<Shown> =
                cells(app, lane, st.timeline.last_ts, Admit::AllTasks, axis, pyr)
                    .into_iter()
                    .map(|c| c.0)
                    .collect();
            let mut x = 0usize;
            while x < shown.len() {
                let run = shown[x..].iter().take_while(|&&s| s == shown[x]).count();
                let (text, style) = cell_text(app, shown[x], run);
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
                draw_cpu_row(app, lanes, tid, &shown, axis, area.x + lw, y + 1, buf);
            }
            if let Some(cx) = cursor_col {
                let cell = &mut buf[(area.x + lw + cx, y)];
                let style = cell.style().add_modifier(Modifier::REVERSED);
                cell.set_style(style);
            }
        }
        if self.tids.len() > rows && rows > 0 {
            let note = format!(" {} more threads: ↓ scrolls ", self.tids.len() - rows);
            let x = area.x + area.width.saturating_sub(note.len() as u16);
            buf.set_string(x, area.y + area.height - 1, note, theme.dim());
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
            buf.set_string(x0 + x as u16, y, text, app.theme.dim());
        }
        x += run;
    }
}
