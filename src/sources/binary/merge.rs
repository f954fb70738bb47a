//! Per-CPU event lists → one list in time order, the way `trace-cmd report` picks the next
//! record: the smallest timestamp, ties to the lowest CPU, each CPU's own order kept. Markers
//! with no time yet (`u64::MAX`: data lost before any event of that CPU) stand just before
//! their CPU's next event, as `trace-cmd report` prints them, and take the time of the event
//! before them in the merged list.

use crate::events::{ChannelChunks, Event, EventStore, Trace, TraceDelta};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events per delta of a binary capture.
const BINARY_DELTA_EVENTS: usize = 1 << 16;

/// Hands a capture decoded into a store to `sink`: the first delta carries the metadata, every
/// delta a piece of its events (one buffer, reused while the sink leaves it).
pub fn stream_store(t: Trace, store: &EventStore, sink: &mut dyn FnMut(&mut TraceDelta) -> bool) {
    stream_pieces(t, sink, |piece| {
        let mut buf = Vec::with_capacity(store.len().min(BINARY_DELTA_EVENTS));
        for start in (0..store.len()).step_by(BINARY_DELTA_EVENTS) {
            buf.clear();
            buf.extend(store.range(start..start + BINARY_DELTA_EVENTS));
            if !piece(&mut buf) {
                return;
            }
        }
    });
}

/// The deltas of [`stream_store`]: `pieces` hands each piece of events to the closure it is
/// given, which returns false once the sink wants no more.
fn stream_pieces(
    t: Trace,
    sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    pieces: impl FnOnce(&mut dyn FnMut(&mut Vec<Event>) -> bool),
) {
    let mut d = TraceDelta::metadata(t);
    let mut sent = false;
    pieces(&mut |buf| {
        std::mem::swap(&mut d.events, buf);
        let go = sink(&mut d);
        std::mem::swap(&mut d.events, buf);
        sent = true;
        d.new_strings.clear();
        d.tasks.clear();
        d.warnings.clear();
        go
    });
    if !sent {
        // no events: the metadata still goes over
        sink(&mut d);
    }
}

/// Each CPU's events in order, handed over a block at a time (a whole list per CPU, or the
/// units a reader decodes ahead of the merge), for [`merge_blocks`].
pub trait Blocks {
    /// How many streams (CPUs) there are.
    fn streams(&self) -> usize;
    /// Appends stream `i`'s next block to `buf`; false once it has no more.
    fn next_block(&mut self, i: usize, buf: &mut Vec<Event>) -> bool;
}

/// Moves `block`'s events to the end of `buf` (taking its allocation when `buf` is empty),
/// leaving `block` empty: how a [`Blocks`] hands a block over.
pub fn hand_over(buf: &mut Vec<Event>, block: &mut Vec<Event>) {
    if buf.is_empty() {
        std::mem::swap(buf, block);
    } else {
        buf.append(block);
    }
}

/// Streams each held whole.
pub struct Whole(pub Vec<Vec<Event>>);

impl Blocks for Whole {
    fn streams(&self) -> usize {
        self.0.len()
    }

    fn next_block(&mut self, i: usize, buf: &mut Vec<Event>) -> bool {
        let Some(s) = self.0.get_mut(i).filter(|s| !s.is_empty()) else {
            return false;
        };
        hand_over(buf, s);
        true
    }
}

/// Events merged at a time into a store (a buffer that stays in the cache).
const STORE_CHUNK: usize = 4096;

/// The merged list, whole, in a store reserved for about `capacity` events (a guess: what
/// is not filled is not touched): packed as it is merged, with no list of every event in
/// between (a copy of each and twice the memory).
pub fn merge_store_from(src: &mut dyn Blocks, capacity: usize) -> EventStore {
    let mut store = EventStore::with_capacity(capacity);
    merge_blocks(src, STORE_CHUNK, &mut |buf| {
        store.extend(buf.iter());
        true
    });
    store
}

/// Merged pieces a pass beside [`merge_store_beside`] may have unread (the merge waits past
/// that: memory stays bounded).
const BESIDE_DEPTH: usize = 8;

/// [`merge_store_from`], handing each merged piece, once packed, to `beside` on another
/// thread: a pass over the events in time order that need not wait for the whole store.
pub fn merge_store_beside<R: Send>(
    src: &mut dyn Blocks,
    capacity: usize,
    beside: impl FnOnce(&mut ChannelChunks) -> R + Send,
) -> (EventStore, R) {
    let mut store = EventStore::with_capacity(capacity);
    let (tx, mut rx) = ChannelChunks::channel(BESIDE_DEPTH);
    std::thread::scope(|sc| {
        let pass = sc.spawn(move || beside(&mut rx));
        merge_blocks(src, STORE_CHUNK, &mut |buf| {
            store.extend(buf.iter());
            let piece = std::mem::replace(buf, tx.buffer(STORE_CHUNK));
            // (a pass that stopped reading leaves the merge to go on alone)
            tx.send(piece);
            true
        });
        drop(tx);
        let r = pass.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (store, r)
    })
}

