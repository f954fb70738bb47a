//! A live session: the workload and/or the attached tracepoints, run by one capture thread that
//! merges records from all CPUs in time order into a growing [`Trace`] (format `live`).
//!
//! The capture never waits for its consumer: the consumer's [`LiveSession::poll`] copies what
//! arrived since its last call under a short lock. Bounded buffers drop and count: the kernel
//! rings (`lost_events`, as [`EventKind::Lost`] markers), the sample queue of the workload
//! (`samples_dropped`) and the session's event cap (`events_dropped`).
//!
//! ```no_run
//! use cidscope::sources::live::{LiveOptions, LiveSession, Scope, WorkloadSpec};
//! let opts = LiveOptions {
//!     workload: Some(WorkloadSpec::default_for(2)),
//!     attach: Some(Scope::Process(std::process::id())),
//!     ..LiveOptions::default()
//! };
//! let mut s = LiveSession::start(opts)?;
//! let mut trace = s.empty_trace();
//! loop {
//!     let batch = s.poll(); // never blocks
//!     batch.apply_to(&mut trace); // events in time order, strings and tasks kept in sync
//!     // ... draw `trace` and batch.samples; show s.counters() in a status line ...
//!     if s.is_finished() { break; }
//!     std::thread::sleep(std::time::Duration::from_millis(50));
//! }
//! let capture = s.stop()?; // the whole session: capture.trace, capture.samples
//! # Ok::<(), cidscope::sources::live::LiveError>(())
//! ```

use super::attach::{Attach, AttachOptions, Scope};
use super::capture::{Capture, Pace};
use super::filter::Filter;
use super::rseq_area::Registration;
use super::spec::WorkloadSpec;
use super::store::{Chunked, Shared, Store};
use super::workload::Workload;
use super::{LiveError, RseqSample};
use crate::events::{Event, EventAux, Origin, StrId, Strings, TaskMeta, Tid, Trace};
use crate::sources::sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What to run.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Threads of cidscope's own that report CIDs from their rseq areas.
    pub workload: Option<WorkloadSpec>,
    /// Tracepoints to attach, and whose events to keep.
    pub attach: Option<Scope>,
    /// Stop capturing by itself after this long ([`LiveSession::is_finished`] turns true).
    pub duration: Option<Duration>,
    /// How often the capture thread wakes up when the rings stay below their watermark.
    pub poll_interval: Duration,
    /// Ring buffer pages per CPU (power of two; 1024 = 4 MiB).
    pub buffer_pages: usize,
    /// The session keeps at most this many events; later ones are counted in `events_dropped`.
    pub max_events: usize,
    /// Bound of the workload's sample queue.
    pub sample_queue: usize,
    /// Mount tracefs when missing (only done as root).
    pub mount_tracefs: bool,
    /// Run the capture thread as SCHED_FIFO priority 1 when attached (like `perf record -r 1`;
    /// needs root or CAP_SYS_NICE): on a saturated machine a reader at normal priority can wait
    /// hundreds of ms for a CPU while the rings overflow. It sleeps in poll(2) between reads.
    pub capture_realtime: bool,
    /// Nice value for the capture thread when it is not realtime (applied when permitted).
    /// `None` leaves the default.
    pub capture_nice: Option<i32>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            workload: None,
            attach: None,
            duration: None,
            poll_interval: Duration::from_millis(20),
            buffer_pages: 1024,
            max_events: 20_000_000,
            sample_queue: 1 << 16,
            mount_tracefs: true,
            capture_realtime: true,
            capture_nice: Some(-10),
        }
    }
}

