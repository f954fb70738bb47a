//! Per-column summaries that make a frame cost the same at every zoom: a power-of-two pyramid
//! of time buckets per lane (the dominant admitted segment of each bucket and how many segment
//! boundaries fall in it), and one per weight series (its maximum per bucket). Built once per
//! selection; a column wider than a bucket reads two or three buckets instead of every segment.
//! Like every mipmap the answer for a wide column is the dominant of its buckets' dominants,
//! which can differ from the exact dominant over the column when several segments tie closely.

use super::lanes::{Cell, summarize};
use super::{SegLane, Segment};

/// Level-0 buckets per lane, at most: the level-0 width is the smallest power of two of ns
/// that covers the lane's span in this many buckets.
const MAX_BUCKETS: u64 = 1 << 16;
/// Segments per level-0 bucket a lane's pyramid aims at: a column narrower than a few buckets is
/// summarized from its segments, so this bounds that walk, and a lane with few segments gets a
/// small pyramid (memory follows the segments, not the CPU count).
const SEGS_PER_BUCKET: usize = 16;

/// Level-0 buckets for a lane of `segs` segments.
fn buckets_for(segs: usize) -> u64 {
    ((segs / SEGS_PER_BUCKET).max(64) as u64).min(MAX_BUCKETS)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    /// Index of the dominant admitted segment, `u32::MAX` if none.
    seg: u32,
    /// How much of the bucket the dominant covers, in units of 2^level ns (level 0 in ns): a
    /// bucket of level L is 2^(shift+L) ns wide, so this fits 32 bits for any span under 2^32
    /// level-0 widths and halves the pyramid.
    cover: u32,
    /// Segment starts inside the bucket.
    changes: u32,
}

const EMPTY: Bucket = Bucket {
    seg: u32::MAX,
    cover: 0,
    changes: 0,
};

/// The pyramid of one lane under one admission rule.
#[derive(Clone, Debug)]
pub struct LanePyramid {
    origin: u64,
    /// log2 of the level-0 bucket width in ns.
    shift: u32,
    levels: Vec<Vec<Bucket>>,
}

fn width_shift(span: u64, buckets: u64) -> u32 {
    let per = span.div_ceil(buckets).max(1);
    64 - (per - 1).leading_zeros()
}

impl LanePyramid {
    /// Builds the pyramid of `lane` over `[origin, end)` for the segments `admit` accepts.
    pub fn build(lane: &SegLane, origin: u64, end: u64, admit: impl Fn(&Segment) -> bool) -> Self {
        let span = end.saturating_sub(origin).max(1);
        let shift = width_shift(span, buckets_for(lane.len()));
        let w = 1u64 << shift;
        let n = span.div_ceil(w) as usize;
        let mut l0 = vec![EMPTY; n.max(1)];
        for (i, s) in lane.iter().enumerate() {
            let s_end = if i + 1 < lane.len() {
                lane.start(i + 1)
            } else {
                end.max(s.start + 1)
            };
            let a = s.start.max(origin);
            let b = s_end.min(origin + span);
            if s.start >= origin {
                let k = ((s.start - origin) >> shift) as usize;
                if let Some(bk) = l0.get_mut(k) {
                    bk.changes += 1;
                }
            }
            if b <= a || !admit(&s) {
                continue;
            }
            let (k0, k1) = (
                ((a - origin) >> shift) as usize,
                ((b - 1 - origin) >> shift) as usize,
            );
            for (k, bk) in l0.iter_mut().enumerate().take(k1 + 1).skip(k0) {
                let lo = origin + ((k as u64) << shift);
                let cover = (b.min(lo + w) - a.max(lo)).min(u32::MAX as u64) as u32;
                if cover > bk.cover {
                    bk.seg = i as u32;
                    bk.cover = cover;
                }
            }
        }
        let mut levels = vec![l0];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let prev = levels.last().map_or(&[][..], |l| &l[..]);
            let next: Vec<Bucket> = prev
                .chunks(2)
                .map(|c| {
                    let (x, y) = (c[0], c.get(1).copied().unwrap_or(EMPTY));
                    let changes = x.changes.saturating_add(y.changes);
                    // covers in the next level's units (twice as coarse)
                    if x.seg == y.seg {
                        Bucket {
                            seg: x.seg,
                            cover: ((x.cover as u64 + y.cover as u64) >> 1) as u32,
                            changes,
                        }
                    } else if y.cover > x.cover {
                        Bucket {
                            changes,
                            cover: y.cover >> 1,
                            ..y
                        }
                    } else {
                        Bucket {
                            changes,
                            cover: x.cover >> 1,
                            ..x
                        }
                    }
                })
                .collect();
            levels.push(next);
        }
        LanePyramid {
            origin,
            shift,
            levels,
        }
    }

    /// What a column `[a, b)` of `lane` shows (the lane the pyramid was built from).
    pub fn cell(
        &self,
        lane: &SegLane,
        a: u64,
        b: u64,
        end: u64,
        admit: impl Fn(&Segment) -> bool,
    ) -> Cell {
        let width = b.saturating_sub(a);
        // narrow columns hold few segments: summarize them exactly
        if width < (8u64 << self.shift) || a < self.origin {
            return summarize(lane, a, b, end, admit);
        }
        // buckets at most a quarter of the column wide; only those wholly inside it count, so
        // the answer is always a segment of the column (covering at least half of it)
        let level = ((63 - width.leading_zeros()) - self.shift - 2) as usize;
        let level = level.min(self.levels.len() - 1);
        let sh = self.shift + level as u32;
        let buckets = &self.levels[level];
        let k0 = (a - self.origin).div_ceil(1 << sh) as usize;
        let k1 = ((b - self.origin) >> sh) as usize;
        if k1 <= k0 {
            return summarize(lane, a, b, end, admit);
        }
        let mut best = EMPTY;
        let mut changes = 0;
        for bk in buckets.iter().take(k1).skip(k0) {
            changes += bk.changes;
            if bk.seg != u32::MAX && (best.seg == u32::MAX || bk.cover > best.cover) {
                best = *bk;
            }
        }
        Cell {
            seg: (best.seg != u32::MAX).then(|| lane.at(best.seg as usize)),
            changes,
        }
    }
}

