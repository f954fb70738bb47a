//! The capture thread of a live session: reads the rings and the workload's samples, merges
//! records from all CPUs in time order, applies the process filter and publishes to the store.

use super::attach::{Attach, KeepAll, Staged};
use super::error::LiveError;
use super::filter::Filter;
use super::rseq_area::RseqSample;
use super::store::Shared;
use super::workload::Workload;
use crate::events::{EventKind, StrId, Strings, TID_UNKNOWN, TaskMeta, Tid};
use crate::sources::sys;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How the capture thread runs (from the session's options).
pub(super) struct Pace {
    /// How often it wakes up when the rings stay below their watermark.
    pub poll_interval: Duration,
    /// Stop by itself after this long.
    pub duration: Option<Duration>,
    /// Nice value when not realtime.
    pub nice: Option<i32>,
    /// Run as SCHED_FIFO 1.
    pub realtime: bool,
    /// Events kept at most.
    pub max_events: usize,
}

/// Records may reach a ring up to this long after their timestamp was taken (an event in flight
/// on another CPU while the rings are read): only older records are merged.
const MERGE_SLACK_NS: u64 = 5_000_000;

/// The capture thread's state.
pub(super) struct Capture {
    shared: Arc<Shared>,
    attach: Option<Attach>,
    filter: Option<Filter>,
    workload: Option<Workload>,
    /// Master string table (the store's copy is synced after each round).
    strings: Strings,
    synced_strings: usize,
    known: crate::events::TaskTable,
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
    pub(super) fn new(
        shared: Arc<Shared>,
        attach: Option<Attach>,
        filter: Option<Filter>,
        strings: Strings,
        pace: &Pace,
    ) -> Capture {
        Capture {
            shared,
            attach,
            filter,
            workload: None,
            strings,
            synced_strings: 1,
            known: Default::default(),
            comms: FxHashMap::default(),
            pending: Vec::new(),
            fresh: Vec::new(),
            new_samples: Vec::new(),
            rate_window: std::collections::VecDeque::new(),
            seen: 0,
            poll_ms: pace.poll_interval.as_millis().clamp(1, 1000) as i32,
            duration_ns: pace.duration.map(|d| d.as_nanos() as u64),
            deadline: None,
            nice: pace.nice,
            realtime: pace.realtime,
            last_ts: 0,
            late: 0,
            max_events: pace.max_events,
            idle_tid_comm: StrId(0),
        }
    }

    pub(super) fn run(&mut self, ready: std::sync::mpsc::SyncSender<Result<(), LiveError>>) {
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
        let mut irqs_off = 0;
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
            // (Trace::rseq_irqs_off: the 6.19+ fast path's mark)
            irqs_off += u64::from(
                matches!(ev.kind, EventKind::RseqUpdate { .. }) && st.decoded.aux.irqs_off(),
            );
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
        s.trace.rseq_irqs_off += irqs_off;
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
