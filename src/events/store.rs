//! The event store: canonical events in about 15 bytes each instead of 32, as columns.
//!
//! * time: a [`TimeColumn`] (a base per block of 1024 events and a `u32` offset per event);
//! * task (`u32`), CPU (`u8`, widened to `u16` once a CPU above 254 appears; 255 is
//!   [`CPU_UNKNOWN`] while narrow), kind (`u8`);
//! * a `u32` payload and a `u8` of extra per event, packed per kind; the frequent kinds
//!   (rseq_update, sched_switch, the tick, other events) always fit, rare kinds or odd values
//!   are kept whole in a side list;
//! * `sched_switch`'s `next_comm` and `next_prio` change rarely per task: they are kept as
//!   per-task histories, entered only when they change.
//!
//! [`EventStore::get`] gives back exactly the event pushed.

use super::event::{CPU_UNKNOWN, Event, EventKind, PrevState, Tid};
use super::strings::StrId;
use super::time_column::TimeColumn;
use rustc_hash::FxHashMap;

mod tag {
    pub const RSEQ_UPDATE: u8 = 0;
    pub const RSEQ_IP_FIXUP: u8 = 1;
    pub const SWITCH: u8 = 2;
    pub const TICK: u8 = 3;
    pub const TICK_STOP: u8 = 4;
    pub const OTHER: u8 = 5;
    pub const ESCAPED: u8 = 255;
}

/// [`CPU_UNKNOWN`] in the narrow column.
const NARROW_UNKNOWN: u8 = u8::MAX;

#[derive(Clone, Debug)]
enum Cpus {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

#[inline]
fn narrow_cpu(c: u8) -> u16 {
    if c == NARROW_UNKNOWN {
        CPU_UNKNOWN
    } else {
        c as u16
    }
}

/// What a `sched_switch` says of the task it switches in.
type NextMeta = (StrId, i16);

/// Whose [`NextMeta`] history a switch belongs to: the task's, but each CPU's idle task (tid 0,
/// `swapper/N`) apart.
type MetaKey = (Tid, u16);

fn meta_key(next_tid: Tid, cpu: u16) -> MetaKey {
    (next_tid, if next_tid == 0 { cpu } else { 0 })
}

#[derive(Clone, Debug)]
pub struct EventStore {
    times: TimeColumn,
    tids: Vec<u32>,
    cpus: Cpus,
    tags: Vec<u8>,
    extra: Vec<u8>,
    payload: Vec<u32>,
    escaped: Vec<EventKind>,
    /// Per task, what the first switch to it named; most tasks keep it for life.
    switch_first: FxHashMap<MetaKey, NextMeta>,
    /// Per task whose comm or priority later changed (exec, renice): (event index from which
    /// it holds, value).
    switch_later: FxHashMap<MetaKey, Vec<(u32, NextMeta)>>,
}

impl Default for EventStore {
    fn default() -> Self {
        EventStore::new()
    }
}

impl PartialEq for EventStore {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<Event>> for EventStore {
    fn from(v: Vec<Event>) -> Self {
        let mut s = EventStore::with_capacity(v.len());
        for e in v {
            s.push(e);
        }
        s
    }
}

impl FromIterator<Event> for EventStore {
    fn from_iter<I: IntoIterator<Item = Event>>(it: I) -> Self {
        let mut s = EventStore::new();
        s.extend(it);
        s
    }
}

impl Extend<Event> for EventStore {
    fn extend<I: IntoIterator<Item = Event>>(&mut self, it: I) {
        for e in it {
            self.push(e);
        }
    }
}

impl<'a> Extend<&'a Event> for EventStore {
    fn extend<I: IntoIterator<Item = &'a Event>>(&mut self, it: I) {
        for e in it {
            self.push(*e);
        }
    }
}

impl EventStore {
    pub fn new() -> EventStore {
        EventStore {
            times: TimeColumn::default(),
            tids: Vec::new(),
            cpus: Cpus::Narrow(Vec::new()),
            tags: Vec::new(),
            extra: Vec::new(),
            payload: Vec::new(),
            escaped: Vec::new(),
            switch_first: FxHashMap::default(),
            switch_later: FxHashMap::default(),
        }
    }

    pub fn with_capacity(n: usize) -> EventStore {
        let mut s = EventStore::new();
        s.reserve(n);
        s
    }

