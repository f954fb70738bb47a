//! A lane per CPU across the visible window: each cell coloured and labelled by the CID held
//! there by the selected process (or by any task, with "all tasks" selected).

use super::{TimeAxis, label_width};
use crate::events::fmt_dur;
use crate::timeline::{Segment, lanes::summarize};
use crate::ui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::Widget;

pub struct Lanes<'a> {
    pub app: &'a App,
    /// CPUs shown, top to bottom (a filter may hide some; rows run out on huge machines).
    pub cpus: &'a [usize],
    /// Rows per CPU: 1 = CID cells only; 2 = CID cells and, under them, the task of each run.
    pub rows_per_cpu: u16,
}

/// What one cell shows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shown {
    /// Nothing of the selection runs here.
    Free,
    /// A task of the selection runs here but has no CID (no rseq, or not reported yet).
    NoCid,
    Cid {
        cid: i32,
        confirmed: bool,
    },
}

impl Widget for Lanes<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let tl = &app.timeline;
        if area.height == 0 {
            return;
        }
        let lw = label_width(tl.ncpus);
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: app.t0,
            span: app.span,
            cols,
        };
        let cursor_col = axis.col_of(app.cursor_ts());
        draw_ruler(app, axis, Rect { height: 1, ..area }, lw, buf);
        let rpc = self.rows_per_cpu.max(1);
        let rows = (area.height.saturating_sub(1) / rpc) as usize;
        let end = tl.last_ts;
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
            buf.set_string(
                area.x,
                y,
                format!("CPU{cpu:<w$}", w = (lw - 3) as usize),
                theme.text(),
            );
            let lane = &tl.lanes[cpu];
            let segs: Vec<Option<Segment>> = (0..cols)
                .map(|x| {
                    let (a, b) = axis.range(x);
                    summarize(lane, a, b, end, |s| app.admits(s)).seg
                })
                .collect();
            let shown: Vec<Shown> = segs
                .iter()
                .map(|seg| match *seg {
                    None => Shown::Free,
                    Some(s) => match s.cid() {
                        None => Shown::NoCid,
                        Some(cid) => Shown::Cid {
                            cid,
                            confirmed: s.flags & Segment::CONFIRMED != 0,
                        },
                    },
                })
                .collect();
            if rpc >= 2 {
                draw_task_row(app, &segs, area.x + lw, y + 1, buf);
            }
            let mut x = 0usize;
            while x < shown.len() {
                let run = shown[x..].iter().take_while(|&&s| s == shown[x]).count();
                let (text, style) = match shown[x] {
                    Shown::Free => ("·".repeat(run), theme.dim()),
                    Shown::NoCid => ("-".repeat(run), theme.dim()),
                    Shown::Cid { cid, confirmed } => {
                        let label = cid.to_string();
                        let mut t: String = if label.len() <= run {
                            label
                        } else {
                            label[label.len() - run..].to_string()
                        };
                        let fill = if confirmed { ' ' } else { '░' };
                        while t.chars().count() < run {
                            t.push(fill);
                        }
                        let st = if confirmed {
                            theme.cid_style(cid)
                        } else {
                            theme.cid_stale_style(cid)
                        };
                        (t, st)
                    }
                };
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

/// Under the CID cells: the task of each run of columns, as `comm-tid` where it fits.
fn draw_task_row(app: &App, segs: &[Option<Segment>], x0: u16, y: u16, buf: &mut Buffer) {
    let mut x = 0usize;
    while x < segs.len() {
        let tid = segs[x].map(|s| s.tid);
        let run = segs[x..]
            .iter()
            .take_while(|s| s.map(|s| s.tid) == tid)
            .count();
        if let Some(tid) = tid.filter(|&t| t != 0) {
            let mut label = format!("{}-{tid}", app.trace.comm_of(tid));
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

/// Time labels every ~16 columns, lost-event and alarm markers, and the cursor.
fn draw_ruler(app: &App, axis: TimeAxis, area: Rect, lw: u16, buf: &mut Buffer) {
    let theme = &app.theme;
    let tl = &app.timeline;
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
            fmt_dur(a.saturating_sub(tl.first_ts)).replace(' ', "")
        );
        buf.set_string(area.x + lw + x, area.y, &label, theme.dim());
        x += step.max(label.len() as u16 + 2);
    }
    for &i in &tl.lost_at {
        if let Some(cx) = app.trace.events.get(i).and_then(|e| axis.col_of(e.ts)) {
            buf.set_string(area.x + lw + cx, area.y, "!", theme.mark(theme.lost));
        }
    }
    for a in &tl.alarms {
        if let Some(cx) = axis.col_of(a.ts) {
            buf.set_string(area.x + lw + cx, area.y, "X", theme.mark(theme.alarm));
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
