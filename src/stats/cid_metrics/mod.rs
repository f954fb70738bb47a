//! CID metrics of a capture, from what it shows, no model needed (docs/metrics.md): how far a
//! process's CIDs sit above its concurrency (span excess), how long they take to come back
//! after a burst (compaction latency), how often a thread's CID changes, and the compactions
//! and scan cost the kernel's `task_mm_cid_work` calls show. `stats --json` has them under
//! `cid_metrics`, one object per process; the key names are a contract.
//!
//! * [`running`]: per process, the threads running at once and the highest CID they hold
//! * [`falls`]: the compaction latency of each fall in concurrency
//! * [`scan_calls`]: the calls of `task_mm_cid_work`, their trigger, cost and batches
//! * [`quantiles`]: count, median, p99, maximum in bounded memory
//! * [`render`]: the text of `stats`

pub mod falls;
pub mod quantiles;
pub mod render;
pub mod running;
pub mod scan_calls;

use crate::events::Tid;
use crate::model::{Missing, MmId};
use quantiles::{Summary, round3};
use serde::Serialize;

/// One process (mm) with rseq_update events.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ProcessMetrics {
    /// Index into `processes`.
    pub mm: u32,
    pub tgid: Option<Tid>,
    pub label: String,
    /// The highest CID any of its threads reported.
    pub max_cid: Option<i32>,
    /// Highest CID held by its running threads + 1, minus how many run at once: the mean over
    /// the time it runs (weighted by time) and the maximum. 0: perfectly compact.
    pub span_excess_mean: Option<f64>,
    pub span_excess_max: Option<u32>,
    /// The time the mean is over: some thread running with a known CID.
    pub running_s: Option<f64>,
    pub compaction_latency_ms: Option<Latency>,
    /// CID changes between a thread's consecutive rseq_updates, per second of thread life
    /// (from each thread's first update to its last).
    pub cid_changes_per_thread_s: Option<f64>,
    pub cid_changes: u64,
    pub compactions: Option<Compactions>,
    pub scan_cost_us: Option<Box<ScanCost>>,
    /// What the capture cannot measure for this process, and why (those keys are null).
    pub unmeasured: Vec<Unmeasured>,
}

/// A metric the capture cannot give for a process, and why. Data, not text: a capture of a
/// million short processes says the same few things of each (written out as the sentence).
#[derive(Debug, Clone, PartialEq)]
pub enum Unmeasured {
    /// Concurrency cannot be read from the capture at all (shared by every process).
    NoConcurrency(&'static str),
    NeverRunning,
    NoRepeat,
    /// The capture shows calls of task_mm_cid_work, none of them by this process.
    NoCallHere,
    /// The capture shows no call of task_mm_cid_work at all.
    NoCalls,
    NoTimedCall,
}

impl Unmeasured {
    pub fn is_compactions(&self) -> bool {
        matches!(self, Unmeasured::NoCallHere | Unmeasured::NoCalls)
    }
}

impl std::fmt::Display for Unmeasured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = scan_calls::TARGET;
        match self {
            Unmeasured::NoConcurrency(why) => {
                write!(f, "span_excess, compaction_latency_ms: {why}")
            }
            Unmeasured::NeverRunning => f.write_str(
                "span_excess, compaction_latency_ms: no thread of the process was seen running with a CID",
            ),
            Unmeasured::NoRepeat => f.write_str(
                "cid_changes_per_thread_s: no thread reported twice (no time between its updates)",
            ),
            Unmeasured::NoCallHere => {
                write!(f, "compactions: no call of {target} by this process")
            }
            Unmeasured::NoCalls => write!(
                f,
                "compactions: the capture shows no call of {target} (function_graph or the cid_scan probe)"
            ),
            Unmeasured::NoTimedCall => {
                write!(f, "scan_cost_us: no timed call of {target} by this process")
            }
        }
    }
}

impl Serialize for Unmeasured {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Falls in concurrency (bursts that ended) and how long the CIDs took to come down.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Latency {
    /// Falls whose CIDs came back below the new concurrency.
    pub count: u64,
    pub p50: Option<f64>,
    pub max: Option<f64>,
    /// Falls the capture ended before resolving.
    pub unresolved: u64,
    /// Falls cut short by a new burst before they resolved.
    pub interrupted: u64,
}

/// Compactions (scans started) by what asked for them.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Compactions {
    pub tick: u64,
    pub resume: u64,
    pub unknown: u64,
    /// `capture`: the calls of task_mm_cid_work it shows; `model`: the capture shows none, the
    /// counts are the model's (stats with a model).
    pub source: &'static str,
    /// Capture: every call seen, those that scanned (a batch each, resume-batch) and the early
    /// exits (scan not due).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanning_calls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_exits: Option<u64>,
}

