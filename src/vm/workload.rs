//! The workloads `cidscope vm` runs in its guest, by name, or any `cidscope live` SPEC.
//!
//! Names follow the model corpus (`traces/mcwork.c`): `workers` (busy 300 µs, sleep 200 µs),
//! `hogs`, `churn` (batches of short threads, joined), `forks` (processes that fork without
//! exec), `exec` (children that exec cidscope again in a worker role, and again), `migrate`,
//! `affinity` (threads that keep changing their CPU masks), `spinner` (one thread pinned to
//! the last CPU), `periodic` (cyclictest-like). `hogs`, `migrate` and `periodic` are the
//! threads of [`crate::sources::live::workload`]; a SPEC goes to it whole.
//!
//! The workload runs in its own process (not the guest's PID 1, which streams the capture), so
//! its mm holds only its own threads.

use super::role::{EXEC_CHILD, ROLE_FLAG};
use crate::sources::live::rseq_area::RseqSample;
use crate::sources::live::spec::{WorkItem, WorkloadSpec};
use crate::sources::sys::{clock as live_clock, sched as live_sched};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Workers,
    Hogs,
    Churn,
    Forks,
    Exec,
    Migrate,
    Affinity,
    Spinner,
    Periodic,
    Burst,
    Shrink,
}

/// Name, kind, default threads (`None`: the CPU count); [`HELP`] describes each.
pub const KINDS: &[(&str, Kind, Option<u32>)] = &[
    ("workers", Kind::Workers, None),
    ("hogs", Kind::Hogs, None),
    ("churn", Kind::Churn, Some(8)),
    ("forks", Kind::Forks, Some(4)),
    ("exec", Kind::Exec, Some(4)),
    ("migrate", Kind::Migrate, Some(1)),
    ("affinity", Kind::Affinity, None),
    ("spinner", Kind::Spinner, Some(1)),
    ("periodic", Kind::Periodic, Some(4)),
    ("burst", Kind::Burst, None),
    ("shrink", Kind::Shrink, None),
];

pub const MAX_THREADS: u32 = 1024;

/// What the guest runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    Named {
        kind: Kind,
        name: &'static str,
        threads: u32,
    },
    Spec(WorkloadSpec),
}

/// `cidscope vm --help`'s text after the flags (names with what `--threads` counts).
pub const HELP: &str = "\
Workloads (--threads T sets the count in brackets):
  workers    T threads: busy 300us, sleep 200us [CPUs]
  hogs       T busy threads that never sleep [CPUs]
  churn      batches of T threads that spin 200us and exit, joined, 5 ms apart [8]
  forks      T child processes (fork, no exec) with 2 sleeper threads each [4]
  exec       T children at a time that exec cidscope in a worker role, twice [4]
  migrate    T busy threads whose affinity moves one CPU each 100 ms, + a sleeper [1]
  affinity   T threads that set a new CPU mask every 10 ms [CPUs]
  spinner    one thread pinned to the last CPU, spinning [1]
  periodic   T cyclictest-like threads: wake every 1 ms, busy 200 us [4]
  burst      T threads spin 100 ms and exit; 4 threads waking every 10 ms (busy 50 us) go on [CPUs]
  shrink     seed 000's case, each 500 ms: T threads spin 100 ms and exit, then 4 run 50 us/5 ms [CPUs]
  or a `cidscope live` SPEC, e.g. periodic:8:500us:100us,hog:2

The guest's init is this cidscope binary with the libraries it links, in an initramfs written
on the fly; its capture streams back over virtio-serial. Needs qemu-system-x86_64 (Debian:
qemu-system-x86) and no root. The model agreement uses the policy of the guest's kernel
(< 6.19 lazy-compact, >= 6.19 owner-mode) unless --policy names one, and its CONFIG_HZ (from
/proc/config.gz in the guest, else the config-* file beside the image). Ctrl-C stops the
workload and keeps what was captured; a second Ctrl-C kills the VM.

