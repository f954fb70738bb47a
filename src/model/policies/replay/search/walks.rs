//! The search's lazy fixup walks (docs/models.md §5.3 T3): an owner-mode fork placed with its
//! walk left in progress, marked at the disagreeing switch-in (or at the switch-in it is placed
//! before) with each count of visits.

use super::{Candidate, Search, broke, checked};
use crate::events::EventKind;
use crate::model::policies::replay::steps::Step;
use crate::model::policies::replay::untraced::EarlyFork;
use crate::model::policies::replay::windows::ForkWindow;
use crate::model::tasks::MmId;
use std::cell::OnceCell;

impl Search<'_> {
    /// T3: the fork of window `w` placed before event `p` with its fixup walk lazy, and (when
    /// the disagreeing task was switched in at `sw` after `p`) visited so far by then, for
    /// every count; where none explains it and event `p` is itself the switch-in of a task of
    /// the mm, visited so far by that one instead. Candidates that explain the disagreement go
    /// to `found`; false when the budget ran out.
    pub(super) fn try_lazy_walk(
        &mut self,
        w: ForkWindow,
        p: usize,
        (i, sw, mm, target): (usize, Option<usize>, MmId, u64),
        found: &mut Vec<Candidate>,
        fewest: &mut Option<usize>,
    ) -> bool {
        let split = sw.filter(|&s| s >= p && s <= i);
        // (asked at most once, and only where needed: it may replay up to `p` for a snapshot)
        let at_switch_in = OnceCell::new();
        let before = found.len();
        let at = (p, &at_switch_in);
        if !self.lazy_walk_marked(w, at, split, (i, mm, target), found, fewest) {
            return false;
        }
        // (the walk visited tasks before another task of the mm was switched in, whose step
        // then took a CID the walk had freed: a fresh plain 7.3.4 24-vCPU `workers` boot's
        // 275, switched in on CPU 17 between the flip and the disagreeing switch-in of 283,
        // took 273's CID 9, and 283 275's 11)
        if found.len() > before
            || split.is_none_or(|s| s == p)
            || !*at_switch_in.get_or_init(|| self.switches_in(p, mm))
        {
            return true;
        }
        self.lazy_walk_marked(w, at, Some(p), (i, mm, target), found, fewest)
    }

    /// Whether event `p` switches in a task of `mm` (in the model before it).
    fn switches_in(&self, p: usize, mm: MmId) -> bool {
        let Some(EventKind::SchedSwitch { next_tid, .. }) = self.events.get(p).map(|e| e.kind)
        else {
            return false;
        };
        self.snapshot_before(p)
            .is_some_and(|(_, snap)| snap.in_mm(next_tid, mm))
    }

    /// [`Self::try_lazy_walk`] with the walk's visits marked at event `split` (none: the
    /// walk visits nothing before the disagreement); `at_switch_in`: whether event `p` switches
    /// in a task of the mm ([`Self::switches_in`]), once asked.
    fn lazy_walk_marked(
        &mut self,
        w: ForkWindow,
        (p, at_switch_in): (usize, &OnceCell<bool>),
        split: Option<usize>,
        (i, mm, target): (usize, MmId, u64),
        found: &mut Vec<Candidate>,
        fewest: &mut Option<usize>,
    ) -> bool {
        let fork = EarlyFork {
            parent: w.parent,
            child: w.child,
            record_ts: w.record_ts,
            walk_end: w.record_ts,
            lazy: true,
            probed: false,
            thread: w.thread,
        };
        let mut placements = self.found.clone();
        let step = Step::EarlyFork { at: p, fork };
        step.set(&mut placements);
        // (a switch-in at the fork's own place too: the walk's visits between the fork's
        // step and that switch, both before event `p`; seed 5649 boot 2, where the switch-in
        // is the first event of the fork's window)
        let to = split.map_or(i, |s| s - 1);
        let Some((b, snap)) = self.fork_snapshot(w, p) else {
            return true;
        };
        // (what judging the candidates found so far takes is kept back)
        let reserve = (found.len() + 1) * (self.fork_horizon(found, w, i) - i);
        if self.budget < (i + 1 - b + reserve) as u64 {
            return false;
        }
        let mut t = checked(&snap, mm);
        if !self.spend((to + 1 - b) as u64) {
            return false;
        }
        t.untraced.placements = placements.clone();
        let Some(s) = split else {
            self.replay_below(&mut t, b, to, target);
            found.extend(Candidate::if_explains(t, placements, vec![step], b, target));
            return true;
        };
        self.replay_to(&mut t, b, to);
        // (at the fork's own place the walk starts with event `s`: its size from a replay of
        // that event)
        let walk = if s == p {
            let mut w = t.clone();
            self.replay_to(&mut w, s, s);
            w.untraced.lazy_walk(mm)
        } else {
            t.untraced.lazy_walk(mm)
        };
        let Some((done, tasks)) = walk else {
            return true;
        };
        // (an earlier placement needs fewer visits than a later one that explains it, except
        // where a task of the mm is switched in at it: unvisited, in the transit, it hands its
        // own CID over and frees it at its switch-out, where before the flip it kept it; a
        // fresh plain 7.3.4 24-vCPU `workers` boot's 263, switched in on CPU 8 at 8.031729,
        // freed its 1 at 8.036906, which 275 then reported)
        let same =
            usize::from(fewest.is_some() && *at_switch_in.get_or_init(|| self.switches_in(p, mm)));
        let below = fewest.map_or(tasks + 1, |f| f + same).min(tasks + 1);
        for k in done..below {
            if !self.spend((i + 1 - s) as u64) {
                return false;
            }
            let mut c = t.clone();
            let mut with_mark = placements.clone();
            let mark = Step::WalkMark { at: s, done: k };
            mark.set(&mut with_mark);
            c.untraced.placements = with_mark.clone();
            if self.replay_below(&mut c, s, i, target) && !broke(&c) {
                // the fewest visits that explain it: the walk only moves on
                found.push(Candidate {
                    at: c,
                    placements: with_mark,
                    steps: vec![step, mark],
                    from: b,
                });
                if self.verbose {
                    eprintln!(
                        "search: lazy walk of {} before {p}, {k} visited at {s}",
                        w.child
                    );
                }
                *fewest = Some(k);
                break;
            }
        }
        true
    }
}
