//! Per task, the rseq_updates that changed its CID (its first report included): the task's
//! CID history without the repeats in between. Compact for captures of very many short-lived
//! tasks: 16 bytes per task in one map (its last CID and first change), a list only for tasks
//! whose CID changed more than once.

use crate::events::Tid;
use rustc_hash::FxHashMap;

#[derive(Clone, Copy, Debug)]
struct Entry {
    last_cid: i32,
    /// Event index of the first change.
    first: u32,
    /// Index into `more` of the later changes, or `NONE`.
    more: u32,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct TaskCids {
    map: FxHashMap<Tid, Entry>,
    more: Vec<Vec<u32>>,
}

/// The CID changes of one task, oldest first: event indices of rseq_updates.
#[derive(Clone, Copy, Debug)]
pub struct Changes<'a> {
    first: u32,
    rest: &'a [u32],
}

impl Changes<'_> {
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Change `k` (oldest first), as an event index.
    pub fn get(&self, k: usize) -> Option<u32> {
        match k {
            0 => Some(self.first),
            k => self.rest.get(k - 1).copied(),
        }
    }

    /// How many changes are at or before event `upto`.
    pub fn count_upto(&self, upto: usize) -> usize {
        if self.first as usize > upto {
            return 0;
        }
        1 + self.rest.partition_point(|&i| i as usize <= upto)
    }
}

impl TaskCids {
    /// Notes task `tid`'s report of `cid` at event `idx`; true when it changed the task's CID
    /// (or is its first report).
    pub fn report(&mut self, tid: Tid, idx: u32, cid: i32) -> bool {
        match self.map.get_mut(&tid) {
            None => {
                self.map.insert(
                    tid,
                    Entry {
                        last_cid: cid,
                        first: idx,
                        more: NONE,
                    },
                );
                true
            }
            Some(e) if e.last_cid == cid => false,
            Some(e) => {
                e.last_cid = cid;
                if e.more == NONE {
                    e.more = self.more.len() as u32;
                    self.more.push(Vec::new());
                }
                if let Some(l) = self.more.get_mut(e.more as usize) {
                    l.push(idx);
                }
                true
            }
        }
    }

    pub fn changes(&self, tid: Tid) -> Option<Changes<'_>> {
        let e = self.map.get(&tid)?;
        let rest = match e.more {
            NONE => &[][..],
            m => self.more.get(m as usize).map_or(&[][..], |l| &l[..]),
        };
        Some(Changes {
            first: e.first,
            rest,
        })
    }

    /// Bytes held (capacity), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(Tid, Entry)>() + 1)
            + self.more.capacity() * std::mem::size_of::<Vec<u32>>()
            + self.more.iter().map(|l| l.capacity() * 4).sum::<usize>()
    }

    pub fn shrink_to_fit(&mut self) {
        for l in &mut self.more {
            l.shrink_to_fit();
        }
        self.more.shrink_to_fit();
        self.map.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_only_and_lookups_up_to_an_event() {
        let mut t = TaskCids::default();
        assert!(t.report(5, 10, 1));
        assert!(!t.report(5, 11, 1));
        assert!(t.report(7, 12, 0));
        assert!(t.report(5, 13, 2));
        assert!(t.report(5, 20, 1));
        let c = t.changes(5).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c.get(0), c.get(1), c.get(2), c.get(3)),
            (Some(10), Some(13), Some(20), None)
        );
        assert_eq!(c.count_upto(9), 0);
        assert_eq!(c.count_upto(10), 1);
        assert_eq!(c.count_upto(19), 2);
        assert_eq!(c.count_upto(99), 3);
        assert_eq!(t.changes(7).unwrap().len(), 1);
        assert!(t.changes(8).is_none());
    }
}