/// Counters for a status line; cheap to read at any time.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveCounters {
    /// Since the session started (until it finished).
    pub duration_ns: u64,
    /// Events kept in the session.
    pub events: u64,
    /// Events decoded before the process filter.
    pub events_seen: u64,
    /// Events per second over the last second (of `events_seen`).
    pub event_rate: f64,
    /// Events the kernel dropped (PERF_RECORD_LOST).
    pub lost_events: u64,
    pub rseq_samples: u64,
    /// Samples dropped because the workload's queue was full.
    pub samples_dropped: u64,
    /// Events dropped because the session reached `max_events`.
    pub events_dropped: u64,
    /// Records that did not decode.
    pub decode_errors: u64,
    /// CPU time of the whole process so far (capture, workload, consumer).
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
    pub finished: bool,
}

/// What arrived since the previous [`LiveSession::poll`].
#[derive(Clone, Debug, Default)]
pub struct LiveBatch {
    /// Canonical events, time-ordered and after every event of earlier batches.
    pub events: Vec<Event>,
    /// rseq-area samples in arrival order (roughly time-ordered).
    pub samples: Vec<RseqSample>,
    /// Strings interned since the last batch, in id order (ids continue the previous batch's).
    pub new_strings: Vec<Vec<u8>>,
    /// Tasks first seen or updated.
    pub tasks: Vec<(Tid, TaskMeta)>,
    pub counters: LiveCounters,
}

impl LiveBatch {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.samples.is_empty() && self.tasks.is_empty()
    }

    /// Appends the batch to `trace`, a trace made by [`LiveSession::empty_trace`] and fed only by
    /// this session's batches (so string ids line up).
    pub fn apply_to(&self, trace: &mut Trace) {
        for s in &self.new_strings {
            trace.strings.intern(s);
        }
        for &(tid, meta) in &self.tasks {
            trace.tasks.insert(tid, meta);
        }
        trace.events.extend(&self.events);
    }
}

/// The whole session (from [`LiveSession::stop`]).
#[derive(Clone, Debug)]
pub struct LiveCapture {
    /// Canonical events, format `live`. Empty when nothing was attached.
    pub trace: Trace,
    /// One per event of `trace`: what its ftrace line prints beyond the event.
    pub aux: Vec<EventAux>,
    /// rseq-area samples sorted by time.
    pub samples: Vec<RseqSample>,
    pub counters: LiveCounters,
    /// This process (the workload's threads belong to it).
    pub pid: u32,
    pub scope: Option<Scope>,
    pub workload: Option<WorkloadSpec>,
    pub registration: Option<Registration>,
    /// CLOCK_MONOTONIC at start.
    pub started_ns: u64,
    /// Tracepoints attached.
    pub attached_events: Vec<String>,
    /// CPUs with a ring buffer.
    pub cpus: Vec<u16>,
    /// Possible CPUs: the bound of every CID.
    pub ncpus: u32,
}

/// What arrived since a [`LiveTap`]'s previous poll: events with their aux, and the strings and
/// tasks they need.
#[derive(Clone, Debug, Default)]
pub struct TapBatch {
    pub events: Vec<Event>,
    /// One per event.
    pub aux: Vec<EventAux>,
    /// Strings interned since the last batch, in id order.
    pub new_strings: Vec<Vec<u8>>,
    pub tasks: Vec<(Tid, TaskMeta)>,
}

impl TapBatch {
    /// Appends the batch's strings and tasks to `trace` (fed only by this tap's batches).
    pub fn apply_meta(&self, trace: &mut Trace) {
        for s in &self.new_strings {
            trace.strings.intern(s);
        }
        for &(tid, meta) in &self.tasks {
            trace.tasks.insert(tid, meta);
        }
    }
}

/// A second reader of a session, with cursors of its own, that can live on another thread
/// (a recorder writing the capture as it arrives while the TUI polls the session).
pub struct LiveTap {
    shared: Arc<Shared>,
    ev_cur: usize,
    str_cur: usize,
    task_cur: usize,
}

