//! The CID steps of forks the search placed before their records (docs/models.md §5.3 T2, T3):
//! run at their place, with the fixup walk a flip begins left in progress where asked.

use super::reasons::FORK_REASON;
use super::{EarlyFork, Untraced, Walk};
use crate::events::Tid;
use crate::model::policies::engine::{DriverEvent, Engine};

impl Untraced {
    /// The forks placed before event `idx`.
    pub fn early_forks_at(&self, idx: usize) -> Option<Vec<EarlyFork>> {
        if self.placements.early_forks.is_empty() {
            return None;
        }
        self.placements.early_forks.get(&idx).cloned()
    }

    /// Runs the CID step of an early fork at `ts` (its parent known to the model).
    pub fn fork_early(&mut self, engine: &mut Engine, ts: u64, f: EarlyFork) {
        // (a fork placed before its probe: the probe's placement is then done)
        if !self.forked_early.insert(f.child) {
            return;
        }
        engine.core.defer_fixup = f.walk_end != 0 || f.lazy;
        let modes = engine.core.run.modes.len();
        engine.step(
            ts,
            &DriverEvent::Fork {
                parent: f.parent,
                child: f.child,
                shares_mm: true,
                new_mm: None,
                thread: f.thread,
            },
        );
        engine.core.defer_fixup = false;
        // (owner-mode records the TRANSIT phase a flip enters, whatever the recording)
        if engine
            .core
            .run
            .modes
            .get(modes..)
            .is_some_and(|m| m.iter().any(|c| c.transit))
        {
            self.flipped.push(f.child);
        }
        if let Some(mm) = engine.core.task(f.child).and_then(|t| t.mm) {
            let left = engine.walk_left(mm);
            if left > 0 {
                self.walks.push(Walk {
                    mm,
                    child: f.child,
                    parent: f.parent,
                    start: ts,
                    end: f.walk_end.min(f.record_ts).max(ts + 1),
                    tasks: left,
                    done: 0,
                    lazy: f.lazy,
                });
            }
        }
        if !f.probed {
            self.gap(f.child, f.record_ts, ts, FORK_REASON);
        }
    }

    /// Whether the fork of `child` placed early flipped its mm's mode: only then does where
    /// its fixup walk ends change anything.
    pub fn flipped(&self, child: Tid) -> bool {
        self.flipped.contains(&child)
    }

    /// The fork record of a child forked early: nothing more to do.
    pub fn forked_early(&mut self, child: Tid) -> bool {
        self.forked_early.remove(&child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::kind::PolicyKind;
    use crate::model::policies::script::Script;

    fn early(parent: Tid, child: Tid) -> EarlyFork {
        EarlyFork {
            parent,
            child,
            record_ts: 5_000_000,
            walk_end: 0,
            thread: true,
            lazy: false,
            probed: false,
        }
    }

    /// owner-mode on 2 CPUs: the third user of an mm is more than `max_cids` (2), so its fork
    /// flips the mm to per-CPU mode; the second is not.
    #[test]
    fn only_a_fork_that_flips_the_mode_is_noted() {
        let mut s = Script::new(PolicyKind::OwnerMode, 2, 1000);
        s.process(1, 0);
        s.fork_exec(1, 10, 0);
        let mut u = Untraced::default();
        u.fork_early(&mut s.engine, 1_000_000, early(10, 11));
        assert!(!u.flipped(11));
        u.fork_early(&mut s.engine, 2_000_000, early(10, 12));
        assert!(u.flipped(12));
        // (forked already: the record does not fork it again, nor note it twice)
        u.fork_early(&mut s.engine, 3_000_000, early(10, 12));
        assert_eq!(u.flipped.iter().filter(|&&c| c == 12).count(), 1);
    }

    /// lazy-compact has no modes: no fork flips one.
    #[test]
    fn a_lazy_compact_fork_flips_nothing() {
        let mut s = Script::new(PolicyKind::LazyCompact, 2, 1000);
        s.process(1, 0);
        s.fork_exec(1, 10, 0);
        let mut u = Untraced::default();
        for c in 11..15 {
            u.fork_early(&mut s.engine, 1_000_000 + u64::from(c), early(10, c));
            assert!(!u.flipped(c));
        }
    }
}
