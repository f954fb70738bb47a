//! What a simulated task is: its program (what it does when a burst ends), how it was created,
//! its scheduling state, and the events of the scheduler's queue.

use crate::events::{StrId, Tid};
use std::collections::VecDeque;

/// A burst that never ends (a hog).
pub(super) const FOREVER: u64 = u64::MAX / 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ev {
    Start,
    Tick,
    Wake { task: u32, epoch: u32 },
    Done { task: u32, epoch: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum St {
    New,
    Runnable,
    Running,
    Sleeping,
    Dead,
}

#[derive(Clone, Debug)]
pub(super) enum Prog {
    Shell,
    /// The workload's main thread: forks/execs, spawns `children`, then waits.
    Leader {
        spawned: u32,
    },
    /// cyclictest timer thread: wakes at absolute `next`, runs `run` µs.
    Cyclic {
        period: u64,
        next: u64,
    },
    /// Short runs between sleeps of `sleep_lo..=sleep_hi` µs.
    Sleeper {
        run_lo: u64,
        run_hi: u64,
        sleep_lo: u64,
        sleep_hi: u64,
    },
    /// Never blocks.
    Hog,
    /// Spins `spin` µs, then exits.
    ChurnWorker,
}

/// What a new task is.
pub(super) struct Spec {
    pub(super) comm: &'static str,
    pub(super) prog: Prog,
    pub(super) thread: bool,
    pub(super) exec: bool,
    pub(super) rt: bool,
    pub(super) pinned: Option<u16>,
}

impl Spec {
    pub(super) fn thread(comm: &'static str, prog: Prog) -> Spec {
        Spec {
            comm,
            prog,
            thread: true,
            exec: false,
            rt: false,
            pinned: None,
        }
    }
    pub(super) fn process(comm: &'static str, prog: Prog) -> Spec {
        Spec {
            thread: false,
            ..Spec::thread(comm, prog)
        }
    }
    pub(super) fn exec(self) -> Spec {
        Spec { exec: true, ..self }
    }
    pub(super) fn rt(self) -> Spec {
        Spec { rt: true, ..self }
    }
    pub(super) fn pin(self, cpu: u16) -> Spec {
        Spec {
            pinned: Some(cpu),
            ..self
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct STask {
    pub(super) tid: Tid,
    pub(super) comm: StrId,
    pub(super) prio: i16,
    pub(super) rt: bool,
    pub(super) pinned: Option<u16>,
    pub(super) cpu: u16,
    pub(super) state: St,
    pub(super) epoch: u32,
    /// µs left in the current burst.
    pub(super) rem: u64,
    pub(super) run_start: u64,
    pub(super) slice_start: u64,
    pub(super) prog: Prog,
    /// Forked by the shell, execs at the end of its first burst.
    pub(super) pending_exec: bool,
    pub(super) registered: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Cpu {
    pub(super) curr: Option<usize>,
    pub(super) rq: VecDeque<usize>,
    pub(super) tick_stopped: bool,
}