Examples:
  cidscope vm --kernel /boot/vmlinuz-$(uname -r) --cpus 16 --workload churn
  cidscope vm --kernel bzImage --cpus 64 --workload workers --duration 2s --json
  cidscope vm --kernel bzImage --cpus 8 --workload spinner --append nohz_full=7 --record s.txt
  cidscope vm --kernel A --kernel B --cpus 16,64 --repeat 3 --workload shrink \
      --graph-function task_mm_cid_work --out exp     (an experiment: exp/experiment.{json,svg})";

impl Workload {
    /// A name (with `threads`, default per kind) or a live SPEC (then `threads` must be unset).
    pub fn parse(text: &str, threads: Option<u32>, ncpus: u32) -> Result<Workload, String> {
        let text = text.trim();
        if let Some(&(name, kind, def)) = KINDS.iter().find(|k| k.0 == text) {
            let t = threads.or(def).unwrap_or(ncpus.max(1));
            if !(1..=MAX_THREADS).contains(&t) {
                return Err(format!("--threads {t}: expected 1..={MAX_THREADS}"));
            }
            if kind == Kind::Spinner && t != 1 {
                return Err("--workload spinner is one lone thread: --threads must be 1".into());
            }
            return Ok(Workload::Named {
                kind,
                name,
                threads: t,
            });
        }
        if threads.is_some() {
            return Err(format!(
                "--threads applies to the named workloads; {text:?} is none of {} (a SPEC sets its own counts)",
                KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            ));
        }
        WorkloadSpec::parse(text, ncpus)
            .map(Workload::Spec)
            .map_err(|e| {
                format!(
                    "--workload {text:?}: not a workload name ({}) and not a SPEC: {e}",
                    KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
                )
            })
    }

    /// `churn threads=8`, or the SPEC.
    pub fn describe(&self) -> String {
        match self {
            Workload::Named { name, threads, .. } => format!("{name} threads={threads}"),
            Workload::Spec(s) => s.to_string(),
        }
    }

    /// Runs for `d` (or until [`stop_flag`] is set) in this process; the errors threads ran into.
    /// Runs the workload for `d`; the CIDs its threads read from their rseq areas (the
    /// workloads of `cidscope live`: hogs, periodic, migrate, specs) go to `read`.
    /// `seed` varies the random choices of the workloads that make some (0: fixed defaults).
    pub fn run(&self, d: Duration, seed: u64, read: &mut Read) -> Result<(), String> {
        let end = Instant::now() + d;
        let errors = Errors::default();
        match self {
            Workload::Spec(spec) => run_live_spec(spec, end, &errors, read),
            Workload::Named { kind, threads, .. } => {
                let t = *threads;
                match kind {
                    Kind::Workers => {
                        join_all(spawn_n("cw-worker", t, move |_| workers(end)), &errors)
                    }
                    Kind::Hogs => run_live_spec(
                        &WorkloadSpec {
                            items: vec![WorkItem::Hog { threads: t }],
                        },
                        end,
                        &errors,
                        read,
                    ),
                    Kind::Periodic => run_live_spec(
                        &WorkloadSpec {
                            items: vec![WorkItem::Periodic {
                                threads: t,
                                period: Duration::from_millis(1),
                                busy: Duration::from_micros(200),
                            }],
                        },
                        end,
                        &errors,
                        read,
                    ),
                    Kind::Migrate => run_live_spec(
                        &WorkloadSpec {
                            items: vec![
                                WorkItem::Migrate {
                                    threads: t,
                                    every: Duration::from_millis(100),
                                },
                                WorkItem::Sleeper {
                                    threads: 1,
                                    period: Duration::from_millis(2),
                                },
                            ],
                        },
                        end,
                        &errors,
                        read,
                    ),
                    Kind::Churn => churn(t, end, &errors),
                    Kind::Burst => burst(t, end, &errors),
                    Kind::Shrink => shrink(t, end, &errors),
                    Kind::Forks => forks(t, end, d, &errors),
                    Kind::Exec => exec_parent(t, end, &errors),
                    Kind::Affinity => {
                        let cpus = online_cpus();
                        join_all(
                            spawn_n("cw-affinity", t, move |i| {
                                affinity(i, seed, &cpus, end)
                                    .map_err(|e| format!("sched_setaffinity: {e}"))
                            }),
                            &errors,
                        )
                    }
                    Kind::Spinner => {
                        let last = online_cpus().last().copied().unwrap_or(0);
                        join_all(
                            spawn_n("cw-spinner", 1, move |_| {
                                live_sched::set_affinity_self(&[last])
                                    .map_err(|e| format!("pinning to CPU {last}: {e}"))?;
                                spin_until(end);
                                Ok(())
                            }),
                            &errors,
                        )
                    }
                }
            }
        }
        errors.result()
    }
}

