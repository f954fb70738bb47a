//! What `stats` keeps of each task while events come in: one row per task (a tid's
//! incarnation) in the order the tasks are met, found by tid through a table of pages.
//!
//! A million tasks cost ~84 bytes each here. Two hash maps (tid → updates, tid → accounting)
//! cost ~220 (see [`TidPages`] for why).

use super::accounting::Counts;
use super::cid_metrics::TaskTally;
use crate::events::{NO_ROW, Tid, TidPages};
use crate::model::MmId;

/// Distinct CIDs of a task: CIDs below 64 (all of them on machines with up to 64 CPUs) in a
/// bitmask, others in a list of their own. 16 bytes: a million tasks hold one each.
#[derive(Default, Clone)]
pub struct CidSet {
    small: u64,
    /// CIDs of 64 and more (rare: only machines past 64 CPUs give them): 8 bytes here.
    other: Option<Box<LargeCids>>,
}

/// The CIDs of 64 and more of one task.
#[derive(Default, Clone)]
struct LargeCids(Vec<i32>);

impl CidSet {
    pub fn insert(&mut self, cid: i32) {
        if (0..64).contains(&cid) {
            self.small |= 1u64 << cid;
        } else {
            let v = &mut self.other.get_or_insert_with(Default::default).0;
            if !v.contains(&cid) {
                v.push(cid);
            }
        }
    }

    /// Adds the CIDs of `o`.
    pub fn union(&mut self, o: &CidSet) {
        self.small |= o.small;
        for &c in o.other.iter().flat_map(|l| l.0.iter()) {
            self.insert(c);
        }
    }

    /// The CIDs, sorted.
    pub fn to_vec(&self) -> Vec<i32> {
        let mut v: Vec<i32> = (0..64).filter(|&c| self.small & (1u64 << c) != 0).collect();
        v.extend(self.other.iter().flat_map(|o| o.0.iter()));
        v.sort_unstable();
        v
    }
}

/// One task: its rseq_updates (saturating), CIDs, mm at its last update, CID changes and the
/// accounting's counts.
pub struct TaskRow {
    pub tid: Tid,
    /// How many tasks used the tid before this one (the observed state's count).
    pub inc: u32,
    /// The row of the tid's task before this one, or [`NO_ROW`].
    prev: u32,
    /// rseq_update events (0: the task is only counted by the accounting).
    pub n: u32,
    pub mm: MmId,
    /// CIDs below 64, a bit each ([`TaskRows::cids`] gives them all).
    small_cids: u64,
    /// It has CIDs of 64 and more, in [`TaskRows::large_cids`] (rare: only machines past 64
    /// CPUs give them; a flag here keeps a row at 72 bytes).
    large_cids: bool,
    pub tally: TaskTally,
    pub counts: Counts,
}

#[derive(Default)]
pub struct TaskRows {
    rows: Vec<TaskRow>,
    /// Each tid's latest task's row.
    latest: TidPages,
    /// The CIDs of 64 and more of tasks that had them, by (tid, incarnation).
    large_cids: rustc_hash::FxHashMap<(Tid, u32), Vec<i32>>,
}

impl TaskRows {
    fn latest(&self, tid: Tid) -> u32 {
        self.latest.get(tid)
    }

    fn push(&mut self, tid: Tid, inc: u32, prev: u32) -> u32 {
        let row = self.rows.len() as u32;
        self.rows.push(TaskRow {
            tid,
            inc,
            prev,
            n: 0,
            mm: MmId::UNKNOWN,
            small_cids: 0,
            large_cids: false,
            tally: TaskTally::default(),
            counts: Counts::default(),
        });
        self.latest.set(tid, row);
        row
    }

    /// The row of task `inc` of `tid`, made when the tid's latest row is of another task.
    pub fn task(&mut self, tid: Tid, inc: u32) -> &mut TaskRow {
        let latest = self.latest(tid);
        let row = match self.rows.get(latest as usize) {
            Some(r) if r.inc == inc => latest,
            _ => self.push(tid, inc, latest),
        };
        &mut self.rows[row as usize]
    }

    /// The row of the tid's latest task, made (as task `inc`) when the tid has none: for the
    /// accounting, which counts per tid whichever task of it an event falls to.
    pub fn latest_or(&mut self, tid: Tid, inc: impl FnOnce() -> u32) -> &mut TaskRow {
        let mut row = self.latest(tid);
        if row == NO_ROW {
            row = self.push(tid, inc(), NO_ROW);
        }
        &mut self.rows[row as usize]
    }

    /// An rseq_update of task `inc` of `tid` at `ts` reported `cid`; the task is of `mm`.
    pub fn update(&mut self, tid: Tid, inc: u32, ts: u64, cid: i32, mm: MmId) {
        let e = self.task(tid, inc);
        e.tally.update(ts, cid, e.n == 0);
        e.n = e.n.saturating_add(1);
        e.mm = mm;
        if (0..64).contains(&cid) {
            e.small_cids |= 1u64 << cid;
            return;
        }
        e.large_cids = true;
        let v = self.large_cids.entry((tid, inc)).or_default();
        if !v.contains(&cid) {
            v.push(cid);
        }
    }