/// Durations of task_mm_cid_work calls (function_graph), µs, and of scans in batches.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ScanCost {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub scanning: Option<Summary>,
    pub early_exit: Option<Summary>,
    /// resume-batch: one entry per batch index.
    pub per_batch: Vec<BatchCost>,
    /// CPUs per batch (CONFIG_RSEQ_CID_SCAN_BATCH), null when the kernel scans whole.
    pub batch_cpus: Option<u32>,
    /// From one batch's end to the next batch of the same scan (waiting for a return to user).
    pub batch_gap_us: Option<Summary>,
    /// From a scan's first batch to the end of its last.
    pub complete_scan_ms: Option<Summary>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct BatchCost {
    pub batch: u32,
    #[serde(flatten)]
    pub cost: Summary,
}

/// What a task's rseq_updates add to the metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskTally {
    pub first_ts: u64,
    pub last_ts: u64,
    pub last_cid: i32,
    pub changes: u32,
}

impl TaskTally {
    pub fn update(&mut self, ts: u64, cid: i32, first: bool) {
        if first {
            self.first_ts = ts;
        } else if cid != self.last_cid {
            self.changes = self.changes.saturating_add(1);
        }
        self.last_ts = ts;
        self.last_cid = cid;
    }
}

/// What [`build`] needs of a process.
pub struct ProcessIn<'a> {
    pub mm: u32,
    pub tgid: Option<Tid>,
    pub label: &'a str,
    pub cids: &'a [i32],
    /// Its tasks' tallies.
    pub tallies: Vec<TaskTally>,
}

/// The metrics of every process with CIDs, and what the capture as a whole cannot measure.
pub fn build(
    procs: Vec<ProcessIn>,
    running: &running::Running,
    calls: &scan_calls::ScanCalls,
    missing: &[Missing],
) -> (Vec<ProcessMetrics>, Vec<String>) {
    let no = |m: Missing| missing.contains(&m);
    let mut notes = Vec::new();
    if no(Missing::NoEvents) || no(Missing::NoRseqUpdate) {
        notes.push(
            "no rseq_update events: no CIDs to measure (record rseq:rseq_update)".to_string(),
        );
    }
    if !no(Missing::NoRseqUpdate) && no(Missing::NoProcesses) {
        notes.push(
            "no process is known (no TGID column, task_newtask or exec): the metrics are per process (record with options/record-tgid, or perf's pid/tid)".to_string(),
        );
    }
    let no_concurrency = if no(Missing::NoSchedSwitch) {
        Some(
            "no sched_switch events: which threads run at once is unknown (record sched:sched_switch)",
        )
    } else if no(Missing::NoCpu) {
        Some("the capture names no CPU: which threads run at once is unknown")
    } else {
        None
    };
    if let Some(n) = no_concurrency {
        notes.push(format!("span_excess, compaction_latency_ms: {n}"));
    }
    if !calls.graph {
        notes.push(format!(
            "scan_cost_us: no function_graph calls of {} (record them with `cidscope vm --graph-function {0}` or the function_graph tracer with set_graph_function)",
            scan_calls::TARGET
        ));
    }
    let out = procs
        .into_iter()
        .map(|p| process(p, running, calls, no_concurrency))
        .collect();
    (out, notes)
}