/// Set by SIGTERM in the worker (the host's Ctrl-C): every loop ends at its next check.
pub fn stop_flag() -> &'static Arc<AtomicBool> {
    static STOP: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

fn stopped() -> bool {
    stop_flag().load(Ordering::Relaxed)
}

fn running(end: Instant) -> bool {
    !stopped() && Instant::now() < end
}

#[derive(Default, Clone)]
struct Errors(Arc<Mutex<Vec<String>>>);

impl Errors {
    fn push(&self, e: String) {
        if let Ok(mut v) = self.0.lock()
            && v.len() < 16
        {
            v.push(e);
        }
    }
    fn result(&self) -> Result<(), String> {
        let v = self.0.lock().map(|v| v.clone()).unwrap_or_default();
        if v.is_empty() {
            Ok(())
        } else {
            Err(v.join("; "))
        }
    }
}

fn online_cpus() -> Vec<usize> {
    live_sched::affinity_self().unwrap_or_else(|_| crate::sources::live::online_cpus())
}

fn spin_for(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        for _ in 0..200 {
            std::hint::black_box(0u64);
        }
    }
}

fn spin_until(end: Instant) {
    while running(end) {
        spin_for(Duration::from_millis(1));
    }
}

type Handle = std::thread::JoinHandle<Result<(), String>>;

fn spawn_n(
    prefix: &str,
    n: u32,
    f: impl Fn(u32) -> Result<(), String> + Send + Sync + Clone + 'static,
) -> Vec<Result<Handle, String>> {
    (0..n)
        .map(|i| {
            let f = f.clone();
            std::thread::Builder::new()
                .name(format!("{prefix}-{i}"))
                .stack_size(256 << 10)
                .spawn(move || f(i))
                .map_err(|e| format!("spawning {prefix}-{i}: {e}"))
        })
        .collect()
}

fn join_all(hs: Vec<Result<Handle, String>>, errors: &Errors) {
    for h in hs {
        match h {
            Ok(h) => match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push("a workload thread panicked".into()),
            },
            Err(e) => errors.push(e),
        }
    }
}

/// `mcwork workers`: busy 300 µs, sleep 200 µs.
fn workers(end: Instant) -> Result<(), String> {
    while running(end) {
        spin_for(Duration::from_micros(300));
        std::thread::sleep(Duration::from_micros(200));
    }
    Ok(())
}

/// The CIDs a workload's threads read from their own rseq areas.
#[derive(Default)]
pub struct Read {
    pub samples: Vec<RseqSample>,
    /// Samples the threads' queues could not hold.
    pub dropped: u64,
}

impl Read {
    /// One `TS TID CPU CID` line per sample (the file the worker leaves for the agent).
    pub fn write(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        writeln!(w, "dropped {}", self.dropped)?;
        for s in &self.samples {
            writeln!(w, "{} {} {} {}", s.ts, s.tid, s.cpu, s.cid)?;
        }
        Ok(())
    }

