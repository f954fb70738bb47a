//! A capture concatenated with itself (`cat a.txt a.txt`): a second `# tracer:` header, or (in
//! formats without one: `trace_pipe`, `trace-cmd report`, `perf script`) time going back to the
//! file's first event, whose events repeat the capture from its start. The repeat is counted
//! once and said, never doubled: from there, events matching the file's first events are held
//! back; once [`CONFIRM`] of them match, the copy is dropped up to the last time before it.

use crate::events::{Event, Warning};

/// Events of the file's start kept to compare a later copy with (bounded).
const PREFIX: usize = 256;
/// Matching events that make a copy certain.
const CONFIRM: usize = 32;

type Key = (u64, u16, u32, &'static str);

fn key(e: &Event) -> Key {
    (e.ts, e.cpu, e.tid, e.kind.static_name())
}

#[derive(Default)]
enum State {
    #[default]
    Idle,
    /// After a late header (`line`, 0 when time went back to the start without one): `pos`
    /// events matched so far, held in `pending`.
    Checking { pos: usize, until: u64, line: u64 },
    /// A copy: its events are dropped while their time is at most `until`.
    Dropping { until: u64 },
}

#[derive(Default)]
pub struct Dups {
    prefix: Vec<Key>,
    state: State,
    pending: Vec<Event>,
    max_ts: Option<u64>,
    seen: usize,
    dropped: u64,
    first_line: Option<u64>,
}

impl Dups {
    /// Filters one chunk's events (in file order); `headers` are the event indices of its
    /// `# tracer:` lines with their global line numbers.
    /// `span` is the lowest and highest time among `evs` (the caller's own pass over them
    /// finds it: a second pass here would cost a second trip through memory).
    pub fn filter(&mut self, evs: &mut Vec<Event>, headers: &[(usize, u64)], span: (u64, u64)) {
        if headers.is_empty()
            && matches!(self.state, State::Idle)
            && self.prefix.len() >= PREFIX
            && self.note(evs.len(), span)
        {
            // the common case: nothing to compare
            return;
        }
        let mut out = Vec::with_capacity(evs.len());
        let mut h = headers.iter().peekable();
        for (i, e) in evs.drain(..).enumerate() {
            while let Some(&&(at, line)) = h.peek() {
                if at > i {
                    break;
                }
                h.next();
                self.may_repeat(line, |_| true);
            }
            // no header: time back at the file's first event starts a comparison too
            if self.prefix.first() == Some(&key(&e)) {
                self.may_repeat(0, |until| until > e.ts);
            }
            self.one(e, &mut out);
        }
        *evs = out;
    }

    /// A copy of the file's start may begin here (after the header at `line`, 0: none): the
    /// events from here are compared with it, when some came before and the latest time so far
    /// passes `after`.
    fn may_repeat(&mut self, line: u64, after: impl Fn(u64) -> bool) {
        if self.seen > 0
            && matches!(self.state, State::Idle)
            && let Some(until) = self.max_ts.filter(|&m| after(m))
        {
            self.state = State::Checking {
                pos: 0,
                until,
                line,
            };
        }
    }

    fn one(&mut self, e: Event, out: &mut Vec<Event>) {
        match self.state {
            State::Idle => {
                if self.prefix.len() < PREFIX {
                    self.prefix.push(key(&e));
                }
                self.seen += 1;
                self.max_ts = self.max_ts.max(Some(e.ts));
                out.push(e);
            }
            State::Checking { pos, until, line } => {
                if self.prefix.get(pos) == Some(&key(&e)) {
                    self.pending.push(e);
                    if pos + 1 >= CONFIRM.min(self.prefix.len()) {
                        self.dropped += self.pending.len() as u64;
                        self.pending.clear();
                        self.first_line.get_or_insert(line);
                        self.state = State::Dropping { until };
                    } else {
                        self.state = State::Checking {
                            pos: pos + 1,
                            until,
                            line,
                        };
                    }
                } else {
                    // another capture after all: what was held back is kept, in order
                    self.state = State::Idle;
                    for p in std::mem::take(&mut self.pending) {
                        self.one(p, out);
                    }
                    self.one(e, out);
                }
            }
            State::Dropping { until } => {
                if e.ts <= until {
                    self.dropped += 1;
                } else {
                    self.state = State::Idle;
                    self.one(e, out);
                }
            }
        }
    }

    /// Takes in a chunk that needs no comparison; `false` (nothing taken in) when an event's
    /// time is at or before the file's first event: a copy may start there (the slow path
    /// then decides).
    fn note(&mut self, n: usize, (min, max): (u64, u64)) -> bool {
        let (Some(first), Some(before)) = (self.prefix.first().map(|k| k.0), self.max_ts) else {
            return false;
        };
        if n > 0 && min <= first {
            return false;
        }
        self.seen += n;
        self.max_ts = Some(max.max(before));
        true
    }

    /// At the end: events still held back (a short match) are kept; the warning, if any.
    pub fn finish(&mut self, path: &str, last: &mut Vec<Event>) -> Option<Warning> {
        last.append(&mut self.pending);
        let line = self.first_line?;
        let at = match line {
            0 => "where time goes back to the first event".to_string(),
            l => format!("after the \"# tracer:\" header at line {l}"),
        };
        Some(Warning {
            code: "duplicated-events",
            message: format!(
                "{path}: {} events {at} repeat the capture from its start (the file concatenated with itself?): they were counted once",
                self.dropped
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    /// What the driver's pass over a chunk's events finds.
    fn span(evs: &[Event]) -> (u64, u64) {
        evs.iter()
            .fold((u64::MAX, 0), |(lo, hi), e| (lo.min(e.ts), hi.max(e.ts)))
    }

    /// Filters `evs` in chunks of `n` without headers, as the driver does; events kept.
    fn kept_in_chunks(d: &mut Dups, evs: &[Event], n: usize) -> usize {
        let mut kept = 0;
        for c in evs.chunks(n) {
            let mut evs = c.to_vec();
            let sp = span(&evs);
            d.filter(&mut evs, &[], sp);
            kept += evs.len();
        }
        kept
    }

    use super::*;
    use crate::events::EventKind;

    fn ev(ts: u64) -> Event {
        Event {
            ts,
            tid: 1,
            cpu: 0,
            kind: EventKind::RseqUpdate {
                cpu_id: 0,
                node_id: 0,
                mm_cid: 0,
            },
        }
    }

    #[test]
    fn a_copy_is_dropped_and_another_capture_kept() {
        let a: Vec<Event> = (1..=100).map(ev).collect();
        // a + a: the copy goes
        let mut d = Dups::default();
        let mut evs: Vec<Event> = a.iter().chain(a.iter()).copied().collect();
        let sp = span(&evs);
        d.filter(&mut evs, &[(0, 3), (100, 200)], sp);
        let mut rest = Vec::new();
        let w = d.finish("f", &mut rest).expect("a warning");
        assert_eq!(evs.len(), 100);
        assert!(rest.is_empty());
        assert!(
            w.message
                .contains("100 events after the \"# tracer:\" header at line 200"),
            "{}",
            w.message
        );
        // a + (a shifted): kept whole, no warning
        let mut d = Dups::default();
        let mut evs: Vec<Event> = a
            .iter()
            .copied()
            .chain((1..=100).map(|t| ev(t + 1000)))
            .collect();
        let sp = span(&evs);
        d.filter(&mut evs, &[(0, 3), (100, 200)], sp);
        assert_eq!(evs.len(), 200);
        assert!(d.finish("f", &mut Vec::new()).is_none());
        // a copy cut short: held back, then kept at the end
        let mut d = Dups::default();
        let mut evs: Vec<Event> = a.iter().chain(a[..5].iter()).copied().collect();
        let sp = span(&evs);
        d.filter(&mut evs, &[(0, 3), (100, 200)], sp);
        let mut rest = Vec::new();
        assert!(d.finish("f", &mut rest).is_none());
        assert_eq!(evs.len() + rest.len(), 105);
    }

    #[test]
    fn without_headers_a_copy_is_found_where_time_goes_back() {
        let a: Vec<Event> = (1..=400).map(ev).collect();
        // a + a in chunks of 150, no header: the copy goes
        let mut d = Dups::default();
        let all: Vec<Event> = a.iter().chain(a.iter()).copied().collect();
        let kept = kept_in_chunks(&mut d, &all, 150);
        let mut rest = Vec::new();
        let w = d.finish("f", &mut rest).expect("a warning");
        assert_eq!(kept + rest.len(), 400);
        assert!(
            w.message.contains("400 events where time goes back"),
            "{}",
            w.message
        );
        // time going back elsewhere (unsorted input, another capture): everything kept
        let mut d = Dups::default();
        let b: Vec<Event> = a
            .iter()
            .copied()
            .chain((1..=400).map(|t| ev(t * 2)))
            .collect();
        let kept = kept_in_chunks(&mut d, &b, 150);
        let mut rest = Vec::new();
        assert!(d.finish("f", &mut rest).is_none());
        assert_eq!(kept + rest.len(), 800);
    }
}
