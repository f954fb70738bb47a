//! The canonical event and its kinds, with their names and descriptions.

use super::probe::Probe;
use super::strings::{StrId, Strings};

/// Thread id as the kernel prints it (`pid` in kernel terms). 0 is the idle task.
pub type Tid = u32;

/// The task of a record that its reader could not name (perf prints -1 for a thread it no longer
/// tracks, e.g. in the final switch of an exited thread).
pub const TID_UNKNOWN: Tid = u32::MAX;

/// The CPU of a record whose capture does not say (a perf.data sample without
/// `PERF_SAMPLE_CPU`, `perf script` text without the cpu column). Never a real CPU (those are
/// below [`super::Trace::MAX_CPUS`]); such events are counted but kept out of every per-CPU view.
pub const CPU_UNKNOWN: u16 = u16::MAX;

/// The latest time an event may carry: 2^63 - 1 ns (292 years of any kernel clock). A binary
/// record past it is damage; keeping times below it lets every window and span add freely.
pub const MAX_TS: u64 = i64::MAX as u64;

/// One trace record in canonical form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds in the clock of the capture.
    pub ts: u64,
    /// The task current on `cpu` when the record was written.
    pub tid: Tid,
    /// The CPU whose buffer holds the record, or [`CPU_UNKNOWN`].
    pub cpu: u16,
    pub kind: EventKind,
}

/// `prev_state` of `sched_switch` as its letters (`R`, `S`, `D`, `R+`, ...): kept as the
/// first letter plus a preempted bit, enough to tell preemption from sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PrevState(pub u8);

impl PrevState {
    pub const PREEMPTED: u8 = 0x80;
    pub fn from_text(s: &[u8]) -> PrevState {
        let first = s.first().copied().unwrap_or(b'?');
        let plus = if s.contains(&b'+') {
            Self::PREEMPTED
        } else {
            0
        };
        PrevState((first & 0x7f) | plus)
    }
    pub fn letter(self) -> char {
        (self.0 & 0x7f) as char
    }
    /// `X`/`Z`: the task's last switch-out (`do_task_dead`).
    pub fn dead(self) -> bool {
        matches!(self.letter(), 'X' | 'Z')
    }
    /// `R`/`R+`: the task was still runnable when switched out (preempted).
    pub fn runnable(self) -> bool {
        self.letter() == 'R'
    }
    pub fn text(self) -> String {
        let mut s = String::new();
        s.push(self.letter());
        if self.0 & Self::PREEMPTED != 0 {
            s.push('+');
        }
        s
    }
}

/// What happened, with the payload cidscope uses. Names follow the tracepoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `rseq:rseq_update`: the task returned to user space with these IDs written to its rseq area.
    RseqUpdate {
        cpu_id: i32,
        node_id: i32,
        mm_cid: i32,
    },
    /// `rseq:rseq_ip_fixup`: an rseq critical section was aborted.
    RseqIpFixup,
    /// `sched:sched_switch`.
    SchedSwitch {
        prev_tid: Tid,
        next_tid: Tid,
        next_comm: StrId,
        next_prio: i16,
        prev_state: PrevState,
    },
    /// `sched:sched_migrate_task` (records with orig == dest are kept; consumers ignore them).
    SchedMigrateTask {
        tid: Tid,
        orig_cpu: u16,
        dest_cpu: u16,
    },
    /// `sched:sched_process_fork`: emitted for threads and processes alike.
    SchedProcessFork { parent: Tid, child: Tid },
    /// `task:task_newtask`: `clone_flags & CLONE_VM` tells whether the child shares the mm.
    TaskNewtask { tid: Tid, clone_flags: u64 },
    /// `sched:sched_process_exec`: the task got a new mm.
    SchedProcessExec { tid: Tid, old_tid: Tid },
    /// `sched:sched_process_exit`.
    SchedProcessExit { tid: Tid },
    /// `sched:sched_wakeup_new`: first placement of a new task.
    SchedWakeupNew { tid: Tid, target_cpu: u16 },
    /// The scheduler tick: `timer:hrtimer_expire_entry` with `tick_nohz_handler` or `tick_sched_timer`.
    Tick,
    /// `timer:tick_stop`.
    TickStop { success: bool },
    /// Events the kernel or the reader dropped on this CPU; `count` is `None` when not reported.
    Lost { count: Option<u32> },
    /// Any other event, by name; counted and kept.
    Other { name: StrId },
    /// A call of kernel function `name` as the function_graph tracer shows it (at its entry),
    /// with its duration in ns when the format gives one (`u32::MAX`: not given, or longer
    /// than 4.29 s). Counted by the function's name, like [`EventKind::Other`].
    Function { name: StrId, duration_ns: u32 },
    /// A CID probe (fprobe event `cidscope:cid_*`, docs/models.md §5.6): where an untraced
    /// CID step ran. `num` and `ptr` as [`Probe`] says (a pid, CPU or count; an mm address or
    /// a CPU mask).
    Probe { probe: Probe, num: u32, ptr: u64 },
}

