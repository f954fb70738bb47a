//! Time order across CPUs with perf's finished-round semantics (`util/ordered-events.c`):
//! perf writes each CPU's buffer in order but interleaves CPUs in chunks, and a
//! `PERF_RECORD_FINISHED_ROUND` promises that nothing written later is older than the newest
//! record of the round *before*. So at each round end the records up to the previous round's
//! newest timestamp are released, sorted by time (ties keep file order); the rest wait. At the
//! end everything is released. A record older than what was already released is passed on late
//! (perf does the same and counts it), and the reader sorts and warns.

use super::attrs::Attrs;
use super::records::*;
use crate::sources::binary::cursor::{BinError, BinResult, read_u64};
use linux_perf_event_reader::{AttrFlags, RawData, RawEventRecord, RecordType};
use std::sync::Arc;

/// The first stage of reading: each record's attribute and time, and the order perf delivers
/// records in. Knows nothing of what the records hold.
#[derive(Default)]
pub struct Orderer {
    pub attrs: Option<Arc<Attrs>>,
    pub queue: Queue,
    /// Records whose event id no attribute lists (skipped): count, first offset.
    pub unknown: (u64, u64),
    /// Records of a type neither the kernel nor perf defines, or that no attribute produces
    /// (damage: skipped): count, first (offset, type).
    pub unknown_types: (u64, u64, u32),
}

impl Orderer {
    /// Takes a record of the stream; what is due (untimed records at once, a round's records
    /// at its end) goes to `out` in delivery order. A record cidscope cannot read is an error.
    /// The record's items carry `rec.offset | src_flag` (the flag tells decompressed records).
    pub fn record(&mut self, rec: Rec, src_flag: u64, out: &mut Vec<Item>) -> BinResult<()> {
        match rec.rtype {
            RECORD_SAMPLE | RECORD_COMM | RECORD_FORK | RECORD_EXIT | RECORD_LOST
            | RECORD_LOST_SAMPLES => {
                let found = self
                    .attrs
                    .as_ref()
                    .and_then(|a| Some((a, a.of_record(rec.rtype, rec.body)?)));
                let Some((a, idx)) = found else {
                    if self.unknown.0 == 0 {
                        self.unknown.1 = rec.offset as u64;
                    }
                    self.unknown.0 += 1;
                    return Ok(());
                };
                let parse = &a.list[idx].parse;
                let big = matches!(parse.endian, linux_perf_event_reader::Endianness::BigEndian);
                // a sample's time sits at a fixed offset: read it without building a record
                let ts = match parse.sample_record_time_offset_from_start {
                    Some(o) if rec.rtype == RECORD_SAMPLE => rec
                        .body
                        .get(o as usize..o as usize + 8)
                        .map(|b| read_u64(b, big)),
                    _ => RawEventRecord::new(
                        RecordType(rec.rtype),
                        rec.misc,
                        RawData::Single(rec.body),
                        *parse,
                    )
                    .timestamp(),
                };
                let src = rec.offset as u64 | src_flag;
                match ts {
                    Some(ts) if ts != 0 => self.queue.push(ts, src, idx as u32),
                    // Untimed records (synthesized at the start) are delivered at once.
                    _ => out.push(Item {
                        ts: 0,
                        seq: 0,
                        src,
                        attr: idx as u32,
                    }),
                }
            }
            RECORD_FINISHED_ROUND => self.queue.round(out),
            RECORD_COMPRESSED | RECORD_COMPRESSED2 => {
                // the reader decompresses them itself when the header announces compression
                return Err(BinError::new(
                    rec.offset as u64,
                    "found a PERF_RECORD_COMPRESSED record (perf record -z) in a file whose header has no HEADER_COMPRESSED feature: the file is damaged",
                ));
            }
            // the kernel writes PERF_RECORD_READ only for inherit_stat events (at a child's exit)
            RECORD_READ if !self.inherit_stat() => self.unknown_type(&rec),
            // PERF_RECORD_MMAP..AUX_OUTPUT_HW_ID and perf's own 64..=83: known, not used here
            1..=22 | 64..=83 => {}
            _ => self.unknown_type(&rec),
        }
        Ok(())
    }

    fn inherit_stat(&self) -> bool {
        let a = self.attrs.as_deref();
        a.is_some_and(|a| {
            a.list
                .iter()
                .any(|a| a.attr.flags.contains(AttrFlags::INHERIT_STAT))
        })
    }

    fn unknown_type(&mut self, rec: &Rec) {
        if self.unknown_types.0 == 0 {
            (self.unknown_types.1, self.unknown_types.2) = (rec.offset as u64, rec.rtype);
        }
        self.unknown_types.0 += 1;
    }

    /// End of data: everything still queued, in order.
    pub fn finish(&mut self, out: &mut Vec<Item>) {
        self.queue.finish(out);
    }

