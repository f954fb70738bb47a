//! The plain replay's misses handed to the search while the plain replay still runs (stage 2
//! beside stage 1, on another core): the search decodes the capture, draws its windows and
//! follows the plain replay a little behind, since it only needs to know the misses up to a
//! look-ahead past the event it is at. It sees the same misses in the same order as a search
//! started after the plain replay, so it places the same steps.

use super::replayer::Replayer;
use std::sync::{Condvar, Mutex, MutexGuard};

/// A scoped thread's result (its panic goes on in the caller): a stage run beside another.
pub(super) fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// A state one thread changes and others wait on (the feeds between the stages of a replay).
/// A panic on the other side poisons nothing this state could not be read from.
pub(super) struct Board<S> {
    state: Mutex<S>,
    changed: Condvar,
}

impl<S: Default> Default for Board<S> {
    fn default() -> Self {
        Board {
            state: Mutex::default(),
            changed: Condvar::new(),
        }
    }
}

impl<S> Board<S> {
    pub fn lock(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state once `wanted` holds.
    pub fn when(&self, wanted: impl Fn(&S) -> bool) -> MutexGuard<'_, S> {
        self.changed
            .wait_while(self.lock(), |s| !wanted(s))
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the state and wakes those waiting on it.
    pub fn set(&self, f: impl FnOnce(&mut S)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }

    /// Changes the state, waking those waiting on it only when `f` says someone may want the
    /// change (a wake is a system call even with none asleep, and wakes all of them).
    pub fn set_then_wake_if(&self, f: impl FnOnce(&mut S) -> bool) {
        if f(&mut self.lock()) {
            self.changed.notify_all();
        }
    }

    pub fn into_inner(self) -> S {
        self.state.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// Where a search may start: the plain replay's model state before event `at`.
pub(super) struct SearchStart {
    pub at: usize,
    pub replayer: Replayer,
}

/// Events the plain replay replays between two publications of its progress.
pub(super) const PUBLISH_EVERY: usize = 4096;

#[derive(Default)]
struct State {
    /// Event indices of the plain replay's misses, in order.
    misses: Vec<usize>,
    /// Events the plain replay has replayed (its misses before this index are all known).
    progress: usize,
    /// The plain replay has ended (or given up: a panic ends it too).
    done: bool,
    /// Where a search may start, known at the plain replay's first miss.
    first: First,
    /// The event index of that start (0: the capture's start), once there is a first miss.
    start_at: Option<usize>,
    /// Progress at which a waiter wants to be woken before the first miss (the pass ahead).
    wake_at: Option<usize>,
}

/// The plain replay's first miss, as far as it is known.
#[derive(Default)]
enum First {
    #[default]
    Pending,
    /// It came; the search may start at this state (`None`: at the capture's start; boxed:
    /// a replayer is large).
    Missed(Option<Box<SearchStart>>),
    /// The plain replay ended without one.
    None,
}

/// What the plain replay tells a search beside it.
#[derive(Default)]
pub(super) struct MissFeed(Board<State>);

impl MissFeed {
    /// All the misses and the start of a plain replay that has ended.
    pub fn into_misses(self) -> Misses<'static> {
        let s = self.0.into_inner();
        let start = match s.first {
            First::Missed(start) => start.map(|s| *s),
            _ => None,
        };
        Misses::all(s.misses, start)
    }

    /// Waits until the plain replay has replayed more than `seen` events or has ended: how
    /// many it has replayed, where a search starts once it has had a miss, and whether it has
    /// ended.
    pub fn progress_past(&self, seen: usize) -> (usize, Option<usize>, bool) {
        let g = self.0.when(|g| g.done || g.progress > seen);
        (g.progress, g.start_at, g.done)
    }

    /// Waits until the plain replay has had its first miss a search may explain (true) or has
    /// ended without one (false).
    pub fn first_miss(&self) -> bool {
        self.0
            .when(|g| g.done || g.start_at.is_some())
            .start_at
            .is_some()
    }

    /// Waits until the plain replay has had its first miss a search may explain, has replayed
    /// `upto` events, or has ended: whether it is still running then.
    pub fn first_miss_or_past(&self, upto: usize) -> bool {
        self.0.lock().wake_at = Some(upto);
        !self
            .0
            .when(|g| g.done || g.start_at.is_some() || g.progress >= upto)
            .done
    }

    /// The plain replay's side; it ends the feed when dropped, whatever happened.
    pub fn producer(&self) -> Producer<'_> {
        Producer {
            feed: self,
            misses: Vec::new(),
        }
    }
}

/// The plain replay's handle on a feed.
pub(super) struct Producer<'a> {
    feed: &'a MissFeed,
    /// Misses not published yet.
    misses: Vec<usize>,
}

