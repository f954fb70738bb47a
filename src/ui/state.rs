//! Everything the panes draw, except the session: the capture and its index, the viewport, the
//! selection, the overlays, the models and what is derived from them. Sessions and actions
//! change it; rendering only reads it.

use super::derived::Derived;
use super::models::Models;
use super::overlays::Overlays;
use super::samples::Samples;
use super::search::{self, Query};
use super::selection::Selection;
use super::viewport::{Viewport, full_window};
use crate::events::{Event, Trace, TraceDelta, fmt_dur};
use crate::model::MmId;
use crate::sources::{Progress, SourceError};
use crate::timeline::Timeline;
use std::sync::Arc;

pub struct State {
    /// Shared with a model replay's thread while it runs (a change meanwhile, live, copies it).
    pub trace: Arc<Trace>,
    pub timeline: Timeline,
    pub view: Viewport,
    pub sel: Selection,
    pub overlays: Overlays,
    pub models: Models,
    pub derived: Derived,
    /// Where the cursor was before each jump (Ctrl-O, Ctrl-I).
    pub history: super::history::JumpHistory,
    /// While the capture is still being read.
    pub loading: Option<Loading>,
    /// Live: the CIDs the workload's threads read from their rseq areas.
    pub samples: Option<Samples>,
    /// A live session feeds the trace (attach): data keeps arriving.
    pub streaming: bool,
    pub quit: bool,
    /// Ctrl-Z: the event loop suspends to the shell before the next frame.
    pub suspend: bool,
    /// A load error after some events arrived: shown, with the events before it kept.
    pub load_error: Option<SourceError>,
    /// A load error before any event arrived: the run ends with it.
    pub fatal: Option<SourceError>,
    /// Captures side by side (`cidscope A B`), and the CID metrics of each.
    pub compare: super::compare::Compare,
}

/// A load in progress.
pub struct Loading {
    pub progress: Arc<Progress>,
}

/// What the loader thread sends.
pub enum LoadMsg {
    Delta(TraceDelta),
    Done(Result<(), SourceError>),
}

impl State {
    pub fn new(trace: Trace, timeline: Timeline) -> State {
        let mut st = State {
            sel: Selection::new(timeline.mms_by_activity(), timeline.first_pick()),
            view: Viewport::whole(&timeline),
            trace: Arc::new(trace),
            timeline,
            overlays: Overlays::default(),
            models: Models::default(),
            derived: Derived::default(),
            history: Default::default(),
            loading: None,
            samples: None,
            streaming: false,
            quit: false,
            suspend: false,
            load_error: None,
            fatal: None,
            compare: Default::default(),
        };
        st.refresh_summaries();
        st
    }

    /// The state of a capture still to be read: deltas arrive through [`State::on_load`].
    pub fn loading(name: &str, format: crate::events::Format, progress: Arc<Progress>) -> State {
        let mut st = State::new(
            Trace::new(name, format),
            Timeline::empty(Timeline::DEFAULT_INTERVAL),
        );
        st.loading = Some(Loading { progress });
        st.view.follow_load = true;
        st
    }

    /// Whether data still arrives: a capture being read, or a live session.
    pub fn growing(&self) -> bool {
        self.loading.is_some() || self.samples.is_some() || self.streaming
    }

    /// Shows model runs beside the capture (the compare view with more than one).
    pub fn set_models(&mut self, runs: Vec<crate::model::policies::PolicyRun>) {
        let n = self.timeline.lanes.len();
        self.models.set(runs, self.sel.selected(), n);
        self.refresh_summaries();
    }

