//! A live session: a [`LiveSession`] source feeds the same state as a replay. The view follows
//! the newest data; space pauses the view while the capture goes on; after a pause or the end,
//! the whole session scrubs like a replay.

use super::Session;
use crate::sources::live::{LiveCounters, LiveSession};
use crate::ui::keys::Action;
use crate::ui::state::State;
use crate::ui::viewport::MIN_SPAN;
use std::time::{Duration, Instant};

/// The weight series is rebuilt from the whole index at most this often while data arrives
/// (and at most a fifth of the time: never more than 4 × what the last rebuild took).
const WEIGHT_EVERY: Duration = Duration::from_millis(250);

/// How much time the view shows while it follows a live session.
pub const LIVE_WINDOW: u64 = 2_000_000_000;

pub struct Live {
    source: LiveSession,
    /// The process whose threads are the workload.
    pid: u32,
    ncpus: u32,
    pub paused: bool,
    pub finished: bool,
    pub counters: LiveCounters,
    /// What the session is, for the status bar (`attach --pid P`); None for `live`.
    pub label: Option<String>,
    /// When the weight series was last rebuilt, and how long that took.
    weights_built: Option<(Instant, Duration)>,
    /// The `--record` going on, if any (the status bar shows it; a failure at once).
    pub record: Option<std::sync::Arc<crate::export::record::RecordStatus>>,
    /// The recording's failure was put on the message line.
    record_failure_shown: bool,
}

impl Live {
    pub fn new(source: LiveSession, pid: u32, ncpus: u32) -> Live {
        Live {
            source,
            pid,
            ncpus,
            paused: false,
            finished: false,
            counters: LiveCounters::default(),
            label: None,
            weights_built: None,
            record: None,
            record_failure_shown: false,
        }
    }

    /// The source, to stop it once the TUI ends.
    pub fn into_source(self) -> LiveSession {
        self.source
    }
}

impl Live {
    /// The kernel trace's weight series for the selected process, rebuilt as it grows
    /// (throttled), and once more when the session ends.
    fn refresh_weights(&mut self, st: &mut State, finished: bool) {
        if !st.derived.weights_stale {
            return;
        }
        let due = self
            .weights_built
            .is_none_or(|(at, took)| at.elapsed() >= WEIGHT_EVERY.max(took * 4));
        if !(due || finished) {
            return;
        }
        let start = Instant::now();
        st.derived.refresh_weights(&st.timeline, st.sel.selected());
        st.derived.weights_stale = false;
        st.derived.weights_at = st.trace.events.len();
        self.weights_built = Some((start, start.elapsed()));
    }
}

impl Session for Live {
    fn tick(&mut self, st: &mut State) {
        if !self.record_failure_shown
            && let Some(e) = self.record.as_ref().and_then(|r| r.error())
        {
            // a recording that stopped says so at once, not when the session ends
            self.record_failure_shown = true;
            st.overlays.message = Some(format!("RECORDING STOPPED: {e}"));
        }
        if self.finished {
            return;
        }
        let batch = self.source.poll();
        let finished = self.source.is_finished();
        let before = st.trace.events.len();
        batch.apply_to(std::sync::Arc::make_mut(&mut st.trace));
        st.timeline.extend(&st.trace);
        if st.trace.events.len() > before {
            st.derived.weights_stale = true;
        }
        self.counters = batch.counters;
        if let Some(s) = st.samples.as_mut() {
            s.add(&batch.samples, &st.trace, self.pid, self.ncpus, finished);
        }
        if finished {
            self.finished = true;
            self.paused = true;
            st.overlays.message = Some(format!(
                "the session ended after {}: scrub it like a replay",
                crate::events::fmt_dur(self.counters.duration_ns)
            ));
        }
        st.refresh_mm_list();
        self.refresh_weights(st, finished);
        st.refresh_threads();
        if !self.paused {
            follow_newest(st);
        }
    }

    fn apply(&mut self, action: Action, st: &mut State) -> bool {
        if action != Action::TogglePause {
            return false;
        }
        self.paused = !self.paused;
        if !self.paused {
            follow_newest(st);
        }
        true
    }

    fn frame_wait(&self, _st: &State, _draw_ms: u64) -> Duration {
        Duration::from_millis(30)
    }
}

/// The window ends at the newest data, the cursor on the newest event.
pub fn follow_newest(st: &mut State) {
    let samples = st.samples.as_ref().map(|s| &s.timeline);
    let last = st.timeline.last_ts.max(samples.map_or(0, |s| s.last_ts));
    let first = st.timeline.first_ts.min(
        samples
            .filter(|s| s.applied() > 0)
            .map_or(u64::MAX, |s| s.first_ts),
    );
    let first = if first == u64::MAX { last } else { first };
    st.view.cursor = st.trace.events.len().saturating_sub(1);
    // show the last LIVE_WINDOW of data, or all of it while there is less
    let span = LIVE_WINDOW.max(MIN_SPAN);
    st.view.span = span;
    st.view.t0 = last.saturating_sub(span * 9 / 10).max(first.min(last));
}
