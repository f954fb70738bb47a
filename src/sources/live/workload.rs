//! The synthetic workload: threads that keep the scheduler busy in known ways and report the CID
//! the kernel gives them, read from their own rseq area, whenever it (or their CPU) changes.
//!
//! Reporting never blocks a workload thread: samples go through a bounded channel with
//! `try_send`; a full channel drops the sample and counts it.

use super::rseq_area::{Registration, ThreadRseq};
use super::spec::{WorkItem, WorkloadSpec};
use super::{LiveError, RseqSample};
use crate::sources::sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Shared between the workload threads and their owner.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    dropped: AtomicU64,
    started: AtomicU64,
    spawn_failures: AtomicU64,
    errors: Mutex<Vec<String>>,
}

impl Shared {
    fn error(&self, msg: String) {
        if let Ok(mut e) = self.errors.lock()
            && e.len() < 16
        {
            e.push(msg);
        }
    }
}

/// One thread's reporting end.
struct Reporter {
    area: ThreadRseq,
    tx: SyncSender<RseqSample>,
    shared: Arc<Shared>,
    last: Option<(u16, i32)>,
}

impl Reporter {
    fn new(tx: SyncSender<RseqSample>, shared: Arc<Shared>) -> Option<Reporter> {
        match ThreadRseq::current() {
            Ok(area) => {
                shared.started.fetch_add(1, Ordering::Relaxed);
                let mut r = Reporter {
                    area,
                    tx,
                    shared,
                    last: None,
                };
                r.check();
                Some(r)
            }
            Err(e) => {
                shared.error(format!("thread {}: {e}", sys::gettid()));
                None
            }
        }
    }

    /// Reports the area's values if they changed since the last report.
    #[inline]
    fn check(&mut self) {
        let now = self.area.read();
        if self.last == Some(now) {
            return;
        }
        let s = self.area.sample();
        self.last = Some((s.cpu, s.cid));
        match self.tx.try_send(s) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Spins for `d`, checking the area as it goes. Returns false when asked to stop.
    fn spin(&mut self, d: Duration) -> bool {
        let end = sys::monotonic_ns() + d.as_nanos() as u64;
        loop {
            for _ in 0..64 {
                std::hint::black_box(0u64);
            }
            self.check();
            if sys::monotonic_ns() >= end {
                return true;
            }
            if self.stopped() {
                return false;
            }
        }
    }

    /// Sleeps until `deadline_ns` in slices of at most 20 ms. Returns false when asked to stop.
    fn sleep_until(&mut self, deadline_ns: u64) -> bool {
        loop {
            let now = sys::monotonic_ns();
            if now >= deadline_ns {
                return true;
            }
            if self.stopped() {
                return false;
            }
            std::thread::sleep(Duration::from_nanos((deadline_ns - now).min(20_000_000)));
            self.check();
        }
    }
}

/// A running workload.
pub struct Workload {
    handles: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
    rx: Receiver<RseqSample>,
    pub spec: WorkloadSpec,
    pub registration: Registration,
}

impl Workload {
    /// Starts every thread of `spec`. `queue` bounds the samples waiting to be collected.
    pub fn start(spec: &WorkloadSpec, queue: usize) -> Result<Workload, LiveError> {
        // Fail early, with the reason, if this kernel or libc cannot give a thread its area.
        let probe = std::thread::Builder::new()
            .name("cw-probe".into())
            .spawn(|| ThreadRseq::current().map(|a| a.registration()))
            .map_err(|e| LiveError::io("spawning a workload thread", e))?
            .join()
            .map_err(|_| LiveError::Unsupported("the rseq probe thread panicked".into()))?;
        let registration = probe?;
        let (tx, rx) = sync_channel(queue.max(16));
        let shared = Arc::new(Shared::default());
        let mut w = Workload {
            handles: Vec::new(),
            shared,
            rx,
            spec: spec.clone(),
            registration,
        };
        let cpus = sys::affinity_self().unwrap_or_else(|_| super::online_cpus());
        for item in &spec.items {
            let r = w.spawn_item(item, &tx, &cpus);
            if let Err(e) = r {
                w.shared.stop.store(true, Ordering::Relaxed);
                w.join();
                return Err(e);
            }
        }
        Ok(w)
    }

    fn spawn(
        &mut self,
        name: String,
        f: impl FnOnce(Reporter) + Send + 'static,
        tx: &SyncSender<RseqSample>,
    ) -> Result<(), LiveError> {
        let (tx, shared) = (tx.clone(), self.shared.clone());
        let h = std::thread::Builder::new()
            .name(name)
            .stack_size(256 << 10)
            .spawn(move || {
                if let Some(r) = Reporter::new(tx, shared) {
                    f(r);
                }
            })
            .map_err(|e| LiveError::io("spawning a workload thread", e))?;
        self.handles.push(h);
        Ok(())
    }

