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

#[derive(Clone, Default)]
pub struct TidPages {
    /// Per page of 256 tids, each tid's row.
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    far: rustc_hash::FxHashMap<Tid, u32>,
}

impl TidPages {
    /// The row of `tid`, or [`NO_ROW`].
    #[inline]
    pub fn get(&self, tid: Tid) -> u32 {
        if tid < PAGED_TIDS {
            match self.pages.get((tid >> PAGE_BITS) as usize) {
                Some(Some(p)) => p[tid as usize % PAGE],
                _ => NO_ROW,
            }
        } else {
            self.far.get(&tid).copied().unwrap_or(NO_ROW)
        }
    }

    /// Sets the row of `tid` ([`NO_ROW`] forgets it).
    pub fn set(&mut self, tid: Tid, row: u32) {
        if tid < PAGED_TIDS {
            let i = (tid >> PAGE_BITS) as usize;
            if self.pages.len() <= i {
                if row == NO_ROW {
                    return;
                }
                self.pages.resize_with(i + 1, || None);
            }
            let page = match &mut self.pages[i] {
                Some(p) => p,
                None if row == NO_ROW => return,
                p => p.insert(Box::new([NO_ROW; PAGE])),
            };
            page[tid as usize % PAGE] = row;
        } else if row == NO_ROW {
            self.far.remove(&tid);
        } else {
            self.far.insert(tid, row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
