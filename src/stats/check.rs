//! `cidscope FILE --check`: the rseq guarantees checked over a capture. A finding in observed
//! data means the kernel broke its promise (or the capture lies): worth a bug report. What the
//! capture cannot support is not judged, and the report says what was not checked and why.

use crate::events::{Trace, fmt_ts};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::{Alarm, AlarmKind, Anomalies, Anomaly, AnomalyKind, Coverage, MmId, MmInfo};
use std::fmt::Write;

/// Exit statuses of `--check` (a contract, documented in `--help` and docs/headless.md).
pub mod status {
    /// Both checks ran and found nothing.
    pub const CLEAN: u8 = 0;
    /// At least one finding.
    pub const FINDINGS: u8 = 1;
    /// Nothing could be checked: no events, no rseq_update, or neither check possible.
    pub const NOTHING_CHECKED: u8 = 3;
    /// One of the two checks could not run; the other found nothing.
    pub const PARTLY_CHECKED: u8 = 4;
}

pub struct CheckReport {
    pub findings: usize,
    pub text: String,
    /// Which guarantees the capture let the check judge.
    pub checked: crate::model::Checkable,
}

impl CheckReport {
    /// The exit status (see [`status`]).
    pub fn status(&self) -> u8 {
        match (self.findings, self.checked.duplicates, self.checked.bound) {
            (n, _, _) if n > 0 => status::FINDINGS,
            (_, true, true) => status::CLEAN,
            (_, false, false) => status::NOTHING_CHECKED,
            _ => status::PARTLY_CHECKED,
        }
    }
}

#[derive(Default)]
struct Collect {
    alarms: Vec<Alarm>,
    anomalies: Anomalies,
    mms: usize,
}

impl Sink for Collect {
    fn new_mm(&mut self, _: MmId, _: MmInfo) {
        self.mms += 1;
    }
    fn cpu_changed(&mut self, _: u64, _: u16, _: &CpuSlot) {}
    fn alarm(&mut self, a: Alarm) {
        self.alarms.push(a);
    }
    fn anomaly(&mut self, a: Anomaly) {
        self.anomalies.add(a);
    }
}

impl CheckReport {
    /// Adds a model run's broken invariants and ABI alarms as findings.
    pub fn add_model(&mut self, run: &crate::model::policies::PolicyRun) {
        let policy = run.policy.id();
        for v in &run.violations {
            let _ = writeln!(
                self.text,
                "FINDING {} model {policy}: invariant {} broken: {}",
                fmt_ts(v.ts),
                v.invariant,
                v.detail
            );
        }
        for a in &run.alarms {
            let _ = writeln!(
                self.text,
                "FINDING {} model {policy} cpu {}: {}",
                fmt_ts(a.ts),
                a.cpu,
                a.describe()
            );
        }
        let n = run.violations.len() + run.alarms.len();
        let _ = writeln!(
            self.text,
            "model {policy}: {n} findings ({} invariant breaks, {} ABI alarms) over {} model events",
            run.violations.len(),
            run.alarms.len(),
            run.model_events
        );
        self.findings += n;
    }
}

/// Events on CPUs at or past the count the capture's header states: (CPU, events, first ts).
fn beyond_header(trace: &Trace, ncpus: u32) -> Vec<(u16, u64, u64)> {
    let mut out: std::collections::BTreeMap<u16, (u64, u64)> = Default::default();
    for e in trace.events.iter() {
        if e.cpu != crate::events::CPU_UNKNOWN
            && u32::from(e.cpu) >= ncpus
            && !matches!(e.kind, crate::events::EventKind::Lost { .. })
        {
            out.entry(e.cpu).or_insert((0, e.ts)).0 += 1;
        }
    }
    out.into_iter().map(|(c, (n, ts))| (c, n, ts)).collect()
}

