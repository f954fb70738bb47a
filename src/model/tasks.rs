//! Tasks → processes: which mm (address space, the owner of a CID space) each task belongs to.
//!
//! Evidence, strongest first: `task_newtask` clone_flags (CLONE_VM = same mm), `sched_process_exec`
//! (a new mm), the TGID the capture carries (ftrace TGID column, perf pid/tid), and
//! `sched_process_fork` together with a known child TGID. A task with no evidence stays in
//! [`MmId::UNKNOWN`]: cidscope never guesses that two tasks share an mm.

use crate::events::Tid;

/// Index into the mm table of a timeline. `UNKNOWN` is "mm unknown".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MmId(pub u32);

impl MmId {
    pub const UNKNOWN: MmId = MmId(u32::MAX);
    /// The idle task and kernel threads (no mm, no CID).
    pub const NONE: MmId = MmId(u32::MAX - 1);

    pub fn is_real(self) -> bool {
        self.0 < u32::MAX - 1
    }
}

/// How cidscope learned that an mm exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmOrigin {
    /// Named by the capture's TGID of a task already running when the capture began.
    Tgid,
    /// Created inside the capture by fork without CLONE_VM.
    Fork,
    /// Created inside the capture by exec.
    Exec,
    /// The mm of a task whose TGID is not in the capture, known to exist because a thread was
    /// cloned from it with CLONE_VM.
    Anonymous,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmInfo {
    pub tgid: Option<Tid>,
    /// The task through which the mm was first seen (process leader, forked child, exec'ing task).
    pub leader: Tid,
    pub origin: MmOrigin,
    /// Time the mm was first seen (its creation for `Fork`/`Exec`).
    pub first_ts: u64,
}

impl MmInfo {
    /// True when the mm began inside the capture, so every CID it handed out was seen.
    pub fn begins_in_capture(&self) -> bool {
        matches!(self.origin, MmOrigin::Fork | MmOrigin::Exec)
    }

    pub fn label(&self) -> String {
        match (self.tgid, self.origin) {
            (Some(t), MmOrigin::Exec) => format!("tgid {t} (after exec)"),
            (Some(t), _) => format!("tgid {t}"),
            (None, _) => format!("mm of {} (tgid unknown)", self.leader),
        }
    }
}