    /// The lowest source of a queued record carrying `flag` (what decompressed bytes must be
    /// kept from).
    pub fn min_src_with(&self, flag: u64) -> Option<u64> {
        self.queue
            .pending
            .iter()
            .filter(|i| i.src & flag != 0)
            .map(|i| i.src & !flag)
            .min()
    }
}

/// Where a queued record is: an offset in the file (or in decompressed records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub ts: u64,
    pub seq: u64,
    pub src: u64,
    /// The record's attribute (found once, when it was queued).
    pub attr: u32,
}

#[derive(Default, Debug)]
pub struct Queue {
    pending: Vec<Item>,
    seq: u64,
    next_flush: u64,
    max_ts: u64,
    last_released: u64,
    /// Records queued with a time below one already released.
    pub late: u64,
    /// Kept between rounds: the sort's buffer (a fresh one per round costs page faults).
    scratch: Vec<Item>,
}

impl Queue {
    pub fn push(&mut self, ts: u64, src: u64, attr: u32) {
        if ts < self.last_released {
            self.late += 1;
        }
        self.pending.push(Item {
            ts,
            seq: self.seq,
            src,
            attr,
        });
        self.seq += 1;
        self.max_ts = self.max_ts.max(ts);
    }

    /// A FINISHED_ROUND: releases the records up to the previous round's newest time.
    pub fn round(&mut self, out: &mut Vec<Item>) {
        let limit = self.next_flush;
        self.release(limit, out);
        self.next_flush = self.max_ts;
    }

    /// End of data: releases everything.
    pub fn finish(&mut self, out: &mut Vec<Item>) {
        self.release(u64::MAX, out);
    }

    fn release(&mut self, limit: u64, out: &mut Vec<Item>) {
        if self.pending.is_empty() {
            return;
        }
        // Stable by time is (time, seq) order: the records left from the last round come first,
        // already in that order, and the new ones follow in push order.
        sort_runs(&mut self.pending, &mut self.scratch);
        let n = self.pending.partition_point(|i| i.ts <= limit);
        if n == 0 {
            return;
        }
        self.last_released = self.last_released.max(self.pending[n - 1].ts);
        out.extend(self.pending.drain(..n));
    }
}

/// Sorts `v` by time, stably, by merging its ascending runs (perf writes each CPU's records
/// in order, in chunks, so a round is a handful of runs).
fn sort_runs(v: &mut Vec<Item>, scratch: &mut Vec<Item>) {
    let mut bounds: Vec<usize> = std::iter::once(0)
        .chain((1..v.len()).filter(|&i| v[i].ts < v[i - 1].ts))
        .chain(std::iter::once(v.len()))
        .collect();
    while bounds.len() > 2 {
        scratch.clear();
        let mut next = vec![0];
        for w in bounds.windows(3).step_by(2) {
            let (a, b, c) = (w[0], w[1], w[2]);
            let (mut i, mut j) = (a, b);
            while i < b && j < c {
                // ties to the left run: stable
                if v[j].ts < v[i].ts {
                    scratch.push(v[j]);
                    j += 1;
                } else {
                    scratch.push(v[i]);
                    i += 1;
                }
            }
            scratch.extend_from_slice(&v[i..b]);
            scratch.extend_from_slice(&v[j..c]);
            next.push(c);
        }
        if bounds.len().is_multiple_of(2) {
            // an odd run out: carried over as it is
            let (a, b) = (bounds[bounds.len() - 2], bounds[bounds.len() - 1]);
            scratch.extend_from_slice(&v[a..b]);
            next.push(b);
        }
        std::mem::swap(v, scratch);
        bounds = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn run_merge_is_a_stable_sort(ts in proptest::collection::vec(0u64..20, 0..300)) {
            let items: Vec<Item> = ts
                .iter()
                .enumerate()
                .map(|(k, &t)| Item { ts: t, seq: k as u64, src: k as u64, attr: 0 })
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|i| i.ts);
            let mut got = items;
            sort_runs(&mut got, &mut Vec::new());
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn rounds_release_up_to_the_previous_rounds_newest() {
        let mut q = Queue::default();
        let mut out = Vec::new();
        // round 1: cpu0 1,3  cpu1 2,6
        for (ts, src) in [(1, 10), (3, 11), (2, 20), (6, 21)] {
            q.push(ts, src, 0);
        }
        q.round(&mut out);
        assert!(out.is_empty(), "nothing is released after the first round");
        // round 2: cpu0 4,5 cpu1 7
        for (ts, src) in [(4, 12), (5, 13), (7, 22)] {
            q.push(ts, src, 0);
        }
        q.round(&mut out);
        let got: Vec<_> = out.iter().map(|i| i.ts).collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5, 6]);
        q.push(6, 30, 0); // equal to a released time: not late, after the earlier 6
        q.finish(&mut out);
        let got: Vec<_> = out.iter().map(|i| (i.ts, i.src)).collect();
        assert_eq!(got[5..], [(6, 21), (6, 30), (7, 22)]);
        assert_eq!(q.late, 0);
        q.push(1, 40, 0);
        assert_eq!(q.late, 1);
    }
}
