//! Tid → a value, the values in one `Vec` found through [`TidPages`]: the per-task tables of
//! the capture (its tasks' facts) and of the observed state.
//!
//! A million tasks of 40-byte values take ~45 MB here against ~130 MB for a hash map at its
//! peak (two million buckets, and the old table beside the new one while it grows); a lookup is
//! two array loads, no hash.
//!
//! A clone has no index until its first lookup: the timeline keeps clones of the observed state
//! as checkpoints, and pages for tids spread over Linux's 4 M pids would cost a checkpoint more
//! than its rows.

use super::{NO_ROW, Tid, TidPages};
use std::sync::OnceLock;

pub struct TidMap<V> {
    rows: Vec<(Tid, V)>,
    /// Tid → row, made from the rows when first needed.
    index: OnceLock<TidPages>,
}

impl<V> Default for TidMap<V> {
    fn default() -> Self {
        TidMap {
            rows: Vec::new(),
            index: OnceLock::new(),
        }
    }
}

impl<V: Clone> Clone for TidMap<V> {
    fn clone(&self) -> Self {
        TidMap {
            rows: self.rows.clone(),
            index: OnceLock::new(),
        }
    }
}

impl<V> TidMap<V> {
    fn build_index(rows: &[(Tid, V)]) -> TidPages {
        let mut p = TidPages::default();
        for (r, (tid, _)) in rows.iter().enumerate() {
            p.set(*tid, r as u32);
        }
        p
    }

    #[inline]
    fn index(&self) -> &TidPages {
        self.index.get_or_init(|| Self::build_index(&self.rows))
    }

    fn index_mut(&mut self) -> &mut TidPages {
        if self.index.get().is_none() {
            let _ = self.index.set(Self::build_index(&self.rows));
        }
        self.index.get_mut().expect("set just above")
    }