impl LiveTap {
    /// What arrived since the previous call (never blocks on the capture).
    pub fn poll(&mut self) -> TapBatch {
        let s = self.shared.lock();
        let events = s.events.copy_from(self.ev_cur);
        let aux = s.aux.copy_from(self.ev_cur);
        let nstr = s.trace.strings.len();
        let new_strings = (self.str_cur.max(1)..nstr)
            .map(|i| s.trace.strings.get(StrId(i as u32)).to_vec())
            .collect();
        let mut seen = rustc_hash::FxHashSet::default();
        let tasks = s
            .task_log
            .get(self.task_cur..)
            .unwrap_or(&[])
            .iter()
            .filter(|t| seen.insert(**t))
            .filter_map(|t| s.trace.tasks.get(t).map(|m| (*t, *m)))
            .collect();
        self.ev_cur += events.len();
        self.str_cur = nstr;
        self.task_cur = s.task_log.len();
        TapBatch {
            events,
            aux,
            new_strings,
            tasks,
        }
    }

    /// Events read so far.
    pub fn events_read(&self) -> usize {
        self.ev_cur
    }

    /// The CPU count the session's trace states (possible CPUs).
    pub fn ncpus(&self) -> Option<u32> {
        self.shared.lock().trace.ncpus_hint
    }
}

/// A running live session.
pub struct LiveSession {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    pid: u32,
    scope: Option<Scope>,
    workload: Option<WorkloadSpec>,
    registration: Option<Registration>,
    attached_events: Vec<String>,
    cpus: Vec<u16>,
    ncpus: u32,
    // poll cursors
    ev_cur: usize,
    sample_cur: usize,
    str_cur: usize,
    task_cur: usize,
}

/// The warning code of a tracefs mount cidscope made itself (told at the start, undone at the end).
pub const TRACEFS_MOUNTED: &str = "tracefs-mounted";

impl LiveSession {
    /// Attaches (if asked), then starts the workload (if asked), then the capture thread.
    /// Errors (privileges, tracefs, a bad kernel) come back here, before anything runs.
    pub fn start(opts: LiveOptions) -> Result<LiveSession, LiveError> {
        let pid = std::process::id();
        let ncpus = super::possible_cpus();
        // Opened here (so errors come back to the caller) but enabled by the capture thread, so
        // nothing is recorded before a reader runs.
        let mut strings = Strings::new();
        let (attach, filter) = match opts.attach {
            Some(scope) => {
                let a = Attach::open(
                    &AttachOptions {
                        buffer_pages: opts.buffer_pages,
                        mount_tracefs: opts.mount_tracefs,
                    },
                    &mut strings,
                )?;
                (Some(a), Some(Filter::new(scope)))
            }
            None => (None, None),
        };
        let mut trace = Trace::new(
            match opts.attach {
                Some(s) => format!("live: {}", s.describe()),
                None => format!("live: workload of process {pid}"),
            },
            Origin::Live,
        );
        trace.ncpus_hint = Some(ncpus);
        if let Some(a) = &attach {
            if let Some(m) = &a.mounted {
                trace.warn(TRACEFS_MOUNTED, m.notice());
            }
            for w in &a.warnings {
                trace.warn("attach", w.clone());
            }
        }
        if opts.attach.is_none() {
            trace.warn(
                "workload-only",
                "no tracepoints attached: only the CIDs read from rseq areas are known; \
                 trace-based lanes need attach privileges (root, or CAP_PERFMON with tracefs access)",
            );
        }
        let attached_events = attach
            .as_ref()
            .map(|a| a.events.clone())
            .unwrap_or_default();
        let cpus = attach.as_ref().map(|a| a.cpus()).unwrap_or_default();
        let shared = Arc::new(Shared {
            store: Mutex::new(Store {
                trace,
                events: Chunked::new(),
                aux: Chunked::new(),
                samples: Vec::new(),
                task_log: Vec::new(),
            }),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            started_ns: AtomicU64::new(sys::monotonic_ns()),
            ended_ns: AtomicU64::new(0),
            events: AtomicU64::new(0),
            events_seen: AtomicU64::new(0),
            rate_bits: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            samples: AtomicU64::new(0),
            samples_dropped: AtomicU64::new(0),
            events_dropped: AtomicU64::new(0),
            decode_errors: AtomicU64::new(0),
            error: Mutex::new(None),
            handoff: Mutex::new(None),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let pace = Pace {
            poll_interval: opts.poll_interval,
            duration: opts.duration,
            nice: opts.attach.and(opts.capture_nice),
            realtime: opts.attach.is_some() && opts.capture_realtime,
            max_events: opts.max_events,
        };
        let mut cap = Capture::new(shared.clone(), attach, filter, strings, &pace);
        let thread = std::thread::Builder::new()
            .name("cidscope-capture".into())
            .spawn(move || cap.run(ready_tx))
            .map_err(|e| LiveError::io("spawning the capture thread", e))?;
        let mut session = LiveSession {
            shared,
            thread: Some(thread),
            pid,
            scope: opts.attach,
            workload: opts.workload.clone(),
            registration: None,
            attached_events,
            cpus,
            ncpus,
            ev_cur: 0,
            sample_cur: 0,
            str_cur: 0,
            task_cur: 0,
        };
        // Wait until the capture thread recorded (or failed to); dropping `session` on an error
        // stops and joins it.
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(LiveError::Unsupported(
                    "the capture thread ended before it started recording".into(),
                ));
            }
        }
        if let Some(spec) = &opts.workload {
            let w = Workload::start(spec, opts.sample_queue)?;
            session.registration = Some(w.registration);
            let mut slot = session
                .shared
                .handoff
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            *slot = Some(w);
        }
        Ok(session)
    }