    pub fn reserve(&mut self, n: usize) {
        self.times.reserve(n);
        self.tids.reserve(n);
        match &mut self.cpus {
            Cpus::Narrow(v) => v.reserve(n),
            Cpus::Wide(v) => v.reserve(n),
        }
        self.tags.reserve(n);
        self.extra.reserve(n);
        self.payload.reserve(n);
    }

    pub fn shrink_to_fit(&mut self) {
        self.times.shrink_to_fit();
        self.tids.shrink_to_fit();
        match &mut self.cpus {
            Cpus::Narrow(v) => v.shrink_to_fit(),
            Cpus::Wide(v) => v.shrink_to_fit(),
        }
        self.tags.shrink_to_fit();
        self.extra.shrink_to_fit();
        self.payload.shrink_to_fit();
        self.escaped.shrink_to_fit();
    }

    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    pub fn clear(&mut self) {
        *self = EventStore::new();
    }

    /// Bytes held per column (capacity), for memory reports.
    pub fn heap_breakdown(&self) -> [(&'static str, usize); 5] {
        [
            ("times", self.times.heap_bytes()),
            ("tids", self.tids.capacity() * 4),
            (
                "cpus+tags+extra+payload",
                match &self.cpus {
                    Cpus::Narrow(v) => v.capacity(),
                    Cpus::Wide(v) => v.capacity() * 2,
                } + self.tags.capacity()
                    + self.extra.capacity()
                    + self.payload.capacity() * 4,
            ),
            (
                "escaped",
                self.escaped.capacity() * std::mem::size_of::<EventKind>(),
            ),
            (
                "switch histories",
                self.switch_first.capacity() * 17
                    + self
                        .switch_later
                        .values()
                        .map(|h| h.capacity() * 12 + 32)
                        .sum::<usize>(),
            ),
        ]
    }

    /// Bytes held (capacity), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.heap_breakdown().iter().map(|x| x.1).sum()
    }

    pub fn push(&mut self, e: Event) {
        let i = self.tags.len();
        self.times.push(e.ts);
        self.tids.push(e.tid);
        self.push_cpu(e.cpu);
        let (t, x, p) = self.pack(i as u32, e);
        self.tags.push(t);
        self.extra.push(x);
        self.payload.push(p);
    }

    fn push_cpu(&mut self, cpu: u16) {
        if let Cpus::Narrow(v) = &mut self.cpus {
            if cpu < NARROW_UNKNOWN as u16 {
                v.push(cpu as u8);
                return;
            }
            if cpu == CPU_UNKNOWN {
                v.push(NARROW_UNKNOWN);
                return;
            }
            let wide: Vec<u16> = v.iter().map(|&c| narrow_cpu(c)).collect();
            self.cpus = Cpus::Wide(wide);
        }
        if let Cpus::Wide(v) = &mut self.cpus {
            v.push(cpu);
        }
    }

    /// (tag, extra, payload) of an event; rare shapes go to the side list.
    fn pack(&mut self, i: u32, e: Event) -> (u8, u8, u32) {
        match e.kind {
            EventKind::RseqUpdate {
                cpu_id,
                node_id: 0,
                mm_cid,
            } if cpu_id == e.cpu as i32 => (tag::RSEQ_UPDATE, 0, mm_cid as u32),
            EventKind::RseqIpFixup => (tag::RSEQ_IP_FIXUP, 0, 0),
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                prev_state,
            } if prev_tid == e.tid => {
                let (meta, key) = ((next_comm, next_prio), meta_key(next_tid, e.cpu));
                match self.switch_first.get(&key) {
                    None => {
                        self.switch_first.insert(key, meta);
                    }
                    Some(&first) => {
                        let later = self.switch_later.get(&key);
                        let cur = later.and_then(|h| h.last()).map_or(first, |x| x.1);
                        if cur != meta {
                            self.switch_later.entry(key).or_default().push((i, meta));
                        }
                    }
                }
                (tag::SWITCH, prev_state.0, next_tid)
            }
            EventKind::Tick => (tag::TICK, 0, 0),
            EventKind::TickStop { success } => (tag::TICK_STOP, success as u8, 0),
            EventKind::Other { name } => (tag::OTHER, 0, name.0),
            k => {
                self.escaped.push(k);
                (tag::ESCAPED, 0, (self.escaped.len() - 1) as u32)
            }
        }
    }

