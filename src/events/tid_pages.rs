//! Tid → a row number, through pages of tids: what per-task tables keep beside rows that live in
//! a `Vec`.
//!
//! A hash map of a million tasks holds two million buckets, and while it grows it holds its old
//! table beside the new one. Rows in a `Vec` grow in place (`mremap`), and a page of 256 tids
//! costs 4 bytes a tid: a million tasks of consecutive tids take 4 MB here.

use super::Tid;

/// No row for this tid.
pub const NO_ROW: u32 = u32::MAX;
/// Tids below this (Linux's `PID_MAX_LIMIT`, 2^22) are found through the pages; others (only
/// damaged input has them) through a hash map, so a wild tid costs one entry, not a page table.
const PAGED_TIDS: u32 = 1 << 22;
const PAGE_BITS: u32 = 8;
const PAGE: usize = 1 << PAGE_BITS;

/// Page slots allowed per tid set, beyond [`FREE_PAGES`]: tids spread wider than this (damaged
/// or hostile input: a few thousand tids strewn over the 4 M) go to the hash map instead of
/// costing a 1 KB page each.
const SLOTS_PER_TID: usize = 16;
const FREE_PAGES: usize = 256;

#[derive(Clone, Default)]
pub struct TidPages {
    /// Per page of 256 tids, each tid's row.
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    /// Pages made, and tids ever set: how dense the pages are.
    made: usize,
    sets: usize,
    /// Tids past the pages, and those whose page would have been too sparse. A tid is in its
    /// page when that page exists, else here.
    far: rustc_hash::FxHashMap<Tid, u32>,
}

impl TidPages {
    /// The row of `tid`, or [`NO_ROW`].
    #[inline]
    pub fn get(&self, tid: Tid) -> u32 {
        if tid < PAGED_TIDS
            && let Some(Some(p)) = self.pages.get((tid >> PAGE_BITS) as usize)
        {
            return p[tid as usize % PAGE];
        }
        if self.far.is_empty() {
            return NO_ROW;
        }
        self.far.get(&tid).copied().unwrap_or(NO_ROW)
    }

    /// Sets the row of `tid` ([`NO_ROW`] forgets it).
    pub fn set(&mut self, tid: Tid, row: u32) {
        if row != NO_ROW {
            self.sets += 1;
        }
        if tid < PAGED_TIDS {
            let i = (tid >> PAGE_BITS) as usize;
            if let Some(Some(p)) = self.pages.get_mut(i) {
                p[tid as usize % PAGE] = row;
                return;
            }
            let dense = (self.made + 1) * PAGE <= SLOTS_PER_TID * self.sets + FREE_PAGES * PAGE;
            if row != NO_ROW && dense {
                if self.pages.len() <= i {
                    self.pages.resize_with(i + 1, || None);
                }
                let page = self.pages[i].insert(Box::new([NO_ROW; PAGE]));
                // (tids of this page set while it was too sparse move in)
                if !self.far.is_empty() {
                    let base = (i << PAGE_BITS) as Tid;
                    for t in base..base + PAGE as Tid {
                        if let Some(r) = self.far.remove(&t) {
                            page[t as usize % PAGE] = r;
                        }
                    }
                }
                page[tid as usize % PAGE] = row;
                self.made += 1;
                return;
            }
        }
        if row == NO_ROW {
            self.far.remove(&tid);
        } else {
            self.far.insert(tid, row);
        }
    }
}

/// A set of tids through [`TidPages`]: a page lookup, not a hash, per test (a pass over
/// every event tests the tids of each).
#[derive(Clone, Default)]
pub struct TidSet(TidPages);

impl TidSet {
    #[inline]
    pub fn contains(&self, tid: Tid) -> bool {
        self.0.get(tid) != NO_ROW
    }

    /// Adds `tid`; whether it was new.
    #[inline]
    pub fn insert(&mut self, tid: Tid) -> bool {
        let new = !self.contains(tid);
        if new {
            self.0.set(tid, 0);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tid_set_says_whether_a_tid_was_new() {
        let mut s = TidSet::default();
        assert!(!s.contains(7));
        assert!(s.insert(7));
        assert!(!s.insert(7));
        assert!(s.insert(u32::MAX));
        assert!(s.contains(7) && s.contains(u32::MAX) && !s.contains(8));
    }

    #[test]
    fn rows_are_found_set_and_forgotten_for_near_and_far_tids() {
        let mut p = TidPages::default();
        assert_eq!(p.get(5), NO_ROW);
        for (tid, row) in [(5, 0), (1 << 21, 1), (u32::MAX, 2), (PAGED_TIDS, 3), (0, 4)] {
            p.set(tid, row);
        }
        assert_eq!(
            [5, 1 << 21, u32::MAX, PAGED_TIDS, 0, 6].map(|t| p.get(t)),
            [0, 1, 2, 3, 4, NO_ROW]
        );
        p.set(5, NO_ROW);
        p.set(u32::MAX, NO_ROW);
        // forgetting a tid never seen allocates nothing
        p.set(3 << 20, NO_ROW);
        assert_eq!([p.get(5), p.get(u32::MAX)], [NO_ROW, NO_ROW]);
        assert_eq!(p.pages.len(), (1 << 21 >> PAGE_BITS) + 1);
    }

    #[test]
    fn tids_strewn_wide_go_to_the_map_and_dense_ones_to_pages() {
        let mut p = TidPages::default();
        // 20,000 tids 199 apart: a page each would be 20,000 pages
        let strewn: Vec<Tid> = (0..20_000u32).map(|i| i * 199 + 7).collect();
        for (r, &t) in strewn.iter().enumerate() {
            p.set(t, r as u32);
        }
        assert!(
            p.made <= FREE_PAGES + 20_000 * SLOTS_PER_TID / PAGE + 1,
            "{}",
            p.made
        );
        assert!(!p.far.is_empty());
        // then a dense run, whose pages hold some of the strewn tids already in the map
        for t in 0..200_000u32 {
            if p.get(t) == NO_ROW {
                p.set(t, 1_000_000 + t);
            }
        }
        for (r, &t) in strewn.iter().enumerate() {
            assert_eq!(p.get(t), r as u32, "tid {t}");
        }
        assert_eq!(p.get(8), 1_000_008);
        p.set(7, NO_ROW);
        p.set(8, NO_ROW);
        assert_eq!([p.get(7), p.get(8), p.get(206)], [NO_ROW, NO_ROW, 1]);
    }
}
