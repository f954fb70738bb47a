//! The UI state and what each action does to it. Rendering only reads this.

use super::keys::{Action, Binding, default_bindings};
use super::search::{self, Query};
use super::theme::Theme;
use crate::events::{Event, EventKind, Trace, fmt_dur};
use crate::model::MmId;
use crate::timeline::{SegLane, Segment, Timeline};
use std::collections::BTreeMap;

/// Which lanes are shown: every task, or the tasks of one process (mm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmSel {
    All,
    Mm(MmId),
}

/// What the next keys mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Typing a line at the bottom of the screen.
    Prompt {
        kind: PromptKind,
        text: String,
    },
    /// The next character names a marker to set.
    SetMark,
    /// The next character names a marker to jump to.
    JumpMark,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    Search,
    Cpus,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Search => "/",
            PromptKind::Cpus => "CPUs (e.g. 0-3,7; empty = all): ",
        }
    }
}

/// Summary pyramids of the lanes and weight series shown, for the selection they were built for.
pub struct Summaries {
    pub sel: MmSel,
    pub observed: Vec<crate::timeline::summary::LanePyramid>,
    pub weight: Option<crate::timeline::summary::MaxPyramid>,
    /// Per model view: its lanes' pyramids and its weight's.
    pub models: Vec<(
        Vec<crate::timeline::summary::LanePyramid>,
        Option<crate::timeline::summary::MaxPyramid>,
    )>,
}

/// Below this many lane segments a frame reads the segments directly (exact and fast enough).
pub const SUMMARY_THRESHOLD: usize = 50_000;

/// Points in time a jump key can reach, beyond what the observed timeline holds (the model
/// layers add tick/resume triggers and scan starts).
#[derive(Clone, Debug, Default)]
pub struct ModelMarks {
    pub ticks: Vec<u64>,
    pub resumes: Vec<u64>,
    pub scans: Vec<u64>,
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
    pub mode: Mode,
    /// The last search and its matching event indices.
    pub search: Option<(String, Vec<u32>)>,
    /// Named markers (`m` + letter): times.
    pub marks: BTreeMap<char, u64>,
    /// A/B range markers: times.
    pub sel_a: Option<u64>,
    pub sel_b: Option<u64>,
    /// CPUs shown (None = all).
    pub cpu_filter: Option<Vec<usize>>,
    /// Where the mouse points: (CPU lane, time).
    pub hover: Option<(Option<usize>, u64)>,
    /// A one-line message for the user (result of the last action).
    pub message: Option<String>,
    pub model_marks: ModelMarks,
    /// The rseq accounting pane, when shown: over the A–B range if set, else the whole capture.
    pub accounting: Option<crate::stats::accounting::Accounting>,
    /// While the capture is still being read.
    pub loading: Option<Loading>,
    /// The window follows the data as it loads until the user moves it.
    pub follow_load: bool,
    /// The process was chosen by cidscope (most active), not by the user.
    pub mm_auto: bool,
    /// A load error after some events arrived: shown, with the events before it kept.
    pub load_error: Option<String>,
    /// A load error before any event arrived: the run ends with it.
    pub fatal: Option<String>,
    /// A live session: following the newest data unless paused.
    pub live: Option<super::live::LiveView>,
    /// CID models shown beside (or instead of) what the capture shows.
    pub models: Vec<super::models::ModelView>,
    /// Whether the observed lanes are shown (a `--compare` list may leave them out).
    pub show_observed: bool,
    /// A teaching demo: narrated steps, play and step.
    pub demo: Option<super::demo::DemoState>,
    /// Per-column summaries for the current selection (big captures only; small ones are
    /// drawn exactly from their segments).
    pub summaries: Option<Summaries>,
    /// The observed cidmask weight of the selected process over time (derived from the lanes
    /// when the selection or the data changes).
    pub weights: Vec<(u64, u16)>,
    weights_stale: bool,
    /// Events loaded when the weights were last rebuilt.
    weights_at: usize,
    /// Models to run once the capture is read: (policies, parameters).
    pub model_request: Option<(
        Vec<crate::model::policies::PolicyKind>,
        crate::model::policies::Params,
    )>,
}

/// A load in progress.
pub struct Loading {
    pub progress: std::sync::Arc<crate::sources::Progress>,
}

