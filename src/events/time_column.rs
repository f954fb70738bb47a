//! A column of nanosecond timestamps in about 4 bytes each: a `u64` base per block of 1024 and a
//! `u32` offset per entry. A time more than 4.29 s past its block's base, or before it, is kept
//! aside whole (rare: captures are dense, and times that go backwards are rarer still).

use rustc_hash::FxHashMap;

const BLOCK: usize = 1024;
/// Offset marking a time kept in `far`.
const FAR: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct TimeColumn {
    bases: Vec<u64>,
    offs: Vec<u32>,
    far: FxHashMap<u32, u64>,
}

impl PartialEq for TimeColumn {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl TimeColumn {
    pub fn len(&self) -> usize {
        self.offs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offs.is_empty()
    }

    pub fn reserve(&mut self, n: usize) {
        self.offs.reserve(n);
        self.bases.reserve(n / BLOCK + 1);
    }

    pub fn shrink_to_fit(&mut self) {
        self.bases.shrink_to_fit();
        self.offs.shrink_to_fit();
        self.far.shrink_to_fit();
    }

    /// Bytes held (capacity), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.bases.capacity() * 8 + self.offs.capacity() * 4 + self.far.capacity() * 16
    }

    pub fn push(&mut self, ts: u64) {
        let i = self.offs.len();
        if i.is_multiple_of(BLOCK) {
            self.bases.push(ts);
        }
        let off = self.offset(i, ts);
        self.offs.push(off);
    }

    fn offset(&mut self, i: usize, ts: u64) -> u32 {
        let base = self.bases[i / BLOCK];
        match ts.checked_sub(base).and_then(|d| u32::try_from(d).ok()) {
            Some(d) if d != FAR => {
                // (a time set again may have been far: the map is nearly always empty)
                if !self.far.is_empty() {
                    self.far.remove(&(i as u32));
                }
                d
            }
            _ => {
                self.far.insert(i as u32, ts);
                FAR
            }
        }
    }

    /// Replaces the last time (no-op when empty).
    pub fn set_last(&mut self, ts: u64) {
        if let Some(i) = self.len().checked_sub(1) {
            self.offs[i] = self.offset(i, ts);
        }
    }

    pub fn pop(&mut self) -> Option<u64> {
        let i = self.len().checked_sub(1)?;
        let ts = self.get(i);
        self.offs.pop();
        self.far.remove(&(i as u32));
        if i.is_multiple_of(BLOCK) {
            self.bases.pop();
        }
        Some(ts)
    }

    /// Time `i` (panics if out of range, like indexing).
    pub fn get(&self, i: usize) -> u64 {
        match self.offs[i] {
            FAR => self.far.get(&(i as u32)).copied().unwrap_or(0),
            d => self.bases[i / BLOCK] + d as u64,
        }
    }

    /// How many times are below the one before them (0: sorted). One pass down the column,
    /// not a lookup per time: every load asks it of every event.
    pub fn backward_steps(&self) -> usize {
        let mut n = 0;
        let mut prev = 0u64;
        for (i, &d) in self.offs.iter().enumerate() {
            let t = match d {
                FAR => self.far.get(&(i as u32)).copied().unwrap_or(0),
                d => self.bases[i / BLOCK] + d as u64,
            };
            if i > 0 && t < prev {
                n += 1;
            }
            prev = t;
        }
        n
    }

    /// The first index whose time does not satisfy `pred` (times must be sorted).
    pub fn partition_point(&self, pred: impl Fn(u64) -> bool) -> usize {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes, pops and last-replacements give back the times of a plain vector.
        #[test]
        fn behaves_like_a_vec(ops in proptest::collection::vec((0u8..10, any::<u64>()), 0..4000)) {
            let (mut col, mut v) = (TimeColumn::default(), Vec::<u64>::new());
            let mut t = 0u64;
            for (op, x) in ops {
                t = match x % 50 {
                    0 => x,
                    1 => t.saturating_sub(x % 10_000),
                    _ => t.saturating_add(x % 1_000_000),
                };
                match op {
                    0 => prop_assert_eq!(col.pop(), v.pop()),
                    1 => {
                        col.set_last(t);
                        if let Some(l) = v.last_mut() {
                            *l = t;
                        }
                    }
                    _ => {
                        col.push(t);
                        v.push(t);
                    }
                }
            }
            prop_assert_eq!(col.len(), v.len());
            for (i, &x) in v.iter().enumerate() {
                prop_assert_eq!(col.get(i), x);
            }
        }
    }
}
