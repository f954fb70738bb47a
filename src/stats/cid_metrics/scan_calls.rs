//! The compactions a capture shows: the calls of `task_mm_cid_work` in a function_graph
//! capture (with their durations) or its `cid_scan` CID probe, each with the trigger that made
//! it run (docs/metrics.md).
//!
//! Where the call runs says who asked for it. In 6.4–6.18 (lazy-compact) it is a task work
//! that only the tick queues (`task_tick_mm_cid`), run on the way back to user space before
//! `rseq_handle_notify_resume`: the call comes *before* the return's `rseq_update`. With the
//! seed-000 patches (resume-batch) `__rseq_handle_notify_resume` calls it right *after* its
//! `rseq_update`; it was asked for by the switch or migration that set TIF_NOTIFY_RESUME
//! (`resume`), or by the tick of a task that ran 100 ms unpreempted (`tick`): the first return
//! to user after a switch-in is the former, a later one after a tick the latter. When the
//! capture's kernel is known its call site decides the path; otherwise the order of the
//! records does.
//!
//! A call that scanned differs from an early exit (period not due) by what it called: a
//! scanning call visits CPU slots (`sched_mm_cid_remote_clear*`, RCU read locks, the cidmask
//! weight); an early exit calls nothing, or only the batch's first CPU (`cpumask_nth`). The
//! resume-batch kernel scans in batches of CONFIG_RSEQ_CID_SCAN_BATCH CPUs, one per call: a
//! compaction is the first batch of a complete scan, and its trigger is that call's.

use super::quantiles::Quantiles;
use crate::events::{CPU_UNKNOWN, Event, EventKind, Probe, StrId, Strings, TID_UNKNOWN, Tid};
use crate::model::MmId;
use crate::model::observed::ObservedState;
use crate::model::policies::PolicyKind;
use rustc_hash::FxHashMap;

pub const TARGET: &str = "task_mm_cid_work";

/// Functions a call that exits early may still call (the batch's first CPU, resume-batch).
const PROLOGUE: [&str; 3] = ["cpumask_nth", "find_nth_bit", "__find_nth_bit"];

/// The tracer's own functions inside a call (a kprobe CID probe on a kernel without fprobes
/// runs `kprobe_ftrace_handler` in the call it probes): not the call's work, and their time is
/// taken out of its duration.
const MACHINERY: [&str; 11] = [
    "kprobe_",
    "kretprobe_",
    "get_kprobe",
    "fprobe",
    "__fprobe",
    "rethook_",
    "arch_rethook",
    "ftrace_",
    "__ftrace",
    "trace_event_",
    "perf_trace_",
];

fn machinery(name: &str) -> bool {
    MACHINERY.iter().any(|p| name.starts_with(p))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    Tick,
    Resume,
    Unknown,
}

/// Where the kernel calls the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallPath {
    /// A task work queued by the tick (lazy-compact).
    TaskWork,
    /// `__rseq_handle_notify_resume` (resume-batch).
    NotifyResume,
    /// Unknown kernel: from the order of the records.
    ByOrder,
}

#[derive(Clone, Copy, Debug)]
struct OpenCall {
    tid: Tid,
    start: u64,
    /// Open child frames (`func() {` whose `}` has not come).
    depth: u32,
    /// The depth of the outermost tracer frame open (0: none): what runs inside it is not the
    /// call's.
    mach_depth: u32,
    /// Time in the tracer's own functions, taken out of the duration.
    machinery_ns: u64,
    /// Direct children that are neither the batch prologue nor the tracer's.
    work: u32,
    clears: u32,
    clear_min_cpu: u32,
    trigger: Trigger,
    /// From the `cid_scan` probe alone: no duration, ends at the CPU's next record.
    probe: bool,
}

