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

use super::attach::{Attach, AttachOptions, KeepAll, Scope, Staged};
use super::filter::Filter;
use super::rseq_area::Registration;
use super::spec::WorkloadSpec;
use super::sys;
use super::workload::Workload;
use super::{EventAux, LiveError, RseqSample};
use crate::events::{Event, EventKind, Origin, StrId, Strings, TID_UNKNOWN, TaskMeta, Tid, Trace};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// The whole session (from [`LiveSession::stop`] or a [`LiveSession::snapshot`]).
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

/// An append-only sequence in fixed-size chunks: appending never moves what is stored, so the
/// capture never stalls on a reallocation (copying a large Vec and faulting in its new pages
/// takes tens of ms, long enough for a busy ring buffer to overflow).
struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T: Copy> Chunked<T> {
    const CHUNK: usize = 1 << 18;

    fn new() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }

    fn extend(&mut self, mut items: &[T]) {
        while !items.is_empty() {
            if self.chunks.last().is_none_or(|c| c.len() == Self::CHUNK) {
                self.chunks.push(Vec::with_capacity(Self::CHUNK));
            }
            let Some(last) = self.chunks.last_mut() else {
                return;
            };
            let n = (Self::CHUNK - last.len()).min(items.len());
            last.extend_from_slice(&items[..n]);
            items = &items[n..];
            self.len += n;
        }
    }

    /// Copies items `start..` into one Vec.
    fn copy_from(&self, start: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len.saturating_sub(start));
        let mut skip = start;
        for c in &self.chunks {
            if skip >= c.len() {
                skip -= c.len();
                continue;
            }
            out.extend_from_slice(&c[skip..]);
            skip = 0;
        }
        out
    }
}

struct Store {
    /// Strings, tasks and warnings; its events live in `events` until the trace is assembled.
    trace: Trace,
    events: Chunked<Event>,
    aux: Chunked<EventAux>,
    samples: Vec<RseqSample>,
    /// Tids whose TaskMeta was inserted or changed, in order (for batches).
    task_log: Vec<Tid>,
}

struct Shared {
    store: Mutex<Store>,
    stop: AtomicBool,
    finished: AtomicBool,
    started_ns: AtomicU64,
    ended_ns: AtomicU64,
    events: AtomicU64,
    events_seen: AtomicU64,
    rate_bits: AtomicU64,
    lost: AtomicU64,
    samples: AtomicU64,
    samples_dropped: AtomicU64,
    events_dropped: AtomicU64,
    decode_errors: AtomicU64,
    error: Mutex<Option<String>>,
    /// The workload, started after recording began, waiting for the capture thread to take it.
    handoff: Mutex<Option<Workload>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves consistent data (appends only): keep going.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
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
        let mut cap = Capture {
            shared: shared.clone(),
            attach,
            filter,
            workload: None,
            strings,
            synced_strings: 1,
            known: FxHashMap::default(),
            comms: FxHashMap::default(),
            pending: Vec::new(),
            fresh: Vec::new(),
            new_samples: Vec::new(),
            rate_window: std::collections::VecDeque::new(),
            seen: 0,
            poll_ms: opts.poll_interval.as_millis().clamp(1, 1000) as i32,
            duration_ns: opts.duration.map(|d| d.as_nanos() as u64),
            deadline: None,
            nice: opts.attach.and(opts.capture_nice),
            realtime: opts.attach.is_some() && opts.capture_realtime,
            last_ts: 0,
            late: 0,
            max_events: opts.max_events,
            idle_tid_comm: StrId(0),
        };
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