    /// Makes event `i` a tick: an `hrtimer_expire_entry` found to be the tick's only once the
    /// whole capture was read (a binary capture without kallsyms). False if there is no `i`.
    pub fn set_tick(&mut self, i: usize) -> bool {
        if i >= self.len() {
            return false;
        }
        // (an escaped kind's side entry stays, unread: events compare decoded)
        (self.tags[i], self.extra[i], self.payload[i]) = (tag::TICK, 0, 0);
        true
    }

    /// Time of event `i` (panics if out of range, like indexing).
    pub fn ts(&self, i: usize) -> u64 {
        self.times.get(i)
    }

    pub fn cpu(&self, i: usize) -> u16 {
        match &self.cpus {
            Cpus::Narrow(v) => narrow_cpu(v[i]),
            Cpus::Wide(v) => v[i],
        }
    }

    pub fn tid(&self, i: usize) -> Tid {
        self.tids[i]
    }

    pub fn get(&self, i: usize) -> Option<Event> {
        (i < self.len()).then(|| self.at(i))
    }

    /// Event `i` as the models read it (see [`Self::iter_model`]), if there is one.
    #[inline]
    pub fn get_model(&self, i: usize) -> Option<Event> {
        (i < self.len()).then(|| self.decode(i, false))
    }

    /// Event `i` (panics if out of range, like indexing).
    pub fn at(&self, i: usize) -> Event {
        self.decode(i, true)
    }

    fn decode(&self, i: usize, meta: bool) -> Event {
        let (ts, tid, cpu) = (self.ts(i), self.tids[i], self.cpu(i));
        let p = self.payload[i];
        let kind = match self.tags[i] {
            tag::RSEQ_UPDATE => EventKind::RseqUpdate {
                cpu_id: cpu as i32,
                node_id: 0,
                mm_cid: p as i32,
            },
            tag::RSEQ_IP_FIXUP => EventKind::RseqIpFixup,
            tag::SWITCH => {
                let (next_comm, next_prio) = if meta {
                    self.next_meta(meta_key(p, cpu), i as u32)
                } else {
                    (StrId(0), 0)
                };
                EventKind::SchedSwitch {
                    prev_tid: tid,
                    next_tid: p,
                    next_comm,
                    next_prio,
                    prev_state: PrevState(self.extra[i]),
                }
            }
            tag::TICK => EventKind::Tick,
            tag::TICK_STOP => EventKind::TickStop {
                success: self.extra[i] != 0,
            },
            tag::OTHER => EventKind::Other { name: StrId(p) },
            _ => self.escaped[p as usize],
        };
        Event { ts, tid, cpu, kind }
    }

    /// What the switch at event `i` said of task `tid` it switched in.
    fn next_meta(&self, key: MetaKey, i: u32) -> NextMeta {
        let first = self.switch_first.get(&key).copied().unwrap_or_default();
        let Some(h) = self.switch_later.get(&key) else {
            return first;
        };
        let k = h.partition_point(|&(at, _)| at <= i);
        k.checked_sub(1).map_or(first, |k| h[k].1)
    }

    pub fn first(&self) -> Option<Event> {
        self.get(0)
    }

