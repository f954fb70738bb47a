//! The simulator: `cidscope sim`. A deterministic schedule of a synthetic workload
//! ([`sched`]) is written as canonical events (a [`Trace`] of [`Origin::Sim`]) and run through
//! a CID policy model as it is generated; [`record`] writes it as ftrace text that
//! `cidscope stats FILE --policy P` replays to the same run.
//!
//! Workloads (all start as a shell forking a process that execs the workload, so every mm
//! begins inside the trace):
//! * `cyclictest`: T RT timer threads (default 1), thread i with period 100 µs + 500 µs·i
//!   (cyclictest `-i 100`, default distance 500 µs) pinned to CPU i, 5 µs per wakeup, wake
//!   latency 2–3 µs; the main thread waits. (The seed's V12 envelope: 16 batches of 8 CPUs on
//!   128 CPUs one wakeup apart give a complete scan of 1.5 ms plus the last call.)
//! * `hackbench`: T single-threaded processes (default 40, `hackbench -p` style: forked, no
//!   exec), each running 5–40 µs then sleeping around its own mean (110–700 µs, ±50 %): the
//!   per-mm wake rate of message passing, without modelling the pipes.
//! * `hogs`: T busy threads of one process (default 3P/2), 3 ms slices.
//! * `churn`: batches of T threads (default 6) that spin 200 µs and exit; joined; 5 ms pause.
//! * `spinner`: one thread spinning on the last CPU (V3/V4/V11) + T−1 sleepers.

pub mod config;
pub mod cost;
pub mod memory;
pub mod record;
pub mod sched;

pub use config::{SimConfig, Workload};
pub use memory::{EVENT_BYTES, SimError, memory_plan, min_events};

use crate::events::{Origin, Trace};
use crate::model::MmId;
use crate::model::policies::{
    JiffiesClock, Params, PolicyKind, PolicyRun, Replayer, Trigger, batches_per_scan,
    cpus_for_scan_period,
};
use serde::Serialize;

/// min / median / max of a sample.
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(v: &mut [f64]) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Spread {
            min: v[0],
            median: v[v.len() / 2],
            max: v[v.len() - 1],
        })
    }
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct WeightSummary {
    pub min: u32,
    pub max: u32,
    /// Time-weighted mean over the workload's processes.
    pub mean: f64,
}

#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub tick: u64,
    pub resume: u64,
}

/// `sim --json`. Keys are a contract: add freely, never rename.
#[derive(Serialize, Debug, Clone)]
pub struct SimSummary {
    pub policy: &'static str,
    pub workload: &'static str,
    pub cpus: u32,
    pub hz: u32,
    pub batch: u32,
    pub threads: u32,
    pub duration_ms: f64,
    pub seed: u64,
    pub regime: &'static str,
    pub scan: &'static str,
    pub nohz_full: Vec<u32>,
    /// Canonical events of the schedule, and driver events the model handled.
    pub events: u64,
    pub model_events: u64,
    /// Processes of the workload (mms with at least one rseq_update).
    pub processes: u64,
    pub complete_scans: u64,
    /// Batches in a complete scan (resume-batch: ceil(P/B); lazy-compact: 1).
    pub batches_per_complete_scan: Option<u32>,
    /// First batch's start to last batch's end, per complete scan.
    pub complete_scan_ms: Option<Spread>,
    /// Between consecutive batches of one scan.
    pub batch_delay_us: Option<Spread>,
    /// Cost of the calls that scanned.
    pub call_cost_us: Option<Spread>,
    pub cids_used: Vec<i32>,
    pub weight: Option<WeightSummary>,
    pub rseq_updates: u64,
    /// Attempts that scanned, by trigger.
    pub compactions: Counts,
    /// All attempts, including gated no-ops.
    pub compaction_attempts: Counts,
    pub mode_changes: u64,
    pub alarms: u64,
    pub violations: u64,
    /// CPUs at which a complete scan would take 100 ms at the slowest measured batch rate
    /// (V12: 15 ms per 16 batches of 8 → 853).
    pub cpus_for_100ms_scan: Option<f64>,
}

/// A finished simulation.
pub struct SimOutput {
    pub trace: Trace,
    pub run: PolicyRun,
    pub summary: SimSummary,
    /// The run stopped at [`SimConfig::max_events`], at this simulated time.
    pub capped_at: Option<u64>,
}

/// Runs one simulation.
pub fn simulate(cfg: &SimConfig) -> SimOutput {
    // the simulated kernel's ticks run at their boundaries and its idle CPUs stop ticking
    // without a `tick_stop`: its jiffies are the boundaries (docs/models.md §5.4)
    let params = Params {
        jiffies: JiffiesClock::Boundaries,
        ..cfg.params.clone()
    };
    let mut rep = Replayer::new(cfg.policy, params, 0);
    rep.compare = false;
    // the launching shell never reports a CID: not modelled, as in a replay of the trace
    rep.quiet_tids.insert(sched::SHELL_TID);
    let mut sim = sched::Sim::new(cfg, rep);
    sim.run();
    let mut trace = std::mem::replace(&mut sim.trace, Trace::new("", Origin::Sim));
    trace.tasks = std::mem::take(&mut sim.meta);
    let rep = std::mem::replace(
        &mut sim.rep,
        Replayer::new(cfg.policy, Params::with_cpus(1), 0),
    );
    let capped_at = sim.capped_at;
    let run = rep.finish();
    let summary = summarize(cfg, &trace, &run);
    SimOutput {
        trace,
        run,
        summary,
        capped_at,
    }
}

