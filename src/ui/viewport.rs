//! The visible window and the cursor: which stretch of time is on screen, at what zoom, which
//! event is under the cursor and where the mouse points. The window arithmetic is here; what
//! needs the events (the cursor's time, its limits) is the state's.

use crate::timeline::Timeline;

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
}

impl Viewport {
    /// A window showing the whole of a timeline, the cursor on its first event.
    pub fn whole(tl: &Timeline) -> Viewport {
        let (t0, span) = full_window(tl);
        Viewport {
            t0,
            span,
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