impl Producer<'_> {
    /// A miss at event `i`.
    pub fn miss(&mut self, i: usize) {
        self.misses.push(i);
    }

    /// Events before `progress` are replayed.
    pub fn progress(&mut self, progress: usize) {
        let misses = &mut self.misses;
        // (before the first miss only the pass ahead waits on the progress, for one point of
        // it: the search and the final replay wait for that miss or the end; 730 wakes of
        // both on the bench capture)
        self.feed.0.set_then_wake_if(|g| {
            g.misses.append(misses);
            g.progress = progress;
            g.start_at.is_some() || g.wake_at.is_some_and(|w| progress >= w)
        });
    }

    /// The first miss came: the search's start (`None`: the capture's start).
    pub fn start(&mut self, start: Option<SearchStart>) {
        self.feed.0.set(|g| {
            g.start_at = Some(start.as_ref().map_or(0, |s| s.at));
            g.first = First::Missed(start.map(Box::new));
        });
    }
}

impl Drop for Producer<'_> {
    fn drop(&mut self) {
        let misses = &mut self.misses;
        self.feed.0.set(|g| {
            g.misses.append(misses);
            g.done = true;
            if let First::Pending = g.first {
                g.first = First::None;
            }
        });
    }
}

/// The misses as the search knows them: all of them (a search after the plain replay), or
/// those a feed has published so far.
pub(super) struct Misses<'a> {
    feed: Option<&'a MissFeed>,
    /// The start given with all the misses.
    given: Option<SearchStart>,
    known: Vec<usize>,
    progress: usize,
    done: bool,
}