pub fn run(trace: &Trace) -> CheckReport {
    // The bound is the CPU count the header states (`#P:2`, `cpus=2`, perf's nr_cpus): an
    // event past it is a finding of its own, never a reason to widen the bound.
    let stated = trace
        .ncpus_hint
        .filter(|&n| (1..=Trace::MAX_CPUS).contains(&n));
    let ncpus = stated.unwrap_or_else(|| trace.cpu_count());
    let beyond = stated.map_or_else(Vec::new, |n| beyond_header(trace, n));
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut state = ObservedState::new(ncpus as usize);
    let mut sink = Collect::default();
    let mut coverage = Coverage::default();
    let mut unknown = std::collections::BTreeSet::new();
    for ev in &trace.events {
        state.apply(&ev, &ctx, &mut sink);
        coverage.count(&ev);
        if matches!(ev.kind, crate::events::EventKind::RseqUpdate { .. })
            && state.mm_of(ev.tid) == MmId::UNKNOWN
        {
            unknown.insert(ev.tid);
        }
    }
    // (duplicates held back until their holder's next record, raised with their own time)
    state.flush(&mut sink);
    sink.alarms.sort_by_key(|a| a.ts);
    coverage.facts(trace);
    let checked = coverage.checkable();
    let missing = coverage.missing();
    sink.alarms.retain(|a| checked.judges(&a.kind));
    if coverage.cpu_unknown {
        sink.anomalies
            .retain(|k| !matches!(k, AnomalyKind::CpuIdMismatch { .. }));
    }
    let mut text = String::new();
    let dup = sink
        .alarms
        .iter()
        .filter(|a| matches!(a.kind, AlarmKind::DuplicateCid { .. }))
        .count();
    let range = sink.alarms.len() - dup;
    for a in &sink.alarms {
        let _ = writeln!(
            text,
            "FINDING {} cpu {}: {}",
            fmt_ts(a.ts),
            a.cpu,
            a.describe_observed()
        );
    }
    // what the capture itself breaks: events past its CPUs, a task on two CPUs at once
    for &(cpu, n, ts) in &beyond {
        let _ = writeln!(
            text,
            "FINDING {} cpu {cpu}: {n} events on CPU {cpu}, but the capture's header states {ncpus} CPUs (0..{ncpus}): the capture is damaged there (the bound stays 0..{ncpus})",
            fmt_ts(ts),
        );
    }
    let two_cpus = sink.anomalies.two_cpus();
    if let Some((n, a)) = two_cpus {
        let _ = writeln!(
            text,
            "FINDING {} cpu {}: {} ({n} times): the capture shows one task running on two CPUs",
            fmt_ts(a.ts),
            a.cpu,
            a.describe()
        );
    }
    let capture_findings = beyond.len() + usize::from(two_cpus.is_some());
    // damage and what the reader skipped: the verdicts near it may be wrong
    for w in trace
        .warnings
        .iter()
        .cloned()
        .chain(sink.anomalies.warnings(&trace.path))
    {
        let _ = writeln!(
            text,
            "warning: {}",
            crate::sources::shown_name(&w.to_string())
        );
    }
    if !checked.duplicates && !checked.bound {
        let _ = writeln!(
            text,
            "{}: NOTHING CHECKED in {} events: this is no clean bill ({})",
            crate::sources::shown_name(&trace.path),
            trace.event_count(),
            crate::model::Checkable::why_not(&missing, true)
        );
    } else {
        let dups = if checked.duplicates {
            format!("{dup} duplicate CIDs among running threads of one process")
        } else {
            "duplicate CIDs NOT CHECKED".into()
        };
        let bound = if checked.bound {
            format!("{range} CIDs outside 0..{ncpus}")
        } else {
            "the CID bound NOT CHECKED".into()
        };
        let broken = if capture_findings > 0 {
            format!(", {capture_findings} where the capture contradicts itself")
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "{}: {} findings ({dups}, {bound}{broken}) in {} events, {} processes",
            crate::sources::shown_name(&trace.path),
            sink.alarms.len() + capture_findings,
            trace.event_count(),
            sink.mms
        );
    }
    if checked.duplicates && state.exiting_holders > 0 {
        let _ = writeln!(
            text,
            "not a finding: {} times a thread reported the CID of a thread that was exiting (the \
             earlier holder's next record was its sched_process_exit: do_exit releases the CID \
             before that record, docs/models.md T7)",
            state.exiting_holders
        );
    }
    if !checked.duplicates && checked.bound {
        let _ = writeln!(
            text,
            "not checked: duplicate CIDs among running threads ({})",
            crate::model::Checkable::why_not(&missing, true)
        );
    }
    if !checked.bound && checked.duplicates {
        let _ = writeln!(
            text,
            "not checked: CIDs at or above their bound ({})",
            crate::model::Checkable::why_not(&missing, false)
        );
    }
    for m in &missing {
        let _ = writeln!(text, "missing: {}", m.warning());
    }
    let unknown = unknown.len();
    if unknown > 0 && checked.duplicates {
        let _ = writeln!(
            text,
            "note: {unknown} task(s) with CIDs have an unknown process; duplicates among them cannot be checked (capture the TGID column or task:task_newtask)"
        );
    }
    CheckReport {
        findings: sink.alarms.len() + capture_findings,
        text,
        checked,
    }
}
