//! Forks whose `mmget` may have run before their probe (docs/models.md §5.6, *a fork's mmget in
//! its window*). A CLONE_VM clone takes its reference to the parent's mm in `copy_mm`, before
//! `sched_mm_cid_fork`, whose entry the `cid_fork` probe fires at: a vCPU that stalls in
//! between records the probe only when it runs again. The model counts the child from the
//! probe on, so a reading of the same mm on another CPU after the fork CPU's previous record
//! and before the probe may hold one user more per such fork (the mirror of a put's window,
//! `replayer/pending_puts.rs`).

use crate::events::{EventKind, EventStore, Tid};
use std::sync::Arc;

/// A probed CLONE_VM fork's window: from after `from`, its CPU's previous record that shows the
/// parent outside clone(), to its probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkGet {
    pub from: usize,
    pub probe: usize,
    pub cpu: u16,
    /// The mm the probe named (the parent's).
    pub mm_addr: u64,
    pub child: Tid,
}

impl ForkGet {
    /// The window of the fork probed at `probe`: it opens at the last record of the probe's CPU
    /// that is not an interrupt's (a tick, a migration, another task's probe, another event:
    /// they interrupt the parent anywhere in clone(), as `windows.rs` has it), looked for no
    /// further back than a bounded stretch (a CPU silent for longer opens it there).
    pub fn of(events: &EventStore, probe: usize, mm_addr: u64, child: Tid) -> ForkGet {
        const LOOK_BACK: usize = 1 << 16;
        let cpu = events.cpu(probe);
        let parent = events.tid(probe);
        let floor = probe.saturating_sub(LOOK_BACK);
        let interrupt = |q: usize| match events.at(q).kind {
            EventKind::Tick
            | EventKind::SchedMigrateTask { .. }
            | EventKind::Other { .. }
            | EventKind::Lost { .. } => true,
            EventKind::Probe { .. } => events.tid(q) != parent,
            _ => false,
        };
        let from = (floor..probe)
            .rev()
            .find(|&q| events.cpu(q) == cpu && !interrupt(q))
            .unwrap_or(floor);
        ForkGet {
            from,
            probe,
            cpu,
            mm_addr,
            child,
        }
    }
}

/// The fork windows a replay is inside, as it goes (readings come in event order).
#[derive(Clone, Debug, Default)]
pub struct ForkGets {
    /// Every window, by `from`.
    all: Arc<[ForkGet]>,
    next: usize,
    open: Vec<ForkGet>,
}

impl ForkGets {
    pub fn new(mut all: Vec<ForkGet>) -> ForkGets {
        all.sort_unstable_by_key(|w| (w.from, w.probe));
        ForkGets {
            all: all.into(),
            next: 0,
            open: Vec::new(),
        }
    }

    /// The windows a reading at event `idx` on `cpu` lies inside: opened before it, their probe
    /// still to come, on another CPU.
    pub fn around(&mut self, idx: usize, cpu: u16) -> impl Iterator<Item = &ForkGet> {
        while let Some(w) = self.all.get(self.next).filter(|w| w.from < idx) {
            self.open.push(*w);
            self.next += 1;
        }
        self.open.retain(|w| w.probe > idx);
        self.open.iter().filter(move |w| w.cpu != cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(from: usize, probe: usize, cpu: u16) -> ForkGet {
        ForkGet {
            from,
            probe,
            cpu,
            mm_addr: 0xa,
            child: probe as Tid,
        }
    }

    /// A reading is inside a fork's window after the fork CPU's previous record and before its
    /// probe, on another CPU; windows close at their probe.
    #[test]
    fn a_reading_between_the_fork_cpus_last_record_and_its_probe_is_inside() {
        let mut g = ForkGets::new(vec![get(10, 20, 0), get(2, 5, 1), get(12, 30, 2)]);
        let probes = |g: &mut ForkGets, idx, cpu| -> Vec<usize> {
            g.around(idx, cpu).map(|w| w.probe).collect()
        };
        assert_eq!(probes(&mut g, 3, 3), vec![5]);
        assert_eq!(probes(&mut g, 10, 3), Vec::<usize>::new());
        assert_eq!(probes(&mut g, 11, 3), vec![20]);
        assert_eq!(probes(&mut g, 11, 0), Vec::<usize>::new());
        assert_eq!(probes(&mut g, 15, 1), vec![20, 30]);
        assert_eq!(probes(&mut g, 20, 1), vec![30]);
        assert_eq!(probes(&mut g, 31, 1), Vec::<usize>::new());
    }
}