    /// What [`Read::write`] wrote; `None` at the first line that is not its own.
    pub fn parse(text: &str) -> Option<Read> {
        let mut r = Read::default();
        for l in text.lines() {
            if let Some(d) = l.strip_prefix("dropped ") {
                r.dropped = d.parse().ok()?;
                continue;
            }
            let mut f = l.split(' ');
            let mut next = || f.next();
            r.samples.push(RseqSample {
                ts: next()?.parse().ok()?,
                tid: next()?.parse().ok()?,
                cpu: next()?.parse().ok()?,
                cid: next()?.parse().ok()?,
            });
        }
        Some(r)
    }
}

/// The threads of `cidscope live`'s workload: they read their CIDs, kept in `read`.
fn run_live_spec(spec: &WorkloadSpec, end: Instant, errors: &Errors, read: &mut Read) {
    // (a queue of 4096 samples per thread: a change of CPU or CID is one sample)
    match crate::sources::live::workload::Workload::start(spec, 1 << 12) {
        Ok(w) => {
            while running(end) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let (dropped, errs) = w.stop(&mut read.samples);
            read.dropped += dropped;
            for e in errs {
                errors.push(e);
            }
        }
        Err(e) => errors.push(e.to_string()),
    }
}

/// `mcwork churn`: batches of T threads that spin 200 µs and exit, joined, 5 ms apart.
fn churn(t: u32, end: Instant, errors: &Errors) {
    while running(end) {
        let hs = spawn_n("cw-churn", t, |_| {
            spin_for(Duration::from_micros(200));
            Ok(())
        });
        join_all(hs, errors);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The case the compaction-in-batches patches were written for (seed 000): a burst of `t`
/// threads spreads the mm's CIDs over every CPU, then only a few periodic threads with short
/// runtimes remain. A tick rarely lands while they run, so a compaction driven by the tick alone
/// (lazy-compact) seldom runs, while one driven by the return to user space (resume-batch) does.
fn burst(t: u32, end: Instant, errors: &Errors) {
    let periodic = spawn_n("cw-periodic", 4, move |_| {
        while running(end) {
            spin_for(Duration::from_micros(50));
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    });
    let burst_end = end.min(Instant::now() + Duration::from_millis(100));
    let burst = spawn_n("cw-burst", t, move |_| {
        spin_until(burst_end);
        Ok(())
    });
    join_all(burst, errors);
    join_all(periodic, errors);
}

/// What seed 000's patch 2/4 is about, again and again: each 500 ms cycle a burst of `t`
/// threads spins 100 ms (its CIDs spread over every CPU) and exits; for the remaining 400 ms only
/// 4 periodic threads run, 50 µs every 5 ms. At HZ 250 a 50 µs run meets a tick about once in 80,
/// so a compaction the tick asks for (lazy-compact) waits, one the return to user asks for
/// (resume-batch) does not. Each cycle's end of burst is one fall of the process's concurrency
/// (`cid_metrics.compaction_latency_ms`).
fn shrink(t: u32, end: Instant, errors: &Errors) {
    const CYCLE: Duration = Duration::from_millis(500);
    const BURST: Duration = Duration::from_millis(100);
    const PERIOD: Duration = Duration::from_millis(5);
    let periodic = spawn_n("cw-periodic", 4, move |i| {
        // out of phase: one wakes every 1.25 ms, not four at once
        std::thread::sleep(PERIOD * i / 4);
        while running(end) {
            spin_for(Duration::from_micros(50));
            std::thread::sleep(PERIOD);
        }
        Ok(())
    });
    while running(end) {
        let start = Instant::now();
        let burst_end = end.min(start + BURST);
        join_all(
            spawn_n("cw-burst", t, move |_| {
                spin_until(burst_end);
                Ok(())
            }),
            errors,
        );
        let quiet_end = end.min(start + CYCLE);
        while running(quiet_end) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    join_all(periodic, errors);
}

/// `mcwork forks`: T child processes, forked before this process has any other thread; each
/// runs two sleeper threads and spins, then exits.
fn forks(t: u32, end: Instant, d: Duration, errors: &Errors) {
    let mut children = 0;
    for p in 0..t {
        match super::sys::fork_single_threaded() {
            Ok(None) => {
                super::sys::set_thread_name(&format!("cw-fork-{p}"));
                let hs = (0..2)
                    .map(|k| {
                        let us = if k == 0 { 1500 } else { 3000 };
                        std::thread::Builder::new()
                            .name(format!("cw-fsleep-{k}"))
                            .spawn(move || {
                                while running(end) {
                                    spin_for(Duration::from_micros(50));
                                    std::thread::sleep(Duration::from_micros(us));
                                }
                            })
                    })
                    .collect::<Vec<_>>();
                spin_for(d / 4);
                while running(end) {
                    std::thread::sleep(Duration::from_millis(5));
                    spin_for(Duration::from_millis(2));
                }
                let ok = hs.into_iter().all(|h| h.is_ok_and(|h| h.join().is_ok()));
                super::sys::exit_now(if ok { 0 } else { 1 });
            }
            Ok(Some(_)) => children += 1,
            Err(e) => errors.push(format!("fork: {e}")),
        }
    }
    while children > 0 {
        match super::sys::wait_any() {
            Some((pid, status)) => {
                children -= 1;
                if status != 0 {
                    errors.push(format!(
                        "forked child {pid} ended with wait status {status}"
                    ));
                }
            }
            None => break,
        }
    }
}

/// How many times an exec child execs itself again before it exits.
const EXEC_DEPTH: u32 = 2;

/// CLOCK_MONOTONIC `end` as the exec children see it (they share the clock, not `Instant`s).
fn end_ns(end: Instant) -> u64 {
    live_clock::monotonic_ns() + end.saturating_duration_since(Instant::now()).as_nanos() as u64
}

/// T children at a time, each `cidscope --cidscope-vm-role exec-child DEPTH END_NS`.
fn exec_parent(t: u32, end: Instant, errors: &Errors) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return errors.push(format!("finding this executable to exec it: {e}")),
    };
    let deadline = end_ns(end);
    let mut live: Vec<std::process::Child> = Vec::new();
    let mut failed = 0u32;
    while running(end) {
        let mut i = 0;
        while i < live.len() {
            match live[i].try_wait() {
                Ok(Some(st)) => {
                    if !st.success() {
                        errors.push(format!("exec child ended with {st}"));
                    }
                    // reaped by try_wait; wait() just returns its status
                    let _ = live.swap_remove(i).wait();
                }
                _ => i += 1,
            }
        }
        while live.len() < t as usize && failed < 16 {
            match std::process::Command::new(&exe)
                .arg(ROLE_FLAG)
                .arg(EXEC_CHILD)
                .arg(EXEC_DEPTH.to_string())
                .arg(deadline.to_string())
                .spawn()
            {
                Ok(c) => live.push(c),
                Err(e) => {
                    failed += 1;
                    errors.push(format!("spawning an exec child: {e}"));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for mut c in live {
        if stopped() {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

/// An exec child: two worker threads for 20 ms, then exec itself with one less depth (a new
/// mm for the same task), or exit.
pub fn exec_child(args: &[String]) -> Result<(), String> {
    let depth: u32 = args
        .first()
        .and_then(|a| a.parse().ok())
        .ok_or("exec-child: expected DEPTH END_NS")?;
    let deadline: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .ok_or("exec-child: expected DEPTH END_NS")?;
    let now = live_clock::monotonic_ns();
    let left = Duration::from_nanos(deadline.saturating_sub(now));
    let end = Instant::now() + left.min(Duration::from_millis(20));
    super::sys::set_thread_name(&format!("cw-exec-{depth}"));
    let errors = Errors::default();
    join_all(spawn_n("cw-exec", 2, move |_| workers(end)), &errors);
    errors.result()?;
    if depth > 0 && live_clock::monotonic_ns() < deadline {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let e = std::process::Command::new(exe)
            .arg(ROLE_FLAG)
            .arg(EXEC_CHILD)
            .arg((depth - 1).to_string())
            .arg(deadline.to_string())
            .exec();
        return Err(format!("exec: {e}"));
    }
    Ok(())
}

/// Threads that set a new CPU mask every 10 ms: a window of 1..=all CPUs at a random start,
/// while they alternate 1 ms busy and 1 ms asleep.
fn affinity(i: u32, seed: u64, cpus: &[usize], end: Instant) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64
        ^ (i as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9)
        ^ seed.wrapping_mul(0x94D0_49BB_1331_11EB);
    if x == 0 {
        x = 1;
    }
    let mut next = || {
        // xorshift64*: deterministic per thread
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let n = cpus.len();
    while running(end) {
        let width = 1 + (next() % n as u64) as usize;
        let start = (next() % n as u64) as usize;
        let set: Vec<usize> = (0..width).map(|k| cpus[(start + k) % n]).collect();
        live_sched::set_affinity_self(&set)?;
        let slice = Instant::now() + Duration::from_millis(10);
        while running(end) && Instant::now() < slice {
            spin_for(Duration::from_millis(1));
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_samples_file_round_trips_and_refuses_other_text() {
        let r = Read {
            samples: vec![
                RseqSample {
                    ts: 41_865_114_000,
                    tid: 300,
                    cpu: 15,
                    cid: 7,
                },
                RseqSample {
                    ts: 1,
                    tid: 4_000_000,
                    cpu: 0,
                    cid: -1,
                },
            ],
            dropped: 3,
        };
        let mut out = Vec::new();
        r.write(&mut out).unwrap();
        let back = Read::parse(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(back.samples, r.samples);
        assert_eq!(back.dropped, 3);
        assert!(Read::parse("1 2 3\n").is_none());
        assert!(Read::parse("dropped x\n").is_none());
        assert!(Read::parse("").is_some_and(|r| r.samples.is_empty()));
    }

    #[test]
    fn names_threads_and_specs() {
        let w = Workload::parse("churn", None, 16).unwrap();
        assert_eq!(w.describe(), "churn threads=8");
        let w = Workload::parse("workers", None, 16).unwrap();
        assert_eq!(w.describe(), "workers threads=16");
        let w = Workload::parse("hogs", Some(3), 16).unwrap();
        assert_eq!(w.describe(), "hogs threads=3");
        let w = Workload::parse("hog:4,churn:100/s", None, 16).unwrap();
        assert_eq!(w.describe(), "hog:4,churn:100/s:2ms");
        let e = |s: &str, t: Option<u32>| Workload::parse(s, t, 4).unwrap_err();
        assert!(e("hog:4", Some(2)).contains("--threads applies"));
        assert!(e("bogus", None).contains("not a workload name"));
        assert!(e("spinner", Some(2)).contains("must be 1"));
        assert!(e("workers", Some(0)).contains("1..=1024"));
        for (n, _, def) in KINDS {
            let line = HELP
                .lines()
                .find(|l| l.starts_with(&format!("  {n} ")))
                .unwrap();
            let default = def.map_or("[CPUs]".to_string(), |d| format!("[{d}]"));
            assert!(line.ends_with(&default), "{line}");
            assert!(Workload::parse(n, None, 4).is_ok(), "{n}");
        }
    }

    #[test]
    fn thread_workloads_run_and_end_on_time() {
        // (forks and exec need a process of their own: tests/vm.rs runs them in the worker role)
        for name in [
            "workers", "churn", "affinity", "spinner", "hogs", "periodic", "migrate", "burst",
            "shrink",
        ] {
            let w = Workload::parse(name, Some(if name == "spinner" { 1 } else { 2 }), 2).unwrap();
            let t = Instant::now();
            let mut read = Read::default();
            w.run(Duration::from_millis(60), 3, &mut read)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let took = t.elapsed();
            assert!(took >= Duration::from_millis(60), "{name} took {took:?}");
            // the workloads of `cidscope live` read their CIDs; the others do not
            let reads = matches!(name, "hogs" | "periodic" | "migrate");
            assert_eq!(!read.samples.is_empty(), reads, "{name}");
        }
    }
}