    /// Copy of the whole session so far (capture continues).
    pub fn snapshot(&self) -> LiveCapture {
        let counters = self.counters();
        let s = self.shared.lock();
        let mut trace = s.trace.clone();
        trace.events = s.events.copy_from(0).into();
        self.capture_from(trace, s.aux.copy_from(0), s.samples.clone(), counters)
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

/// Records may reach a ring up to this long after their timestamp was taken (an event in flight
/// on another CPU while the rings are read): only older records are merged.
const MERGE_SLACK_NS: u64 = 5_000_000;

/// The capture thread's state.
struct Capture {
    shared: Arc<Shared>,
    attach: Option<Attach>,
    filter: Option<Filter>,
    workload: Option<Workload>,
    /// Master string table (the store's copy is synced after each round).
    strings: Strings,
    synced_strings: usize,
    known: FxHashMap<Tid, TaskMeta>,
    /// Latest comm a record named for a task.
    comms: FxHashMap<Tid, StrId>,
    pending: Vec<Staged>,
    fresh: Vec<Staged>,
    new_samples: Vec<RseqSample>,
    rate_window: std::collections::VecDeque<(u64, u64)>,
    seen: u64,
    poll_ms: i32,
    duration_ns: Option<u64>,
    deadline: Option<u64>,
    max_events: usize,
    idle_tid_comm: StrId,
    nice: Option<i32>,
    realtime: bool,
    /// Timestamp of the last merged record, and records that arrived after it was passed.
    last_ts: u64,
    late: u64,
}

impl Capture {
    fn run(&mut self, ready: std::sync::mpsc::SyncSender<Result<(), LiveError>>) {
        self.idle_tid_comm = self.strings.intern(b"<idle>");
        // Best effort: without the right to raise priority the capture runs at the default.
        let rt = self.realtime && sys::set_thread_fifo(1).is_ok();
        if !rt && let Some(n) = self.nice {
            let _ = sys::set_thread_nice(n);
        }
        if let Some(a) = &self.attach
            && let Err(e) = a.enable()
        {
            self.attach = None;
            self.shared.finished.store(true, Ordering::Release);
            let _ = ready.send(Err(e));
            return;
        }
        if let Some(f) = &mut self.filter {
            // Threads created between the first listing and the enable.
            f.refresh();
        }
        // The session starts when recording does (opening the events takes a while).
        let started = sys::monotonic_ns();
        self.shared.started_ns.store(started, Ordering::Relaxed);
        self.deadline = self.duration_ns.map(|d| started + d);
        let _ = ready.send(Ok(()));
        loop {
            let now = sys::monotonic_ns();
            let due = self.deadline.is_some_and(|d| now >= d);
            if due || self.shared.stop.load(Ordering::Acquire) {
                break;
            }
            let mut wait = self.poll_ms;
            if let Some(d) = self.deadline {
                wait = wait.min(((d - now) / 1_000_000).max(1) as i32);
            }
            match &self.attach {
                Some(a) => a.wait(wait),
                None => std::thread::sleep(Duration::from_millis(wait as u64)),
            }
            self.round(false);
        }
        self.take_handoff();
        // The capture window ends here; what follows collects what it recorded.
        self.shared
            .ended_ns
            .store(sys::monotonic_ns(), Ordering::Relaxed);
        // Stop the workload first so its exits are recorded, then let the last records land.
        if let Some(w) = self.workload.take() {
            let (dropped, errors) = w.stop(&mut self.new_samples);
            self.shared
                .samples_dropped
                .store(dropped, Ordering::Relaxed);
            if !errors.is_empty() {
                let mut s = self.shared.lock();
                for e in errors {
                    s.trace.warn("workload", e);
                }
            }
        }
        if let Some(a) = &self.attach {
            std::thread::sleep(Duration::from_millis(10));
            a.disable();
        }
        self.round(true);
        if self.late > 0 {
            let mut s = self.shared.lock();
            s.trace.warn(
                "late-records",
                format!(
                    "{} records reached their ring more than {} ms after their timestamp; they were placed at the merge point to keep time order",
                    self.late,
                    MERGE_SLACK_NS / 1_000_000
                ),
            );
        }
        self.attach = None;
        self.shared.finished.store(true, Ordering::Release);
    }

    /// Takes the workload the session started, once it is there.
    fn take_handoff(&mut self) {
        if self.workload.is_none()
            && let Ok(mut slot) = self.shared.handoff.lock()
        {
            self.workload = slot.take();
        }
    }

    /// Reads the rings and the sample queue and appends what is old enough (everything when
    /// `flush`) to the store.
    fn round(&mut self, flush: bool) {
        self.take_handoff();
        let boundary = if flush {
            u64::MAX
        } else {
            sys::monotonic_ns().saturating_sub(MERGE_SLACK_NS)
        };
        if let Some(a) = &mut self.attach {
            self.fresh.clear();
            match &mut self.filter {
                Some(f) => a.drain(&mut self.strings, &mut self.fresh, f),
                None => a.drain(&mut self.strings, &mut self.fresh, &mut KeepAll),
            }
            self.seen = a.stats().records;
            self.pending.append(&mut self.fresh);
            self.shared.lost.store(a.stats().lost, Ordering::Relaxed);
            self.shared
                .decode_errors
                .store(a.stats().decode_errors, Ordering::Relaxed);
            if let (Some(e), true) = (&a.stats().first_decode_error, a.stats().decode_errors == 1)
                && let Ok(mut slot) = self.shared.error.lock()
            {
                slot.get_or_insert_with(|| format!("record did not decode: {e}"));
            }
        }
        if let Some(w) = &self.workload {
            w.drain(&mut self.new_samples);
            self.shared
                .samples_dropped
                .store(w.dropped(), Ordering::Relaxed);
        }
        // Merge: stable sort keeps each CPU's order among equal timestamps.
        self.pending.sort_by_key(|s| s.decoded.event.ts);
        let n_ready = self
            .pending
            .partition_point(|s| s.decoded.event.ts <= boundary);
        let mut ready: Vec<Staged> = self.pending.drain(..n_ready).collect();
        // A record that reached its ring later than the merge slack would land before events
        // already published: keep the trace sorted by placing it at the merge point.
        for st in &mut ready {
            let ts = &mut st.decoded.event.ts;
            if *ts < self.last_ts {
                *ts = self.last_ts;
                self.late += 1;
            } else {
                self.last_ts = *ts;
            }
        }
        let mut events = Vec::with_capacity(ready.len());
        let mut aux = Vec::with_capacity(ready.len());
        let mut task_updates: Vec<(Tid, TaskMeta)> = Vec::new();
        for st in &ready {
            let ev = st.decoded.event;
            for (t, c) in st.decoded.comms.iter().flatten() {
                self.comms.insert(*t, *c);
            }
            if let Some(f) = &mut self.filter
                && !f.keep(&ev, st.pid)
            {
                continue;
            }
            if let Some(m) = self.note_task(st) {
                task_updates.push(m);
            }
            events.push(ev);
            aux.push(st.decoded.aux);
        }
        self.update_rate();
        // Publish.
        let mut s = self.shared.lock();
        for i in self.synced_strings..self.strings.len() {
            s.trace.strings.intern(self.strings.get(StrId(i as u32)));
        }
        self.synced_strings = self.strings.len();
        for (tid, m) in task_updates {
            s.trace.tasks.insert(tid, m);
            s.task_log.push(tid);
        }
        let room = self.max_events.saturating_sub(s.events.len);
        if events.len() > room {
            let over = (events.len() - room) as u64;
            events.truncate(room);
            aux.truncate(room);
            self.shared
                .events_dropped
                .fetch_add(over, Ordering::Relaxed);
        }
        s.events.extend(&events);
        s.aux.extend(&aux);
        s.samples.append(&mut self.new_samples);
        self.shared
            .events
            .store(s.events.len as u64, Ordering::Relaxed);
        self.shared
            .samples
            .store(s.samples.len() as u64, Ordering::Relaxed);
        self.shared.events_seen.store(self.seen, Ordering::Relaxed);
    }

    /// The task table entry of the record's current task: created on first sight (comm from
    /// /proc, else from the record, else `<...>`), tgid from perf's PERF_SAMPLE_TID.
    fn note_task(&mut self, st: &Staged) -> Option<(Tid, TaskMeta)> {
        let ev = &st.decoded.event;
        let tid = ev.tid;
        if tid == TID_UNKNOWN || ev.kind.is_lost() {
            return None;
        }
        let tgid = (tid != 0 && st.sample_tid == tid && st.pid != TID_UNKNOWN && st.pid != 0)
            .then_some(st.pid);
        if let Some(m) = self.known.get_mut(&tid) {
            if m.tgid.is_none() && tgid.is_some() {
                m.tgid = tgid;
                return Some((tid, *m));
            }
            return None;
        }
        let comm = if tid == 0 {
            self.idle_tid_comm
        } else {
            let own = match ev.kind {
                EventKind::SchedSwitch { prev_tid, .. } if prev_tid == tid => {
                    Some(st.decoded.aux.text)
                }
                _ => None,
            };
            let proc_comm = proc_comm(tgid.unwrap_or(tid), tid);
            match (proc_comm, own, self.comms.get(&tid)) {
                (Some(c), _, _) => self.strings.intern(&c),
                (None, Some(c), _) => c,
                (None, None, Some(&c)) => c,
                _ => self.strings.intern(b"<...>"),
            }
        };
        let m = TaskMeta { tgid, comm };
        self.known.insert(tid, m);
        Some((tid, m))
    }

    fn update_rate(&mut self) {
        let now = sys::monotonic_ns();
        self.rate_window.push_back((now, self.seen));
        while self
            .rate_window
            .front()
            .is_some_and(|&(t, _)| now - t > 1_000_000_000)
            && self.rate_window.len() > 2
        {
            self.rate_window.pop_front();
        }
        let rate = match (self.rate_window.front(), self.rate_window.back()) {
            (Some(&(t0, n0)), Some(&(t1, n1))) if t1 > t0 => {
                (n1 - n0) as f64 * 1e9 / (t1 - t0) as f64
            }
            _ => 0.0,
        };
        self.shared
            .rate_bits
            .store(rate.to_bits(), Ordering::Relaxed);
    }
}

fn proc_comm(tgid: Tid, tid: Tid) -> Option<Vec<u8>> {
    let mut c = std::fs::read(format!("/proc/{tgid}/task/{tid}/comm")).ok()?;
    while c.last() == Some(&b'\n') {
        c.pop();
    }
    (!c.is_empty()).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_appends_across_chunks_and_copies_any_suffix() {
        let mut c: Chunked<u32> = Chunked::new();
        let n = Chunked::<u32>::CHUNK;
        let a: Vec<u32> = (0..(n + 10) as u32).collect();
        c.extend(&a[..5]);
        c.extend(&a[5..]);
        c.extend(&[]);
        assert_eq!(c.len, n + 10);
        assert_eq!(c.chunks.len(), 2);
        assert_eq!(c.copy_from(0), a);
        assert_eq!(c.copy_from(n - 1), a[n - 1..].to_vec());
        assert_eq!(c.copy_from(n + 3), a[n + 3..].to_vec());
        assert!(c.copy_from(n + 10).is_empty());
        assert!(c.copy_from(n + 99).is_empty());
    }

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