/// The merged list handed to `sink` in pieces of at most `chunk` events, in one reused buffer
/// (`sink` may take it); `sink` returns false to stop. No list of every event is built: each
/// stream holds one block (and, while its events have no time yet, the blocks up to its next
/// timed event, which an untimed marker stands before).
pub fn merge_blocks(
    src: &mut dyn Blocks,
    chunk: usize,
    sink: &mut dyn FnMut(&mut Vec<Event>) -> bool,
) {
    let chunk = chunk.max(1);
    let n = src.streams();
    let mut blocks: Vec<Vec<Event>> = (0..n).map(|_| Vec::new()).collect();
    let mut pos = vec![0usize; n];
    // Stream i's next block in place of the one it has read; false at its end.
    let refill = |src: &mut dyn Blocks, blocks: &mut [Vec<Event>], i: usize| -> bool {
        let b = &mut blocks[i];
        b.clear();
        while src.next_block(i, b) {
            if b.iter().any(|e| e.ts != u64::MAX) {
                break;
            }
        }
        !b.is_empty()
    };
    let mut buf: Vec<Event> = Vec::new();
    // The time of the event before in the merged list; before the first, the first real time.
    let mut prev: Option<u64> = None;
    let first_real = |s: &[Event], p: usize| s[p..].iter().map(|e| e.ts).find(|&t| t != u64::MAX);
    let mut push = |buf: &mut Vec<Event>, mut e: Event, key: u64| -> bool {
        if e.ts == u64::MAX {
            e.ts = prev.unwrap_or(if key == u64::MAX { 0 } else { key });
        }
        prev = Some(e.ts);
        if buf.capacity() == 0 {
            buf.reserve(chunk.min(1 << 16));
        }
        buf.push(e);
        if buf.len() >= chunk {
            let go = sink(buf);
            buf.clear();
            return go;
        }
        true
    };
    // A stream's place in the heap: its head's time, or for an untimed marker the time of the
    // stream's next real event.
    let key = |s: &[Event], p: usize| match s.get(p) {
        Some(e) if e.ts == u64::MAX => first_real(s, p).unwrap_or(u64::MAX),
        Some(e) => e.ts,
        None => u64::MAX,
    };
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::with_capacity(n);
    for i in 0..n {
        if refill(src, &mut blocks, i) {
            heap.push(Reverse((key(&blocks[i], 0), i)));
        }
    }
    while let Some(Reverse((k, i))) = heap.pop() {
        // Take this CPU's run of events up to the next head of another CPU.
        let limit = heap.peek().map(|Reverse(h)| *h);
        let mut k = k;
        let live = loop {
            let p = pos[i];
            if !push(&mut buf, blocks[i][p], k) {
                return;
            }
            pos[i] = p + 1;
            if pos[i] == blocks[i].len() {
                pos[i] = 0;
                if !refill(src, &mut blocks, i) {
                    break false;
                }
            }
            k = key(&blocks[i], pos[i]);
            match limit {
                Some(l) if (k, i) >= l => break true,
                _ => {}
            }
        };
        if live {
            heap.push(Reverse((k, i)));
        }
    }
    if !buf.is_empty() {
        sink(&mut buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;

    /// The merged list, whole.
    fn merge(streams: Vec<Vec<Event>>) -> Vec<Event> {
        let mut out = Vec::new();
        merge_chunks(streams, usize::MAX, &mut |buf| {
            out.append(buf);
            true
        });
        out
    }

    /// The merged list, whole, in a store.
    fn merge_store(streams: Vec<Vec<Event>>) -> EventStore {
        let total = streams.iter().map(Vec::len).sum::<usize>();
        merge_store_from(&mut Whole(streams), total)
    }

    /// [`merge_blocks`] of streams held whole.
    fn merge_chunks(
        streams: Vec<Vec<Event>>,
        chunk: usize,
        sink: &mut dyn FnMut(&mut Vec<Event>) -> bool,
    ) {
        merge_blocks(&mut Whole(streams), chunk, sink)
    }

    fn ev(ts: u64, cpu: u16) -> Event {
        Event {
            ts,
            tid: 1,
            cpu,
            kind: EventKind::RseqIpFixup,
        }
    }

    #[test]
    fn time_order_ties_to_the_lowest_cpu() {
        let a = vec![ev(1, 0), ev(5, 0), ev(5, 0), ev(9, 0)];
        let b = vec![ev(2, 1), ev(5, 1), ev(6, 1)];
        let m = merge(vec![a, b]);
        let got: Vec<_> = m.iter().map(|e| (e.ts, e.cpu)).collect();
        assert_eq!(
            got,
            vec![(1, 0), (2, 1), (5, 0), (5, 0), (5, 1), (6, 1), (9, 0)]
        );
        // ties go to the earlier stream (trace-cmd's order of CPUs in the file)
        let m = merge(vec![vec![ev(3, 1)], vec![], vec![ev(3, 0)]]);
        assert_eq!(m[0].cpu, 1);
    }

    #[test]
    fn the_store_holds_the_whole_merge() {
        let a = vec![ev(1, 0), ev(u64::MAX, 0), ev(7, 0)];
        let b = vec![ev(2, 1), ev(7, 1), ev(9, 1)];
        let whole = merge(vec![a.clone(), b.clone()]);
        let store = merge_store(vec![a, b]);
        assert_eq!(store.iter().collect::<Vec<_>>(), whole);
        assert_eq!(merge_store(vec![]).len(), 0);
        // a pass beside the store sees the same events in the same order (one CPU: no merge)
        let n = whole.len();
        let (store, seen) = merge_store_beside(&mut Whole(vec![whole.clone()]), n, drained);
        assert_eq!(seen, whole);
        assert_eq!(store.iter().collect::<Vec<_>>(), whole);
    }

    /// What a pass beside is handed, whole.
    fn drained(c: &mut ChannelChunks) -> Vec<Event> {
        let mut v = Vec::new();
        while let Some(p) = crate::events::EventChunks::next_chunk(c) {
            v.extend_from_slice(p);
        }
        v
    }

    #[test]
    fn a_pass_beside_sees_the_store_s_events_in_its_order() {
        // (more than a piece of each CPU, with untimed markers and ties)
        let a: Vec<Event> = (0..9000u64)
            .map(|t| ev(if t % 1000 == 7 { u64::MAX } else { t * 3 }, 0))
            .collect();
        let b: Vec<Event> = (0..7000u64).map(|t| ev(t * 5, 1)).collect();
        let whole = merge(vec![a.clone(), b.clone()]);
        let (store, seen) = merge_store_beside(&mut Whole(vec![a, b]), 16_000, drained);
        assert_eq!(seen, whole);
        assert_eq!(store.iter().collect::<Vec<_>>(), whole);
    }

    #[test]
    fn chunks_give_the_whole_merge() {
        let a: Vec<Event> = (0..50).map(|t| ev(t * 3, 0)).collect();
        let b: Vec<Event> = (0..40).map(|t| ev(t * 5 + 1, 1)).collect();
        let whole = merge(vec![a.clone(), b.clone()]);
        for chunk in [1, 7, 64, 1000] {
            let mut got = Vec::new();
            merge_chunks(vec![a.clone(), b.clone()], chunk, &mut |buf| {
                assert!(buf.len() <= chunk);
                got.extend_from_slice(buf);
                true
            });
            assert_eq!(got, whole, "chunks of {chunk}");
        }
        let mut pieces = 0;
        merge_chunks(vec![a.clone(), b], 10, &mut |_| {
            pieces += 1;
            pieces < 2
        });
        assert_eq!(pieces, 2, "a sink that says stop is not called again");
        // one stream: the same pieces as any other
        let mut got = Vec::new();
        merge_chunks(vec![a.clone()], 7, &mut |buf| {
            assert!(buf.len() <= 7);
            got.extend_from_slice(buf);
            true
        });
        assert_eq!(got, a);
    }

    #[test]
    fn a_leading_marker_stands_before_its_cpus_first_event() {
        let mut lost = ev(u64::MAX, 1);
        lost.kind = EventKind::Lost { count: None };
        let m = merge(vec![vec![ev(4, 0), ev(9, 0)], vec![lost, ev(6, 1)]]);
        let got: Vec<_> = m.iter().map(|e| (e.ts, e.cpu, e.kind.is_lost())).collect();
        assert_eq!(
            got,
            vec![(4, 0, false), (4, 1, true), (6, 1, false), (9, 0, false)]
        );
        // nothing before it at all: it takes its CPU's next time
        let m = merge(vec![vec![lost, ev(6, 1)]]);
        assert_eq!(m[0].ts, 6);
    }

    #[test]
    fn untimed_markers_take_the_time_before_them() {
        let mut lost = ev(u64::MAX, 1);
        lost.kind = EventKind::Lost { count: None };
        let m = merge(vec![vec![ev(4, 0), ev(7, 0)], vec![lost]]);
        assert_eq!(m.last().unwrap().ts, 7);
        assert_eq!(merge(vec![]).len(), 0);
    }
}
