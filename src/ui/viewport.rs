//! The visible window and the cursor: which stretch of time is on screen, at what zoom, which
//! event is under the cursor and where the mouse points. The window arithmetic is here; what
//! needs the events (the cursor's time, its limits) is the state's.

use crate::timeline::Timeline;
use ratatui::layout::Rect;

/// Narrowest window: 1 µs per column at 200 columns.
pub const MIN_SPAN: u64 = 200;

#[derive(Clone, Debug, Default)]
pub struct Viewport {
    /// Index of the event under the cursor.
    pub cursor: usize,
    /// Visible window: `[t0, t0 + span)`.
    pub t0: u64,
    pub span: u64,
    /// The window follows the data as it loads until the user moves it.
    pub follow_load: bool,
    /// Where the mouse points: (CPU lane, time).
    pub hover: Option<(Option<usize>, u64)>,
    /// A lane per thread of the selected process instead of a lane per CPU (`v`).
    pub threads: bool,
    /// The first thread row shown (thread lanes scroll when they outnumber the rows).
    pub thread_scroll: usize,
    /// The vertical scroll of the lane stack.
    pub lanes: LaneScroll,
    /// The size of the screen last drawn: what the lane stack's window is planned for.
    pub screen: Rect,
}

/// Which part of the lane stack is on screen when not all of it fits: the first CPU shown (an
/// index into the CPUs shown, the same for every lane set) and the first lane set shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneScroll {
    pub cpu_top: usize,
    pub set_top: usize,
    /// The cursor (event index) the window last followed: a cursor move brings its CPUs into
    /// view again; a manual scroll stays until the cursor moves.
    pub followed: Option<usize>,
}

/// The screen size assumed before the first frame (and by tests that draw none).
pub const DEFAULT_SCREEN: Rect = Rect {
    x: 0,
    y: 0,
    width: 120,
    height: 40,
};

impl Viewport {
    /// A window showing the whole of a timeline, the cursor on its first event.
    pub fn whole(tl: &Timeline) -> Viewport {
        let (t0, span) = full_window(tl);
        Viewport {
            t0,
            span,
            screen: DEFAULT_SCREEN,
            ..Viewport::default()
        }
    }

    pub fn t1(&self) -> u64 {
        self.t0.saturating_add(self.span)
    }

    /// Brings `ts` into the window, centred, when it is outside; the window starts no earlier
    /// than `min_t0`.
    pub fn reveal(&mut self, ts: u64, min_t0: u64) {
        if ts < self.t0 || ts >= self.t1() {
            self.t0 = ts.saturating_sub(self.span / 2).max(min_t0);
        }
    }

    /// Zooms by `factor` keeping time `at` at the same place on screen; the span stays between
    /// [`MIN_SPAN`] and `max_span`.
    pub fn zoom(&mut self, factor: f64, at: u64, max_span: u64, min_t0: u64) {
        let new_span = ((self.span as f64 * factor) as u64).clamp(MIN_SPAN, max_span.max(MIN_SPAN));
        let off = at.saturating_sub(self.t0) as f64 / self.span.max(1) as f64;
        self.span = new_span;
        self.t0 = at
            .saturating_sub((off * new_span as f64) as u64)
            .max(min_t0);
    }
}

/// The window showing the whole capture: `(t0, span)`.
pub fn full_window(tl: &Timeline) -> (u64, u64) {
    let span = tl.last_ts.saturating_sub(tl.first_ts);
    // A little room after the last event so it is drawn.
    (tl.first_ts, span.saturating_add(span / 100).max(MIN_SPAN))
}