/// What the loader thread sends.
pub enum LoadMsg {
    Delta(crate::events::TraceDelta),
    Done(Result<(), String>),
}

/// Narrowest window: 1 µs per column at 200 columns.
pub const MIN_SPAN: u64 = 200;

impl App {
    pub fn new(trace: Trace) -> App {
        let timeline = Timeline::build(&trace);
        Self::with_timeline(trace, timeline)
    }

    pub fn with_timeline(trace: Trace, timeline: Timeline) -> App {
        let mut app = Self::bare(trace, timeline);
        app.refresh_summaries();
        app
    }

    fn bare(trace: Trace, timeline: Timeline) -> App {
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
            mode: Mode::Normal,
            search: None,
            marks: BTreeMap::new(),
            sel_a: None,
            sel_b: None,
            cpu_filter: None,
            hover: None,
            message: None,
            model_marks: ModelMarks::default(),
            accounting: None,
            loading: None,
            follow_load: false,
            mm_auto: true,
            load_error: None,
            fatal: None,
            live: None,
            models: Vec::new(),
            show_observed: true,
            model_request: None,
            demo: None,
            summaries: None,
            weights: Vec::new(),
            weights_stale: false,
            weights_at: 0,
        }
    }

    /// Shows model runs beside the capture (the compare view with more than one).
    pub fn set_models(&mut self, runs: Vec<crate::model::policies::PolicyRun>) {
        let sel = self.selected();
        let n = self.timeline.lanes.len();
        self.models = runs
            .into_iter()
            .map(|r| super::models::ModelView::new(r, sel, n))
            .collect();
        self.refresh_models();
    }

    /// Runs the requested models over the whole capture (once it is read).
    pub fn run_requested_models(&mut self) {
        if let Some((kinds, params)) = self.model_request.take() {
            let runs = crate::model::policies::replay_all(&self.trace, &kinds, &params);
            self.set_models(runs);
        }
    }

    /// Rebuilds the summaries for the current selection (after a load, a selection change or
    /// new models). Nothing is built for small captures or while data still streams in.
    pub fn refresh_summaries(&mut self) {
        use crate::timeline::summary::{LanePyramid, MaxPyramid};
        self.refresh_weights();
        let segs: usize = self.timeline.lanes.iter().map(SegLane::len).sum();
        if segs < SUMMARY_THRESHOLD || self.loading.is_some() || self.live.is_some() {
            self.summaries = None;
            return;
        }
        let sel = self.selected();
        let (origin, end) = (self.timeline.first_ts, self.timeline.last_ts);
        let observed = self
            .timeline
            .lanes
            .iter()
            .map(|l| LanePyramid::build(l, origin, end, |s| self.admits(s)))
            .collect();
        let weight = match sel {
            MmSel::Mm(_) => Some(MaxPyramid::build(&self.weights, origin, end)),
            MmSel::All => None,
        };
        let models = self
            .models
            .iter()
            .map(|m| {
                let admit_slots = m.mm.is_some();
                let lanes = m
                    .lanes
                    .iter()
                    .map(|l| {
                        LanePyramid::build(l, origin, end, |s| {
                            if admit_slots {
                                s.cid().is_some() || s.tid != 0
                            } else {
                                s.tid != 0
                            }
                        })
                    })
                    .collect();
                let w = (!m.weights.is_empty()).then(|| MaxPyramid::build(&m.weights, origin, end));
                (lanes, w)
            })
            .collect();
        self.summaries = Some(Summaries {
            sel,
            observed,
            weight,
            models,
        });
    }

    /// Derives the selected process's weight series from the lanes.
    pub fn refresh_weights(&mut self) {
        self.weights = match self.selected() {
            MmSel::Mm(m) => self
                .timeline
                .weight_series(Some(m))
                .into_iter()
                .nth(m.0 as usize)
                .unwrap_or_default(),
            MmSel::All => Vec::new(),
        };
    }

    /// Follows the selection in the model views and their jump targets.
    fn refresh_models(&mut self) {
        let sel = self.selected();
        let n = self.timeline.lanes.len();
        for m in &mut self.models {
            m.select(sel, n);
        }
        let mut marks = ModelMarks::default();
        if let Some(m) = self.models.first() {
            for (ts, trig) in m.triggers() {
                match trig {
                    crate::model::policies::Trigger::Tick => marks.ticks.push(ts),
                    crate::model::policies::Trigger::Resume => marks.resumes.push(ts),
                }
            }
            marks.scans = m.scan_starts().collect();
            marks.scans.sort_unstable();
        }
        self.model_marks = marks;
        self.refresh_summaries();
    }

    /// An app for a capture that is still to be read: deltas arrive through [`App::on_load`].
    pub fn loading(
        name: &str,
        format: crate::events::Format,
        progress: std::sync::Arc<crate::sources::Progress>,
    ) -> App {
        let mut app = App::with_timeline(
            Trace::new(name, format),
            Timeline::empty(Timeline::DEFAULT_INTERVAL),
        );
        app.loading = Some(Loading { progress });
        app.follow_load = true;
        app
    }

    /// Takes in what the loader read.
    pub fn on_load(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Delta(mut d) => {
                self.trace.apply(&mut d);
                self.timeline.extend(&self.trace);
                self.weights_stale = true;
            }
            LoadMsg::Done(Ok(())) => {
                self.loading = None;
                let n = self.trace.warnings.len();
                self.trace.ensure_sorted();
                if self.trace.warnings.len() > n {
                    // events were reordered: index them again
                    self.timeline = Timeline::build(&self.trace);
                }
                self.trace.events.shrink_to_fit();
                self.timeline.shrink_to_fit();
                self.run_requested_models();
                self.refresh_models();
                if self.trace.events.is_empty() {
                    self.message = Some("the capture holds no events".into());
                }
            }
            LoadMsg::Done(Err(e)) => {
                self.loading = None;
                if self.trace.events.is_empty() {
                    self.fatal = Some(e);
                    self.quit = true;
                } else {
                    self.load_error = Some(format!("{e} (events before it are shown)"));
                }
            }
        }
        self.refresh_mm_list();
        // The series is rebuilt from the whole index: while loading, only each time the trace
        // has doubled (a load of many deltas then costs twice one rebuild, not one per delta).
        let n = self.trace.events.len();
        if self.weights_stale && (self.loading.is_none() || n >= 2 * self.weights_at.max(1 << 16)) {
            self.weights_stale = false;
            self.weights_at = n;
            self.refresh_weights();
        }
        if self.follow_load {
            let (t0, span) = full_window(&self.timeline);
            self.t0 = t0;
            self.span = span;
        }
    }

    /// Demo: shows step `k`, its moment and its window.
    pub fn go_to_step(&mut self, k: usize) {
        let Some(d) = self.demo.as_mut() else {
            return;
        };
        let Some(step) = d.steps.get(k).cloned() else {
            return;
        };
        d.current = k;
        d.playing = false;
        d.last_tick = None;
        self.cursor = self.first_event_at_or_after(step.ts);
        self.span = step.span.max(MIN_SPAN);
        self.t0 = step.ts.saturating_sub(self.span / 3).max(self.min_t0());
    }

    /// Demo, playing: moves the cursor on by `dt_ns` of real time at the demo's speed, and the
    /// narration with it.
    pub fn play(&mut self, dt_ns: u64) {
        let Some(d) = self.demo.as_ref() else {
            return;
        };
        if !d.playing {
            return;
        }
        let advance = (dt_ns as u128 * d.speed as u128 / 1_000_000_000) as u64;
        let target = self.cursor_ts().saturating_add(advance.max(1));
        let i = self.trace.events.partition_point_ts(|t| t <= target);
        let last = self.trace.events.len().saturating_sub(1);
        self.cursor = i.saturating_sub(1).max(self.cursor).min(last);
        let ts = self.cursor_ts();
        if let Some(d) = self.demo.as_mut() {
            // the narration follows the moments the cursor passes
            while d.current + 1 < d.steps.len() && d.steps[d.current + 1].ts <= ts {
                d.current += 1;
            }
            if self.cursor >= last {
                d.playing = false;
            }
        }
        if ts >= self.t1() {
            self.t0 = ts.saturating_sub(self.span / 10);
        }
    }

    /// The time the ruler's `+` offsets count from: the start of the data shown.
    pub fn origin(&self) -> u64 {
        match &self.live {
            Some(l) if l.samples_tl.applied() > 0 => {
                if self.timeline.applied() > 0 {
                    self.timeline.first_ts.min(l.samples_tl.first_ts)
                } else {
                    l.samples_tl.first_ts
                }
            }
            _ => self.timeline.first_ts,
        }
    }

    /// Live: the window ends at the newest data, the cursor on the newest event.
    pub fn follow_newest(&mut self) {
        let last = self
            .timeline
            .last_ts
            .max(self.live.as_ref().map_or(0, |l| l.samples_tl.last_ts));
        let first = self.timeline.first_ts.min(
            self.live
                .as_ref()
                .filter(|l| l.samples_tl.applied() > 0)
                .map_or(u64::MAX, |l| l.samples_tl.first_ts),
        );
        let first = if first == u64::MAX { last } else { first };
        self.cursor = self.trace.events.len().saturating_sub(1);
        // show the last LIVE_WINDOW of data, or all of it while there is less
        let span = super::live::LIVE_WINDOW.max(MIN_SPAN);
        self.span = span;
        self.t0 = last.saturating_sub(span * 9 / 10).max(first.min(last));
    }

    /// Recomputes the process list as data grows, keeping the user's choice.
    pub(crate) fn refresh_mm_list(&mut self) {
        let keep = self.selected();
        self.mm_list = self.timeline.mms_by_activity();
        self.mm_pos = match keep {
            _ if self.mm_auto => usize::from(!self.mm_list.is_empty()),
            MmSel::All => 0,
            MmSel::Mm(m) => self
                .mm_list
                .iter()
                .position(|&x| x == m)
                .map_or(0, |p| p + 1),
        };
        if self.selected() != keep {
            self.weights_stale = true;
            if !self.models.is_empty() {
                self.refresh_models();
            }
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

    fn selected_mm(&self) -> Option<MmId> {
        match self.selected() {
            MmSel::All => None,
            MmSel::Mm(m) => Some(m),
        }
    }

    /// Whether a lane segment belongs to the current selection.
    pub fn admits(&self, s: &Segment) -> bool {
        match self.selected() {
            MmSel::All => s.tid != 0,
            MmSel::Mm(m) => s.mm == m,
        }
    }

    /// CPUs whose lanes are shown.
    pub fn visible_cpus(&self) -> Vec<usize> {
        let n = self
            .timeline
            .lanes
            .len()
            .max(self.live.as_ref().map_or(0, |l| l.samples_tl.lanes.len()))
            .max(self.timeline.ncpus as usize);
        match &self.cpu_filter {
            Some(f) => f.iter().copied().filter(|&c| c < n).collect(),
            None => (0..n).collect(),
        }
    }

    pub fn cursor_event(&self) -> Option<Event> {
        self.trace.events.get(self.cursor)
    }

    pub fn cursor_ts(&self) -> u64 {
        self.cursor_event().map_or(self.t0, |e| e.ts)
    }

    pub fn t1(&self) -> u64 {
        self.t0.saturating_add(self.span)
    }

    /// The A/B range, ordered, when both are set.
    pub fn selection(&self) -> Option<(u64, u64)> {
        match (self.sel_a, self.sel_b) {
            (Some(a), Some(b)) => Some((a.min(b), a.max(b))),
            _ => None,
        }
    }

    pub fn apply(&mut self, action: Action) {
        let n = self.trace.events.len();
        self.message = None;
        if !matches!(
            action,
            Action::ToggleHelp | Action::Quit | Action::ForceQuit
        ) {
            self.follow_load = false;
        }
        if matches!(action, Action::NextMm | Action::PrevMm) {
            self.mm_auto = false;
        }
        match action {
            Action::ForceQuit => self.quit = true,
            Action::Quit if self.show_help => self.show_help = false,
            Action::Quit => self.quit = true,
            Action::ToggleHelp => self.show_help = !self.show_help,
            _ if self.show_help => self.show_help = false,
            Action::StepNext => self.set_cursor((self.cursor + 1).min(n.saturating_sub(1))),
            Action::StepPrev => self.set_cursor(self.cursor.saturating_sub(1)),
            Action::First => self.set_cursor(0),
            Action::Last => self.set_cursor(n.saturating_sub(1)),
            Action::PageForward => {
                if self.t1() <= self.timeline.last_ts {
                    self.t0 += self.span;
                }
                self.cursor = self.first_event_at_or_after(self.t0);
            }
            Action::PageBack => {
                self.t0 = self.t0.saturating_sub(self.span).max(self.min_t0());
                self.cursor = self.first_event_at_or_after(self.t0);
            }
            Action::ZoomIn => self.zoom_at(0.5, self.cursor_ts()),
            Action::ZoomOut => self.zoom_at(2.0, self.cursor_ts()),
            Action::NextMm => {
                self.mm_pos = (self.mm_pos + 1) % (self.mm_list.len() + 1);
                self.refresh_search();
                self.refresh_models();
            }
            Action::PrevMm => {
                let k = self.mm_list.len() + 1;
                self.mm_pos = (self.mm_pos + k - 1) % k;
                self.refresh_search();
                self.refresh_models();
            }
            Action::Search => {
                self.mode = Mode::Prompt {
                    kind: PromptKind::Search,
                    text: String::new(),
                }
            }
            Action::FilterCpus => {
                self.mode = Mode::Prompt {
                    kind: PromptKind::Cpus,
                    text: String::new(),
                }
            }
            Action::SearchNext | Action::SearchPrev => {
                let fwd = action == Action::SearchNext;
                match &self.search {
                    None => self.message = Some("no search yet: press / to search".into()),
                    Some((_, hits)) if hits.is_empty() => {
                        self.message = Some("the last search matched nothing".into())
                    }
                    Some((_, hits)) => {
                        let hits = hits.clone();
                        self.jump_in(&hits, fwd, "match")
                    }
                }
            }
            Action::NextCidChange | Action::PrevCidChange => {
                let mm = self.selected_mm();
                let idx: Vec<u32> = self
                    .timeline
                    .cid_changes
                    .iter()
                    .filter(|(_, m)| mm.is_none_or(|s| s == *m))
                    .map(|&(i, _)| i)
                    .collect();
                self.jump_in(&idx, action == Action::NextCidChange, "CID change");
            }
            Action::NextAlarm | Action::PrevAlarm => {
                let mm = self.selected_mm();
                let ts: Vec<u64> = self
                    .timeline
                    .alarms
                    .iter()
                    .filter(|a| mm.is_none_or(|m| a.mm() == m))
                    .map(|a| a.ts)
                    .collect();
                self.jump_to_time(&ts, action == Action::NextAlarm, "alarm");
            }
            Action::NextLost | Action::PrevLost => {
                let idx: Vec<u32> = self.timeline.lost_at.iter().map(|&i| i as u32).collect();
                self.jump_in(&idx, action == Action::NextLost, "lost-event gap");
            }
            Action::NextTick | Action::PrevTick => {
                let ts = self.model_marks.ticks.clone();
                self.jump_model(&ts, action == Action::NextTick, "tick-triggered compaction");
            }
            Action::NextResume | Action::PrevResume => {
                let ts = self.model_marks.resumes.clone();
                self.jump_model(
                    &ts,
                    action == Action::NextResume,
                    "resume-triggered compaction",
                );
            }
            Action::NextScan | Action::PrevScan => {
                let ts = self.model_marks.scans.clone();
                self.jump_model(&ts, action == Action::NextScan, "scan start");
            }
            Action::SetMark => self.mode = Mode::SetMark,
            Action::JumpMark => {
                if self.marks.is_empty() {
                    self.message = Some("no markers yet: press m and a letter to set one".into());
                } else {
                    self.mode = Mode::JumpMark;
                }
            }
            Action::SetA => {
                self.sel_a = Some(self.cursor_ts());
                self.describe_selection();
            }
            Action::SetB => {
                self.sel_b = Some(self.cursor_ts());
                self.describe_selection();
            }
            Action::ClearSelection => {
                self.sel_a = None;
                self.sel_b = None;
            }
            Action::TogglePause if self.demo.is_some() => {
                if let Some(d) = &mut self.demo {
                    d.playing = !d.playing;
                    d.last_tick = None;
                }
            }
            Action::NextStep | Action::PrevStep | Action::Faster | Action::Slower => {
                match self.demo.as_mut() {
                    None => self.message = Some("this key steps a demo: cidscope demo".into()),
                    Some(d) => match action {
                        Action::Faster => d.speed = (d.speed * 2).min(10_000_000_000),
                        Action::Slower => d.speed = (d.speed / 2).max(1_000),
                        _ => {
                            let n = d.steps.len();
                            let next = if action == Action::NextStep {
                                (d.current + 1).min(n.saturating_sub(1))
                            } else {
                                d.current.saturating_sub(1)
                            };
                            self.go_to_step(next);
                        }
                    },
                }
            }
            Action::TogglePause => match &mut self.live {
                Some(l) => {
                    l.paused = !l.paused;
                    if !l.paused {
                        self.follow_newest();
                    }
                }
                None => self.message = Some("pause is for live sessions (cidscope live)".into()),
            },
            Action::ToggleAccounting => {
                self.accounting = match self.accounting {
                    Some(_) => None,
                    None => Some(self.compute_accounting()),
                };
            }
        }
        if self.accounting.is_some()
            && matches!(action, Action::SetA | Action::SetB | Action::ClearSelection)
        {
            self.accounting = Some(self.compute_accounting());
        }
    }

    fn compute_accounting(&self) -> crate::stats::accounting::Accounting {
        let (i, j) = match self.selection() {
            Some((a, b)) => self.event_range(a, b),
            None => (0, self.trace.events.len()),
        };
        crate::stats::accounting::compute(&self.trace, i, j)
    }

    /// A character typed while a prompt or a marker key is pending. Returns true if consumed.
    pub fn type_char(&mut self, c: char) -> bool {
        match &mut self.mode {
            Mode::Prompt { text, .. } => {
                text.push(c);
                true
            }
            Mode::SetMark => {
                self.mode = Mode::Normal;
                if c.is_ascii_alphanumeric() {
                    let ts = self.cursor_ts();
                    self.marks.insert(c, ts);
                    self.message = Some(format!("marker {c} set"));
                } else {
                    self.message = Some("a marker is named by a letter or digit".into());
                }
                true
            }
            Mode::JumpMark => {
                self.mode = Mode::Normal;
                match self.marks.get(&c).copied() {
                    Some(ts) => {
                        let i = self.first_event_at_or_after(ts);
                        self.set_cursor(i);
                        self.message = Some(format!("at marker {c}"));
                    }
                    None => self.message = Some(format!("no marker {c}")),
                }
                true
            }
            Mode::Normal => false,
        }
    }

    pub fn backspace(&mut self) {
        if let Mode::Prompt { text, .. } = &mut self.mode {
            text.pop();
        }
    }

    pub fn cancel_mode(&mut self) {
        self.mode = Mode::Normal;
    }

    /// Enter in a prompt.
    pub fn submit(&mut self) {
        let Mode::Prompt { kind, text } = std::mem::replace(&mut self.mode, Mode::Normal) else {
            return;
        };
        match kind {
            PromptKind::Search => match Query::parse(&text) {
                Ok(q) => {
                    let hits = search::find(&self.trace, &self.timeline, &q, self.selected_mm());
                    self.search = Some((text, hits.clone()));
                    if hits.is_empty() {
                        self.message = Some("no match".into());
                    } else {
                        self.jump_in(&hits, true, "match");
                    }
                }
                Err(e) => self.message = Some(e),
            },
            PromptKind::Cpus => match parse_cpu_list(&text, self.timeline.lanes.len()) {
                Ok(f) => self.cpu_filter = f,
                Err(e) => self.message = Some(e),
            },
        }
    }

    fn refresh_search(&mut self) {
        if let Some((text, _)) = &self.search
            && let Ok(q) = Query::parse(text)
        {
            let hits = search::find(&self.trace, &self.timeline, &q, self.selected_mm());
            self.search = Some((text.clone(), hits));
        }
    }

    pub fn describe_selection(&mut self) {
        if let Some((a, b)) = self.selection() {
            let (i, j) = self.event_range(a, b);
            self.message = Some(format!("range A–B: {} , {} events", fmt_dur(b - a), j - i));
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
        let mm = self.selected_mm();
        self.timeline
            .cid_changes
            .iter()
            .filter(|&&(k, m)| (k as usize) >= i && (k as usize) < j && mm.is_none_or(|s| s == m))
            .count()
    }

    /// Moves the cursor to the next/previous entry of a sorted list of event indices.
    fn jump_in(&mut self, idx: &[u32], forward: bool, what: &str) {
        let cur = self.cursor as u32;
        let target = if forward {
            idx.get(idx.partition_point(|&i| i <= cur)).copied()
        } else {
            idx.partition_point(|&i| i < cur)
                .checked_sub(1)
                .map(|k| idx[k])
        };
        match target {
            Some(i) => {
                self.set_cursor(i as usize);
                let pos = idx.partition_point(|&k| k < i) + 1;
                self.message = Some(format!("{what} {pos} of {}", idx.len()));
            }
            None if idx.is_empty() => self.message = Some(format!("no {what} here")),
            None => {
                let dir = if forward { "after" } else { "before" };
                self.message = Some(format!("no {what} {dir} the cursor"));
            }
        }
    }

    /// Like `jump_in` for a sorted list of times.
    fn jump_to_time(&mut self, ts: &[u64], forward: bool, what: &str) {
        let idx: Vec<u32> = ts
            .iter()
            .map(|&t| self.first_event_at_or_after(t) as u32)
            .collect();
        self.jump_in(&idx, forward, what);
    }

    fn jump_model(&mut self, ts: &[u64], forward: bool, what: &str) {
        if ts.is_empty() {
            self.message = Some(format!(
                "no {what}: the kernel does not trace them; they come from a CID model (--policy)"
            ));
            return;
        }
        self.jump_to_time(ts, forward, what);
    }

    fn min_t0(&self) -> u64 {
        match &self.live {
            Some(l) if l.samples_tl.applied() > 0 && self.trace.events.is_empty() => {
                l.samples_tl.first_ts
            }
            _ => self.timeline.first_ts,
        }
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

    pub fn set_cursor(&mut self, i: usize) {
        self.cursor = i.min(self.trace.events.len().saturating_sub(1));
        self.follow_cursor();
    }

    /// Keeps the cursor inside the window, moving the window as little as needed.
    pub fn follow_cursor(&mut self) {
        let ts = self.cursor_ts();
        if ts < self.t0 || ts >= self.t1() {
            self.t0 = ts.saturating_sub(self.span / 2).max(self.min_t0());
        }
    }

    /// Zooms by `factor` keeping time `at` at the same place on screen.
    pub fn zoom_at(&mut self, factor: f64, at: u64) {
        let (_, full) = full_window(&self.timeline);
        let new_span = ((self.span as f64 * factor) as u64).clamp(MIN_SPAN, full.max(MIN_SPAN));
        let off = at.saturating_sub(self.t0) as f64 / self.span.max(1) as f64;
        self.span = new_span;
        self.t0 = at
            .saturating_sub((off * new_span as f64) as u64)
            .max(self.min_t0());
        self.follow_cursor();
    }

    /// The event indices of the CID-relevant kinds nearest a time on one CPU (for hover).
    pub fn describe_hover(&self) -> Option<String> {
        let (cpu, ts) = self.hover?;
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
}

/// `0-3,7` → the CPUs; empty → all (None).
pub fn parse_cpu_list(s: &str, ncpus: usize) -> Result<Option<Vec<usize>>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let bad = || format!("CPU list: expected N or N-M, found \"{part}\"");
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().map_err(|_| bad())?,
                b.trim().parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let v = part.parse::<usize>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if a > b || b >= ncpus {
            return Err(format!(
                "CPU list: {part} is outside 0-{}",
                ncpus.saturating_sub(1)
            ));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}

/// Is this event one a user would call a CID event (for the detail pane's emphasis)?
pub fn is_cid_event(e: &Event) -> bool {
    matches!(e.kind, EventKind::RseqUpdate { .. })
}

/// The window showing the whole capture.
fn full_window(tl: &Timeline) -> (u64, u64) {
    let span = tl.last_ts.saturating_sub(tl.first_ts);
    // A little room after the last event so it is drawn.
    (tl.first_ts, span.saturating_add(span / 100).max(MIN_SPAN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    fn app() -> App {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              a-1 [000] ....  2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n\
              b-2 [001] ....  2.500000: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n\
              a-1 [000] ....  3.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n",
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
        assert_eq!(a.cursor, 3);
        assert!(a.cursor_ts() >= a.t0 && a.cursor_ts() < a.t1());
        a.apply(Action::StepNext);
        assert_eq!(a.cursor, 3);
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
    fn search_and_jumps() {
        let mut a = app();
        a.apply(Action::Search);
        for c in "tid:2".chars() {
            assert!(a.type_char(c));
        }
        a.submit();
        assert_eq!(a.cursor, 2);
        a.apply(Action::SearchNext);
        assert_eq!(a.message.as_deref(), Some("no match after the cursor"));
        a.apply(Action::First);
        a.apply(Action::NextCidChange);
        assert_eq!(a.cursor, 1, "task 1 went 0 -> 1 at event 1");
        a.apply(Action::NextCidChange);
        assert_eq!(a.cursor, 2, "task 2's first report counts as a change");
        a.apply(Action::NextCidChange);
        assert_eq!(a.cursor, 2);
        a.apply(Action::PrevCidChange);
        assert_eq!(a.cursor, 1);
        a.apply(Action::NextTick);
        assert!(a.message.as_deref().unwrap_or("").contains("--policy"));
        a.apply(Action::NextLost);
        assert_eq!(a.message.as_deref(), Some("no lost-event gap here"));
    }

    #[test]
    fn markers_and_range() {
        let mut a = app();
        a.apply(Action::SetMark);
        assert!(a.type_char('k'));
        a.apply(Action::Last);
        a.apply(Action::SetA);
        a.apply(Action::First);
        a.apply(Action::SetB);
        assert_eq!(a.selection(), Some((1_000_000_000, 3_000_000_000)));
        assert_eq!(a.cid_changes_in(1_000_000_000, 3_000_000_000), 3);
        a.apply(Action::Last);
        a.apply(Action::JumpMark);
        assert!(a.type_char('k'));
        assert_eq!(a.cursor, 0);
        a.apply(Action::JumpMark);
        a.type_char('z');
        assert_eq!(a.message.as_deref(), Some("no marker z"));
        a.apply(Action::ClearSelection);
        assert_eq!(a.selection(), None);
    }

    #[test]
    fn cpu_list_parsing() {
        assert_eq!(parse_cpu_list("", 4), Ok(None));
        assert_eq!(parse_cpu_list("0-1, 3", 4), Ok(Some(vec![0, 1, 3])));
        assert!(parse_cpu_list("5", 4).is_err());
        assert!(parse_cpu_list("x", 4).is_err());
        let mut a = app();
        a.apply(Action::FilterCpus);
        a.type_char('1');
        a.submit();
        assert_eq!(a.visible_cpus(), vec![1]);
    }

    #[test]
    fn streaming_deltas_build_the_same_view_as_a_whole_load() {
        use crate::sources::{Progress, open};
        let path = std::path::Path::new("traces/hackbench-pipe.ftrace.txt");
        let whole = App::new(crate::sources::load(path, &LoadOptions::default()).unwrap());
        let opened = open(path, &LoadOptions::default()).unwrap();
        let mut app = App::loading(&opened.name, opened.format, Default::default());
        let opts = LoadOptions {
            segment_bytes: Some(100_000),
            ..Default::default()
        };
        let mut deltas = Vec::new();
        opened
            .stream(&opts, &mut |d| {
                deltas.push(std::mem::take(d));
                true
            })
            .unwrap();
        assert!(deltas.len() > 10);
        for d in deltas {
            app.on_load(LoadMsg::Delta(d));
        }
        app.on_load(LoadMsg::Done(Ok(())));
        assert!(app.loading.is_none());
        assert_eq!(app.trace.events, whole.trace.events);
        assert_eq!(app.timeline.lanes, whole.timeline.lanes);
        assert_eq!(
            app.timeline.weight_series(None),
            whole.timeline.weight_series(None)
        );
        assert_eq!(app.weights, whole.weights);
        assert_eq!(app.mm_list, whole.mm_list);
        assert_eq!(app.selected(), whole.selected());
        assert_eq!((app.t0, app.span), (whole.t0, whole.span));
        let _ = Progress::default();
    }

    #[test]
    fn a_load_error_before_any_event_ends_the_run() {
        let mut app = App::loading("x", crate::sources::formats::FTRACE, Default::default());
        app.on_load(LoadMsg::Done(Err("x:3: expected ...".into())));
        assert!(app.quit);
        assert_eq!(app.fatal.as_deref(), Some("x:3: expected ..."));
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
