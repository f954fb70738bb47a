//! Workers that decode the CPUs' units ([`super::units`]) a few ahead of the merge that takes
//! them in order. Each CPU has at most [`AHEAD`] units decoded or in work and not yet taken,
//! so memory stays that of a few blocks per CPU whatever the capture's size, and the merge
//! can never wait on a CPU no worker may serve (the one it waits on always has room).

use super::ring::{CpuOut, Walk};
use super::units::{CpuData, Unit};
use crate::events::{Event, StrId, Strings};
use crate::sources::options::LoadOptions;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Units of one CPU decoded or in work ahead of the merge.
const AHEAD: usize = 3;

/// One decoded unit.
#[derive(Default)]
pub struct Block {
    /// The worker that decoded it (whose string table its ids are of).
    pub worker: usize,
    pub out: CpuOut,
    /// The bytes of each string of the worker's own table (past the shared ones) its events
    /// name, each once, in the order they show.
    pub strs: Vec<(StrId, Box<[u8]>)>,
    /// The CPU's data ends with it.
    pub last: bool,
}

/// A CPU's units and where the workers and the merge are in them.
#[derive(Default)]
struct Lane {
    /// Its units, once read (a compressed CPU's chunk list is read by the first worker free:
    /// its headers lie a page apart through the file, so reading them is a page fault each).
    units: Option<Vec<Unit>>,
    scanning: bool,
    /// The next unit to hand to a worker, and the next the merge takes.
    next: usize,
    taken: usize,
    /// Past the last unit to read (a unit that ends the data cuts it short).
    end: usize,
    /// Units `taken..next`, decoded or not yet.
    ahead: VecDeque<Option<Block>>,
    /// The time of the last event decoded: the lane least advanced is served first.
    frontier: u64,
}

impl Lane {
    /// Whether a worker may take its next unit.
    fn open(&self) -> bool {
        self.units.is_some() && self.next < self.end && self.next - self.taken < AHEAD
    }

    /// Whether no unit of it is left to hand out.
    fn handed_out(&self) -> bool {
        self.units.is_some() && self.next >= self.end
    }

    /// Unit `i` (a lane not read yet has none: a lost unit stands for it).
    fn unit(&self, i: usize) -> Unit {
        (self.units.as_ref()).map_or(Unit::Lost(String::new()), |v| v[i].clone())
    }

    /// Whether the merge has taken its last unit.
    fn drained(&self) -> bool {
        self.units.is_some() && self.taken >= self.end
    }
}

/// What a worker does next.
enum Job {
    /// Reads lane `.0`'s units.
    Scan(usize),
    /// Decodes unit `.1` (`.2`) of lane `.0` into the buffer `.3`.
    Decode(usize, usize, Unit, Vec<Event>),
}

struct State {
    lanes: Vec<Lane>,
    /// Cancelled, a worker failed, or the merge is done.
    stop: bool,
    /// The lane the merge waits on.
    waiting: Option<usize>,
    /// Event buffers the merge is done with.
    free: Vec<Vec<Event>>,
}

/// The units of every CPU, shared by the workers and the merge.
pub struct Schedule<'d> {
    state: Mutex<State>,
    changed: Condvar,
    cpus: Vec<CpuData<'d>>,
    walk: &'d Walk<'d>,
    known: u32,
    opts: &'d LoadOptions,
}

/// Stops a [`Schedule`] when dropped.
pub struct Stopper<'a, 'd>(&'a Schedule<'d>);

impl Drop for Stopper<'_, '_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

