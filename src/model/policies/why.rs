//! Why, in a model run: what a compaction freed and lazied (with the CPU whose slot held each
//! CID), the compaction nearest an instant, and what caused a task's model CID to change — a
//! compaction that took its old CID, a mode switch, the CPU's slot CID, a new allocation. All
//! read from the records the run already keeps (compactions, slots, task CIDs, modes).

use super::run::{Compaction, ModeChange, PolicyRun, TaskCidChange};
use crate::events::Tid;
use crate::model::MmId;

/// How far a search through a run's records goes from its starting point.
const SEARCH_LIMIT: usize = 100_000;

/// A CID a compaction released or marked lazy, and the CPU whose slot held it before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCid {
    pub cid: i32,
    pub cpu: Option<u16>,
}

/// What caused a task's model CID change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelCause {
    /// The task's first CID in the run (fork, exec, registration, or a seeded start).
    First,
    /// The mm's mode changed at that instant (owner-mode: per-task ↔ per-CPU, TRANSIT).
    ModeSwitch(ModeChange),
    /// A compaction since the task's previous CID freed or lazied its old CID.
    Compacted(Compaction),
    /// The task got the CID its CPU's slot held for the mm.
    SlotOfCpu(u16),
    /// A CID the CPU's slot did not hold for the mm before: allocated from the cidmask.
    Allocated(Option<u16>),
}

/// A task's model CID change and its cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCidChange {
    pub change: TaskCidChange,
    pub old: Option<i32>,
    pub cause: ModelCause,
}

impl PolicyRun {
    /// The attempt (that scanned) of `mm` nearest to `ts`, before or after it.
    pub fn nearest_compaction(&self, mm: MmId, ts: u64) -> Option<&Compaction> {
        let k = self.compactions.partition_point(|c| c.ts <= ts);
        let hit = |c: &&Compaction| c.mm == mm && c.scanned;
        let before = self.compactions[..k]
            .iter()
            .rev()
            .take(SEARCH_LIMIT)
            .find(hit);
        let after = self.compactions[k..].iter().take(SEARCH_LIMIT).find(hit);
        match (before, after) {
            (Some(b), Some(a)) => Some(if ts - b.ts <= a.ts - ts { b } else { a }),
            (b, a) => b.or(a),
        }
    }

    /// The CIDs compaction `c` freed and lazied, each with the CPU whose slot held it just
    /// before (None when the slots do not say).
    pub fn compaction_slots(&self, c: &Compaction) -> (Vec<SlotCid>, Vec<SlotCid>) {
        let before = self.slots_at(c.mm, c.ts.saturating_sub(1));
        let cpu_of = |cid: i32| before.iter().find(|s| s.cid == Some(cid)).map(|s| s.cpu);
        let of = |v: &[i32]| {
            v.iter()
                .map(|&cid| SlotCid {
                    cid,
                    cpu: cpu_of(cid),
                })
                .collect()
        };
        (of(&c.freed), of(&c.lazied))
    }

    /// The latest change of `tid`'s model CID at or before `ts`, and why.
    pub fn why_cid(&self, tid: Tid, ts: u64) -> Option<ModelCidChange> {
        let end = self.task_cids.partition_point(|c| c.ts <= ts);
        let mut mine = self.task_cids[..end]
            .iter()
            .rev()
            .take(SEARCH_LIMIT)
            .filter(|c| c.tid == tid);
        let change = *mine.next()?;
        let prev = mine.next().copied();
        let mm = change.mm;
        // the CID it held last (a task off CPU may hold none in between)
        let held_last = std::iter::once(prev)
            .flatten()
            .chain(mine.copied())
            .find(|c| c.cid.is_some());
        let old = held_last.and_then(|p| p.cid);
        let since = held_last.map_or(0, |p| p.ts);
        let cause = if let Some(m) = self
            .modes
            .iter()
            .rev()
            .skip_while(|m| m.ts > change.ts)
            .take_while(|m| m.ts == change.ts)
            .find(|m| m.mm == mm)
        {
            ModelCause::ModeSwitch(*m)
        } else if let Some(c) = old.filter(|&o| Some(o) != change.cid).and_then(|o| {
            let lo = self.compactions.partition_point(|c| c.ts < since);
            let hi = self.compactions.partition_point(|c| c.ts <= change.ts);
            self.compactions[lo..hi]
                .iter()
                .rev()
                .find(|c| c.mm == mm && (c.freed.contains(&o) || c.lazied.contains(&o)))
        }) {
            ModelCause::Compacted(c.clone())
        } else if prev.is_none() {
            ModelCause::First
        } else {
            // the CPU the task runs on when it gets the CID, and what its slot held before
            let lo = self.slots.partition_point(|s| s.ts < change.ts);
            let hi = self.slots.partition_point(|s| s.ts <= change.ts);
            let cpu = self.slots[lo..hi]
                .iter()
                .find(|s| s.mm == mm && s.tid == tid)
                .map(|s| s.cpu);
            let held = cpu.and_then(|c| {
                self.slots[..lo]
                    .iter()
                    .rev()
                    .take(SEARCH_LIMIT)
                    .find(|s| s.mm == mm && s.cpu == c)
                    .and_then(|s| s.cid)
            });
            match (cpu, held) {
                (Some(c), Some(h)) if Some(h) == change.cid => ModelCause::SlotOfCpu(c),
                _ => ModelCause::Allocated(cpu),
            }
        };
        Some(ModelCidChange { change, old, cause })
    }
}

#[cfg(test)]
mod tests {
    use crate::model::MmId;
    use crate::model::policies::{Params, PolicyKind, replay};
    use crate::sources::{LoadOptions, load};

    /// On a real capture under lazy-compact: every compaction that freed a CID names the CPU
    /// whose slot held it, the nearest compaction is one of the mm's, and every model CID change
    /// has a cause that fits the records.
    #[test]
    fn compactions_and_cid_changes_explain_themselves() {
        let t = load(
            std::path::Path::new("traces/v5-workers.ftrace.txt"),
            &LoadOptions::default(),
        )
        .expect("capture");
        let run = replay(&t, PolicyKind::LazyCompact, &Params::default());
        let c = run
            .compactions
            .iter()
            .find(|c| c.scanned && !(c.freed.is_empty() && c.lazied.is_empty()))
            .expect("a compaction that did something");
        let (freed, lazied) = run.compaction_slots(c);
        assert_eq!(freed.len() + lazied.len(), c.freed.len() + c.lazied.len());
        assert!(
            freed.iter().chain(&lazied).all(|s| s.cpu.is_some()),
            "{freed:?} {lazied:?}"
        );
        let near = run.nearest_compaction(c.mm, c.ts + 1).expect("nearest");
        assert_eq!(near.mm, c.mm);
        assert!(run.nearest_compaction(MmId(9999), c.ts).is_none());
        let mut causes = 0;
        for ch in run.task_cids.iter().take(400) {
            let why = run.why_cid(ch.tid, ch.ts).expect("a change");
            assert_eq!(why.change.tid, ch.tid);
            assert!(why.change.ts <= ch.ts);
            if let super::ModelCause::Compacted(c) = &why.cause {
                let o = why.old.expect("an old CID");
                assert!(c.freed.contains(&o) || c.lazied.contains(&o));
            }
            causes += 1;
        }
        assert!(causes > 0);
    }
}