impl OpenCall {
    /// A call of the target begun at `start` by `tid`, nothing seen inside it yet.
    fn begun(tid: Tid, start: u64, trigger: Trigger, probe: bool) -> Self {
        OpenCall {
            tid,
            start,
            depth: 0,
            mach_depth: 0,
            machinery_ns: 0,
            work: 0,
            clears: 0,
            clear_min_cpu: u32::MAX,
            trigger,
            probe,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct CpuCalls {
    cur: Tid,
    switch_in: u64,
    last_tick: u64,
    /// The current task's last two rseq_updates on this CPU since its switch-in (0: none).
    last_update: u64,
    prev_update: u64,
    /// The CPU's last record (probes and graph calls aside) was its task's rseq_update.
    after_own_update: bool,
    open: Option<OpenCall>,
}

/// The calls of one process.
#[derive(Clone, Debug, Default)]
pub struct MmCalls {
    pub calls: u64,
    /// Calls that scanned (a batch each with resume-batch) and early exits, timed or not.
    pub scanning_calls: u64,
    pub early_exits: u64,
    pub all: Quantiles,
    pub scanning: Quantiles,
    pub early_exit: Quantiles,
    /// By batch index (resume-batch).
    pub per_batch: Vec<Quantiles>,
    /// From the end of a batch to the start of the next of the same scan.
    pub batch_gap: Quantiles,
    /// From the start of a scan's first batch to the end of its last.
    pub complete_scan: Quantiles,
    /// Compactions (scans started) by trigger: tick, resume, unknown.
    pub compactions: [u64; 3],
    /// Calls whose end the capture does not show (cut at a switch or the end).
    pub unclosed: u64,
    /// `cid_scan` probes alone: calls that cleared no slot (scanned or not, unknown).
    pub probe_unknown: u64,
    next_batch: u32,
    scan_start: u64,
    last_batch_end: u64,
}

#[derive(Default)]
pub struct ScanCalls {
    cpus: Vec<CpuCalls>,
    names: Names,
    path: Option<CallPath>,
    /// CPUs per batch and batches per complete scan (None: not known).
    batches: Option<(u32, u32)>,
    /// Calls shown by the function_graph tracer (then `cid_scan` probes are not counted again).
    pub graph: bool,
    pub probes: bool,
    pub per_mm: FxHashMap<u32, MmCalls>,
}

/// The interned names the calls are recognized by, looked up again as the strings grow.
#[derive(Default)]
struct Names {
    seen: usize,
    target: Option<StrId>,
    exit: Option<StrId>,
    prologue: Vec<StrId>,
}

impl Names {
    fn refresh(&mut self, s: &Strings) {
        if s.len() == self.seen {
            return;
        }
        self.seen = s.len();
        self.target = s.find(TARGET.as_bytes());
        self.exit = s.find(b"funcgraph_exit");
        self.prologue = PROLOGUE
            .iter()
            .filter_map(|p| s.find(p.as_bytes()))
            .collect();
    }
}

impl ScanCalls {
    /// The kernel's call site and batch size, from what the capture names.
    fn setup(&mut self, meta: &crate::events::Trace) {
        let known = meta
            .kernel_release
            .as_deref()
            .and_then(|r| crate::model::kernel::model_for_kernel(r, meta.kernel_scan_batch))
            .and_then(|k| k.policy);
        let ncpus = meta
            .ncpus_hint
            .filter(|&n| n > 0 && n <= crate::events::Trace::MAX_CPUS);
        (self.path, self.batches) = match known {
            Some(PolicyKind::LazyCompact) => (Some(CallPath::TaskWork), Some((u32::MAX, 1))),
            Some(PolicyKind::ResumeBatch) => {
                let b = meta.kernel_scan_batch.unwrap_or(8).max(1);
                (
                    Some(CallPath::NotifyResume),
                    ncpus.map(|n| (b, n.div_ceil(b))),
                )
            }
            _ => (Some(CallPath::ByOrder), None),
        };
    }

    /// One event, after the observed state applied it (`state` knows the task's process).
    pub fn event(&mut self, ev: &Event, state: &ObservedState, meta: &crate::events::Trace) {
        if ev.cpu == CPU_UNKNOWN || ev.cpu as u32 >= crate::events::Trace::MAX_CPUS {
            return;
        }
        match ev.kind {
            EventKind::Function { name, duration_ns } => {
                self.names.refresh(&meta.strings);
                self.function(ev, name, duration_ns, state, meta);
                return;
            }
            EventKind::Probe { probe, num, .. } => {
                self.probe(ev, probe, num, state, meta);
                return;
            }
            _ => {}
        }
        let c = ev.cpu as usize;
        let cpu = self.cpu(ev.cpu, meta);
        if let Some(o) = cpu.open {
            if o.probe {
                cpu.open = None;
                let mm = state.mm_of(o.tid);
                Self::close(&mut self.per_mm, self.batches, mm, o, ev.ts, None);
            } else if matches!(ev.kind, EventKind::SchedSwitch { .. }) {
                cpu.open = None;
                let mm = state.mm_of(o.tid);
                self.per_mm.entry(mm.0).or_default().unclosed += 1;
            }
        }
        let cpu = &mut self.cpus[c];
        if ev.tid != cpu.cur && ev.tid != TID_UNKNOWN {
            cpu.switched(ev.ts, ev.tid);
        }
        cpu.after_own_update = false;
        match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => cpu.switched(ev.ts, next_tid),
            EventKind::RseqUpdate { .. } if ev.tid == cpu.cur => {
                cpu.prev_update = cpu.last_update;
                cpu.last_update = ev.ts;
                cpu.after_own_update = true;
            }
            EventKind::Tick if cpu.cur != 0 => cpu.last_tick = ev.ts,
            _ => {}
        }
    }

    fn cpu(&mut self, c: u16, meta: &crate::events::Trace) -> &mut CpuCalls {
        if self.path.is_none() {
            self.setup(meta);
        }
        let c = c as usize;
        if c >= self.cpus.len() {
            self.cpus.resize(c + 1, CpuCalls::default());
        }
        &mut self.cpus[c]
    }

    fn function(
        &mut self,
        ev: &Event,
        name: StrId,
        duration_ns: u32,
        state: &ObservedState,
        meta: &crate::events::Trace,
    ) {
        let is_target = Some(name) == self.names.target;
        let is_exit = Some(name) == self.names.exit;
        let prologue = self.names.prologue.contains(&name);
        if !is_target
            && self
                .cpus
                .get(ev.cpu as usize)
                .is_none_or(|c| c.open.is_none())
        {
            return;
        }
        if is_target {
            self.graph = true;
        }
        let path = self.path;
        let cpu = self.cpu(ev.cpu, meta);
        let dur = (duration_ns != u32::MAX).then_some(duration_ns as u64);
        match cpu.open.as_mut() {
            Some(o) if !o.probe => {
                if is_exit {
                    if o.depth > 0 {
                        if o.mach_depth == o.depth {
                            o.machinery_ns += dur.unwrap_or(0);
                            o.mach_depth = 0;
                        }
                        o.depth -= 1;
                    } else {
                        let o = *o;
                        cpu.open = None;
                        let mm = state.mm_of(o.tid);
                        let net = dur.map(|d| d.saturating_sub(o.machinery_ns));
                        Self::close(&mut self.per_mm, self.batches, mm, o, ev.ts, net);
                    }
                } else if o.mach_depth == 0 {
                    let tracer = machinery(meta.strings.get_str(name));
                    let direct = o.depth == 0;
                    match dur {
                        // `func() {`
                        None => {
                            o.depth = o.depth.saturating_add(1);
                            if tracer {
                                o.mach_depth = o.depth;
                            }
                        }
                        Some(d) if tracer => o.machinery_ns += d,
                        Some(_) => {}
                    }
                    if direct && !tracer && !prologue {
                        o.work += 1;
                    }
                } else if dur.is_none() {
                    o.depth = o.depth.saturating_add(1);
                }
            }
            _ if is_target => {
                let trigger = cpu.trigger(ev.tid, path.unwrap_or(CallPath::ByOrder));
                let o = OpenCall::begun(ev.tid, ev.ts, trigger, false);
                match dur {
                    // `task_mm_cid_work() {`: its children and exit follow
                    None => cpu.open = Some(o),
                    // a leaf: it called nothing
                    Some(d) => {
                        let mm = state.mm_of(ev.tid);
                        Self::close(&mut self.per_mm, self.batches, mm, o, ev.ts + d, Some(d));
                    }
                }
            }
            _ => {}
        }
    }

    fn probe(
        &mut self,
        ev: &Event,
        probe: Probe,
        num: u32,
        state: &ObservedState,
        meta: &crate::events::Trace,
    ) {
        match probe {
            Probe::Scan if !self.graph => {
                self.probes = true;
                let path = self.path;
                let cpu = self.cpu(ev.cpu, meta);
                if let Some(o) = cpu.open.take() {
                    let mm = state.mm_of(o.tid);
                    Self::close(&mut self.per_mm, self.batches, mm, o, ev.ts, None);
                }
                let cpu = self.cpu(ev.cpu, meta);
                let trigger = cpu.trigger(ev.tid, path.unwrap_or(CallPath::ByOrder));
                cpu.open = Some(OpenCall::begun(ev.tid, ev.ts, trigger, true));
            }
            Probe::RemoteClear => {
                if let Some(o) = self
                    .cpus
                    .get_mut(ev.cpu as usize)
                    .and_then(|c| c.open.as_mut())
                {
                    o.clears += 1;
                    o.clear_min_cpu = o.clear_min_cpu.min(num);
                }
            }
            _ => {}
        }
    }

    /// A call ended at `end` (its duration when shown).
    fn close(
        per_mm: &mut FxHashMap<u32, MmCalls>,
        batches: Option<(u32, u32)>,
        mm: MmId,
        o: OpenCall,
        end: u64,
        dur: Option<u64>,
    ) {
        let m = per_mm.entry(mm.0).or_default();
        m.calls += 1;
        if let Some(d) = dur {
            m.all.add(d);
        }
        let scanned = if o.probe {
            // only a clear says the probe's call scanned
            if o.clears == 0 {
                m.probe_unknown += 1;
                return;
            }
            true
        } else {
            o.work > 0 || o.clears > 0
        };
        if !scanned {
            m.early_exits += 1;
            if let Some(d) = dur {
                m.early_exit.add(d);
            }
            return;
        }
        m.scanning_calls += 1;
        if let Some(d) = dur {
            m.scanning.add(d);
        }
        let (batch, nbatches) = match batches {
            Some((b, n)) if n > 1 => {
                // the clears name the batch's CPUs; else the scan's order
                let k = if o.clears > 0 && b != u32::MAX {
                    (o.clear_min_cpu / b).min(n - 1)
                } else {
                    m.next_batch % n
                };
                (k, n)
            }
            _ => (0, 1),
        };
        if nbatches > 1 {
            if m.per_batch.len() <= batch as usize {
                m.per_batch.resize(batch as usize + 1, Quantiles::default());
            }
            if let Some(d) = dur {
                m.per_batch[batch as usize].add(d);
            }
            if batch > 0 && m.scan_start > 0 && batch == m.next_batch {
                m.batch_gap.add(o.start.saturating_sub(m.last_batch_end));
            }
        }
        if batch == 0 {
            m.compactions[match o.trigger {
                Trigger::Tick => 0,
                Trigger::Resume => 1,
                Trigger::Unknown => 2,
            }] += 1;
            m.scan_start = o.start.max(1);
        }
        if nbatches > 1 && batch + 1 == nbatches && m.scan_start > 0 && dur.is_some() {
            m.complete_scan.add(end.saturating_sub(m.scan_start));
        }
        m.last_batch_end = end;
        m.next_batch = (batch + 1) % nbatches;
    }

    /// The capture ended: calls still open are counted as unclosed.
    pub fn finish(&mut self, state: &ObservedState) {
        for c in &mut self.cpus {
            if let Some(o) = c.open.take() {
                self.per_mm
                    .entry(state.mm_of(o.tid).0)
                    .or_default()
                    .unclosed += 1;
            }
        }
    }

    /// CPUs per batch where the kernel scans in batches.
    pub fn batch_cpus(&self) -> Option<u32> {
        self.batches.filter(|&(_, n)| n > 1).map(|(b, _)| b)
    }

    /// Calls were seen (from the graph or the probes).
    pub fn any(&self) -> bool {
        self.graph || self.probes
    }
}

impl CpuCalls {
    fn switched(&mut self, ts: u64, tid: Tid) {
        if tid == self.cur {
            return;
        }
        self.cur = tid;
        self.switch_in = ts;
        self.last_update = 0;
        self.prev_update = 0;
    }

    /// What asked for a call by `tid` starting now.
    fn trigger(&self, tid: Tid, path: CallPath) -> Trigger {
        let own = tid == self.cur;
        let path = match path {
            CallPath::ByOrder if own && self.after_own_update => CallPath::NotifyResume,
            CallPath::ByOrder => {
                // a task work: a tick while it ran since its last return to user
                return if own && self.last_tick > self.last_update.max(self.switch_in) {
                    Trigger::Tick
                } else {
                    Trigger::Unknown
                };
            }
            p => p,
        };
        match path {
            CallPath::TaskWork => Trigger::Tick,
            _ if !own || self.last_update == 0 => Trigger::Unknown,
            // the first return to user since the switch-in (TIF_NOTIFY_RESUME from the switch)
            _ if self.prev_update == 0 => Trigger::Resume,
            // a later return: a tick since the previous one asked for it
            _ if self.last_tick > self.prev_update => Trigger::Tick,
            _ => Trigger::Unknown,
        }
    }
}