impl<'d> Schedule<'d> {
    /// `known`: the strings every worker's table starts with.
    pub fn new(
        cpus: Vec<CpuData<'d>>,
        walk: &'d Walk<'d>,
        known: u32,
        opts: &'d LoadOptions,
    ) -> Schedule<'d> {
        Schedule {
            state: Mutex::new(State {
                lanes: cpus.iter().map(|_| Lane::default()).collect(),
                stop: false,
                waiting: None,
                free: Vec::new(),
            }),
            changed: Condvar::new(),
            cpus,
            walk,
            known,
            opts,
        }
    }

    /// Workers that can be busy at once.
    pub fn slots(&self) -> usize {
        self.cpus.len() * AHEAD
    }

    /// A guard that stops the schedule when dropped (the merge ended, by a panic too).
    pub fn stopper(&self) -> Stopper<'_, 'd> {
        Stopper(self)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // (a worker that panicked held no lock while decoding: the state is whole)
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops the workers (the merge is done, or cannot go on).
    pub fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }

    /// Reads lane `lane`'s units (outside the lock) and makes them known.
    fn scan(&self, lane: usize) {
        let units = self.cpus[lane].units(self.walk.page_size);
        let mut st = self.lock();
        let l = &mut st.lanes[lane];
        l.end = units.len();
        l.units = Some(units);
        l.scanning = false;
        drop(st);
        self.changed.notify_all();
    }

    /// A worker: reads and decodes units until none is left or the schedule stops; returns
    /// its string table (`base` and what its units added).
    pub fn work(&self, worker: usize, base: &Strings) -> Strings {
        // (a panic here stops the schedule, so the merge does not wait for this worker)
        struct StopOnPanic<'a, 'd>(&'a Schedule<'d>);
        impl Drop for StopOnPanic<'_, '_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.stop();
                }
            }
        }
        let _guard = StopOnPanic(self);
        let mut local = base.clone();
        let mut buf = Vec::new();
        while let Some(job) = self.next_job() {
            let (lane, unit, u, events) = match job {
                Job::Scan(lane) => {
                    self.scan(lane);
                    continue;
                }
                Job::Decode(lane, unit, u, events) => (lane, unit, u, events),
            };
            let block = self.decode(worker, lane, unit, &u, events, &mut local, &mut buf);
            let mut st = self.lock();
            let l = &mut st.lanes[lane];
            if unit < l.end {
                if let Some(last) = block.out.events.last() {
                    l.frontier = l.frontier.max(last.ts);
                }
                if let Some(slot) = l.ahead.get_mut(unit - l.taken) {
                    *slot = Some(block);
                }
            }
            drop(st);
            self.changed.notify_all();
        }
        local
    }

    /// What a worker does next: read the units of the lane the merge waits on, or its next
    /// unit; else read a lane not read yet; else the next unit of the lane with the fewest
    /// units ahead, least advanced in time first.
    fn next_job(&self) -> Option<Job> {
        let mut st = self.lock();
        loop {
            if st.stop || self.opts.cancelled() {
                st.stop = true;
                drop(st);
                self.changed.notify_all();
                return None;
            }
            if st.lanes.iter().all(Lane::handed_out) {
                return None;
            }
            let unread = |l: &Lane| l.units.is_none() && !l.scanning;
            let scan = match st.waiting {
                Some(w) if unread(&st.lanes[w]) => Some(w),
                _ => st.lanes.iter().position(unread),
            };
            if let Some(i) = scan {
                st.lanes[i].scanning = true;
                return Some(Job::Scan(i));
            }
            let pick = match st.waiting {
                Some(w) if st.lanes[w].open() => Some(w),
                _ => (st.lanes.iter().enumerate())
                    .filter(|(_, l)| l.open())
                    .min_by_key(|(i, l)| (l.next - l.taken, l.frontier, *i))
                    .map(|(i, _)| i),
            };
            if let Some(i) = pick {
                let events = st.free.pop().unwrap_or_default();
                let l = &mut st.lanes[i];
                let unit = l.next;
                let u = l.unit(unit);
                l.next += 1;
                l.ahead.push_back(None);
                return Some(Job::Decode(i, unit, u, events));
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn decode(
        &self,
        worker: usize,
        lane: usize,
        unit: usize,
        u: &Unit,
        mut events: Vec<Event>,
        local: &mut Strings,
        buf: &mut Vec<u8>,
    ) -> Block {
        if unit == 0 {
            crate::sources::sys::panics::inject("decoder", lane);
        }
        let cpu = &self.cpus[lane];
        events.clear();
        let mut out = CpuOut {
            events,
            ..CpuOut::default()
        };
        let last = cpu.decode(self.walk, u, local, &mut out, buf);
        if let Some(p) = &self.opts.progress {
            let bytes = cpu.file_bytes(u) as u64;
            p.done
                .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        }
        let strs = survey(&mut out, self.known, local);
        Block {
            worker,
            out,
            strs,
            last,
        }
    }

    /// The merge: lane `lane`'s next block, once decoded; `None` past its last, or when the
    /// schedule stopped. `here`: no worker runs, the merge reads and decodes it itself.
    pub fn take(&self, lane: usize, here: Option<(&mut Strings, &mut Vec<u8>)>) -> Option<Block> {
        if let Some((local, buf)) = here {
            if self.lock().lanes[lane].units.is_none() {
                self.scan(lane);
            }
            let mut st = self.lock();
            if st.stop || self.opts.cancelled() {
                return None;
            }
            let l = &mut st.lanes[lane];
            if l.drained() {
                return None;
            }
            let unit = l.taken;
            let u = l.unit(unit);
            l.taken += 1;
            l.next = l.taken;
            let events = st.free.pop().unwrap_or_default();
            drop(st);
            let block = self.decode(0, lane, unit, &u, events, local, buf);
            if block.last {
                self.lock().lanes[lane].end = unit + 1;
            }
            return Some(block);
        }
        let mut st = self.lock();
        loop {
            let l = &mut st.lanes[lane];
            if l.drained() {
                return None;
            }
            if let Some(Some(_)) = l.ahead.front() {
                let block = l.ahead.pop_front().flatten();
                l.taken += 1;
                if block.as_ref().is_some_and(|b| b.last) {
                    // (units after it are not read: those decoded already are dropped)
                    l.end = l.taken;
                    l.ahead.clear();
                    l.next = l.next.min(l.end);
                }
                st.waiting = None;
                drop(st);
                self.changed.notify_all();
                return block;
            }
            if st.stop {
                return None;
            }
            st.waiting = Some(lane);
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Gives an emptied event buffer back for the workers to reuse.
    pub fn recycle(&self, mut events: Vec<Event>) {
        events.clear();
        let mut st = self.lock();
        // (about one a worker or a lane needs at once: the rest go back to the allocator)
        if st.free.len() < st.lanes.len() + 8 {
            st.free.push(events);
        }
    }
}

/// What a block's events name, gathered on the thread that decoded it: its tasks, and the
/// bytes of the strings of the worker's table past the first `known` (the shared ones), each
/// once in the order they show.
fn survey(out: &mut CpuOut, known: u32, local: &Strings) -> Vec<(StrId, Box<[u8]>)> {
    let mut tids = crate::events::TidSet::default();
    let mut seen = vec![false; local.len().saturating_sub(known as usize)];
    let mut strs = Vec::new();
    for e in out.events.iter_mut() {
        if !e.kind.is_lost() && tids.insert(e.tid) {
            out.tids.push(e.tid);
        }
        let Some(&mut id) = e.kind.string_mut() else {
            continue;
        };
        if let Some(s) = (id.0.checked_sub(known)).and_then(|k| seen.get_mut(k as usize))
            && !*s
        {
            *s = true;
            strs.push((id, local.get(id).into()));
        }
    }
    strs
}