    /// A reader of the session's events with cursors of its own, from the first event.
    pub fn tap(&self) -> LiveTap {
        LiveTap {
            shared: self.shared.clone(),
            ev_cur: 0,
            str_cur: 0,
            task_cur: 0,
        }
    }

    /// An empty trace for [`LiveBatch::apply_to`].
    pub fn empty_trace(&self) -> Trace {
        let s = self.shared.lock();
        let mut t = Trace::new(s.trace.path.clone(), Origin::Live);
        t.ncpus_hint = s.trace.ncpus_hint;
        t.warnings = s.trace.warnings.clone();
        t
    }

    /// What arrived since the previous call. Never blocks on the capture (it only takes the
    /// session lock long enough to copy).
    pub fn poll(&mut self) -> LiveBatch {
        let counters = self.counters();
        let s = self.shared.lock();
        let events = s.events.copy_from(self.ev_cur);
        let samples = s.samples.get(self.sample_cur..).unwrap_or(&[]).to_vec();
        let nstr = s.trace.strings.len();
        let new_strings = (self.str_cur.max(1)..nstr)
            .map(|i| s.trace.strings.get(StrId(i as u32)).to_vec())
            .collect();
        let mut seen = rustc_hash::FxHashSet::default();
        let tasks = s
            .task_log
            .get(self.task_cur..)
            .unwrap_or(&[])
            .iter()
            .filter(|t| seen.insert(**t))
            .filter_map(|t| s.trace.tasks.get(t).map(|m| (*t, *m)))
            .collect();
        self.ev_cur = s.events.len;
        self.sample_cur = s.samples.len();
        self.str_cur = nstr;
        self.task_cur = s.task_log.len();
        LiveBatch {
            events,
            samples,
            new_strings,
            tasks,
            counters,
        }
    }