    pub fn last(&self) -> Option<Event> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            store: self,
            i: 0,
            end: self.len(),
            meta: true,
        }
    }

    /// [`Self::iter`] as the models (and the summaries) read the events: a switch's
    /// `next_comm` and `next_prio` are left at `StrId(0)` and 0 (neither reads them, and
    /// finding them is two hash lookups of every switch, a third of a replay's decoding).
    pub fn iter_model(&self) -> Iter<'_> {
        Iter {
            meta: false,
            ..self.iter()
        }
    }

    /// Events `[a, b)`.
    pub fn range(&self, r: std::ops::Range<usize>) -> Iter<'_> {
        let end = r.end.min(self.len());
        Iter {
            store: self,
            i: r.start.min(end),
            end,
            meta: true,
        }
    }

    /// Events `[a, b)` as the models read them ([`Self::iter_model`]).
    pub fn range_model(&self, r: std::ops::Range<usize>) -> Iter<'_> {
        Iter {
            meta: false,
            ..self.range(r)
        }
    }

    /// Indices of the tick events (`hrtimer_expire_entry` of the tick), found in the kind
    /// column without decoding an event: a pass that reads the ticks alone (HZ) need not
    /// decode the other 95 %.
    pub fn ticks(&self) -> impl Iterator<Item = usize> + '_ {
        memchr::memchr_iter(tag::TICK, &self.tags)
    }

    /// Whether the capture records `tick_stop` (the kind column alone: a CPU going tickless
    /// is what hands the jiffies' duty on, docs/models.md §5.4).
    pub fn has_tick_stops(&self) -> bool {
        memchr::memchr(tag::TICK_STOP, &self.tags).is_some()
    }

    /// The first index from `from` of an event of a rare kind (one kept whole in the side
    /// list: every kind but `rseq_update`, `rseq_ip_fixup`, `sched_switch`, the tick,
    /// `tick_stop` and the other-named events, whose odd shapes may be among them too), or,
    /// with `updates`, of an `rseq_update`. A pass that reads forks, exits, execs and probes
    /// skips the rest without decoding it; it must tell the kinds apart itself.
    pub fn next_rare(&self, from: usize, updates: bool) -> Option<usize> {
        let rest = self.tags.get(from..)?;
        let k = if updates {
            memchr::memchr2(tag::ESCAPED, tag::RSEQ_UPDATE, rest)
        } else {
            memchr::memchr(tag::ESCAPED, rest)
        };
        k.map(|k| from + k)
    }

    /// Whether some event of a rare kind ([`Self::next_rare`]) is one `f` accepts: found from
    /// the kind column, only the rare events decoded.
    pub fn any_rare(&self, f: impl Fn(&EventKind) -> bool) -> bool {
        let mut at = 0;
        while let Some(i) = self.next_rare(at, false) {
            if f(&self.at(i).kind) {
                return true;
            }
            at = i + 1;
        }
        false
    }

    /// At most this many events are `rseq_update`s: those the kind column names and every
    /// escaped one (counted from the kind column alone, nothing decoded).
    pub fn updates_at_most(&self) -> usize {
        memchr::memchr2_iter(tag::ESCAPED, tag::RSEQ_UPDATE, &self.tags).count()
    }

    /// The last index of an `rseq_update` whose task `by` accepts, found from the end in the
    /// kind column (only updates and the side list's events are decoded).
    pub fn last_update_by(&self, by: impl Fn(Tid) -> bool) -> Option<usize> {
        memchr::memchr2_iter(tag::ESCAPED, tag::RSEQ_UPDATE, &self.tags)
            .rev()
            .find(|&i| {
                if self.tags[i] == tag::RSEQ_UPDATE {
                    return by(self.tids[i]);
                }
                let e = self.decode(i, false);
                matches!(e.kind, EventKind::RseqUpdate { .. }) && by(e.tid)
            })
    }

    /// The first index whose time does not satisfy `pred` (times must be sorted).
    pub fn partition_point_ts(&self, pred: impl Fn(u64) -> bool) -> usize {
        self.times.partition_point(pred)
    }

    /// The first index whose event does not satisfy `pred` (ordered like the events).
    pub fn partition_point(&self, pred: impl Fn(&Event) -> bool) -> usize {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().collect()
    }

    /// Stable sort by time (rare: captures whose timestamps went backwards).
    pub fn sort_by_ts(&mut self) {
        let mut v = self.to_vec();
        v.sort_by_key(|e| e.ts);
        *self = EventStore::from(v);
    }

    /// Keeps the first `n` events.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len() {
            let v: Vec<Event> = self.range(0..n).collect();
            *self = EventStore::from(v);
        }
    }

    /// Lost-event markers held (they are rare, kept in the side list).
    pub fn lost_markers(&self) -> usize {
        self.escaped
            .iter()
            .filter(|k| matches!(k, EventKind::Lost { .. }))
            .count()
    }

    /// Number of places where time goes backwards.
    pub fn backward_steps(&self) -> usize {
        self.times.backward_steps()
    }
}

#[derive(Clone)]
pub struct Iter<'a> {
    store: &'a EventStore,
    i: usize,
    end: usize,
    /// Whether a switch's `next_comm` and `next_prio` are looked up ([`EventStore::iter_model`]).
    meta: bool,
}