fn process(
    p: ProcessIn,
    running: &running::Running,
    calls: &scan_calls::ScanCalls,
    no_concurrency: Option<&'static str>,
) -> ProcessMetrics {
    let mut unmeasured = Vec::new();
    let fig = running
        .figures(MmId(p.mm))
        .filter(|_| no_concurrency.is_none());
    let (mut excess_mean, mut excess_max, mut running_s, mut latency) = (None, None, None, None);
    match (&fig, no_concurrency) {
        (_, Some(why)) => unmeasured.push(Unmeasured::NoConcurrency(why)),
        (Some(f), None) if f.run_ns > 0 => {
            excess_mean = f.excess_mean.map(round3);
            excess_max = f.excess_max.map(u32::from);
            running_s = Some(round3(f.run_ns as f64 / 1e9));
            latency = Some(match &f.episodes {
                Some(e) => {
                    let s = e.latencies.summary(1e6);
                    Latency {
                        count: e.latencies.count(),
                        p50: s.as_ref().map(|s| s.p50),
                        max: s.as_ref().map(|s| s.max),
                        unresolved: e.unresolved,
                        interrupted: e.interrupted,
                    }
                }
                // never two threads at once: no fall to measure
                None => Latency {
                    count: 0,
                    p50: None,
                    max: None,
                    unresolved: 0,
                    interrupted: 0,
                },
            });
        }
        _ => unmeasured.push(Unmeasured::NeverRunning),
    }
    let (changes, life_ns) = p.tallies.iter().fold((0u64, 0u64), |(c, l), t| {
        (c + t.changes as u64, l + (t.last_ts - t.first_ts))
    });
    let per_thread_s = (life_ns > 0).then(|| round3(changes as f64 / (life_ns as f64 / 1e9)));
    if per_thread_s.is_none() {
        unmeasured.push(Unmeasured::NoRepeat);
    }
    let mc = calls.per_mm.get(&p.mm);
    let compactions = mc.filter(|_| calls.any()).map(|m| Compactions {
        tick: m.compactions[0],
        resume: m.compactions[1],
        unknown: m.compactions[2],
        source: "capture",
        calls: Some(m.calls),
        scanning_calls: Some(m.scanning_calls),
        early_exits: Some(m.early_exits),
    });
    let scan_cost = mc.filter(|_| calls.graph).and_then(|m| scan_cost(m, calls));
    if compactions.is_none() {
        unmeasured.push(if calls.any() {
            Unmeasured::NoCallHere
        } else {
            Unmeasured::NoCalls
        });
    }
    if scan_cost.is_none() && calls.graph {
        unmeasured.push(Unmeasured::NoTimedCall);
    }
    ProcessMetrics {
        mm: p.mm,
        tgid: p.tgid,
        label: p.label.to_string(),
        max_cid: p.cids.iter().copied().max(),
        span_excess_mean: excess_mean,
        span_excess_max: excess_max,
        running_s,
        compaction_latency_ms: latency,
        cid_changes_per_thread_s: per_thread_s,
        cid_changes: changes,
        compactions,
        scan_cost_us: scan_cost.map(Box::new),
        unmeasured,
    }
}

fn scan_cost(m: &scan_calls::MmCalls, calls: &scan_calls::ScanCalls) -> Option<ScanCost> {
    let all = m.all.summary(1e3)?;
    Some(ScanCost {
        count: all.count,
        p50: all.p50,
        p99: all.p99,
        max: all.max,
        scanning: m.scanning.summary(1e3),
        early_exit: m.early_exit.summary(1e3),
        per_batch: m
            .per_batch
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                Some(BatchCost {
                    batch: i as u32,
                    cost: q.summary(1e3)?,
                })
            })
            .collect(),
        batch_cpus: calls.batch_cpus(),
        batch_gap_us: m.batch_gap.summary(1e3),
        complete_scan_ms: m.complete_scan.summary(1e6),
    })
}

/// The span excess and highest running CID of process `mm` over time, in bins of `bin_ns`
/// from its first run (for figures); `None` when it never ran two threads at once.
pub fn series(trace: &crate::events::Trace, mm: MmId, bin_ns: u64) -> Option<running::Series> {
    struct Feed(running::Running);
    impl crate::model::observed::Sink for Feed {
        fn cpu_changed(&mut self, ts: u64, cpu: u16, slot: &crate::model::CpuSlot) {
            self.0.slot_changed(ts, cpu, slot);
        }
    }
    let ncpus = trace.cpu_count().max(1);
    let mut state = crate::model::ObservedState::new(ncpus as usize);
    let ctx = crate::model::Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut feed = Feed(running::Running::new(Some(bin_ns.max(1))));
    let mut last = 0;
    for ev in trace.events.iter() {
        state.apply(&ev, &ctx, &mut feed);
        last = last.max(ev.ts);
    }
    feed.0.finish(last);
    feed.0.figures(mm)?.series.cloned()
}

/// Where the capture shows no call, the model's compactions (with their source said).
pub fn fill_from_model(metrics: &mut [ProcessMetrics], model: impl Fn(u32) -> Option<(u64, u64)>) {
    for m in metrics.iter_mut().filter(|m| m.compactions.is_none()) {
        if let Some((tick, resume)) = model(m.mm) {
            m.compactions = Some(Compactions {
                tick,
                resume,
                unknown: 0,
                source: "model",
                calls: None,
                scanning_calls: None,
                early_exits: None,
            });
            m.unmeasured.retain(|u| !u.is_compactions());
        }
    }
}