fn summarize(cfg: &SimConfig, trace: &Trace, run: &PolicyRun) -> SimSummary {
    let p = &cfg.params;
    let end = cfg.duration_ns;
    // workload mms: those with updates
    let mut mms: Vec<MmId> = run.updates.iter().map(|u| u.mm).collect();
    mms.sort_unstable();
    mms.dedup();
    let mut cids: Vec<i32> = run.updates.iter().map(|u| u.cid).collect();
    cids.sort_unstable();
    cids.dedup();
    // complete scans, their batches and durations
    let mut durations = Vec::new();
    let mut delays = Vec::new();
    let mut batches_seen: Vec<u32> = Vec::new();
    let mut open: rustc_hash::FxHashMap<MmId, (u64, u64)> = Default::default();
    for c in run.compactions.iter().filter(|c| c.scanned) {
        let (k, n) = c.batch.unwrap_or((1, 1));
        if k == 1 {
            open.insert(c.mm, (c.ts, c.ts));
        } else if let Some(o) = open.get_mut(&c.mm) {
            delays.push((c.ts - o.1) as f64 / 1e3);
            o.1 = c.ts;
        }
        if k == n
            && let Some((start, _)) = open.remove(&c.mm)
        {
            durations.push((c.ts + c.cost_ns - start) as f64 / 1e6);
            batches_seen.push(n);
        }
    }
    let mut costs: Vec<f64> = run
        .compactions
        .iter()
        .filter(|c| c.scanned)
        .map(|c| c.cost_ns as f64 / 1e3)
        .collect();
    let mut counts = Counts::default();
    let mut attempts = Counts::default();
    for c in &run.compactions {
        let slot = |x: &mut Counts| match c.trigger {
            Trigger::Tick => x.tick += 1,
            Trigger::Resume => x.resume += 1,
        };
        slot(&mut attempts);
        if c.scanned {
            slot(&mut counts);
        }
    }
    let bpcs = mode(&batches_seen);
    let complete = Spread::of(&mut durations);
    let cpus_100 = match (complete, bpcs) {
        (Some(s), Some(n)) if cfg.policy == PolicyKind::ResumeBatch && n > 0 => {
            Some(cpus_for_scan_period(s.max / n as f64, p.batch, 100.0))
        }
        _ => None,
    };
    SimSummary {
        policy: cfg.policy.id(),
        workload: cfg.workload.id(),
        cpus: p.cpus,
        hz: p.hz,
        batch: p.batch,
        threads: cfg.threads(),
        duration_ms: cfg.duration_ns as f64 / 1e6,
        seed: cfg.seed,
        regime: p.regime_for(cfg.policy).id(),
        scan: match p.scan {
            crate::model::policies::ScanScope::All => "all",
            crate::model::policies::ScanScope::Visited => "visited",
        },
        nohz_full: cfg.nohz_full.iter().collect(),
        events: trace.events.len() as u64,
        model_events: run.model_events,
        processes: mms.len() as u64,
        complete_scans: batches_seen.len() as u64,
        batches_per_complete_scan: bpcs,
        complete_scan_ms: complete,
        batch_delay_us: Spread::of(&mut delays),
        call_cost_us: Spread::of(&mut costs),
        cids_used: cids,
        weight: weight_summary(run, &mms, end),
        rseq_updates: run.updates.len() as u64,
        compactions: counts,
        compaction_attempts: attempts,
        mode_changes: run.modes.len() as u64,
        alarms: run.alarms.len() as u64,
        violations: run.violations.len() as u64,
        cpus_for_100ms_scan: cpus_100,
    }
}

fn mode(v: &[u32]) -> Option<u32> {
    let mut best: Option<(u32, usize)> = None;
    for &x in v {
        let n = v.iter().filter(|&&y| y == x).count();
        if best.is_none_or(|(_, c)| n > c) {
            best = Some((x, n));
        }
    }
    best.map(|b| b.0)
}

fn weight_summary(run: &PolicyRun, mms: &[MmId], end: u64) -> Option<WeightSummary> {
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    let mut means = Vec::new();
    for &mm in mms {
        let series = run.weight_series(mm);
        let Some(first) = series.iter().position(|w| w.1 > 0) else {
            continue;
        };
        let series = &series[first..];
        let (mut area, mut span) = (0f64, 0f64);
        for (i, &(ts, w)) in series.iter().enumerate() {
            let until = series.get(i + 1).map_or(end.max(ts), |n| n.0);
            area += w as f64 * (until - ts) as f64;
            span += (until - ts) as f64;
            lo = lo.min(w);
            hi = hi.max(w);
        }
        if span > 0.0 {
            means.push(area / span);
        }
    }
    if means.is_empty() {
        return None;
    }
    Some(WeightSummary {
        min: lo,
        max: hi,
        mean: means.iter().sum::<f64>() / means.len() as f64,
    })
}

/// Expected batches per complete scan for a config (ceil(P/B) for resume-batch).
pub fn expected_batches(cfg: &SimConfig) -> u32 {
    batches_per_scan(cfg.params.cpus, cfg.params.batch)
}
