//! `cidscope FILE --check`: the rseq guarantees checked over a capture. A finding in observed
//! data means the kernel broke its promise (or the capture lies): worth a bug report.

use crate::events::{Trace, fmt_ts};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::{Alarm, AlarmKind, MmId, MmInfo};
use std::fmt::Write;

pub struct CheckReport {
    pub findings: usize,
    pub text: String,
}

#[derive(Default)]
struct Collect {
    alarms: Vec<Alarm>,
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

pub fn run(trace: &Trace) -> CheckReport {
    let ncpus = trace.cpu_count();
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut state = ObservedState::new(ncpus as usize);
    let mut sink = Collect::default();
    let mut unknown = std::collections::BTreeSet::new();
    for ev in &trace.events {
        state.apply(&ev, &ctx, &mut sink);
        if matches!(ev.kind, crate::events::EventKind::RseqUpdate { .. })
            && state.mm_of(ev.tid) == MmId::UNKNOWN
        {
            unknown.insert(ev.tid);
        }
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
            a.describe()
        );
    }
    let unknown = unknown.len();
    let _ = writeln!(
        text,
        "{}: {} findings ({dup} duplicate CIDs among running threads of one process, {range} CIDs outside 0..{ncpus}) in {} records, {} processes",
        trace.path,
        sink.alarms.len(),
        trace.events.len(),
        sink.mms
    );
    if unknown > 0 {
        let _ = writeln!(
            text,
            "note: {unknown} task(s) with CIDs have an unknown process; duplicates among them cannot be checked (capture the TGID column or task:task_newtask)"
        );
    }
    CheckReport {
        findings: sink.alarms.len(),
        text,
    }
}