impl<'a> Misses<'a> {
    /// All of the plain replay's misses, and where a search may start.
    pub fn all(misses: Vec<usize>, start: Option<SearchStart>) -> Misses<'static> {
        Misses {
            feed: None,
            given: start,
            known: misses,
            progress: usize::MAX,
            done: true,
        }
    }

    /// The misses a plain replay running beside publishes.
    pub fn fed(feed: &'a MissFeed) -> Misses<'a> {
        Misses {
            feed: Some(feed),
            given: None,
            known: Vec::new(),
            progress: 0,
            done: false,
        }
    }

    /// The feed of the plain replay running beside, if one publishes them (rather than all
    /// known at once).
    pub fn feed(&self) -> Option<&'a MissFeed> {
        self.feed
    }

    /// Waits for the search's start (`None` inside: from the capture's start); `None` when the
    /// plain replay ended without a miss.
    pub fn start(&mut self) -> Option<Option<SearchStart>> {
        let Some(feed) = self.feed else {
            let start = self.given.take();
            return (!self.known.is_empty()).then_some(start);
        };
        let mut g = feed.0.when(|g| !matches!(g.first, First::Pending));
        match std::mem::replace(&mut g.first, First::None) {
            First::Missed(start) => Some(start.map(|s| *s)),
            _ => None,
        }
    }

    /// Waits until every miss before event `upto` is known (or the plain replay has ended).
    pub fn ensure(&mut self, upto: usize) {
        let Some(feed) = self.feed else { return };
        if self.done || self.progress >= upto {
            return;
        }
        let g = feed.0.when(|g| g.done || g.progress >= upto);
        self.known.extend_from_slice(&g.misses[self.known.len()..]);
        self.progress = g.progress;
        self.done = g.done;
    }

    /// The misses known and the start given with them (what a search would be handed).
    #[cfg(test)]
    pub fn into_parts(self) -> (Vec<usize>, Option<SearchStart>) {
        (self.known, self.given)
    }

    /// The `k`-th miss, if known.
    pub fn get(&self, k: usize) -> Option<usize> {
        self.known.get(k).copied()
    }

    /// Whether event `i` lies before the end of what a search explains: the last miss's
    /// look-ahead of `ahead` events (capped at `n`). Waits for the plain replay's next misses
    /// or its end while the misses known so far do not say.
    /// `waiting` is told the plain replay's progress before each wait.
    pub fn before_end(
        &mut self,
        i: usize,
        ahead: usize,
        n: usize,
        mut waiting: impl FnMut(usize),
    ) -> bool {
        loop {
            if i < n && self.known.last().is_some_and(|&m| i <= m + ahead) {
                return true;
            }
            if self.done {
                return false;
            }
            waiting(self.progress);
            self.ensure(self.progress + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_beside_sees_the_misses_a_search_after_sees() {
        let feed = MissFeed::default();
        let got = std::thread::scope(|sc| {
            let side = sc.spawn(|| {
                let mut m = Misses::fed(&feed);
                let started = m.start().is_some();
                m.ensure(usize::MAX);
                let last = *m.known.last().expect("misses");
                let ends = (
                    m.before_end(last + 10, 10, 100_000, |_| {}),
                    m.before_end(last + 11, 10, 100_000, |_| {}),
                );
                (started, m.known.clone(), ends)
            });
            let mut p = feed.producer();
            for i in 0..50_000 {
                if i % 997 == 5 {
                    if i == 5 {
                        p.start(None);
                    }
                    p.miss(i);
                }
                if i % PUBLISH_EVERY == 0 {
                    p.progress(i + 1);
                }
            }
            drop(p);
            side.join().expect("the search side")
        });
        let want: Vec<usize> = (0..50_000).filter(|i| i % 997 == 5).collect();
        let last = *want.last().expect("misses");
        let _ = last;
        assert_eq!(got, (true, want, (true, false)));
    }

    #[test]
    fn a_plain_replay_without_a_miss_starts_no_search() {
        let feed = MissFeed::default();
        let started = std::thread::scope(|sc| {
            let side = sc.spawn(|| Misses::fed(&feed).start().is_some());
            let mut p = feed.producer();
            p.progress(10);
            drop(p);
            side.join().expect("the search side")
        });
        assert!(!started);
        assert!(Misses::all(Vec::new(), None).start().is_none());
        assert!(Misses::all(vec![3], None).start().is_some());
    }

    /// The pass ahead waits for the first miss or the replay's last stretch, whichever comes
    /// first, and is told when the replay ended before either.
    #[test]
    fn the_pass_ahead_wakes_at_the_first_miss_or_the_last_stretch() {
        // (progress published every 100 events; the point the pass waits for is 5,000; after
        // each publication the replay lets the pass look before it goes on)
        let run = |miss_at: Option<usize>, events: usize| {
            let feed = MissFeed::default();
            std::thread::scope(|sc| {
                let side = sc.spawn(|| {
                    let wanted = feed.first_miss_or_past(5_000);
                    let g = feed.0.lock();
                    (wanted, g.progress, g.start_at.is_some())
                });
                let settle = || {
                    for _ in 0..200 {
                        if side.is_finished() {
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                };
                let mut p = feed.producer();
                for i in 0..events {
                    if Some(i) == miss_at {
                        p.start(None);
                        p.miss(i);
                        settle();
                    }
                    if (i + 1) % 100 == 0 {
                        p.progress(i + 1);
                        if i + 1 == 5_000 {
                            settle();
                        }
                    }
                }
                drop(p);
                side.join().expect("the pass's side")
            })
        };
        let (wanted, progress, missed) = run(Some(1_234), 10_000);
        assert!(wanted && missed && progress == 1_200, "{progress}");
        let (wanted, progress, missed) = run(None, 10_000);
        assert!(wanted && !missed && progress == 5_000, "{progress}");
        let (wanted, _, missed) = run(None, 3_000);
        assert!(!wanted && !missed);
    }
}