impl Iterator for Iter<'_> {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        (self.i < self.end).then(|| {
            self.i += 1;
            self.store.decode(self.i - 1, self.meta)
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.i;
        (n, Some(n))
    }
    /// Jumps without decoding the events skipped (`skip` and `nth` would otherwise decode each).
    fn nth(&mut self, n: usize) -> Option<Event> {
        self.i = self.i.saturating_add(n).min(self.end);
        self.next()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Event> {
        (self.i < self.end).then(|| {
            self.end -= 1;
            self.store.decode(self.end, self.meta)
        })
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a EventStore {
    type Item = Event;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kind_strategy() -> impl Strategy<Value = EventKind> {
        prop_oneof![
            (-2i32..300, 0i32..3, -3i32..300).prop_map(|(c, n, m)| EventKind::RseqUpdate {
                cpu_id: c,
                node_id: n,
                mm_cid: m
            }),
            Just(EventKind::RseqIpFixup),
            (0u32..50, 0u32..50, 0u32..5, -2i16..140, any::<u8>()).prop_map(|(p, n, c, pr, st)| {
                EventKind::SchedSwitch {
                    prev_tid: p,
                    next_tid: n,
                    next_comm: StrId(c),
                    next_prio: pr,
                    prev_state: PrevState(st),
                }
            }),
            (0u32..50, 0u16..300, 0u16..300).prop_map(|(t, o, d)| EventKind::SchedMigrateTask {
                tid: t,
                orig_cpu: o,
                dest_cpu: d
            }),
            any::<u64>().prop_map(|f| EventKind::TaskNewtask {
                tid: 7,
                clone_flags: f
            }),
            Just(EventKind::Tick),
            any::<bool>().prop_map(|s| EventKind::TickStop { success: s }),
            proptest::option::of(any::<u32>()).prop_map(|c| EventKind::Lost { count: c }),
            any::<u32>().prop_map(|n| EventKind::Other { name: StrId(n) }),
            (0u32..50, 0u32..50).prop_map(|(a, b)| EventKind::SchedProcessFork {
                parent: a,
                child: b
            }),
        ]
    }

    proptest! {
        /// Whatever is pushed comes back exactly, in order, including times far apart or going
        /// backwards, CPUs that force the wide column and the unknown CPU in either column.
        #[test]
        fn round_trip(evs in proptest::collection::vec(
            (0u64..u64::MAX / 4, 0u32..50, prop_oneof![0u16..8, 0u16..400, Just(CPU_UNKNOWN)], kind_strategy()), 0..3000)
        ) {
            let mut ts = 1_000u64;
            let events: Vec<Event> = evs.iter().map(|&(gap, tid, cpu, kind)| {
                // mostly small steps, sometimes a huge one or a step back
                ts = match gap % 97 {
                    0 => ts.saturating_add(gap),
                    1 => ts.saturating_sub(gap % 1_000_000),
                    _ => ts.saturating_add(gap % 100_000),
                };
                let kind = match kind {
                    // the packed form needs prev == the record's task; the other case escapes
                    EventKind::SchedSwitch { .. } if gap % 5 == 0 => kind,
                    EventKind::SchedSwitch { next_tid, next_comm, next_prio, prev_state, .. } => EventKind::SchedSwitch {
                        prev_tid: tid, next_tid, next_comm, next_prio, prev_state },
                    EventKind::RseqUpdate { node_id, mm_cid, .. } if gap % 3 != 0 => EventKind::RseqUpdate {
                        cpu_id: cpu as i32, node_id, mm_cid },
                    k => k,
                };
                Event { ts, tid, cpu, kind }
            }).collect();
            let store = EventStore::from(events.clone());
            prop_assert_eq!(store.len(), events.len());
            for (i, e) in events.iter().enumerate() {
                prop_assert_eq!(store.at(i), *e);
                prop_assert_eq!(store.ts(i), e.ts);
            }
            prop_assert!(store.iter().eq(events.iter().copied()));
            prop_assert!(store.iter().rev().eq(events.iter().rev().copied()));
            // the models' view: the same events, a packed switch's next_comm/next_prio left out
            let model = |e: &Event| match e.kind {
                EventKind::SchedSwitch { prev_tid, next_tid, prev_state, .. } if prev_tid == e.tid => Event {
                    kind: EventKind::SchedSwitch { prev_tid, next_tid, next_comm: StrId(0), next_prio: 0, prev_state },
                    ..*e
                },
                _ => *e,
            };
            prop_assert!(store.iter_model().eq(events.iter().map(model)));
            for k in [0, 1, events.len() / 3, events.len(), events.len() + 5] {
                prop_assert!(store.iter().skip(k).eq(events.iter().skip(k).copied()));
                prop_assert_eq!(store.iter().nth(k), events.get(k).copied());
                let mut it = store.range(1..events.len());
                prop_assert_eq!(it.nth(k), events.get(1..).and_then(|e| e.get(k)).copied());
            }
            // the passes that skip by the kind column see every event they read
            let ticks: Vec<usize> = (0..events.len()).filter(|&i| events[i].kind == EventKind::Tick).collect();
            prop_assert_eq!(store.ticks().collect::<Vec<_>>(), ticks);
            // (the last update of some tasks, escaped ones included)
            for by in [|t: Tid| t % 7 == 3, |t: Tid| t == 49, |_: Tid| true] {
                let last = events.iter().rposition(|e| matches!(e.kind, EventKind::RseqUpdate { .. }) && by(e.tid));
                prop_assert_eq!(store.last_update_by(by), last);
            }
            for updates in [false, true] {
                let mut seen = Vec::new();
                let mut i = 0;
                while let Some(k) = store.next_rare(i, updates) {
                    seen.push(k);
                    i = k + 1;
                }
                let frequent = |k: &EventKind| matches!(k, EventKind::RseqUpdate { .. }
                    | EventKind::RseqIpFixup | EventKind::SchedSwitch { .. } | EventKind::Tick
                    | EventKind::TickStop { .. } | EventKind::Other { .. });
                for (i, e) in events.iter().enumerate() {
                    let wanted = !frequent(&e.kind)
                        || (updates && matches!(e.kind, EventKind::RseqUpdate { .. }));
                    // (odd shapes of the frequent kinds may come too, nothing else)
                    let odd = matches!(e.kind, EventKind::RseqUpdate { .. } | EventKind::SchedSwitch { .. });
                    let visited = seen.binary_search(&i).is_ok();
                    prop_assert!(visited || !wanted, "event {} ({:?}) skipped", i, e.kind);
                    prop_assert!(!visited || wanted || odd, "event {} ({:?}) visited", i, e.kind);
                }
            }
            // (a rare kind found from the kind column as a pass over every event finds it)
            for rare in [|k: &EventKind| matches!(k, EventKind::SchedMigrateTask { .. }),
                |k: &EventKind| matches!(k, EventKind::SchedProcessFork { child: 3, .. })] {
                prop_assert_eq!(store.any_rare(rare), events.iter().any(|e| rare(&e.kind)));
            }
            // (a tick found after the read: the event reads back as the tick, the rest as pushed)
            if !events.is_empty() {
                let mut ticked = store.clone();
                let k = events.len() / 2;
                prop_assert!(ticked.set_tick(k));
                prop_assert!(!ticked.set_tick(events.len()));
                for (i, e) in events.iter().enumerate() {
                    let want = if i == k { Event { kind: EventKind::Tick, ..*e } } else { *e };
                    prop_assert_eq!(ticked.at(i), want);
                }
            }
        }
    }

    #[test]
    fn compact_and_searchable() {
        let mut s = EventStore::new();
        for i in 0..10_000u64 {
            s.push(Event {
                ts: 1_000_000_000 + i * 1000,
                tid: 10 + (i % 7) as u32,
                cpu: (i % 4) as u16,
                kind: if i % 2 == 0 {
                    EventKind::RseqUpdate {
                        cpu_id: (i % 4) as i32,
                        node_id: 0,
                        mm_cid: 1,
                    }
                } else {
                    EventKind::SchedSwitch {
                        prev_tid: 10 + (i % 7) as u32,
                        next_tid: 11,
                        next_comm: StrId(3),
                        next_prio: 120,
                        prev_state: PrevState::from_text(b"S"),
                    }
                },
            });
        }
        s.shrink_to_fit();
        assert!(s.heap_bytes() < 10_000 * 16, "{} bytes", s.heap_bytes());
        assert_eq!(s.partition_point_ts(|t| t < 1_000_500_000), 500);
        assert_eq!(s.range(10..12).count(), 2);
        assert_eq!(s.last().map(|e| e.ts), Some(1_000_000_000 + 9_999_000));
    }
}
