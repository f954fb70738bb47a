//! 7.x exits queueing for `mm_cid.mutex` (docs/models.md §5.6): which exits of an mm had not
//! removed their user when a later exit of the mm entered `sched_mm_cid_exit`, and which had
//! removed it before their `sched_process_exit` record, from the `mm_cid.users` the exits'
//! `cid_exit_users` probes read.
//!
//! A release removes its user under the mutex, so between two readings of the mm (no CLONE_VM
//! fork between) the count falls by the releases run in between. The exits known to be
//! unreleased at a reading (`open`: that reading's own exit at least) whose release is seen
//! before the next one (their exit record, or the walk back to per-task mode their body runs
//! after the removal) account for part of the fall:
//! - the fall is exactly theirs: no other exit released, and every exit still open is
//!   unreleased at the new reading too (held: its release runs at its record at the latest);
//! - the fall also takes every exit still open, and no exit of the mm outside `open` entered
//!   or left unseen: those released before the new reading (their release runs there at the
//!   latest, though their record comes later);
//! - else (an exit that took the mutex ahead of those waiting, a release the probes do not
//!   tell apart): only the new reading's exit is known open.

use crate::events::Tid;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Clone, Debug, Default)]
pub struct ExitQueue {
    per_mm: FxHashMap<u64, MmExits>,
    /// Exits unreleased at a later exit's entry (`Plan::exit_queue`).
    pub held: FxHashSet<Tid>,
    /// Exits released before a later exit's entry that came before their record: the index
    /// of that entry's reading.
    pub released_by: FxHashMap<Tid, usize>,
}

#[derive(Clone, Debug, Default)]
struct MmExits {
    users: i32,
    open: Vec<Tid>,
    /// Exits that entered, neither recorded nor seen released (`open` and those it lost).
    pending: FxHashSet<Tid>,
    /// Since the last reading: exits of `open` seen released, and of `pending` outside it.
    seen: i32,
    unknown: bool,
}

impl ExitQueue {
    /// `tid`'s `cid_exit_users` (event `at`) read `users` of the mm at address `mm`.
    pub fn entry(&mut self, mm: u64, tid: Tid, users: i32, at: usize) {
        let m = self.read(mm, users, at);
        m.open.push(tid);
        m.pending.insert(tid);
        m.users = users;
        m.seen = 0;
        m.unknown = false;
    }

    /// A CLONE_VM fork's 7.x `cid_fork_users` (event `at`) read `users` of the mm at `mm`
    /// before the fork joins: the fork holds `mm_cid.mutex` for its body, and its reading
    /// tells the exits still open apart as a later exit's entry does (a fresh probed 7.3.4
    /// 36-vCPU `churn` boot: 433 entered `sched_mm_cid_exit` at 14.274200 reading 2 users and
    /// its CPU recorded nothing until its exit record at 14.276975; main's fork read 2 at
    /// 14.275349, 433 still counted). Then the fork adds a user.
    pub fn fork_read(&mut self, mm: u64, users: i32, at: usize) {
        if self.per_mm.contains_key(&mm) {
            self.read(mm, users, at);
        }
        self.fork(mm);
    }

    /// What a reading of `users` at event `at` says of the exits still open (the module's
    /// three cases); the mm's exits, to go on from.
    fn read(&mut self, mm: u64, users: i32, at: usize) -> &mut MmExits {
        let ExitQueue {
            per_mm,
            held,
            released_by,
        } = self;
        let m = per_mm.entry(mm).or_default();
        let fall = m.users - users;
        if !m.open.is_empty() && fall == m.seen {
            held.extend(m.open.iter().copied());
        } else if !m.open.is_empty()
            && !m.unknown
            && fall == m.seen + m.open.len() as i32
            && m.pending.len() == m.open.len()
        {
            for t in m.open.drain(..) {
                m.pending.remove(&t);
                released_by.insert(t, at);
            }
        } else {
            m.open.clear();
        }
        m
    }

    /// `tid`'s release is seen: its exit record (`walk` false) or its walk back to per-task
    /// mode, which its body runs after removing the user.
    pub fn released(&mut self, mm: u64, tid: Tid, walk: bool) {
        let Some(m) = self.per_mm.get_mut(&mm) else {
            return;
        };
        if let Some(k) = m.open.iter().position(|&t| t == tid) {
            m.open.remove(k);
            m.pending.remove(&tid);
            m.seen += 1;
        } else if m.pending.remove(&tid) {
            // (released at some time before its record: inside the interval or not)
            m.unknown = true;
        } else if walk {
            m.unknown = true;
        }
    }

