//! What a capture holds of what cidscope needs, and what is missing said in words: CIDs need
//! `rseq:rseq_update` (Linux ≥ 6.3); telling two threads of one process running at once needs
//! `sched:sched_switch`, the CPU of each record and the process of each thread (TGID column or
//! clone/fork/exec events). A check that cannot run says so instead of passing.

use crate::events::{Event, EventKind, Trace};

/// Warning code of a capture whose records (some or all) name no CPU.
pub const CPU_UNKNOWN: &str = crate::events::Warning::CPU_UNKNOWN;

/// Counts of the events the checks rest on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Records, lost-event markers not included.
    pub events: u64,
    pub rseq_updates: u64,
    pub sched_switches: u64,
    /// `task_newtask` and `sched_process_exec`: processes known without a TGID column.
    pub process_events: u64,
    /// Some task has a TGID from the capture (TGID column, perf pid).
    pub tgid_column: bool,
    /// Some records name no CPU ([`CPU_UNKNOWN`]).
    pub cpu_unknown: bool,
    /// The capture states its CPU count (`#P:`, `cpus=`, a header).
    pub ncpus_stated: bool,
}

/// Something a capture lacks, with what it means and how to record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Missing {
    NoEvents,
    NoRseqUpdate,
    NoSchedSwitch,
    NoProcesses,
    NoCpu,
}

impl Missing {
    /// A stable name, as in `stats --json`'s `missing` and the `warnings` codes.
    pub fn code(self) -> &'static str {
        match self {
            Missing::NoEvents => "no-events",
            Missing::NoRseqUpdate => "no-rseq-update",
            Missing::NoSchedSwitch => "no-sched-switch",
            Missing::NoProcesses => "no-tgid",
            Missing::NoCpu => CPU_UNKNOWN,
        }
    }

    /// What it means and the command that records it.
    pub fn explain(self) -> &'static str {
        match self {
            Missing::NoEvents => "the capture holds no events: there is nothing to show or check",
            Missing::NoRseqUpdate => {
                "no rseq:rseq_update events, so no CID is in the capture. CIDs (rseq mm_cid) need \
                 Linux >= 6.3 and the rseq:rseq_update tracepoint; record it with \
                 `trace-cmd record -e rseq:rseq_update -e sched:sched_switch -e sched:sched_process_fork -e sched:sched_process_exec -e task:task_newtask`, \
                 `perf record -e rseq:rseq_update -e sched:sched_switch -a`, or in tracefs \
                 `echo rseq:rseq_update >> /sys/kernel/tracing/set_event`"
            }
            Missing::NoSchedSwitch => {
                "no sched:sched_switch events, so who runs where is not known: duplicate CIDs among \
                 running threads cannot be judged (a task seems to run until another one's record \
                 shows up on its CPU); add `-e sched:sched_switch` (tracefs: \
                 `echo sched:sched_switch >> set_event`)"
            }
            Missing::NoProcesses => {
                "no TGID column and no clone/exec events, so threads cannot be grouped into \
                 processes (a CID belongs to a process) and duplicates cannot be judged; record \
                 the TGID (tracefs: `echo 1 > options/record-tgid`; `perf script -F comm,pid,tid,cpu,time,event,trace` \
                 prints perf's pid/tid) or the process events (`-e task:task_newtask -e \
                 sched:sched_process_fork -e sched:sched_process_exec`, what trace-cmd needs)"
            }
            Missing::NoCpu => {
                "records without a CPU (perf script without its cpu field, perf.data without \
                 PERF_SAMPLE_CPU) were put on CPU 0: the CPU count (the CID bound) and which \
                 threads run at once are not known, so neither is judged; print the CPU \
                 (`perf script -F +cpu`) or record it (`perf record -a`)"
            }
        }
    }

    /// `code: explanation`, as in a warnings list.
    pub fn warning(self) -> String {
        format!("{}: {}", self.code(), self.explain())
    }
}

/// The rseq guarantees a capture lets `--check` judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkable {
    /// Duplicate CIDs among running threads of one process.
    pub duplicates: bool,
    /// CIDs at or above their bound (the possible CPUs).
    pub bound: bool,
}

impl Coverage {
    /// Counts the events of a loaded capture.
    pub fn of(trace: &Trace) -> Coverage {
        let mut c = Coverage::default();
        for e in trace.events.iter() {
            c.count(&e);
        }
        c.facts(trace);
        c
    }

    /// The counts from per-kind event counts (indexed by [`EventKind::index`]; lost markers
    /// not among them), for a summary that counts kinds anyway.
    pub fn of_kind_counts(counts: &[u64; EventKind::NAMES.len()], events: u64) -> Coverage {
        let n = |name: &str| {
            (EventKind::NAMES.iter().position(|&k| k == name)).map_or(0, |i| counts[i])
        };
        Coverage {
            events,
            rseq_updates: n("rseq_update"),
            sched_switches: n("sched_switch"),
            process_events: n("task_newtask") + n("sched_process_exec"),
            ..Coverage::default()
        }
    }