    /// Runs the requested models over the whole capture (once it is read).
    pub fn run_requested_models(&mut self) {
        let Some(req) = self.models.request.take() else {
            return;
        };
        let facts = crate::model::kernel::KernelFacts::of(&self.trace);
        let chosen = crate::model::kernel::choose(&req.asked, &facts);
        let (kinds, params) = match &chosen {
            Some(c) => {
                let mut kinds = vec![c.policy];
                kinds.extend(req.others.iter().filter(|&&k| k != c.policy));
                (kinds, c.params.clone())
            }
            None => (req.others, req.asked.base),
        };
        if let Some(c) = &chosen
            && self.overlays.message.is_none()
        {
            self.overlays.message = Some(format!("model: {}", c.chosen_because));
        }
        self.models.chosen = chosen;
        if !kinds.is_empty() {
            // off the drawing path: a replay (its inference included) takes a while on a large
            // capture, and the TUI keeps drawing meanwhile; the tick takes the runs in
            let trace = Arc::clone(&self.trace);
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                // a bug in a model is said on the message line; the capture stays shown
                let _ = tx.send(crate::sources::sys::panics::contain(|| {
                    crate::sources::sys::panics::inject("model", 0);
                    crate::model::policies::replay_all(&trace, &kinds, &params)
                }));
            });
            self.models.running = Some(rx);
        }
    }

    /// Takes in the model runs once their thread is done (`wait`: blocks for them).
    pub fn take_models(&mut self, wait: bool) {
        let Some(rx) = &self.models.running else {
            return;
        };
        let runs = if wait {
            rx.recv().ok()
        } else {
            match rx.try_recv() {
                Ok(r) => Some(r),
                Err(std::sync::mpsc::TryRecvError::Empty) => return,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
            }
        };
        self.models.running = None;
        match runs {
            Some(Ok(runs)) => {
                self.set_models(runs);
                self.refresh_models();
            }
            Some(Err(why)) => {
                self.overlays.message = Some(format!(
                    "models: internal error (a bug; please report it), shown without them: {why}"
                ));
            }
            None => {}
        }
    }

    /// Rebuilds the weights and summaries for the current selection.
    pub fn refresh_summaries(&mut self) {
        let growing = self.growing();
        self.derived
            .refresh_summaries(&self.timeline, &self.sel, &self.models.views, growing);
        self.derived.threads = None;
        self.refresh_threads();
    }

    /// Builds the thread lanes of the selected process when the thread view is on and they are
    /// missing or outdated (data still growing: at most every 300 ms).
    pub fn refresh_threads(&mut self) {
        use super::derived::Threads;
        use super::selection::MmSel;
        if !self.view.threads {
            self.derived.threads = None;
            return;
        }
        let (sel, n) = (self.sel.selected(), self.trace.events.len());
        let fresh = self.derived.threads.as_ref().is_some_and(|t| {
            t.sel == sel
                && (t.built_at == n || t.when.elapsed() < std::time::Duration::from_millis(300))
        });
        if fresh {
            return;
        }
        let growing = self.growing();
        self.derived.threads = match sel {
            MmSel::Mm(mm) => Some(Threads::build(
                &self.timeline,
                &self.models.views,
                mm,
                n,
                growing,
            )),
            MmSel::All => None,
        };
        let rows = self.derived.threads.as_ref().map_or(0, |t| t.tids.len());
        self.view.thread_scroll = self.view.thread_scroll.min(rows.saturating_sub(1));
    }

    /// Follows the selection in the model views and their jump targets.
    pub fn refresh_models(&mut self) {
        let n = self.timeline.lanes.len();
        self.models.select(self.sel.selected(), n);
        self.refresh_summaries();
    }

    /// Takes in what the loader read.
    pub fn on_load(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Delta(mut d) => {
                Arc::make_mut(&mut self.trace).apply(&mut d);
                self.timeline.extend(&self.trace);
                self.derived.weights_stale = true;
            }
            LoadMsg::Done(Ok(())) => {
                self.loading = None;
                let n = self.trace.warnings.len();
                Arc::make_mut(&mut self.trace).ensure_sorted();
                if self.trace.warnings.len() > n {
                    // events were reordered: index them again
                    self.timeline = Timeline::build(&self.trace);
                } else {
                    self.timeline.judge(&self.trace);
                }
                Arc::make_mut(&mut self.trace).events.shrink_to_fit();
                self.timeline.shrink_to_fit();
                self.compare.first_read(&self.trace, &self.timeline);
                self.run_requested_models();
                self.refresh_models();
                if self.trace.events.is_empty() {
                    self.overlays.message = Some("the capture holds no events".into());
                }
            }
            LoadMsg::Done(Err(e)) => {
                self.loading = None;
                if self.trace.events.is_empty() {
                    self.fatal = Some(e);
                    self.quit = true;
                } else {
                    self.load_error = Some(e);
                }
            }
        }
        self.refresh_mm_list();
        // The series is rebuilt from the whole index: while loading, only each time the trace
        // has doubled (a load of many deltas then costs twice one rebuild, not one per delta).
        let n = self.trace.events.len();
        let d = &mut self.derived;
        if d.weights_stale && (self.loading.is_none() || n >= 2 * d.weights_at.max(1 << 16)) {
            d.weights_stale = false;
            d.weights_at = n;
            d.refresh_weights(&self.timeline, self.sel.selected());
        }
        // a window set before any data came (keys pressed during the load) is outside it
        let outside =
            self.view.t1() <= self.timeline.first_ts || self.view.t0 > self.timeline.last_ts;
        if self.view.follow_load || (outside && self.timeline.applied() > 0) {
            (self.view.t0, self.view.span) = full_window(&self.timeline);
        }
        self.refresh_threads();
    }

    /// Recomputes the process list as data grows, keeping the user's choice.
    pub fn refresh_mm_list(&mut self) {
        let first = self.first_pick();
        if self
            .sel
            .update_mm_list(self.timeline.mms_by_activity(), first)
        {
            self.derived.weights_stale = true;
            self.derived.threads = None;
            if !self.models.views.is_empty() {
                self.refresh_models();
            }
        }
        if let super::overlays::Mode::Picker(p) = &mut self.overlays.mode {
            p.refresh(&self.timeline, &self.trace, &self.sel);
        }
    }

    /// The process cidscope picks while the user has not: the one asked for (`attach --pid`),
    /// else the timeline's first pick.
    pub fn first_pick(&self) -> Option<crate::model::MmId> {
        self.sel
            .prefer_tgid
            .and_then(|t| self.timeline.mm_of_tgid(t))
            .or_else(|| self.timeline.first_pick())
    }

    /// Shows `sel` (the user's choice): the search, the models and the derived series follow.
    pub fn select(&mut self, sel: super::selection::MmSel) {
        if self.sel.selected() == sel && !self.sel.mm_auto {
            return;
        }
        self.sel.select(sel);
        self.refresh_search();
        self.derived.threads = None;
        self.refresh_models();
    }

    /// A process: its label and the comm of its leader.
    pub fn mm_label(&self, mm: MmId) -> String {
        if mm == MmId::UNKNOWN {
            return "mm unknown".into();
        }
        if mm == MmId::NONE {
            return "-".into();
        }
        match self.timeline.mm_info(mm) {
            Some(i) => match self.trace.comm_of(i.leader).as_str() {
                "?" => i.label(),
                comm => format!("{} {comm}", i.label()),
            },
            None => "?".into(),
        }
    }

    /// Runs the last search again (the selected process changed, and with it the CID matches).
    pub fn refresh_search(&mut self) {
        if let Some((text, _)) = &self.sel.search
            && let Ok(q) = Query::parse(text)
        {
            let hits = search::find(&self.trace, &self.timeline, &q, self.sel.selected_mm());
            self.sel.search = Some((text.clone(), hits));
        }
    }

    /// The time the ruler's `+` offsets count from: the start of the data shown.
    pub fn origin(&self) -> u64 {
        match &self.samples {
            Some(s) if s.timeline.applied() > 0 => {
                if self.timeline.applied() > 0 {
                    self.timeline.first_ts.min(s.timeline.first_ts)
                } else {
                    s.timeline.first_ts
                }
            }
            _ => self.timeline.first_ts,
        }
    }

    /// Where the window may start at the earliest.
    pub fn min_t0(&self) -> u64 {
        match &self.samples {
            Some(s) if s.timeline.applied() > 0 && self.trace.events.is_empty() => {
                s.timeline.first_ts
            }
            _ => self.timeline.first_ts,
        }
    }

    /// CPUs whose lanes are shown.
    pub fn visible_cpus(&self) -> Vec<usize> {
        let n = self
            .timeline
            .lanes
            .len()
            .max(self.samples.as_ref().map_or(0, |s| s.timeline.lanes.len()))
            .max(self.timeline.ncpus as usize);
        match &self.sel.cpu_filter {
            Some(f) => f.iter().copied().filter(|&c| c < n).collect(),
            None => (0..n).collect(),
        }
    }

    pub fn cursor_event(&self) -> Option<Event> {
        self.trace.events.get(self.view.cursor)
    }

    pub fn cursor_ts(&self) -> u64 {
        self.cursor_event().map_or(self.view.t0, |e| e.ts)
    }

    pub fn first_event_at_or_after(&self, ts: u64) -> usize {
        let i = self.trace.events.partition_point_ts(|t| t < ts);
        i.min(self.trace.events.len().saturating_sub(1))
    }

    /// The event nearest to `ts`.
    pub fn event_near(&self, ts: u64) -> usize {
        let ev = &self.trace.events;
        let i = ev.partition_point_ts(|t| t < ts);
        match (i.checked_sub(1), ev.get(i)) {
            (Some(p), Some(n)) if ts - ev.ts(p) <= n.ts - ts => p,
            (Some(p), None) => p,
            _ => i.min(ev.len().saturating_sub(1)),
        }
    }

    /// Event indices `[i, j)` with `a <= ts <= b`.
    pub fn event_range(&self, a: u64, b: u64) -> (usize, usize) {
        let ev = &self.trace.events;
        (
            ev.partition_point_ts(|t| t < a),
            ev.partition_point_ts(|t| t <= b),
        )
    }

    /// CID changes (of the selected mm) inside `[a, b]`.
    pub fn cid_changes_in(&self, a: u64, b: u64) -> usize {
        let (i, j) = self.event_range(a, b);
        let mm = self.sel.selected_mm();
        self.timeline
            .cid_changes
            .iter()
            .filter(|&&(k, m)| (k as usize) >= i && (k as usize) < j && mm.is_none_or(|s| s == m))
            .count()
    }

    /// The cursor and the window, to come back to.
    pub fn place(&self) -> super::history::Place {
        super::history::Place {
            cursor: self.view.cursor,
            t0: self.view.t0,
            span: self.view.span,
        }
    }

    /// Back to a place of the jump history.
    pub fn go_to_place(&mut self, p: super::history::Place) {
        self.view.cursor = p.cursor.min(self.trace.events.len().saturating_sub(1));
        (self.view.t0, self.view.span) = (p.t0, p.span);
        self.follow_cursor();
    }

    /// Zooms to `[a, b]` (the A–B range, the overview's region), the cursor inside it.
    pub fn zoom_to(&mut self, a: u64, b: u64) {
        let span = b.saturating_sub(a).max(super::viewport::MIN_SPAN);
        // a sliver of room on each side, so that the ends are drawn
        let pad = span / 50;
        self.view.t0 = a.saturating_sub(pad).max(self.min_t0());
        self.view.span = span + 2 * pad;
        let ts = self.cursor_ts();
        if ts < a || ts > b {
            self.view.cursor = self.first_event_at_or_after(a);
        }
    }

    pub fn set_cursor(&mut self, i: usize) {
        self.view.cursor = i.min(self.trace.events.len().saturating_sub(1));
        self.follow_cursor();
    }

    /// Keeps the cursor inside the window, moving the window as little as needed.
    pub fn follow_cursor(&mut self) {
        let (ts, min_t0) = (self.cursor_ts(), self.min_t0());
        self.view.reveal(ts, min_t0);
    }

    /// Zooms by `factor` keeping time `at` at the same place on screen.
    pub fn zoom_at(&mut self, factor: f64, at: u64) {
        let (_, full) = full_window(&self.timeline);
        let min_t0 = self.min_t0();
        self.view.zoom(factor, at, full, min_t0);
        self.follow_cursor();
    }

    /// A screen forward (while there is data after it) or back; the cursor on the window's
    /// first event.
    pub fn page(&mut self, forward: bool) {
        let (min_t0, last) = (self.min_t0(), self.timeline.last_ts);
        let v = &mut self.view;
        if !forward {
            v.t0 = v.t0.saturating_sub(v.span).max(min_t0);
        } else if v.t1() <= last {
            v.t0 += v.span;
        }
        self.view.cursor = self.first_event_at_or_after(self.view.t0);
    }

    /// The A–B range on the message line.
    pub fn describe_selection(&mut self) {
        if let Some((a, b)) = self.sel.range() {
            let (i, j) = self.event_range(a, b);
            self.overlays.message =
                Some(format!("range A–B: {} , {} events", fmt_dur(b - a), j - i));
        }
    }

    /// What the mouse points at: the time and, on a lane, who runs there with which CID.
    pub fn describe_hover(&self) -> Option<String> {
        let (cpu, ts) = self.view.hover?;
        let rel = fmt_dur(ts.saturating_sub(self.timeline.first_ts));
        let Some(cpu) = cpu else {
            return Some(format!("pointer at +{rel}"));
        };
        let seg = self.timeline.segment_at(cpu, ts)?;
        let who = if seg.tid == 0 {
            "<idle>".to_string()
        } else {
            format!("{}-{}", self.trace.comm_of(seg.tid), seg.tid)
        };
        let cid = match (seg.cid(), seg.confirmed()) {
            (Some(c), true) => format!("CID {c}"),
            (Some(c), false) => format!("CID {c}? (unconfirmed)"),
            (None, _) => "no CID".into(),
        };
        Some(format!("pointer at +{rel}, CPU{cpu}: {who} {cid}"))
    }

    /// The rseq accounting over the A–B range if set, else the whole capture.
    pub fn compute_accounting(&self) -> crate::stats::accounting::Accounting {
        let (i, j) = match self.sel.range() {
            Some((a, b)) => self.event_range(a, b),
            None => (0, self.trace.events.len()),
        };
        crate::stats::accounting::compute(&self.trace, i, j)
    }
}
