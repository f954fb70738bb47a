//! Summaries of a lane over a time range: what one screen column shows.

use super::{SegLane, Segment};

/// What a column of a lane shows: the segment (of those the filter admits) that covers most of
/// the column's time, and how many segment boundaries fall inside the column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub seg: Option<Segment>,
    pub changes: u32,
}

/// Summarizes `lane` over `[t0, t1)`; `end` is when the last segment ends.
pub fn summarize(
    lane: &SegLane,
    t0: u64,
    t1: u64,
    end: u64,
    admit: impl Fn(&Segment) -> bool,
) -> Cell {
    let mut best: Option<(u64, Segment)> = None;
    let mut changes = 0u32;
    let mut i = lane.index_at(t0).unwrap_or(0);
    while i < lane.len() && lane.start(i) < t1 {
        let s = lane.at(i);
        let s_end = if i + 1 < lane.len() {
            lane.start(i + 1)
        } else {
            end.max(s.start + 1)
        };
        if s.start > t0 {
            changes += 1;
        }
        if s_end > t0 && admit(&s) {
            let cover = s_end.min(t1).saturating_sub(s.start.max(t0)).max(1);
            if best.is_none_or(|(c, _)| cover > c) {
                best = Some((cover, s));
            }
        }
        i += 1;
    }
    Cell {
        seg: best.map(|b| b.1),
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MmId;

    fn seg(start: u64, cid: i32, mm: u32) -> Segment {
        Segment {
            start,
            tid: 1,
            mm: MmId(mm),
            cid,
            flags: Segment::CONFIRMED,
        }
    }

    #[test]
    fn dominant_admitted_segment_wins() {
        let lane = SegLane::from(vec![
            seg(0, 0, 0),
            seg(10, 1, 0),
            seg(12, 5, 1),
            seg(20, 0, 0),
        ]);
        let all = |_: &Segment| true;
        assert_eq!(summarize(&lane, 0, 10, 30, all).seg.unwrap().cid, 0);
        let c = summarize(&lane, 9, 21, 30, all);
        assert_eq!(c.seg.unwrap().cid, 5);
        assert_eq!(c.changes, 3);
        let only0 = |s: &Segment| s.mm == MmId(0);
        assert_eq!(summarize(&lane, 9, 21, 30, only0).seg.unwrap().cid, 1);
        assert_eq!(summarize(&lane, 13, 19, 30, only0).seg, None);
        assert_eq!(summarize(&lane, 25, 40, 30, all).seg.unwrap().cid, 0);
    }
}
