//! A fixed-size bitset for CPU masks and `cidmask`: what `struct cpumask` is to the kernel.

use crate::model::error::ModelError;
use std::fmt;

/// A set of small non-negative integers (CPU numbers or CIDs) below a fixed bound.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct CpuSet {
    words: Words,
    bound: u32,
}

/// Up to [`INLINE_WORDS`] words (256 CPUs) in place, more on the heap: a model's state holds
/// several masks per mm and is copied for every snapshot of a replay, and a copy of a mask of
/// a machine of up to 256 CPUs allocates nothing.
#[derive(Clone)]
enum Words {
    Inline([u64; INLINE_WORDS], u8),
    Heap(Vec<u64>),
}

const INLINE_WORDS: usize = 4;

impl Default for Words {
    fn default() -> Self {
        Words::Inline([0; INLINE_WORDS], 0)
    }
}

impl Words {
    fn zeroed(n: usize) -> Words {
        if n <= INLINE_WORDS {
            Words::Inline([0; INLINE_WORDS], n as u8)
        } else {
            Words::Heap(vec![0; n])
        }
    }
}

impl std::ops::Deref for Words {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match self {
            Words::Inline(w, n) => &w[..*n as usize],
            Words::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u64] {
        match self {
            Words::Inline(w, n) => &mut w[..*n as usize],
            Words::Heap(v) => v,
        }
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        **self == **other
    }
}

impl Eq for Words {}

impl std::hash::Hash for Words {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h);
    }
}

impl CpuSet {
    /// The empty set able to hold `0..bound`.
    pub fn new(bound: u32) -> CpuSet {
        CpuSet {
            words: Words::zeroed((bound as usize).div_ceil(64)),
            bound,
        }
    }

    /// `0..bound` all set (the possible-CPU mask of a machine with `bound` CPUs).
    pub fn full(bound: u32) -> CpuSet {
        let mut s = CpuSet::new(bound);
        for i in 0..bound {
            s.set(i);
        }
        s
    }

    pub fn from_iter_bounded(bound: u32, it: impl IntoIterator<Item = u32>) -> CpuSet {
        let mut s = CpuSet::new(bound);
        for i in it {
            if i < bound {
                s.set(i);
            }
        }
        s
    }

    pub fn bound(&self) -> u32 {
        self.bound
    }

    pub fn test(&self, i: u32) -> bool {
        i < self.bound && self.words[(i / 64) as usize] & (1u64 << (i % 64)) != 0
    }

    /// Sets bit `i`; returns whether it was already set (`cpumask_test_and_set_cpu`).
    pub fn set(&mut self, i: u32) -> bool {
        if i >= self.bound {
            return false;
        }
        let w = &mut self.words[(i / 64) as usize];
        let was = *w & (1u64 << (i % 64)) != 0;
        *w |= 1u64 << (i % 64);
        was
    }

    /// Clears bit `i`; returns whether it was set.
    pub fn clear(&mut self, i: u32) -> bool {
        if i >= self.bound {
            return false;
        }
        let w = &mut self.words[(i / 64) as usize];
        let was = *w & (1u64 << (i % 64)) != 0;
        *w &= !(1u64 << (i % 64));
        was
    }

    pub fn clear_all(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// Number of set bits (`cpumask_weight`).
    pub fn weight(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Lowest clear bit below `lim` (`cpumask_first_zero`, bounded).
    pub fn first_zero(&self, lim: u32) -> Option<u32> {
        let lim = lim.min(self.bound);
        for (k, &w) in self.words.iter().enumerate() {
            if w != u64::MAX {
                let i = k as u32 * 64 + (!w).trailing_zeros();
                return (i < lim).then_some(i);
            }
            if (k as u32 + 1) * 64 >= lim {
                break;
            }
        }
        None
    }

    /// `self |= other` (bits of `other` beyond this set's bound are ignored).
    pub fn union_with(&mut self, other: &CpuSet) {
        for i in other.iter() {
            self.set(i);
        }
    }

    /// Set bits in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(k as u32 * 64 + b)
            })
        })
    }

    /// The `n`-th set bit (`cpumask_nth`), 0-based.
    pub fn nth(&self, n: u32) -> Option<u32> {
        self.iter().nth(n as usize)
    }

    /// Parses a CPU list as the kernel prints it: `1,3-5,8`.
    pub fn parse_list(s: &str, bound: u32) -> Result<CpuSet, ModelError> {
        let mut set = CpuSet::new(bound);
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a, b),
                None => (part, part),
            };
            let entry = || ModelError::CpuListEntry {
                part: part.to_string(),
            };
            let a: u32 = a.trim().parse().map_err(|_| entry())?;
            let b: u32 = b.trim().parse().map_err(|_| entry())?;
            if a > b || b >= bound {
                return Err(ModelError::CpuOutOfRange {
                    part: part.to_string(),
                    bound,
                });
            }
            for i in a..=b {
                set.set(i);
            }
        }
        Ok(set)
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_clear_weight_first_zero() {
        let mut s = CpuSet::new(130);
        assert_eq!(s.first_zero(130), Some(0));
        assert!(!s.set(0));
        assert!(s.set(0));
        s.set(1);
        s.set(64);
        assert_eq!(s.weight(), 3);
        assert_eq!(s.first_zero(130), Some(2));
        for i in 0..130 {
            s.set(i);
        }
        assert_eq!(s.first_zero(130), None);
        s.clear(129);
        assert_eq!(s.first_zero(130), Some(129));
        assert_eq!(s.first_zero(129), None);
        assert!(!s.set(500));
        assert!(!s.test(500));
        assert_eq!(s.iter().count(), 129);
        assert_eq!(s.nth(64), Some(64));
    }

    #[test]
    fn cpu_lists() {
        let s = CpuSet::parse_list("1,3-5", 8).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![1, 3, 4, 5]);
        assert_eq!(
            CpuSet::parse_list("7-9", 8).unwrap_err().to_string(),
            "CPU range \"7-9\" is outside 0..8 (the simulated CPUs)"
        );
        assert_eq!(
            CpuSet::parse_list("x", 8).unwrap_err().to_string(),
            "expected a CPU number or range like 2-5, found \"x\""
        );
    }
}
