//! The live TUI: a [`LiveSession`] feeds the same app as a replay. The view follows the newest
//! data; space pauses the view while the capture goes on; after a pause or the end, the whole
//! session scrubs like a replay. The CIDs the workload's threads read from their own rseq
//! areas get their own lanes, under the lanes of the kernel's rseq_update events.

use super::app::App;
use super::{UiOptions, run_app};
use crate::events::{Event, EventKind, Origin, TaskMeta, Trace};
use crate::sources::live::{LiveCapture, LiveCounters, LiveSession, RseqSample};
use crate::timeline::Timeline;

/// How much time the view shows while it follows a live session.
pub const LIVE_WINDOW: u64 = 2_000_000_000;

/// rseq-area samples are committed once the newest sample is this much younger, so that
/// samples arriving slightly out of order from different threads still land in time order.
const SAMPLE_SLACK_NS: u64 = 20_000_000;

pub struct LiveView {
    pub paused: bool,
    pub finished: bool,
    pub attached: bool,
    pub counters: LiveCounters,
    /// The samples as rseq_update events of their threads (one trace, indexed like a capture).
    pub samples: Trace,
    pub samples_tl: Timeline,
    pending: Vec<RseqSample>,
    /// Samples that arrived after newer ones were committed (their time was raised).
    pub late_samples: u64,
    /// Weight of the CIDs the threads hold, from the samples (the process is mm 0 there).
    pub weights: Vec<(u64, u16)>,
}

impl LiveView {
    pub fn new(pid: u32, attached: bool) -> LiveView {
        LiveView {
            paused: false,
            finished: false,
            attached,
            counters: LiveCounters::default(),
            samples: Trace::new(format!("rseq areas of process {pid}"), Origin::Live),
            samples_tl: Timeline::empty(Timeline::DEFAULT_INTERVAL),
            pending: Vec::new(),
            late_samples: 0,
            weights: Vec::new(),
        }
    }

    /// Takes in new samples; commits those old enough (all of them once the session ended).
    pub fn add_samples(
        &mut self,
        new: &[RseqSample],
        names: &Trace,
        pid: u32,
        ncpus: u32,
        all: bool,
    ) {
        self.pending.extend_from_slice(new);
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_by_key(|s| s.ts);
        let newest = self.pending.last().map_or(0, |s| s.ts);
        let cut = if all {
            self.pending.len()
        } else {
            self.pending
                .partition_point(|s| s.ts + SAMPLE_SLACK_NS <= newest)
        };
        if cut == 0 {
            return;
        }
        let mut last = self.samples.events.last().map_or(0, |e| e.ts);
        for s in self.pending.drain(..cut) {
            let ts = if s.ts < last {
                self.late_samples += 1;
                last
            } else {
                s.ts
            };
            last = ts;
            if !self.samples.tasks.contains_key(&s.tid) {
                // the thread's name from the kernel trace when attached, else from /proc (the
                // workload's threads are this process's own)
                let proc_name = std::fs::read(format!("/proc/self/task/{}/comm", s.tid))
                    .ok()
                    .map(|mut b| {
                        b.retain(|&c| c != b'\n');
                        b
                    });
                let name = match names.tasks.get(&s.tid) {
                    Some(m) => names.strings.get(m.comm).to_vec(),
                    None => proc_name.unwrap_or_else(|| b"cidscope-live".to_vec()),
                };
                let comm = self.samples.strings.intern(&name);
                self.samples.tasks.insert(
                    s.tid,
                    TaskMeta {
                        tgid: Some(pid),
                        comm,
                    },
                );
            }
            self.samples.events.push(Event {
                ts,
                tid: s.tid,
                cpu: s.cpu,
                kind: EventKind::RseqUpdate {
                    cpu_id: s.cpu as i32,
                    node_id: 0,
                    mm_cid: s.cid,
                },
            });
        }
        if self.samples.ncpus_hint.is_none() {
            self.samples.ncpus_hint = Some(ncpus);
        }
        self.samples_tl.extend(&self.samples);
        self.weights = self
            .samples_tl
            .weight_series(Some(crate::model::MmId(0)))
            .into_iter()
            .next()
            .unwrap_or_default();
    }
}

/// Runs the TUI on a live session until the user quits; returns the whole capture.
pub fn run_live(
    mut session: LiveSession,
    opts: UiOptions,
    pid: u32,
    attached: bool,
    ncpus: u32,
) -> Result<LiveCapture, String> {
    let mut trace = session.empty_trace();
    if trace.ncpus_hint.is_none() {
        trace.ncpus_hint = Some(ncpus);
    }
    let mut app = App::with_timeline(trace, Timeline::empty(Timeline::DEFAULT_INTERVAL));
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    app.live = Some(LiveView::new(pid, attached));
    let app = run_app(app, &mut |app| {
        if app.live.as_ref().is_some_and(|l| l.finished) {
            return;
        }
        let batch = session.poll();
        let finished = session.is_finished();
        batch.apply_to(&mut app.trace);
        app.timeline.extend(&app.trace);
        let Some(live) = app.live.as_mut() else {
            return;
        };
        live.counters = batch.counters;
        live.add_samples(&batch.samples, &app.trace, pid, ncpus, finished);
        if finished {
            live.finished = true;
            live.paused = true;
            app.message = Some(format!(
                "the session ended after {}: scrub it like a replay",
                crate::events::fmt_dur(live.counters.duration_ns)
            ));
        }
        let paused = live.paused;
        app.refresh_mm_list();
        if !paused {
            app.follow_newest();
        }
    })?;
    drop(app);
    session.stop().map_err(|e| e.to_string())
}
