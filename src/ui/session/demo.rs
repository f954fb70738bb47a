//! A teaching demo: the narrated steps, where the presenter is, and whether it plays. Its keys
//! step through the narrated moments, play and stop, and change the playing speed.

use super::Session;
use crate::demo::Step;
use crate::ui::keys::Action;
use crate::ui::state::State;
use crate::ui::viewport::MIN_SPAN;
use std::time::{Duration, Instant};

pub struct Demo {
    pub name: String,
    /// In time order.
    pub steps: Vec<Step>,
    pub current: usize,
    /// The cursor is before the first step's moment (moved there with another key).
    pub before_first: bool,
    pub playing: bool,
    /// Trace time per second of real time.
    pub speed: u64,
    /// When the last frame played (None: not playing yet).
    pub last_tick: Option<Instant>,
    /// Presenter mode (`demo --present`): each step first asks "what happens next?" with the
    /// cursor just before its moment; the next key reveals it.
    pub present: bool,
    /// Presenting: the current step is asked, not yet revealed.
    pub asking: bool,
    /// The cursor the narration was last set for: when other keys move the cursor, the
    /// narration follows it to the step whose moment it passed.
    narrated_at: Option<usize>,
}

impl Demo {
    /// A demo of these steps (sorted here: playing forward passes them in time order).
    pub fn new(name: &str, mut steps: Vec<Step>, speed: u64) -> Demo {
        steps.sort_by_key(|s| s.ts);
        Demo {
            name: name.to_string(),
            steps,
            current: 0,
            before_first: false,
            playing: false,
            speed,
            last_tick: None,
            present: false,
            asking: false,
            narrated_at: None,
        }
    }

    /// Shows step `k`, its moment and its window; stops playing. A presenter's step first
    /// asks: the cursor just before the moment, the narration asking what happens next.
    pub fn go_to_step(&mut self, k: usize, st: &mut State) {
        let Some(step) = self.steps.get(k) else {
            return;
        };
        self.current = k;
        self.before_first = false;
        self.playing = false;
        self.last_tick = None;
        let at = st.first_event_at_or_after(step.ts);
        self.asking = self.present;
        st.view.cursor = if self.asking {
            at.saturating_sub(1)
        } else {
            at
        };
        st.view.span = step.span.max(MIN_SPAN);
        st.view.t0 = step.ts.saturating_sub(st.view.span / 3).max(st.min_t0());
        self.narrated_at = Some(st.view.cursor);
        self.narrate(st);
    }

    /// The presenter's answer: the moment asked about, and its narration.
    pub fn reveal(&mut self, st: &mut State) {
        if let Some(step) = self.steps.get(self.current) {
            st.view.cursor = st.first_event_at_or_after(step.ts);
            self.narrated_at = Some(st.view.cursor);
        }
        self.asking = false;
    }

    /// The lane sets the narration talks about come into view (a presenter sees only them).
    fn narrate(&self, st: &mut State) {
        let Some(step) = self.steps.get(self.current) else {
            return;
        };
        st.models.present = self.present;
        st.models.focus = step.shows.clone();
        if let Some(top) = step
            .shows
            .iter()
            .filter_map(|&f| st.models.position_of(f))
            .min()
            && !self.present
        {
            st.view.lanes.set_top = top;
        }
    }

    /// The narration of the cursor's place, after a key other than the demo's moved it: the
    /// last step whose moment is at or before the cursor (or "before step 1").
    pub fn follow_cursor(&mut self, st: &mut State) {
        if self.narrated_at == Some(st.view.cursor) {
            return;
        }
        self.narrated_at = Some(st.view.cursor);
        let ts = st.cursor_ts();
        let passed = self.steps.partition_point(|s| s.ts <= ts);
        self.before_first = passed == 0;
        let current = passed.saturating_sub(1);
        if current != self.current {
            self.asking = false;
        }
        self.current = current;
        self.narrate(st);
    }

    /// Playing: moves the cursor on by `dt_ns` of real time at the demo's speed, and the
    /// narration with it.
    pub fn play(&mut self, dt_ns: u64, st: &mut State) {
        if !self.playing {
            return;
        }
        let advance = (dt_ns as u128 * self.speed as u128 / 1_000_000_000) as u64;
        let target = st.cursor_ts().saturating_add(advance.max(1));
        let i = st.trace.events.partition_point_ts(|t| t <= target);
        let last = st.trace.events.len().saturating_sub(1);
        st.view.cursor = i.saturating_sub(1).max(st.view.cursor).min(last);
        let ts = st.cursor_ts();
        // the narration follows the moments the cursor passes
        if self.before_first && self.steps.first().is_some_and(|s| s.ts <= ts) {
            self.before_first = false;
        }
        while self.current + 1 < self.steps.len() && self.steps[self.current + 1].ts <= ts {
            self.current += 1;
            if self.present {
                // a presenter's playback stops before each moment and asks
                let k = self.current;
                self.go_to_step(k, st);
                return;
            }
        }
        self.narrate(st);
        self.narrated_at = Some(st.view.cursor);
        if st.view.cursor >= last {
            self.playing = false;
        }
        if ts >= st.view.t1() {
            st.view.t0 = ts.saturating_sub(st.view.span / 10);
        }
    }
}

impl Session for Demo {
    fn tick(&mut self, st: &mut State) {
        let now = Instant::now();
        if !self.playing {
            self.follow_cursor(st);
            return;
        }
        let dt = self
            .last_tick
            .map_or(0, |t| now.duration_since(t).as_nanos() as u64);
        self.last_tick = Some(now);
        self.play(dt, st);
    }

    fn apply(&mut self, action: Action, st: &mut State) -> bool {
        match action {
            Action::TogglePause => {
                self.playing = !self.playing;
                self.last_tick = None;
            }
            Action::Faster => self.speed = (self.speed * 2).min(10_000_000_000),
            Action::Slower => self.speed = (self.speed / 2).max(1_000),
            Action::NextStep if self.asking => self.reveal(st),
            // the last step shown: nothing after it (not asked again)
            Action::NextStep
                if !self.before_first
                    && self.current + 1 >= self.steps.len()
                    && self.narrated_at == Some(st.view.cursor) =>
            {
                st.overlays.message = Some("the last step: [ goes back".into());
            }
            Action::NextStep => {
                self.follow_cursor(st);
                let next = if self.before_first {
                    0
                } else {
                    (self.current + 1).min(self.steps.len().saturating_sub(1))
                };
                self.go_to_step(next, st);
            }
            Action::PrevStep => {
                self.follow_cursor(st);
                self.go_to_step(self.current.saturating_sub(1), st)
            }
            _ => return false,
        }
        true
    }

    fn after_action(&mut self, st: &mut State) {
        if !self.playing {
            self.follow_cursor(st);
        }
    }

    fn frame_wait(&self, _st: &State, _draw_ms: u64) -> Duration {
        Duration::from_millis(if self.playing { 30 } else { 100 })
    }
}
