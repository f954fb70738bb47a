//! A loaded capture: canonical events in time order plus what the source knew about tasks.

use super::TidMap;
use super::event::{CPU_UNKNOWN, Event, EventKind, Tid};
use super::origin::{Format, Origin};
use super::store::EventStore;
use super::strings::{StrId, Strings};
use std::fmt;

/// A problem that did not stop the load. `code` is a stable name scripts can match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub code: &'static str,
    pub message: String,
}

/// Keeps in `least` the lesser of it and `o` ([`Trace::mono_offset`] over chunks and deltas: the
/// tick recorded soonest after it read the clock).
pub fn keep_least(least: &mut Option<i64>, o: i64) {
    *least = Some(least.map_or(o, |m| m.min(o)));
}

impl Warning {
    /// Code of a capture whose records (some or all) name no CPU (`perf script` without its
    /// cpu field, perf.data samples without PERF_SAMPLE_CPU): readers put them on CPU 0.
    pub const CPU_UNKNOWN: &'static str = "cpu-unknown";
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// From `ts` on (the first record that shows it), `tid` is a task of `tgid`: its TGID column
/// changed, so the tid was reused by another process (or the record lies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TgidChange {
    pub ts: u64,
    pub tid: Tid,
    pub tgid: Tid,
}

/// What the capture itself says about a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskMeta {
    /// Thread-group id when the format carries it (ftrace TGID column, perf pid/tid, saved tgids).
    pub tgid: Option<Tid>,
    /// First comm the capture shows for the task.
    pub comm: StrId,
}

/// Tid → what the capture says of the task (a [`TidMap`]: a million tasks in ~20 MB).
pub type TaskTable = TidMap<TaskMeta>;

/// A capture in canonical form.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The file name as the user gave it.
    pub path: String,
    pub origin: Origin,
    /// Sorted by timestamp; `Lost` markers sit where the loss was noticed.
    pub events: EventStore,
    pub strings: Strings,
    pub tasks: TaskTable,
    /// CPU count stated by the capture's header (`#P:2`, `cpus=2`), if any.
    pub ncpus_hint: Option<u32>,
    /// The release of the kernel that made the capture (`uname -r`), when the capture says it
    /// (a `cidscope vm --record` header; trace.dat's uname option and perf.data's
    /// HEADER_OSRELEASE are for their readers to fill in). The model choice reads it
    /// (`model::kernel::choose`).
    pub kernel_release: Option<String>,
    /// That kernel's CONFIG_HZ, when the capture says it.
    pub kernel_hz: Option<u32>,
    /// That kernel's CONFIG_RSEQ_CID_SCAN_BATCH, when the capture says it: the kernel has the
    /// compaction-in-batches patches (resume-batch, docs/models.md §3).
    pub kernel_scan_batch: Option<u32>,
    /// `rseq_update` records traced with interrupts disabled (the irq-flags column's `d`,
    /// `common_flags` bit 0 of a binary record). Only the exit-to-user fast path of 6.19+ runs
    /// with interrupts disabled; before 6.19 the update runs from `resume_user_mode_work`
    /// with them enabled, so one such record names the kernel's family (`model::kernel::
    /// family_shown`). 0 also where the reader has no irq flags (perf script text).
    pub rseq_irqs_off: u64,
    /// The capture's clock minus CLOCK_MONOTONIC, from the ticks' `hrtimer_expire_entry`
    /// `now=`: the least difference of a tick's record time and its `now` (the tick recorded
    /// soonest after it read the clock). The jiffies' boundaries are whole multiples of
    /// TICK_NSEC in CLOCK_MONOTONIC (docs/models.md §5.4); `None` where the reader does not
    /// give `now` (the binary formats) or the capture has no tick.
    pub mono_offset: Option<i64>,
    pub warnings: Vec<Warning>,
    /// Tids whose TGID column changed (reused by another process), in time order.
    pub tgid_changes: Vec<TgidChange>,
}

