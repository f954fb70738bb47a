//! What a capture holds of what cidscope needs, and what is missing said in words: CIDs need
//! `rseq:rseq_update` (Linux ≥ 6.3); telling two threads of one process running at once needs
//! `sched:sched_switch`, the CPU of each record and the process of each thread (TGID column or
//! clone/fork/exec events). A check that cannot run says so instead of passing.

use crate::events::{CPU_UNKNOWN as NO_CPU, Event, EventKind, Trace};

/// Warning code of a capture whose records (some or all) name no CPU.
pub const CPU_UNKNOWN: &str = crate::events::Warning::CPU_UNKNOWN;

/// Runs of records on one CPU that share a timestamp: a trace clock that stalls (a guest whose
/// TSC the kernel marked unstable traces with the `global` clock, which then moved a tick at a
/// time in one of the 109 sweep boots). Two records of a CPU in one microsecond are common
/// on a fast machine (10-23 % of the records of this host's own captures); four in a row, outside
/// function_graph's records, were in no other capture of the corpus, this host's or the public
/// ones in traces/ (466 read).
#[derive(Clone, Debug, Default)]
pub struct StampRuns {
    /// Per CPU: the last record's time and how many records in a row had it.
    last: Vec<(u64, u32)>,
    /// Records that were at least the [`StampRuns::DEEP`]th in a row with their time.
    pub deep: u64,
}

impl StampRuns {
    pub const DEEP: u32 = 4;

    /// One record (function_graph's are left out: a fast machine makes several in one
    /// microsecond, nested calls and returns).
    #[inline]
    pub fn see(&mut self, e: &Event) {
        // (every record of a summary or an index passes here: the common path is a lookup and
        // a compare)
        let Some((t, n)) = self.last.get_mut(e.cpu as usize) else {
            return self.first_on_cpu(e);
        };
        let skipped = || matches!(e.kind, EventKind::Lost { .. } | EventKind::Function { .. });
        if *t != e.ts {
            if !skipped() {
                (*t, *n) = (e.ts, 1);
            }
        } else if !skipped() {
            *n += 1;
            if *n >= Self::DEEP {
                self.deep += 1;
            }
        }
    }

    #[cold]
    fn first_on_cpu(&mut self, e: &Event) {
        if e.cpu != NO_CPU {
            self.last.resize(e.cpu as usize + 1, (u64::MAX, 0));
            self.see(e);
        }
    }
}

/// Two counts are equal when they found as many runs (where they stopped is their own).
impl PartialEq for StampRuns {
    fn eq(&self, o: &Self) -> bool {
        self.deep == o.deep
    }
}

impl Eq for StampRuns {}

/// Counts of the events the checks rest on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Records sharing their time with the records before them on their CPU.
    pub stamps: StampRuns,
}

/// Something a capture lacks, with what it means and how to record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Missing {
    NoEvents,
    NoRseqUpdate,
    NoSchedSwitch,
    NoProcesses,
    NoCpu,
    /// At least 1 % of the records (and 50) share their time with three records before them on
    /// their CPU ([`StampRuns`]).
    CoarseClock,
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
            Missing::CoarseClock => "coarse-clock",
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
            Missing::CoarseClock => {
                "a trace clock that stalls: runs of four or more records on one CPU share a \
                 timestamp, so the order of records across CPUs within a stamp is the reader's \
                 merge, not the kernel's: which threads run at once is not known (duplicates are \
                 not judged), and the models' figures over such stretches say little about the \
                 kernel. A guest whose TSC its kernel marked unstable (its log: `tsc: \
                 Marking TSC unstable`, `clocksource: ... hpet`) traces with the `global` clock; \
                 record again on a stable clock (`echo local > trace_clock` with a stable TSC, or \
                 `echo counter > trace_clock`: an order, no times)"
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
        self.stamps.see(e);
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
        if self.clock_stalls() {
            m.push(Missing::CoarseClock);
        }
        m
    }

    /// At least 1 % of the records (and 50) are in runs of one time on their CPU.
    pub fn clock_stalls(&self) -> bool {
        let deep = self.stamps.deep;
        deep >= 50 && deep * 100 >= self.events
    }

    pub fn checkable(&self) -> Checkable {
        let cids = self.rseq_updates > 0;
        Checkable {
            duplicates: cids
                && self.sched_switches > 0
                && !self.cpu_unknown
                && !self.clock_stalls()
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
                Missing::NoSchedSwitch | Missing::NoProcesses | Missing::CoarseClock => duplicates,
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
            Missing::CoarseClock,
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

    /// Runs of records sharing a time are counted per CPU, from the fourth record of a run on;
    /// function_graph's records and lost markers take no part; a clock that stalls on 1 % of
    /// the records (and at least 50) is said to be missing.
    #[test]
    fn runs_of_one_stamp_on_a_cpu_show_a_clock_that_stalls() {
        use crate::events::StrId;
        let ev = |ts: u64, cpu: u16, kind: EventKind| Event {
            ts,
            tid: 1,
            cpu,
            kind,
        };
        let tick = EventKind::Tick;
        let mut r = StampRuns::default();
        for (ts, cpu) in [
            (5, 0),
            (5, 1),
            (5, 0),
            (5, 1),
            (5, 0),
            (5, 0),
            (5, 0),
            (6, 0),
            (6, 0),
        ] {
            r.see(&ev(ts, cpu, tick));
        }
        // CPU 0 at 5: five in a row, the fourth and fifth deep; CPU 1 two; at 6 two
        assert_eq!(r.deep, 2);
        let f = EventKind::Function {
            name: StrId(0),
            duration_ns: 0,
        };
        for _ in 0..8 {
            r.see(&ev(7, 2, f));
            r.see(&ev(7, 3, EventKind::Lost { count: None }));
        }
        assert_eq!(r.deep, 2);
        let mut c = Coverage {
            events: 5000,
            rseq_updates: 1,
            sched_switches: 1,
            tgid_column: true,
            ..Coverage::default()
        };
        c.stamps.deep = 49;
        assert!(c.missing().is_empty());
        assert!(c.checkable().duplicates && c.checkable().bound);
        c.stamps.deep = 50;
        assert_eq!(c.missing(), vec![Missing::CoarseClock]);
        // (which threads run at once rests on the order across CPUs)
        assert!(!c.checkable().duplicates && c.checkable().bound);
        c.events = 5001;
        assert!(c.missing().is_empty());
        assert!(c.checkable().duplicates && c.checkable().bound);
    }
}
