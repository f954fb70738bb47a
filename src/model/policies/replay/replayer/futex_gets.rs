//! A probed thread clone's futex hash reference (docs/models.md §2.3): the clone sizes the
//! hash with the thread count of its step, but `futex_ref_drop` takes the `mm_users` reference
//! late in copy_process, after an allocation and a lock; a vCPU that stalls in between takes it
//! milliseconds later. The replay counts it at the fork's record, or where a reading of the mm
//! shows it. A clone whose sizing the search placed at its record (`Step::FutexSizedAtRecord`)
//! sizes the hash there, for the threads left then, and takes its reference at once.

use super::Replayer;
use crate::events::Tid;
use crate::model::policies::engine::DriverEvent;
use crate::model::policies::replay::untraced::EarlyFork;
use crate::model::tasks::MmId;

impl Replayer {
    /// Runs the step of a fork placed early; a probed thread clone's futex reference, if it
    /// takes one, waits for its `mmget` (`Replayer::futex_gets`).
    pub(super) fn fork_early_deferring_get(&mut self, ts: u64, f: EarlyFork) {
        let mm = self.task_mm(f.parent);
        let held = mm.is_some_and(|m| self.engine.futex_ref_held(m));
        self.engine.core.defer_futex_get = f.probed && f.thread;
        // (a stalled clone's sizing placed at its record: `Step::FutexSizedAtRecord`)
        self.engine.core.defer_futex_size = f.thread
            && self
                .untraced
                .placements
                .futex_sized_at_record
                .contains(&f.child);
        self.untraced.fork_early(&mut self.engine, ts, f);
        self.engine.core.defer_futex_get = false;
        self.engine.core.defer_futex_size = false;
        if let Some(m) = mm.filter(|&m| f.probed && !held && self.engine.futex_ref_held(m)) {
            self.futex_gets.push((f.child, m));
        }
    }

    /// A probed thread clone's futex hash reference whose `mmget` is still to run
    /// (`Replayer::futex_gets`) has it by its fork's record.
    pub(super) fn futex_get_at_record(&mut self, ts: u64, child: Tid) {
        if self
            .untraced
            .placements
            .futex_sized_at_record
            .contains(&child)
            && let Some(mm) = self.task_mm(child)
        {
            self.engine.step(ts, &DriverEvent::FutexSizeAtRecord { mm });
        }
        self.run_futex_get(ts, |&(c, _)| c == child);
    }

    /// A reading of `mm`'s `mm_users` one above the model's while a probed clone's futex
    /// reference on it is still to be taken: its `mmget` ran before the reading.
    pub(super) fn futex_get_seen(
        &mut self,
        ts: u64,
        mm: Option<MmId>,
        kernel: i64,
        model: Option<i64>,
    ) {
        let (Some(mm), Some(model)) = (mm, model) else {
            return;
        };
        if kernel == model + 1 {
            self.run_futex_get(ts, |&(_, m)| m == mm);
        }
    }

    /// Runs the `mmget` of the first reference still to be taken that `which` picks.
    fn run_futex_get(&mut self, ts: u64, which: impl Fn(&(Tid, MmId)) -> bool) {
        if let Some(k) = self.futex_gets.iter().position(which) {
            let (_, mm) = self.futex_gets.remove(k);
            self.engine.step(ts, &DriverEvent::FutexRefGet { mm });
        }
    }
}