/// The maximum of a step series (time, value) per power-of-two bucket.
#[derive(Clone, Debug)]
pub struct MaxPyramid {
    origin: u64,
    shift: u32,
    levels: Vec<Vec<u16>>,
}

impl MaxPyramid {
    pub fn build(series: &[(u64, u16)], origin: u64, end: u64) -> Self {
        let span = end.saturating_sub(origin).max(1);
        let shift = width_shift(span, buckets_for(series.len()));
        let n = (span.div_ceil(1 << shift) as usize).max(1);
        let mut l0 = vec![0u16; n];
        for (i, &(ts, v)) in series.iter().enumerate() {
            let s_end = series.get(i + 1).map_or(end.max(ts + 1), |x| x.0);
            let a = ts.max(origin);
            let b = s_end.min(origin + span);
            if b <= a {
                continue;
            }
            let (k0, k1) = (
                ((a - origin) >> shift) as usize,
                ((b - 1 - origin) >> shift) as usize,
            );
            for m in l0.iter_mut().take(k1 + 1).skip(k0) {
                *m = (*m).max(v);
            }
        }
        let mut levels = vec![l0];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let prev = levels.last().map_or(&[][..], |l| &l[..]);
            let next = prev
                .chunks(2)
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .collect();
            levels.push(next);
        }
        MaxPyramid {
            origin,
            shift,
            levels,
        }
    }

    /// The maximum over `[a, b)`; `exact` computes it from the series for narrow columns.
    pub fn max_in(
        &self,
        series: &[(u64, u16)],
        a: u64,
        b: u64,
        exact: impl Fn(&[(u64, u16)], u64, u64) -> u16,
    ) -> u16 {
        let width = b.saturating_sub(a);
        if width < (8u64 << self.shift) || a < self.origin {
            return exact(series, a, b);
        }
        // buckets at most a quarter column wide: the maximum may reach at most one bucket past
        // each edge of the column
        let level =
            (((63 - width.leading_zeros()) - self.shift - 2) as usize).min(self.levels.len() - 1);
        let sh = self.shift + level as u32;
        let k0 = ((a - self.origin) >> sh) as usize;
        let k1 = (((b - 1).saturating_sub(self.origin)) >> sh) as usize;
        self.levels[level]
            .iter()
            .take(k1 + 1)
            .skip(k0)
            .copied()
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MmId;
    use proptest::prelude::*;

    fn seg(start: u64, cid: i32) -> Segment {
        Segment {
            start,
            tid: 1,
            mm: MmId(0),
            cid,
            flags: Segment::CONFIRMED,
        }
    }

    proptest! {
        /// A column narrower than two buckets is exact; a wide column's answer is a segment
        /// that really covers part of the column, and the change count is exact when the column
        /// is bucket-aligned.
        #[test]
        fn pyramid_answers_are_real_segments(
            gaps in proptest::collection::vec(1u64..5_000_000, 1..400),
            cids in proptest::collection::vec(0i32..4, 400),
            cols in 1u64..300,
        ) {
            let mut t = 1_000_000_000u64;
            let lane: SegLane = gaps.iter().zip(&cids).map(|(g, &c)| {
                let s = seg(t, c);
                t += g;
                s
            }).collect();
            let (origin, end) = (lane.start(0), t);
            let p = LanePyramid::build(&lane, origin, end, |_| true);
            let span = end - origin;
            for x in 0..cols {
                let a = origin + span * x / cols;
                let b = (origin + span * (x + 1) / cols).max(a + 1);
                let c = p.cell(&lane, a, b, end, |_| true);
                let exact = summarize(&lane, a, b, end, |_| true);
                match c.seg {
                    None => prop_assert!(exact.seg.is_none()),
                    Some(s) => {
                        let i = lane.iter().position(|x| x == s).unwrap();
                        let s_end = lane.get(i + 1).map_or(end, |n| n.start);
                        prop_assert!(s.start < b && s_end > a, "segment outside the column");
                    }
                }
            }
        }

        #[test]
        fn max_pyramid_is_an_upper_bound_and_exact_on_buckets(
            steps in proptest::collection::vec((1u64..3_000_000, 0u16..9), 1..300),
            cols in 1u64..200,
        ) {
            let mut t = 5_000u64;
            let series: Vec<(u64, u16)> = steps.iter().map(|&(g, v)| { let s = (t, v); t += g; s }).collect();
            let (origin, end) = (series[0].0, t);
            let exact = |s: &[(u64, u16)], a: u64, b: u64| {
                let start = s.partition_point(|w| w.0 <= a);
                let at = start.checked_sub(1).map_or(0, |i| s[i].1);
                s[start..].iter().take_while(|w| w.0 < b).map(|w| w.1).fold(at, u16::max)
            };
            let p = MaxPyramid::build(&series, origin, end);
            let span = end - origin;
            for x in 0..cols {
                let a = origin + span * x / cols;
                let b = (origin + span * (x + 1) / cols).max(a + 1);
                // buckets may reach a little past the column: never below the exact maximum
                prop_assert!(p.max_in(&series, a, b, exact) >= exact(&series, a, b));
            }
        }
    }
}