    /// A fork of the mm at `mm` adds a user: the count says nothing across it.
    pub fn fork(&mut self, mm: u64) {
        self.per_mm.remove(&mm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings that fall by exactly the exits seen released in between carry the exits still
    /// open over as held; a fall that also takes all those still open releases them by the new
    /// reading; a fall the probes do not explain, or a fork of the mm, starts again from the
    /// new reading's exit.
    #[test]
    fn exits_are_held_while_the_readings_count_them() {
        let mut q = ExitQueue::default();
        let mm = 0xabc;
        q.entry(mm, 1, 28, 10); // holds the mutex
        q.entry(mm, 2, 28, 11); // 1 still counted
        q.entry(mm, 3, 28, 12);
        assert_eq!(q.held, [1, 2].into_iter().collect());
        q.released(mm, 1, false);
        q.entry(mm, 4, 27, 13); // 1 gone, 2 and 3 not
        assert_eq!(q.held, [1, 2, 3].into_iter().collect());
        // 5's walk back: it removed its user first
        q.entry(mm, 5, 27, 14);
        q.released(mm, 5, true);
        q.entry(mm, 6, 26, 15);
        assert!(q.held.contains(&4) && !q.held.contains(&5));
        // 2, 3, 4 and 6 all released before 7 entered, their records later
        q.entry(mm, 7, 22, 16);
        for t in [2, 3, 4, 6] {
            assert_eq!(q.released_by.get(&t), Some(&16), "{t}");
        }
        // one release of 7 and 8, which the probes do not tell: only 9 is known open then
        q.entry(mm, 8, 22, 17);
        q.entry(mm, 9, 21, 18);
        assert!(q.held.contains(&7) && !q.held.contains(&8));
        assert!(!q.released_by.contains_key(&7) && !q.released_by.contains_key(&8));
        q.entry(mm, 10, 21, 19);
        assert!(q.held.contains(&9));
        // a fork adds a user: the next reading says nothing of 10
        q.fork(mm);
        q.entry(mm, 11, 20, 20);
        assert!(!q.held.contains(&10));
        // another mm's readings are its own
        q.entry(0xdef, 12, 3, 21);
        q.entry(0xdef, 13, 2, 22);
        assert!(!q.held.contains(&12));
    }

    /// A fork's reading of the mm before it joins holds the exits it still counts, then starts
    /// the mm again (its user added); a fork of an mm with no exit open changes nothing.
    #[test]
    fn a_forks_reading_holds_the_exits_it_still_counts() {
        let mut q = ExitQueue::default();
        let mm = 7;
        q.entry(mm, 1, 3, 0);
        q.released(mm, 1, false);
        q.entry(mm, 2, 2, 1); // 1 gone by 2's entry
        q.fork_read(mm, 2, 2); // 2 still counted
        assert!(q.held.contains(&2) && !q.held.contains(&1));
        q.entry(mm, 3, 2, 3); // after the fork: says nothing of 2 again
        q.fork_read(mm, 1, 4); // 3 gone before the fork read
        assert_eq!(q.released_by.get(&3), Some(&4));
        q.fork_read(9, 5, 5);
        assert!(!q.held.is_empty() && !q.per_mm.contains_key(&9));
    }

    /// A fall by the one exit pending is that exit's release; an exit that entered without
    /// being known open at the readings (its release may fall in any interval before its
    /// record) keeps a fall from being read as the open exits'.
    #[test]
    fn a_release_outside_the_queue_is_not_given_to_it() {
        let mut q = ExitQueue::default();
        let mm = 1;
        q.entry(mm, 1, 10, 0);
        q.entry(mm, 2, 9, 1);
        assert_eq!(q.released_by.get(&1), Some(&1));
        q.entry(mm, 3, 7, 2); // a fall of 2 with 2 open: not told apart
        assert!(!q.released_by.contains_key(&2));
        q.released(mm, 2, false); // pending, not open: released at some time before
        q.entry(mm, 4, 6, 3);
        assert!(!q.released_by.contains_key(&3), "{:?}", q.released_by);
        // without its record, a pending exit outside `open` holds the inference back too
        q.entry(mm, 5, 6, 4);
        q.entry(mm, 6, 4, 5); // 4 and 5 open and 6 ... and 3 pending outside
        assert!(!q.released_by.contains_key(&4) && !q.released_by.contains_key(&5));
    }
}