    /// Counts one event (a streaming summary feeds them as they come).
    pub fn count(&mut self, e: &Event) {
        match e.kind {
            EventKind::Lost { .. } => return,
            EventKind::RseqUpdate { .. } => self.rseq_updates += 1,
            EventKind::SchedSwitch { .. } => self.sched_switches += 1,
            EventKind::TaskNewtask { .. } | EventKind::SchedProcessExec { .. } => {
                self.process_events += 1
            }
            _ => {}
        }
        self.events += 1;
    }

    /// What the capture says besides its events: TGIDs, CPUs, its CPU count.
    pub fn facts(&mut self, trace: &Trace) {
        self.tgid_column = trace.tasks.values().any(|m| m.tgid.is_some());
        self.cpu_unknown = trace.warnings.iter().any(|w| w.code == CPU_UNKNOWN);
        self.ncpus_stated = trace
            .ncpus_hint
            .is_some_and(|n| n > 0 && n <= Trace::MAX_CPUS);
    }

    pub fn processes_known(&self) -> bool {
        self.tgid_column || self.process_events > 0
    }

    /// What is missing, most important first.
    pub fn missing(&self) -> Vec<Missing> {
        if self.events == 0 {
            return vec![Missing::NoEvents];
        }
        let mut m = Vec::new();
        if self.rseq_updates == 0 {
            m.push(Missing::NoRseqUpdate);
        }
        if self.sched_switches == 0 {
            m.push(Missing::NoSchedSwitch);
        }
        if !self.processes_known() {
            m.push(Missing::NoProcesses);
        }
        if self.cpu_unknown {
            m.push(Missing::NoCpu);
        }
        m
    }

    pub fn checkable(&self) -> Checkable {
        let cids = self.rseq_updates > 0;
        Checkable {
            duplicates: cids
                && self.sched_switches > 0
                && !self.cpu_unknown
                && self.processes_known(),
            bound: cids && (!self.cpu_unknown || self.ncpus_stated),
        }
    }
}

impl Checkable {
    /// Whether an alarm of this kind is a judgement the capture supports.
    pub fn judges(&self, kind: &crate::model::AlarmKind) -> bool {
        match kind {
            crate::model::AlarmKind::DuplicateCid { .. } => self.duplicates,
            crate::model::AlarmKind::CidOutOfRange { .. } => self.bound,
        }
    }

    /// Why a check cannot run, from what is missing.
    pub fn why_not(missing: &[Missing], duplicates: bool) -> String {
        let relevant: Vec<&str> = missing
            .iter()
            .filter(|m| match m {
                Missing::NoEvents | Missing::NoRseqUpdate | Missing::NoCpu => true,
                Missing::NoSchedSwitch | Missing::NoProcesses => duplicates,
            })
            .map(|m| m.code())
            .collect();
        relevant.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_missing_and_what_can_be_checked() {
        let mut c = Coverage::default();
        assert_eq!(c.missing(), vec![Missing::NoEvents]);
        assert_eq!(
            c.checkable(),
            Checkable {
                duplicates: false,
                bound: false
            }
        );
        c.events = 10;
        c.sched_switches = 4;
        c.tgid_column = true;
        assert_eq!(c.missing(), vec![Missing::NoRseqUpdate]);
        assert!(!c.checkable().bound && !c.checkable().duplicates);
        c.rseq_updates = 3;
        assert!(c.missing().is_empty());
        assert!(c.checkable().bound && c.checkable().duplicates);
        c.cpu_unknown = true;
        assert_eq!(c.missing(), vec![Missing::NoCpu]);
        assert!(!c.checkable().bound && !c.checkable().duplicates);
        c.ncpus_stated = true;
        assert!(c.checkable().bound);
        c.cpu_unknown = false;
        c.sched_switches = 0;
        assert_eq!(c.missing(), vec![Missing::NoSchedSwitch]);
        assert!(c.checkable().bound && !c.checkable().duplicates);
        for m in [
            Missing::NoEvents,
            Missing::NoRseqUpdate,
            Missing::NoSchedSwitch,
            Missing::NoProcesses,
            Missing::NoCpu,
        ] {
            assert!(m.warning().starts_with(m.code()));
        }
        assert!(
            Missing::NoRseqUpdate
                .explain()
                .contains("trace-cmd record -e rseq:rseq_update")
        );
        assert!(
            Missing::NoRseqUpdate
                .explain()
                .contains("perf record -e rseq:rseq_update")
        );
        assert!(Missing::NoRseqUpdate.explain().contains("6.3"));
    }
}
