//! owner-mode's fixup walk after a fork flips the mm's mode (docs/models.md §5.3 T3): how far
//! a walk in progress has got, and its visits.

use super::Untraced;
use super::reasons::WALK_REASON;
use crate::events::Tid;
use crate::model::policies::engine::{DriverEvent, Engine};
use crate::model::policies::run::TraceGap;
use crate::model::tasks::MmId;

impl Untraced {
    /// A lazy walk of `mm` in progress: (tasks visited, tasks in all).
    pub fn lazy_walk(&self, mm: MmId) -> Option<(usize, usize)> {
        self.walks
            .iter()
            .find(|w| w.mm == mm && w.lazy)
            .map(|w| (w.done, w.tasks))
    }

    /// The child whose fork started the lazy walk of `mm` in progress.
    pub fn lazy_walk_child(&self, mm: MmId) -> Option<Tid> {
        self.walks
            .iter()
            .find(|w| w.mm == mm && w.lazy)
            .map(|w| w.child)
    }

    /// Advances the fixups in progress to event `idx` at `ts`: of a walk of n tasks from t0 to
    /// t1, ⌈n·(ts−t0)/(t1−t0)⌉ are done by `ts`; a lazy one as far as a mark at `idx` says.
    pub fn advance_walks(&mut self, engine: &mut Engine, idx: usize, ts: u64) {
        let mut k = 0;
        while k < self.walks.len() {
            let w = self.walks[k];
            let due = if ts >= w.end {
                w.tasks
            } else if w.lazy {
                let mark = self.placements.walk_marks.get(&idx).copied().unwrap_or(0);
                w.done.max(mark).min(w.tasks)
            } else {
                let num = w.tasks as u128 * (ts - w.start) as u128;
                (num.div_ceil((w.end - w.start) as u128) as usize).min(w.tasks)
            };
            let mut d = w.done;
            if w.lazy && d < due && ts < w.end {
                self.gaps.push(TraceGap {
                    tid: w.child,
                    record_ts: ts,
                    placed_ts: ts,
                    reason: WALK_REASON,
                });
            }
            while d < due {
                engine.step(ts, &DriverEvent::FixupStep { mm: w.mm });
                d += 1;
            }
            if d >= w.tasks {
                self.walks.swap_remove(k);
            } else {
                self.walks[k].done = d;
                k += 1;
            }
        }
    }

    /// A `cid_rq_lock` probe of `cpu`'s runqueue by `by`: when `by` walks an mm's users and
    /// the task the walk visits next is on `cpu`, this is that visit
    /// (`mm_cid_fixup_task_to_cpu` under `task_rq_lock`): it runs now, after a switch of that
    /// CPU whose CID step is still pending (the switch holds the lock until it is done).
    pub fn walk_visit(&mut self, engine: &mut Engine, ts: u64, by: Tid, cpu: u16) {
        let Some(k) = self.walks.iter().position(|w| w.parent == by && w.lazy) else {
            return;
        };
        let w = self.walks[k];
        // a walk over the tasks is marked by the tasks' own locks where they are probed
        if self.probed.task_lock && engine.walk_next(w.mm).is_some() {
            return;
        }
        if engine.walk_next_cpu(w.mm) != Some(cpu) {
            return;
        }
        self.visit(engine, ts, k, cpu);
    }

    /// A `cid_task_lock` probe of `tid`'s rq lock by `by`: when `by` walks an mm's users and
    /// visits `tid` next, this is that visit.
    pub fn walk_visit_task(&mut self, engine: &mut Engine, ts: u64, by: Tid, tid: Tid) {
        let Some(k) = self.walks.iter().position(|w| w.parent == by && w.lazy) else {
            return;
        };
        if engine.walk_next(self.walks[k].mm) != Some(tid) {
            return;
        }
        let Some(cpu) = engine.core.task(tid).map(|t| t.cpu) else {
            return;
        };
        self.visit(engine, ts, k, cpu);
    }

    /// The next visit of walk `k`, of `cpu` (a switch whose CID step is pending there first).
    fn visit(&mut self, engine: &mut Engine, ts: u64, k: usize, cpu: u16) {
        let w = self.walks[k];
        if engine
            .core
            .pending_switch
            .get(cpu as usize)
            .is_some_and(Option::is_some)
        {
            engine.step(ts, &DriverEvent::SchedIn { cpu });
        }
        engine.step(ts, &DriverEvent::FixupStep { mm: w.mm });
        if w.done + 1 >= w.tasks {
            self.walks.swap_remove(k);
        } else {
            self.walks[k].done += 1;
        }
    }
}