/// What a streaming load adds to a [`Trace`]: applied in order, deltas rebuild exactly the
/// trace a whole-file load gives (before its final sort).
#[derive(Clone, Debug, Default)]
pub struct TraceDelta {
    pub events: Vec<Event>,
    /// Strings interned since the previous delta, in id order (ids continue the trace's).
    pub new_strings: Vec<Box<[u8]>>,
    /// Tasks first seen, or whose tgid became known, since the previous delta.
    pub tasks: Vec<(Tid, TaskMeta)>,
    pub ncpus_hint: Option<u32>,
    /// The capture's kernel release and CONFIG_HZ, once a header names them.
    pub kernel_release: Option<String>,
    pub kernel_hz: Option<u32>,
    pub kernel_scan_batch: Option<u32>,
    /// `rseq_update` records with interrupts disabled in the delta ([`Trace::rseq_irqs_off`]).
    pub rseq_irqs_off: u64,
    /// The least tick record time minus `now=` of the delta's ticks ([`Trace::mono_offset`]).
    pub mono_offset: Option<i64>,
    pub warnings: Vec<Warning>,
    /// TGID changes noticed since the previous delta.
    pub tgid_changes: Vec<TgidChange>,
    /// The format, once the reader is sure of it (ftrace without a header is trace_pipe).
    pub format: Option<Format>,
}

impl TraceDelta {
    /// What a delta carries of a whole trace besides its events: strings, tasks, CPU count,
    /// warnings and format (the first delta of a capture read whole).
    pub fn metadata(t: Trace) -> TraceDelta {
        TraceDelta {
            events: Vec::new(),
            new_strings: (1..t.strings.len() as u32)
                .map(|i| t.strings.get(StrId(i)).into())
                .collect(),
            tasks: t.tasks.into_iter().collect(),
            ncpus_hint: t.ncpus_hint,
            kernel_release: t.kernel_release,
            kernel_hz: t.kernel_hz,
            kernel_scan_batch: t.kernel_scan_batch,
            rseq_irqs_off: t.rseq_irqs_off,
            mono_offset: t.mono_offset,
            warnings: t.warnings,
            tgid_changes: t.tgid_changes,
            format: t.origin.file_format(),
        }
    }
}

impl Trace {
    /// Appends a delta of a streaming load.
    /// Takes in a delta, draining it (its event buffer keeps its capacity, so a reader can
    /// reuse it for the next delta instead of faulting in fresh pages).
    pub fn apply(&mut self, d: &mut TraceDelta) {
        for s in d.new_strings.drain(..) {
            self.strings.intern(&s);
        }
        for (tid, m) in d.tasks.drain(..) {
            self.tasks.insert(tid, m);
        }
        if d.ncpus_hint.is_some() {
            self.ncpus_hint = d.ncpus_hint;
        }
        if let Some(r) = d.kernel_release.take() {
            self.kernel_release = Some(r);
        }
        if d.kernel_hz.is_some() {
            self.kernel_hz = d.kernel_hz;
        }
        if d.kernel_scan_batch.is_some() {
            self.kernel_scan_batch = d.kernel_scan_batch;
        }
        self.rseq_irqs_off += std::mem::take(&mut d.rseq_irqs_off);
        if let Some(o) = d.mono_offset.take() {
            keep_least(&mut self.mono_offset, o);
        }
        if let Some(f) = d.format {
            self.origin = Origin::File(f);
        }
        self.warnings.append(&mut d.warnings);
        self.tgid_changes.append(&mut d.tgid_changes);
        self.events.reserve(d.events.len());
        self.events.extend(d.events.drain(..));
    }

    /// The whole trace a streaming load's deltas make: `stream` hands each to the sink it is
    /// given; the events are then put in time order and the store trimmed.
    pub fn from_deltas<E>(
        path: impl Into<String>,
        origin: impl Into<Origin>,
        stream: impl FnOnce(&mut dyn FnMut(&mut TraceDelta) -> bool) -> Result<(), E>,
    ) -> Result<Trace, E> {
        let mut trace = Trace::new(path, origin);
        stream(&mut |d| {
            trace.apply(d);
            true
        })?;
        trace.ensure_sorted();
        trace.events.shrink_to_fit();
        Ok(trace)
    }

