//! The UI state and what each action does to it. Rendering only reads this.

use super::keys::{Action, Binding, default_bindings};
use super::theme::Theme;
use crate::events::{Event, Trace};
use crate::model::MmId;
use crate::timeline::{Segment, Timeline};

/// Which lanes are shown: every task, or the tasks of one process (mm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmSel {
    All,
    Mm(MmId),
}

pub struct App {
    pub trace: Trace,
    pub timeline: Timeline,
    /// mms with rseq activity, most active first; Tab cycles [All, mms...].
    pub mm_list: Vec<MmId>,
    pub mm_pos: usize,
    /// Index of the event under the cursor.
    pub cursor: usize,
    /// Visible window: `[t0, t0 + span)`.
    pub t0: u64,
    pub span: u64,
    pub show_help: bool,
    pub quit: bool,
    pub bindings: Vec<Binding>,
    pub theme: Theme,
}

/// Narrowest window: 1 µs per column at 200 columns.
pub const MIN_SPAN: u64 = 200;

impl App {
    pub fn new(trace: Trace) -> App {
        let timeline = Timeline::build(&trace);
        Self::with_timeline(trace, timeline)
    }

    pub fn with_timeline(trace: Trace, timeline: Timeline) -> App {
        let mm_list = timeline.mms_by_activity();
        let (t0, span) = full_window(&timeline);
        App {
            mm_pos: if mm_list.is_empty() { 0 } else { 1 },
            mm_list,
            trace,
            timeline,
            cursor: 0,
            t0,
            span,
            show_help: false,
            quit: false,
            bindings: default_bindings(),
            theme: Theme::default(),
        }
    }

    pub fn selected(&self) -> MmSel {
        match self.mm_pos {
            0 => MmSel::All,
            k => self
                .mm_list
                .get(k - 1)
                .map_or(MmSel::All, |&m| MmSel::Mm(m)),
        }
    }

    /// Whether a lane segment belongs to the current selection.
    pub fn admits(&self, s: &Segment) -> bool {
        match self.selected() {
            MmSel::All => s.tid != 0,
            MmSel::Mm(m) => s.mm == m,
        }
    }

    pub fn cursor_event(&self) -> Option<&Event> {
        self.trace.events.get(self.cursor)
    }

    pub fn cursor_ts(&self) -> u64 {
        self.cursor_event().map_or(self.t0, |e| e.ts)
    }

    pub fn t1(&self) -> u64 {
        self.t0.saturating_add(self.span)
    }

    pub fn apply(&mut self, action: Action) {
        let n = self.trace.events.len();
        match action {
            Action::ForceQuit => self.quit = true,
            Action::Quit if self.show_help => self.show_help = false,
            Action::Quit => self.quit = true,
            Action::ToggleHelp => self.show_help = !self.show_help,
            _ if self.show_help => self.show_help = false,
            Action::StepNext => {
                self.cursor = (self.cursor + 1).min(n.saturating_sub(1));
                self.follow_cursor();
            }
            Action::StepPrev => {
                self.cursor = self.cursor.saturating_sub(1);
                self.follow_cursor();
            }
            Action::First => {
                self.cursor = 0;
                self.follow_cursor();
            }
            Action::Last => {
                self.cursor = n.saturating_sub(1);
                self.follow_cursor();
            }
            Action::PageForward => {
                let last = self.timeline.last_ts;
                if self.t1() <= last {
                    self.t0 += self.span;
                }
                self.cursor = self.first_event_at_or_after(self.t0);
            }
            Action::PageBack => {
                self.t0 = self.t0.saturating_sub(self.span).max(self.min_t0());
                self.cursor = self.first_event_at_or_after(self.t0);
            }
            Action::ZoomIn => self.zoom(0.5),
            Action::ZoomOut => self.zoom(2.0),
            Action::NextMm => self.mm_pos = (self.mm_pos + 1) % (self.mm_list.len() + 1),
            Action::PrevMm => {
                let k = self.mm_list.len() + 1;
                self.mm_pos = (self.mm_pos + k - 1) % k;
            }
        }
    }

    fn min_t0(&self) -> u64 {
        self.timeline.first_ts
    }

    fn first_event_at_or_after(&self, ts: u64) -> usize {
        let i = self.trace.events.partition_point(|e| e.ts < ts);
        i.min(self.trace.events.len().saturating_sub(1))
    }

    /// Keeps the cursor inside the window, moving the window as little as needed.
    pub fn follow_cursor(&mut self) {
        let ts = self.cursor_ts();
        if ts < self.t0 || ts >= self.t1() {
            self.t0 = ts.saturating_sub(self.span / 2).max(self.min_t0());
        }
    }

    /// Zooms by `factor` keeping the cursor at the same place on screen.
    fn zoom(&mut self, factor: f64) {
        let (_, full) = full_window(&self.timeline);
        let new_span = ((self.span as f64 * factor) as u64).clamp(MIN_SPAN, full.max(MIN_SPAN));
        let ts = self.cursor_ts();
        let off = ts.saturating_sub(self.t0) as f64 / self.span.max(1) as f64;
        self.span = new_span;
        self.t0 = ts
            .saturating_sub((off * new_span as f64) as u64)
            .max(self.min_t0());
        self.follow_cursor();
    }
}

/// The window showing the whole capture.
fn full_window(tl: &Timeline) -> (u64, u64) {
    let span = tl.last_ts.saturating_sub(tl.first_ts);
    // A little room after the last event so it is drawn.
    (tl.first_ts, (span + span / 100).max(MIN_SPAN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    fn app() -> App {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              a-1 [000] ....  2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              a-1 [000] ....  3.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
            &LoadOptions::default(),
        )
        .unwrap();
        App::new(t)
    }

    #[test]
    fn stepping_and_paging_keep_cursor_visible() {
        let mut a = app();
        assert_eq!(a.t0, 1_000_000_000);
        a.apply(Action::ZoomIn);
        a.apply(Action::ZoomIn);
        a.apply(Action::Last);
        assert_eq!(a.cursor, 2);
        assert!(a.cursor_ts() >= a.t0 && a.cursor_ts() < a.t1());
        a.apply(Action::StepNext);
        assert_eq!(a.cursor, 2);
        a.apply(Action::First);
        assert_eq!(a.cursor, 0);
        assert!(a.cursor_ts() >= a.t0 && a.cursor_ts() < a.t1());
        a.apply(Action::PageForward);
        assert!(a.cursor_ts() >= a.t0);
        a.apply(Action::Quit);
        assert!(a.quit);
    }

    #[test]
    fn zoom_is_bounded() {
        let mut a = app();
        for _ in 0..80 {
            a.apply(Action::ZoomIn);
        }
        assert_eq!(a.span, MIN_SPAN);
        for _ in 0..80 {
            a.apply(Action::ZoomOut);
        }
        assert_eq!(a.span, 2_020_000_000);
    }

    #[test]
    fn tab_cycles_all_and_mms() {
        let mut a = app();
        // no TGIDs in this capture: only "all tasks"
        assert_eq!(a.selected(), MmSel::All);
        a.apply(Action::NextMm);
        assert_eq!(a.selected(), MmSel::All);
    }
}