/// `clone_flags` bit: the child shares the parent's address space (mm).
pub const CLONE_VM: u64 = 0x100;
/// `clone_flags` bit: the child is a thread of the parent's thread group.
pub const CLONE_THREAD: u64 = 0x10000;

const _: () = assert!(std::mem::size_of::<Event>() <= 32);

impl EventKind {
    /// The string-table id the event names (a switch's `next_comm`, an other event's or a
    /// function's name): what a reader remaps when it joins string tables.
    pub fn string_mut(&mut self) -> Option<&mut StrId> {
        match self {
            EventKind::SchedSwitch { next_comm, .. } => Some(next_comm),
            EventKind::Other { name } | EventKind::Function { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The event's name without its system, as in `stats`' `event_counts`.
    pub fn name<'a>(&self, strings: &'a Strings) -> &'a str {
        match *self {
            EventKind::Other { name } | EventKind::Function { name, .. } => strings.get_str(name),
            EventKind::Probe { probe, .. } => probe.name(),
            _ => self.static_name(),
        }
    }

    /// Name for every kind but `Other` (which has an interned name).
    /// The kinds in a fixed order, for tables indexed by [`EventKind::index`].
    pub const NAMES: [&'static str; 13] = [
        "rseq_update",
        "rseq_ip_fixup",
        "sched_switch",
        "sched_migrate_task",
        "sched_process_fork",
        "task_newtask",
        "sched_process_exec",
        "sched_process_exit",
        "sched_wakeup_new",
        "hrtimer_expire_entry",
        "tick_stop",
        "lost",
        "other",
    ];

    /// The kind's position in [`EventKind::NAMES`].
    pub fn index(&self) -> usize {
        match self {
            EventKind::RseqUpdate { .. } => 0,
            EventKind::RseqIpFixup => 1,
            EventKind::SchedSwitch { .. } => 2,
            EventKind::SchedMigrateTask { .. } => 3,
            EventKind::SchedProcessFork { .. } => 4,
            EventKind::TaskNewtask { .. } => 5,
            EventKind::SchedProcessExec { .. } => 6,
            EventKind::SchedProcessExit { .. } => 7,
            EventKind::SchedWakeupNew { .. } => 8,
            EventKind::Tick => 9,
            EventKind::TickStop { .. } => 10,
            EventKind::Lost { .. } => 11,
            EventKind::Other { .. } | EventKind::Function { .. } | EventKind::Probe { .. } => 12,
        }
    }

    pub fn static_name(&self) -> &'static str {
        match self {
            EventKind::RseqUpdate { .. } => "rseq_update",
            EventKind::RseqIpFixup => "rseq_ip_fixup",
            EventKind::SchedSwitch { .. } => "sched_switch",
            EventKind::SchedMigrateTask { .. } => "sched_migrate_task",
            EventKind::SchedProcessFork { .. } => "sched_process_fork",
            EventKind::TaskNewtask { .. } => "task_newtask",
            EventKind::SchedProcessExec { .. } => "sched_process_exec",
            EventKind::SchedProcessExit { .. } => "sched_process_exit",
            EventKind::SchedWakeupNew { .. } => "sched_wakeup_new",
            EventKind::Tick => "hrtimer_expire_entry",
            EventKind::TickStop { .. } => "tick_stop",
            EventKind::Lost { .. } => "lost",
            EventKind::Other { .. } | EventKind::Function { .. } | EventKind::Probe { .. } => {
                "other"
            }
        }
    }

    pub fn is_lost(&self) -> bool {
        matches!(self, EventKind::Lost { .. })
    }
}