    pub fn new(path: impl Into<String>, origin: impl Into<Origin>) -> Trace {
        Trace {
            path: path.into(),
            origin: origin.into(),
            events: EventStore::new(),
            strings: Strings::new(),
            tasks: TaskTable::default(),
            ncpus_hint: None,
            kernel_release: None,
            kernel_hz: None,
            kernel_scan_batch: None,
            rseq_irqs_off: 0,
            mono_offset: None,
            warnings: Vec::new(),
            tgid_changes: Vec::new(),
        }
    }

    /// The most CPUs a header may claim (the kernel's NR_CPUS limit); a larger count is corrupt.
    pub const MAX_CPUS: u32 = 8192;

    /// Number of CPUs: the header's count or one past the highest CPU seen, whichever is larger
    /// (events on an unknown CPU do not count).
    pub fn cpu_count(&self) -> u32 {
        let seen = (0..self.events.len())
            .map(|i| self.events.cpu(i))
            .filter(|&c| c != CPU_UNKNOWN)
            .map(|c| c as u32 + 1)
            .max()
            .unwrap_or(0);
        let hint = self
            .ncpus_hint
            .filter(|&n| n <= Self::MAX_CPUS)
            .unwrap_or(0);
        seen.max(hint).max(1)
    }

    /// Events the capture holds, as every surface counts them (`stats`' `events`, `--check`,
    /// the TUI): its records less the lost-event markers, which say what is *not* there.
    pub fn event_count(&self) -> usize {
        self.events.len() - self.events.lost_markers()
    }

    /// Sum of the counts of lost-event markers.
    pub fn lost_events(&self) -> u64 {
        self.events
            .iter()
            .map(|e| match e.kind {
                EventKind::Lost { count } => count.unwrap_or(0) as u64,
                _ => 0,
            })
            .sum()
    }

    pub fn comm_of(&self, tid: Tid) -> String {
        match self.tasks.get(&tid) {
            Some(m) => self.strings.get_lossy(m.comm).trim_start().to_string(),
            None if tid == 0 => "<idle>".into(),
            None => "?".into(),
        }
    }

    pub fn warn(&mut self, code: &'static str, message: impl Into<String>) {
        self.warnings.push(Warning {
            code,
            message: message.into(),
        });
    }

    /// Stable-sorts the events by timestamp if needed and says so in a warning; true when
    /// they were out of order (a pass over them in the order they came saw another order).
    pub fn ensure_sorted(&mut self) -> bool {
        self.sort_tgid_changes();
        let backwards = self.events.backward_steps();
        if backwards > 0 {
            self.events.sort_by_ts();
            let msg = format!(
                "{}: {backwards} records have a timestamp below the one before them; events were sorted by time",
                self.path
            );
            self.warn("timestamps-backwards", msg);
        }
        backwards > 0
    }

    /// The TGID changes in time order (the events' sort does not touch them).
    pub fn sort_tgid_changes(&mut self) {
        if !self.tgid_changes.is_sorted_by_key(|c| c.ts) {
            self.tgid_changes.sort_by_key(|c| c.ts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;

    fn at(ts: u64) -> Event {
        Event {
            ts,
            tid: 1,
            cpu: 0,
            kind: EventKind::Tick,
        }
    }

    /// `ensure_sorted` says whether it sorted: a pass that saw the events in the order they
    /// came (`FileFormat::load_beside`) saw the trace's order only when it did not.
    #[test]
    fn ensure_sorted_says_whether_it_sorted() {
        let mut t = Trace::new("x", crate::events::Origin::Sim);
        t.events = [1, 2, 2, 5].into_iter().map(at).collect();
        assert!(!t.ensure_sorted());
        assert!(t.warnings.is_empty());
        t.events = [1, 5, 2].into_iter().map(at).collect();
        assert!(t.ensure_sorted());
        assert_eq!(t.events.iter().map(|e| e.ts).collect::<Vec<_>>(), [1, 2, 5]);
        assert_eq!(t.warnings[0].code, "timestamps-backwards");
    }
}