    #[inline]
    fn row(&self, tid: Tid) -> Option<usize> {
        match self.index().get(tid) {
            NO_ROW => None,
            r => Some(r as usize),
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    #[inline]
    pub fn get(&self, tid: &Tid) -> Option<&V> {
        self.row(*tid).map(|r| &self.rows[r].1)
    }

    #[inline]
    pub fn get_mut(&mut self, tid: &Tid) -> Option<&mut V> {
        self.row(*tid).map(|r| &mut self.rows[r].1)
    }

    pub fn contains_key(&self, tid: &Tid) -> bool {
        self.row(*tid).is_some()
    }

    /// Sets the value of `tid`; returns the one it replaces.
    pub fn insert(&mut self, tid: Tid, v: V) -> Option<V> {
        match self.row(tid) {
            Some(r) => Some(std::mem::replace(&mut self.rows[r].1, v)),
            None => {
                self.push(tid, v);
                None
            }
        }
    }

    /// The value of `tid`, made by `new` when it has none.
    pub fn get_or_insert_with(&mut self, tid: Tid, new: impl FnOnce() -> V) -> &mut V {
        let r = match self.row(tid) {
            Some(r) => r,
            None => self.push(tid, new()),
        };
        &mut self.rows[r].1
    }

    /// The row of `tid` (valid until the next insert or [`Self::remove`]): a caller that returns
    /// the value it found, and makes one otherwise, looks it up once on the path it takes most.
    #[inline]
    pub fn row_of(&self, tid: Tid) -> Option<usize> {
        self.row(tid)
    }

    /// The value in row `r` (from [`Self::row_of`]).
    #[inline]
    pub fn at_mut(&mut self, r: usize) -> &mut V {
        &mut self.rows[r].1
    }

    fn push(&mut self, tid: Tid, v: V) -> usize {
        let r = self.rows.len();
        self.rows.push((tid, v));
        self.index_mut().set(tid, r as u32);
        r
    }

    /// Forgets `tid` (the last row takes its place).
    pub fn remove(&mut self, tid: &Tid) -> Option<V> {
        let r = self.row(*tid)?;
        let index = self.index_mut();
        index.set(*tid, NO_ROW);
        let (_, v) = self.rows.swap_remove(r);
        if let Some(&(moved, _)) = self.rows.get(r) {
            self.index_mut().set(moved, r as u32);
        }
        Some(v)
    }

    pub fn clear(&mut self) {
        *self = TidMap::default();
    }

    /// Every entry, in the order of first sight (changed by removals), not by tid.
    pub fn iter(&self) -> impl Iterator<Item = (&Tid, &V)> {
        self.rows.iter().map(|(tid, v)| (tid, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Tid, &mut V)> {
        self.rows.iter_mut().map(|(tid, v)| (&*tid, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Tid> {
        self.rows.iter().map(|(tid, _)| tid)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.rows.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.rows.iter_mut().map(|(_, v)| v)
    }
}

impl<V> IntoIterator for TidMap<V> {
    type Item = (Tid, V);
    type IntoIter = std::vec::IntoIter<(Tid, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.into_iter()
    }
}

impl<'a, V> IntoIterator for &'a TidMap<V> {
    type Item = (&'a Tid, &'a V);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (Tid, V)>, fn(&'a (Tid, V)) -> (&'a Tid, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.iter().map(|(tid, v)| (tid, v))
    }
}

impl<V> Extend<(Tid, V)> for TidMap<V> {
    fn extend<I: IntoIterator<Item = (Tid, V)>>(&mut self, it: I) {
        for (tid, v) in it {
            self.insert(tid, v);
        }
    }
}

impl<V> FromIterator<(Tid, V)> for TidMap<V> {
    fn from_iter<I: IntoIterator<Item = (Tid, V)>>(it: I) -> Self {
        let mut m = TidMap::default();
        m.extend(it);
        m
    }
}

impl<V> std::ops::Index<&Tid> for TidMap<V> {
    type Output = V;
    fn index(&self, tid: &Tid) -> &V {
        self.get(tid).expect("no such tid in the table")
    }
}

/// Equal when they hold the same entries, whatever their order.
impl<V: PartialEq> PartialEq for TidMap<V> {
    fn eq(&self, o: &TidMap<V>) -> bool {
        self.len() == o.len() && self.iter().all(|(tid, v)| o.get(tid) == Some(v))
    }
}
impl<V: Eq> Eq for TidMap<V> {}

impl<V: std::fmt::Debug> std::fmt::Debug for TidMap<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rows: Vec<_> = self.iter().collect();
        rows.sort_by_key(|r| *r.0);
        f.debug_map().entries(rows).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(inc: u32) -> (u32, bool) {
        (inc, inc.is_multiple_of(2))
    }

    #[test]
    fn insert_remove_and_lookup_agree_with_a_hash_map() {
        let mut m = TidMap::default();
        let mut want = std::collections::HashMap::new();
        // tids near and far, removals from the middle and the end, a tid reinserted
        let ops: [(bool, Tid); 12] = [
            (true, 1),
            (true, 2),
            (true, u32::MAX),
            (true, 3),
            (false, 2),
            (true, 4),
            (false, 4),
            (true, 2),
            (false, 9),
            (false, u32::MAX),
            (true, 1),
            (true, 5),
        ];
        for (i, (ins, tid)) in ops.into_iter().enumerate() {
            if ins {
                assert_eq!(m.insert(tid, st(i as u32)), want.insert(tid, st(i as u32)));
            } else {
                assert_eq!(m.remove(&tid), want.remove(&tid));
            }
            assert_eq!(m.len(), want.len());
            for t in [1, 2, 3, 4, 5, 9, u32::MAX] {
                assert_eq!(m.get(&t), want.get(&t), "tid {t} after op {i}");
            }
        }
        let mut other = TidMap::default();
        for (tid, t) in m.iter().collect::<Vec<_>>().into_iter().rev() {
            other.insert(*tid, *t);
        }
        assert_eq!(m, other);
        // a clone finds its tids through an index made anew
        let c = m.clone();
        for t in [1, 2, 3, 4, 5, 9, u32::MAX] {
            assert_eq!(c.get(&t), m.get(&t));
        }
        other.get_or_insert_with(77, || st(0));
        assert_ne!(m, other);
    }
}