    pub fn counters(&self) -> LiveCounters {
        let sh = &self.shared;
        let finished = sh.finished.load(Ordering::Acquire);
        let end = if finished {
            sh.ended_ns.load(Ordering::Relaxed)
        } else {
            sys::monotonic_ns()
        };
        let (u, s) = sys::rusage_self();
        LiveCounters {
            duration_ns: end.saturating_sub(sh.started_ns.load(Ordering::Relaxed)),
            events: sh.events.load(Ordering::Relaxed),
            events_seen: sh.events_seen.load(Ordering::Relaxed),
            event_rate: f64::from_bits(sh.rate_bits.load(Ordering::Relaxed)),
            lost_events: sh.lost.load(Ordering::Relaxed),
            rseq_samples: sh.samples.load(Ordering::Relaxed),
            samples_dropped: sh.samples_dropped.load(Ordering::Relaxed),
            events_dropped: sh.events_dropped.load(Ordering::Relaxed),
            decode_errors: sh.decode_errors.load(Ordering::Relaxed),
            cpu_user_ns: u,
            cpu_sys_ns: s,
            finished,
        }
    }

    /// True once the capture stopped by itself (duration reached or an error).
    pub fn is_finished(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire)
    }

    fn capture_from(
        &self,
        trace: Trace,
        aux: Vec<EventAux>,
        mut samples: Vec<RseqSample>,
        counters: LiveCounters,
    ) -> LiveCapture {
        samples.sort_by_key(|s| s.ts);
        LiveCapture {
            trace,
            aux,
            samples,
            counters,
            pid: self.pid,
            scope: self.scope,
            workload: self.workload.clone(),
            registration: self.registration,
            started_ns: self.shared.started_ns.load(Ordering::Relaxed),
            attached_events: self.attached_events.clone(),
            cpus: self.cpus.clone(),
            ncpus: self.ncpus,
        }
    }

    /// Stops the workload and the capture, drains what is left and returns the whole session.
    pub fn stop(mut self) -> Result<LiveCapture, LiveError> {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            return Err(LiveError::Unsupported(
                "the capture thread panicked; the session is incomplete".into(),
            ));
        }
        // A workload handed over after the capture already ended (a very short duration).
        let late = self.shared.handoff.lock().ok().and_then(|mut w| w.take());
        if let Some(w) = late {
            let mut samples = Vec::new();
            let (dropped, _) = w.stop(&mut samples);
            self.shared
                .samples_dropped
                .fetch_add(dropped, Ordering::Relaxed);
            let mut s = self.shared.lock();
            s.samples.extend(samples);
            let n = s.samples.len() as u64;
            self.shared.samples.store(n, Ordering::Relaxed);
        }
        if let Some(e) = self.shared.error.lock().ok().and_then(|mut e| e.take()) {
            let mut s = self.shared.lock();
            s.trace.warn("capture-error", e);
        }
        let counters = self.counters();
        let mut s = self.shared.lock();
        let mut trace = std::mem::replace(&mut s.trace, Trace::new("", Origin::Live));
        trace.events = s.events.copy_from(0).into();
        let aux = s.aux.copy_from(0);
        s.events = Chunked::new();
        s.aux = Chunked::new();
        let samples = std::mem::take(&mut s.samples);
        drop(s);
        Ok(self.capture_from(trace, aux, samples, counters))
    }
}

impl Drop for LiveSession {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_only_session_streams_samples_in_batches() {
        let opts = LiveOptions {
            workload: Some(WorkloadSpec::parse("hog:2,churn:200/s", 2).expect("spec")),
            duration: Some(Duration::from_millis(300)),
            ..LiveOptions::default()
        };
        let mut s = match LiveSession::start(opts) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skip: {e}");
                return;
            }
        };
        let mut trace = s.empty_trace();
        let mut samples = 0;
        while !s.is_finished() {
            let b = s.poll();
            b.apply_to(&mut trace);
            samples += b.samples.len();
            std::thread::sleep(Duration::from_millis(30));
        }
        let cap = s.stop().expect("stops");
        assert!(cap.samples.len() >= samples);
        assert!(cap.samples.len() >= 3, "{}", cap.samples.len());
        assert!(cap.samples.windows(2).all(|w| w[0].ts <= w[1].ts));
        assert!(cap.trace.events.is_empty());
        assert!(cap.counters.finished);
        assert!(trace.warnings.iter().any(|w| w.code == "workload-only"));
    }
}
