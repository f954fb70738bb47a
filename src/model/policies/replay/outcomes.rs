//! Each checked `rseq_update` of a replay and whether the model agreed, in event order: what
//! an inferred step changed is read from two of these (the plain replay's and the final
//! one's), and the misses a search may explain from the plain replay's as they come.
//!
//! Packed in 4 bytes where the event index allows: a pair of an index and a flag took 16, and
//! the plain replay of the bench capture (1.4 M checked updates, no miss) wrote 22 MB of them.

/// The outcomes of one replay, pushed in event order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcomes {
    /// `index << 1 | agreed`, for indices below 2^31.
    packed: Vec<u32>,
    /// Those of larger indices, all after the packed ones.
    wide: Vec<(usize, bool)>,
}

const PACKED_MAX: usize = (1 << 31) - 1;

impl Outcomes {
    /// The outcome of the checked update at event `idx` (after every one pushed so far).
    #[inline]
    pub fn push(&mut self, idx: usize, agreed: bool) {
        if idx <= PACKED_MAX && self.wide.is_empty() {
            self.packed.push((idx as u32) << 1 | agreed as u32);
        } else {
            self.wide.push((idx, agreed));
        }
    }

    pub fn len(&self) -> usize {
        self.packed.len() + self.wide.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outcomes from the `k`-th on, as (event index, agreed).
    pub fn iter_from(&self, k: usize) -> impl Iterator<Item = (usize, bool)> + '_ {
        let unpack = |&p: &u32| ((p >> 1) as usize, p & 1 == 1);
        let wide_from = k.saturating_sub(self.packed.len()).min(self.wide.len());
        self.packed[k.min(self.packed.len())..]
            .iter()
            .map(unpack)
            .chain(self.wide[wide_from..].iter().copied())
    }

    /// Whether the model missed one of the outcomes from the `k`-th on (asked after every
    /// event of a plain replay: usually none is new).
    #[inline]
    pub fn missed_from(&self, k: usize) -> bool {
        k < self.len() && self.iter_from(k).any(|(_, ok)| !ok)
    }

    /// Every outcome, as (event index, agreed).
    pub fn iter(&self) -> impl Iterator<Item = (usize, bool)> + '_ {
        self.iter_from(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_back_as_pushed_across_the_packed_limit() {
        let pushed = [
            (0, true),
            (3, false),
            (PACKED_MAX, true),
            (PACKED_MAX + 1, false),
            (usize::MAX, true),
        ];
        let mut o = Outcomes::default();
        for &(i, ok) in &pushed {
            o.push(i, ok);
        }
        assert_eq!(o.len(), 5);
        let missed: Vec<bool> = (0..=6).map(|k| o.missed_from(k)).collect();
        assert_eq!(missed, [true, true, true, true, false, false, false]);
        assert_eq!(o.iter().collect::<Vec<_>>(), pushed);
        for k in 0..=6 {
            assert_eq!(
                o.iter_from(k).collect::<Vec<_>>(),
                pushed.get(k..).unwrap_or_default(),
                "from {k}"
            );
        }
    }
}
