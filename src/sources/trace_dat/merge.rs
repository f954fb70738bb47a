//! Per-CPU event lists → one list in time order, the way `trace-cmd report` picks the next
//! record: the smallest timestamp, ties to the lowest CPU, each CPU's own order kept. Markers
//! with no time yet (`u64::MAX`: data lost before any event of that CPU) take the time of the
//! event before them in the merged list.

use crate::events::Event;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub fn merge(streams: Vec<Vec<Event>>) -> Vec<Event> {
    let total = streams.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    if streams.len() == 1 {
        out = streams.into_iter().next().unwrap_or_default();
    } else {
        let mut pos = vec![0usize; streams.len()];
        let mut heap: BinaryHeap<Reverse<(u64, usize)>> = streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.first().map(|e| Reverse((e.ts, i))))
            .collect();
        while let Some(Reverse((_, i))) = heap.pop() {
            let s = &streams[i];
            // Take this CPU's run of events up to the next head of another CPU.
            let limit = heap.peek().map(|Reverse(h)| *h);
            let mut p = pos[i];
            loop {
                out.push(s[p]);
                p += 1;
                match (s.get(p), limit) {
                    (Some(e), Some(l)) if (e.ts, i) < l => continue,
                    (Some(_), None) => continue,
                    _ => break,
                }
            }
            pos[i] = p;
            if let Some(e) = s.get(p) {
                heap.push(Reverse((e.ts, i)));
            }
        }
    }
    let first = out
        .iter()
        .map(|e| e.ts)
        .find(|&t| t != u64::MAX)
        .unwrap_or(0);
    let mut prev = first;
    for e in out.iter_mut() {
        if e.ts == u64::MAX {
            e.ts = prev;
        }
        prev = e.ts;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;

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
    fn untimed_markers_take_the_time_before_them() {
        let mut lost = ev(u64::MAX, 1);
        lost.kind = EventKind::Lost { count: None };
        let m = merge(vec![vec![ev(4, 0), ev(7, 0)], vec![lost]]);
        assert_eq!(m.last().unwrap().ts, 7);
        assert_eq!(merge(vec![]).len(), 0);
    }
}