    /// The distinct CIDs of a row's task.
    pub fn cids(&self, r: &TaskRow) -> CidSet {
        let mut c = CidSet {
            small: r.small_cids,
            other: None,
        };
        if r.large_cids {
            for &x in self.large_cids.get(&(r.tid, r.inc)).into_iter().flatten() {
                c.insert(x);
            }
        }
        c
    }

    /// Every row, in the order the tasks were met.
    pub fn rows(&self) -> &[TaskRow] {
        &self.rows
    }

    /// The row of task `inc` of `tid`, if it has one.
    pub fn get(&self, tid: Tid, inc: u32) -> Option<&TaskRow> {
        let mut row = self.latest(tid);
        while let Some(r) = self.rows.get(row as usize) {
            if r.inc == inc {
                return Some(r);
            }
            row = r.prev;
        }
        None
    }

    /// The accounting's counts per tid, its tasks' together (each tid once).
    pub fn counts_per_tid(&self) -> impl Iterator<Item = (Tid, Counts)> + '_ {
        (self.rows.iter().enumerate())
            .filter(|(i, r)| self.latest(r.tid) == *i as u32)
            .map(|(_, r)| {
                let mut c = r.counts;
                let mut prev = r.prev;
                while let Some(p) = self.rows.get(prev as usize) {
                    c = c.merged(p.counts);
                    prev = p.prev;
                }
                (r.tid, c)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cid_sets_hold_small_and_large_cids_once_each() {
        let mut c = CidSet::default();
        for x in [3, 70, 3, 200, 70, 0, 63, 64] {
            c.insert(x);
        }
        assert_eq!(c.to_vec(), vec![0, 3, 63, 64, 70, 200]);
        assert_eq!(std::mem::size_of::<CidSet>(), 16);
        let mut d = CidSet::default();
        d.insert(5);
        d.insert(300);
        d.union(&c);
        assert_eq!(d.to_vec(), vec![0, 3, 5, 63, 64, 70, 200, 300]);
    }

    #[test]
    fn a_task_keeps_its_small_and_large_cids_apart_from_its_tid_reuses() {
        let mut t = TaskRows::default();
        for (inc, cid) in [(0, 3), (0, 70), (0, 3), (0, 64), (0, 70), (1, 200), (1, 1)] {
            t.update(7, inc, 10, cid, MmId(0));
        }
        let cids: Vec<Vec<i32>> = t.rows().iter().map(|r| t.cids(r).to_vec()).collect();
        assert_eq!(cids, vec![vec![3, 64, 70], vec![1, 200]]);
        assert_eq!(t.rows()[0].n, 5);
        // (a million tasks hold a row each)
        assert_eq!(std::mem::size_of::<TaskRow>(), 72);
    }

    #[test]
    fn a_reused_tid_gets_a_row_per_task_and_one_account() {
        let mut t = TaskRows::default();
        for (tid, inc, n) in [
            (7, 0, 1),
            (7, 0, 2),
            (u32::MAX - 1, 0, 1),
            (7, 1, 1),
            (9, 0, 1),
        ] {
            let r = t.task(tid, inc);
            r.n += n;
            r.counts.add(super::super::accounting::Counted::RseqUpdate);
        }
        t.latest_or(7, || 5)
            .counts
            .add(super::super::accounting::Counted::SwitchIn);
        t.latest_or(11, || 2)
            .counts
            .add(super::super::accounting::Counted::SwitchIn);
        let rows: Vec<(Tid, u32, u32)> = t.rows().iter().map(|r| (r.tid, r.inc, r.n)).collect();
        assert_eq!(
            rows,
            vec![
                (7, 0, 3),
                (u32::MAX - 1, 0, 1),
                (7, 1, 1),
                (9, 0, 1),
                (11, 2, 0)
            ]
        );
        assert_eq!(t.get(7, 0).map(|r| r.n), Some(3));
        assert_eq!(t.get(7, 1).map(|r| r.n), Some(1));
        assert!(t.get(7, 2).is_none() && t.get(8, 0).is_none());
        let mut per_tid: Vec<(Tid, Counts)> = t.counts_per_tid().collect();
        per_tid.sort_by_key(|p| p.0);
        let mut want7 = Counts::default();
        for c in [
            super::super::accounting::Counted::RseqUpdate,
            super::super::accounting::Counted::RseqUpdate,
            super::super::accounting::Counted::RseqUpdate,
            super::super::accounting::Counted::SwitchIn,
        ] {
            want7.add(c);
        }
        assert_eq!(per_tid.len(), 4);
        assert_eq!(per_tid[0], (7, want7));
    }
}
