//! Tids reused by another process: the capture's TGID column (perf's pid) names the process of
//! each record, and where it changes for one tid, that tid is a new task from then on.

use super::event::Tid;
use super::trace::TaskTable;
use super::trace::{TaskMeta, TgidChange};
use rustc_hash::FxHashMap;

/// What a reader keeps to notice TGID changes: the latest TGID of each tid whose TGID already
/// changed once (the others' is their [`TaskMeta::tgid`], the first one).
#[derive(Clone, Debug, Default)]
pub struct TgidTrack {
    latest: FxHashMap<Tid, Tid>,
}

impl TgidTrack {
    /// No tid has changed its TGID so far.
    #[inline]
    pub fn no_changes(&self) -> bool {
        self.latest.is_empty()
    }

    /// A record at `ts` shows `tid` with `tgid`; `meta` is the task's entry. Fills in a missing
    /// TGID, and returns the change when it differs from the latest one.
    #[inline]
    pub fn observe(
        &mut self,
        meta: &mut TaskMeta,
        tid: Tid,
        tgid: Option<Tid>,
        ts: u64,
    ) -> Option<TgidChange> {
        let g = tgid?;
        let Some(first) = meta.tgid else {
            meta.tgid = Some(g);
            return None;
        };
        // (no tid changed its TGID yet: the common case, no lookup)
        if first == g && self.latest.is_empty() {
            return None;
        }
        let latest = self.latest.get(&tid).copied().unwrap_or(first);
        if latest == g {
            return None;
        }
        self.latest.insert(tid, g);
        Some(TgidChange { ts, tid, tgid: g })
    }
}

/// The TGID of `tid` at `ts`, given the trace's first TGIDs and its changes (sorted by time).
pub fn tgid_at(tasks: &TaskTable, changes: &[TgidChange], tid: Tid, ts: u64) -> Option<Tid> {
    let end = changes.partition_point(|c| c.ts <= ts);
    changes[..end]
        .iter()
        .rev()
        .find(|c| c.tid == tid)
        .map(|c| c.tgid)
        .or_else(|| tasks.get(&tid).and_then(|m| m.tgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_tgid_is_reported_once_per_change() {
        let mut t = TgidTrack::default();
        let mut m = TaskMeta::default();
        assert_eq!(t.observe(&mut m, 7, None, 1), None);
        assert_eq!(t.observe(&mut m, 7, Some(5), 2), None);
        assert_eq!(m.tgid, Some(5));
        assert_eq!(t.observe(&mut m, 7, Some(5), 3), None);
        let c = t.observe(&mut m, 7, Some(9), 4).expect("a change");
        assert_eq!((c.ts, c.tid, c.tgid), (4, 7, 9));
        assert_eq!(t.observe(&mut m, 7, Some(9), 5), None);
        assert_eq!(m.tgid, Some(5), "the first TGID stays the task's");
        assert!(t.observe(&mut m, 7, Some(5), 6).is_some(), "and back");
        let mut tasks = crate::events::TaskTable::default();
        tasks.insert(7, m);
        let ch = [
            TgidChange {
                ts: 4,
                tid: 7,
                tgid: 9,
            },
            TgidChange {
                ts: 6,
                tid: 7,
                tgid: 5,
            },
        ];
        assert_eq!(tgid_at(&tasks, &ch, 7, 3), Some(5));
        assert_eq!(tgid_at(&tasks, &ch, 7, 4), Some(9));
        assert_eq!(tgid_at(&tasks, &ch, 7, 9), Some(5));
    }
}
