//! One CPU's lane of [`Segment`]s, stored compactly: a lane holds few distinct (task, mm, CID,
//! flags) states and switches among them often, so each segment is its start (a
//! [`TimeColumn`] entry, ~4 bytes) and the index of its state in the lane's table (2 bytes, 4 once
//! a lane has seen more than 65,535 states): about 6 bytes per segment instead of 24.

use super::lane::{Segment, SlotFlags};
use super::tasks::MmId;
use crate::events::{Tid, TimeColumn};
use rustc_hash::FxHashMap;

/// A segment without its start: what the lane's table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    tid: Tid,
    mm: MmId,
    cid: i32,
    flags: SlotFlags,
}

impl State {
    fn of(s: &Segment) -> State {
        State {
            tid: s.tid,
            mm: s.mm,
            cid: s.cid,
            flags: s.flags,
        }
    }
    fn at(self, start: u64) -> Segment {
        Segment {
            start,
            tid: self.tid,
            mm: self.mm,
            cid: self.cid,
            flags: self.flags,
        }
    }
}

#[derive(Clone, Debug)]
enum Keys {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Keys {
    fn get(&self, i: usize) -> u32 {
        match self {
            Keys::Narrow(v) => v[i] as u32,
            Keys::Wide(v) => v[i],
        }
    }
    fn push(&mut self, k: u32) {
        if let Keys::Narrow(v) = self {
            if let Ok(k) = u16::try_from(k) {
                v.push(k);
                return;
            }
            *self = Keys::Wide(v.iter().map(|&k| k as u32).collect());
        }
        if let Keys::Wide(v) = self {
            v.push(k);
        }
    }
    fn set_last(&mut self, k: u32) {
        let n = self.len();
        if n == 0 {
            return;
        }
        if let Keys::Narrow(v) = self
            && let Ok(k) = u16::try_from(k)
        {
            v[n - 1] = k;
            return;
        }
        self.pop();
        self.push(k);
    }
    fn pop(&mut self) -> Option<u32> {
        match self {
            Keys::Narrow(v) => v.pop().map(u32::from),
            Keys::Wide(v) => v.pop(),
        }
    }
    fn len(&self) -> usize {
        match self {
            Keys::Narrow(v) => v.len(),
            Keys::Wide(v) => v.len(),
        }
    }
    fn shrink_to_fit(&mut self) {
        match self {
            Keys::Narrow(v) => v.shrink_to_fit(),
            Keys::Wide(v) => v.shrink_to_fit(),
        }
    }
    fn heap_bytes(&self) -> usize {
        match self {
            Keys::Narrow(v) => v.capacity() * 2,
            Keys::Wide(v) => v.capacity() * 4,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SegLane {
    starts: TimeColumn,
    keys: Keys,
    table: Vec<State>,
    index: FxHashMap<State, u32>,
}

impl Default for SegLane {
    fn default() -> Self {
        SegLane::new()
    }
}

impl PartialEq for SegLane {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<Segment>> for SegLane {
    fn from(v: Vec<Segment>) -> Self {
        v.into_iter().collect()
    }
}

impl FromIterator<Segment> for SegLane {
    fn from_iter<I: IntoIterator<Item = Segment>>(it: I) -> Self {
        let mut l = SegLane::new();
        for s in it {
            l.push(s);
        }
        l
    }
}

static EMPTY: std::sync::LazyLock<SegLane> = std::sync::LazyLock::new(SegLane::new);

impl SegLane {
    /// A lane with no segments (for CPUs a lane set does not have).
    pub fn empty() -> &'static SegLane {
        &EMPTY
    }

    pub fn new() -> SegLane {
        SegLane {
            starts: TimeColumn::default(),
            keys: Keys::Narrow(Vec::new()),
            table: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// States the index remembers at most: past that it starts over, and a state seen again
    /// gets a second table entry (a lane of a million tasks would otherwise index every one).
    const INDEX_MAX: usize = 1 << 16;

    fn key(&mut self, s: &Segment) -> u32 {
        let st = State::of(s);
        if self.index.len() >= Self::INDEX_MAX {
            self.index.clear();
        }
        let next = self.table.len() as u32;
        let k = *self.index.entry(st).or_insert(next);
        if k == next {
            self.table.push(st);
        }
        k
    }

    pub fn push(&mut self, s: Segment) {
        let k = self.key(&s);
        self.starts.push(s.start);
        self.keys.push(k);
    }

    /// Replaces the last segment (no-op when empty).
    pub fn set_last(&mut self, s: Segment) {
        if self.is_empty() {
            return;
        }
        let k = self.key(&s);
        self.starts.set_last(s.start);
        self.keys.set_last(k);
    }

    pub fn pop(&mut self) -> Option<Segment> {
        let last = self.last()?;
        self.starts.pop();
        self.keys.pop();
        Some(last)
    }

    /// When segment `i` starts (panics if out of range, like indexing).
    pub fn start(&self, i: usize) -> u64 {
        self.starts.get(i)
    }

    /// Segment `i` (panics if out of range, like indexing).
    pub fn at(&self, i: usize) -> Segment {
        self.table[self.keys.get(i) as usize].at(self.starts.get(i))
    }

    pub fn get(&self, i: usize) -> Option<Segment> {
        (i < self.len()).then(|| self.at(i))
    }

    pub fn first(&self) -> Option<Segment> {
        self.get(0)
    }

    pub fn last(&self) -> Option<Segment> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    /// The first index whose start does not satisfy `pred` (starts are sorted).
    pub fn partition_point_start(&self, pred: impl Fn(u64) -> bool) -> usize {
        self.starts.partition_point(pred)
    }

    /// The segment covering `ts`: the last one starting at or before it.
    pub fn index_at(&self, ts: u64) -> Option<usize> {
        self.partition_point_start(|s| s <= ts).checked_sub(1)
    }

    /// Segments `[a, b)`.
    pub fn range(
        &self,
        r: std::ops::Range<usize>,
    ) -> impl DoubleEndedIterator<Item = Segment> + '_ {
        let end = r.end.min(self.len());
        (r.start.min(end)..end).map(|i| self.at(i))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Segment> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    pub fn to_vec(&self) -> Vec<Segment> {
        self.iter().collect()
    }

    pub fn shrink_to_fit(&mut self) {
        self.starts.shrink_to_fit();
        self.keys.shrink_to_fit();
        self.table.shrink_to_fit();
    }

    /// Bytes held (capacity), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.starts.heap_bytes()
            + self.keys.heap_bytes()
            + self.table.capacity() * std::mem::size_of::<State>()
            + self.index.capacity() * (std::mem::size_of::<State>() + 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes, pops and last-replacements give back the segments of a plain vector, also
        /// once the table outgrows 16-bit keys.
        #[test]
        fn behaves_like_a_vec(
            ops in proptest::collection::vec((0u8..12, 0u32..100_000, 0i32..64, 0u8..16), 0..3000)
        ) {
            let (mut lane, mut v) = (SegLane::new(), Vec::<Segment>::new());
            let mut t = 0u64;
            for (op, tid, cid, flags) in ops {
                t += tid as u64 % 5000;
                let flags = SlotFlags::from_bits(flags).unwrap_or_default();
                let s = Segment { start: t, tid, mm: MmId(tid % 7), cid, flags };
                match op {
                    0 => prop_assert_eq!(lane.pop(), v.pop()),
                    1 => {
                        lane.set_last(s);
                        if let Some(l) = v.last_mut() {
                            *l = s;
                        }
                    }
                    _ => {
                        lane.push(s);
                        v.push(s);
                    }
                }
            }
            prop_assert_eq!(lane.to_vec(), v.clone());
            let probe = t / 2;
            prop_assert_eq!(
                lane.index_at(probe),
                v.partition_point(|s| s.start <= probe).checked_sub(1)
            );
        }
    }

    #[test]
    fn few_states_cost_about_six_bytes() {
        let mut lane = SegLane::new();
        for i in 0..100_000u64 {
            lane.push(Segment {
                start: i * 1000,
                tid: (i % 20) as u32,
                mm: MmId((i % 3) as u32),
                cid: (i % 4) as i32,
                flags: Segment::CONFIRMED,
            });
        }
        lane.shrink_to_fit();
        let per = lane.heap_bytes() as f64 / lane.len() as f64;
        assert!(per < 6.5, "{per} bytes per segment");
    }
}