    fn spawn_item(
        &mut self,
        item: &WorkItem,
        tx: &SyncSender<RseqSample>,
        cpus: &[usize],
    ) -> Result<(), LiveError> {
        match *item {
            WorkItem::Periodic {
                threads,
                period,
                busy,
            } => {
                for i in 0..threads {
                    self.spawn(
                        format!("cw-periodic-{i}"),
                        move |r| periodic(r, period, busy),
                        tx,
                    )?;
                }
            }
            WorkItem::Hog { threads } => {
                for i in 0..threads {
                    self.spawn(format!("cw-hog-{i}"), hog, tx)?;
                }
            }
            WorkItem::Migrate { threads, every } => {
                for i in 0..threads {
                    let cpus = cpus.to_vec();
                    let start = i as usize;
                    self.spawn(
                        format!("cw-migrate-{i}"),
                        move |r| migrate(r, &cpus, start, every),
                        tx,
                    )?;
                }
            }
            WorkItem::Sleeper { threads, period } => {
                for i in 0..threads {
                    self.spawn(format!("cw-sleeper-{i}"), move |r| sleeper(r, period), tx)?;
                }
            }
            WorkItem::Churn { per_sec, lifetime } => {
                let (tx2, shared) = (tx.clone(), self.shared.clone());
                let h = std::thread::Builder::new()
                    .name("cw-churn-spawn".into())
                    .spawn(move || churn(shared, tx2, per_sec, lifetime))
                    .map_err(|e| LiveError::io("spawning the churn thread", e))?;
                self.handles.push(h);
            }
        }
        Ok(())
    }

    /// Moves the samples reported so far into `out`.
    pub fn drain(&self, out: &mut Vec<RseqSample>) {
        out.extend(self.rx.try_iter());
    }

    /// Samples dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Threads that started reporting so far (churn threads included).
    pub fn threads_started(&self) -> u64 {
        self.shared.started.load(Ordering::Relaxed)
    }

    /// Problems threads ran into (registration failures, spawn failures).
    pub fn errors(&self) -> Vec<String> {
        let mut v = self
            .shared
            .errors
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default();
        let f = self.shared.spawn_failures.load(Ordering::Relaxed);
        if f > 0 {
            v.push(format!("{f} churn threads could not be spawned"));
        }
        v
    }

    /// Asks every thread to stop, waits for them and collects the last samples. Returns the
    /// samples dropped and the problems threads ran into.
    pub fn stop(mut self, out: &mut Vec<RseqSample>) -> (u64, Vec<String>) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.join();
        self.drain(out);
        (self.dropped(), self.errors())
    }

    fn join(&mut self) {
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.join();
    }
}

fn periodic(mut r: Reporter, period: Duration, busy: Duration) {
    let p = period.as_nanos() as u64;
    let mut next = sys::monotonic_ns() + p;
    while r.sleep_until(next) && r.spin(busy) {
        next += p;
        let now = sys::monotonic_ns();
        if next < now {
            // Overran: skip the missed periods, like cyclictest.
            next = now + p;
        }
    }
}

fn hog(mut r: Reporter) {
    while r.spin(Duration::from_millis(10)) {}
}

fn sleeper(mut r: Reporter, period: Duration) {
    let p = period.as_nanos() as u64;
    let mut next = sys::monotonic_ns() + p;
    while r.sleep_until(next) {
        r.check();
        next = sys::monotonic_ns() + p;
    }
}

fn migrate(mut r: Reporter, cpus: &[usize], start: usize, every: Duration) {
    if cpus.is_empty() {
        return;
    }
    let mut i = start % cpus.len();
    loop {
        if let Err(e) = sys::set_affinity_self(&[cpus[i]]) {
            r.shared
                .error(format!("sched_setaffinity to CPU {}: {e}", cpus[i]));
            return;
        }
        r.check();
        if !r.spin(every) {
            return;
        }
        i = (i + 1) % cpus.len();
    }
}

fn churn(shared: Arc<Shared>, tx: SyncSender<RseqSample>, per_sec: f64, lifetime: Duration) {
    let gap = (1e9 / per_sec) as u64;
    let mut next = sys::monotonic_ns();
    let mut live: Vec<JoinHandle<()>> = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let (tx2, sh2) = (tx.clone(), shared.clone());
        match std::thread::Builder::new()
            .name("cw-churn".into())
            .stack_size(64 << 10)
            .spawn(move || {
                if let Some(mut r) = Reporter::new(tx2, sh2) {
                    r.spin(lifetime);
                }
            }) {
            Ok(h) => live.push(h),
            Err(_) => {
                shared.spawn_failures.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Reap the threads that finished.
        let mut i = 0;
        while i < live.len() {
            if live[i].is_finished() {
                let _ = live.swap_remove(i).join();
            } else {
                i += 1;
            }
        }
        next += gap;
        let now = sys::monotonic_ns();
        if next < now {
            next = now;
        }
        while !shared.stop.load(Ordering::Relaxed) {
            let now = sys::monotonic_ns();
            if now >= next {
                break;
            }
            std::thread::sleep(Duration::from_nanos((next - now).min(20_000_000)));
        }
    }
    for h in live {
        let _ = h.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_report_cids_below_the_cpu_count() {
        let spec = WorkloadSpec::parse("hog:2,sleeper:1:5ms,periodic:1:1ms:100us", 2).unwrap();
        let w = match Workload::start(&spec, 4096) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("skip: {e}");
                return;
            }
        };
        std::thread::sleep(Duration::from_millis(150));
        let mut out = Vec::new();
        let started = w.threads_started();
        w.stop(&mut out);
        assert_eq!(started, 4);
        assert!(out.len() >= 4, "{out:?}");
        let bound = super::super::possible_cpus() as i32;
        for s in &out {
            assert!((0..bound).contains(&s.cid), "{s:?}");
            assert!((s.cpu as i32) < bound, "{s:?}");
        }
    }
}