impl Event {
    /// The CPU, unless the capture did not say ([`CPU_UNKNOWN`]).
    #[inline]
    pub fn known_cpu(&self) -> Option<u16> {
        (self.cpu != CPU_UNKNOWN).then_some(self.cpu)
    }

    /// One-line human description, used by the detail pane and error messages.
    pub fn describe(&self, strings: &Strings) -> String {
        match self.kind {
            EventKind::RseqUpdate {
                cpu_id,
                node_id,
                mm_cid,
            } => format!("rseq_update cpu_id={cpu_id} node_id={node_id} mm_cid={mm_cid}"),
            EventKind::RseqIpFixup => "rseq_ip_fixup".into(),
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                prev_state,
            } => format!(
                "sched_switch {prev_tid} [{}] ==> {}-{next_tid} [{next_prio}]",
                prev_state.text(),
                strings.get_lossy(next_comm)
            ),
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } => format!("sched_migrate_task tid={tid} cpu {orig_cpu} -> {dest_cpu}"),
            EventKind::SchedProcessFork { parent, child } => {
                format!("sched_process_fork parent={parent} child={child}")
            }
            EventKind::TaskNewtask { tid, clone_flags } => {
                let vm = if clone_flags & CLONE_VM != 0 {
                    " (CLONE_VM: shares mm)"
                } else {
                    " (new mm)"
                };
                format!("task_newtask tid={tid} clone_flags={clone_flags:#x}{vm}")
            }
            EventKind::SchedProcessExec { tid, old_tid } => {
                format!("sched_process_exec tid={tid} old_tid={old_tid} (new mm)")
            }
            EventKind::SchedProcessExit { tid } => format!("sched_process_exit tid={tid}"),
            EventKind::SchedWakeupNew { tid, target_cpu } => {
                format!("sched_wakeup_new tid={tid} target_cpu={target_cpu}")
            }
            EventKind::Tick => "tick (hrtimer_expire_entry tick_nohz_handler)".into(),
            EventKind::TickStop { success } => format!("tick_stop success={}", success as u8),
            EventKind::Lost { count: Some(n) } => {
                format!("LOST {n} events on {}", cpu_name(self.cpu))
            }
            EventKind::Lost { count: None } => format!("LOST events on {}", cpu_name(self.cpu)),
            EventKind::Other { name } => strings.get_lossy(name).into_owned(),
            EventKind::Function {
                name,
                duration_ns: u32::MAX,
            } => format!("{}() (function_graph)", strings.get_lossy(name)),
            EventKind::Function { name, duration_ns } => format!(
                "{}() (function_graph) {}",
                strings.get_lossy(name),
                fmt_dur(duration_ns as u64)
            ),
            EventKind::Probe { probe, num, ptr } => {
                let mut s = format!("{} ({}, CID probe)", probe.name(), probe.function());
                let (k, p) = probe.fields();
                if let Some(k) = k {
                    s += &format!(" {k}={num}");
                }
                if let Some(p) = p {
                    s += &format!(" {p}={ptr:#x}");
                }
                s
            }
        }
    }
}

/// `CPU 3`, or `an unknown CPU`.
pub fn cpu_name(cpu: u16) -> String {
    if cpu == CPU_UNKNOWN {
        "an unknown CPU".into()
    } else {
        format!("CPU {cpu}")
    }
}

/// Formats nanoseconds as `seconds.micros` the way ftrace prints timestamps.
pub fn fmt_ts(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

/// Formats a duration in ns with a unit that keeps 3–4 significant digits.
pub fn fmt_dur(ns: u64) -> String {
    if ns >= 10_000_000_000 {
        format!("{:.1} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.3} us", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_is_compact() {
        assert!(
            std::mem::size_of::<Event>() <= 32,
            "{}",
            std::mem::size_of::<Event>()
        );
    }

    #[test]
    fn prev_state_letters() {
        assert!(PrevState::from_text(b"R+").runnable());
        assert_eq!(PrevState::from_text(b"R+").text(), "R+");
        assert!(!PrevState::from_text(b"S").runnable());
        assert_eq!(PrevState::from_text(b"").letter(), '?');
    }

    #[test]
    fn ts_formatting() {
        assert_eq!(fmt_ts(1_623_480_444_000_123), "1623480.444000");
        assert_eq!(fmt_ts(1_623_480_444_000), "1623.480444");
        assert_eq!(fmt_dur(1_500), "1.500 us");
        assert_eq!(fmt_dur(12), "12 ns");
    }
}
