//! The search's candidates of the first kind (docs/models.md §5.3 T2, T3): the CID step of a
//! recent CLONE_VM fork of the mm placed earlier in its window, and for owner-mode a fixup walk
//! that takes a while.

use super::{
    Candidate, FORK_WINDOWS, INSIDE_POSITIONS, PROBED_POSITIONS, SEARCH_AHEAD, SEARCH_CANDIDATES,
    Search, WALK_SPANS, checked, snapshot_ref,
};
use crate::events::{EventKind, Tid};
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::steps::{SEARCH_LOOKBACK, Step};
use crate::model::policies::replay::untraced::EarlyFork;
use crate::model::policies::replay::windows::ForkWindow;
use crate::model::tasks::MmId;
use rustc_hash::FxHashSet;
use std::rc::Rc;

/// A window's placements that differ ([`Search::reading_positions`]).
enum Reading {
    At(Vec<usize>),
    OutOfBudget,
}

/// Lazy-walk placements (T3) a search compares for one disagreement beside the others: the
/// other placements of a long window all explain it at its latest positions (a walk at once
/// or an even one frees every CID) and would fill [`SEARCH_CANDIDATES`] before the position
/// the lazy walk needs, a little further back, is reached.
const LAZY_CANDIDATES: usize = 2;

/// Held puts (T6) a search places with the recent forks ([`Search::try_forks_holding`]).
const HELD_PUTS: usize = 2;

/// Whether a candidate places a fork with a lazy walk (T3).
fn lazy(c: &Candidate) -> bool {
    matches!(c.steps.first(), Some(Step::EarlyFork { fork, .. }) if fork.lazy)
}

impl Search<'_> {
    /// Where a replay placing window `w`'s fork before event `p` starts: the last snapshot
    /// before `p` when the search has no placement of that fork yet (the replay up to `p` is
    /// the one without it: the snapshots were taken with the accepted placements), else the
    /// last before the window (a parent asleep for 360 events of a 24-vCPU capture left a
    /// window whose placements, each replayed from its start, took a disagreement's whole
    /// share of the budget).
    pub(super) fn fork_snapshot(&self, w: ForkWindow, p: usize) -> Option<(usize, Rc<Replayer>)> {
        self.snapshot_before(self.fork_snapshot_at(w, p))
    }

    /// The event [`Self::fork_snapshot`] takes the last snapshot before.
    fn fork_snapshot_at(&self, w: ForkWindow, p: usize) -> usize {
        let placed = self
            .found
            .early_forks
            .values()
            .any(|v| v.iter().any(|f| f.child == w.child));
        if placed || w.probed || w.inside {
            w.first
        } else {
            p.max(w.first)
        }
    }

    /// The event up to which the candidates of window `w` for the disagreement at `i` are
    /// compared: a little past the fork's record, but with a lazy walk among them a little
    /// past the disagreement, as for the steps of the second kind (a lazy walk moves on at
    /// the marks later disagreements place: judged up to the record, its walk would stand
    /// still at this mark all the window long).
    pub(super) fn fork_horizon(&self, found: &[Candidate], w: ForkWindow, i: usize) -> usize {
        let n = self.events.len();
        if found.iter().any(lazy) {
            (i + SEARCH_AHEAD).min(n - 1)
        } else {
            (w.record.max(i) + SEARCH_AHEAD).min(n - 1)
        }
    }

    /// T3: where an owner-mode fork's flip must come for the disagreeing update `i` of `who`
    /// to see the CID it reports, when a sleeping task of the mm holds that CID in the replay
    /// (per-task mode): before that task's last switch-in inside window `w`, followed by its
    /// switch-out before the disagreeing switch-in. Not visited yet by the walk, it handed its
    /// own CID to its CPU with TRANSIT at that switch-in and dropped it at the switch-out
    /// (`mm_cid_schedout`: the mode in transit), so the disagreeing task could take it.
    fn holder_position(
        &self,
        r: &Replayer,
        w: ForkWindow,
        i: usize,
        who: (u16, Tid),
        mm: MmId,
    ) -> Option<usize> {
        let mm_cid = self.source().reported_cid(i)?;
        let sw = self.source().switch_in(i, who)?;
        let core = &r.engine.core;
        let holder = core
            .tasks
            .iter()
            .filter(|(t, x)| **t != who.1 && x.mm == Some(mm) && !x.running)
            .map(|(&t, _)| t)
            .find(|&t| r.engine.task_cid(t) == Some(mm_cid))?;
        // (from the disagreeing switch-in back: the holder left its CPU, then its switch-in)
        let mut left = false;
        for j in (w.first..sw).rev() {
            match self.events.get(j)?.kind {
                EventKind::SchedSwitch { prev_tid, .. } if prev_tid == holder => left = true,
                EventKind::SchedSwitch { next_tid, .. } if next_tid == holder => {
                    return left.then_some(j);
                }
                _ => {}
            }
        }
        None
    }

    /// The first record of event `probe`'s CPU after it that is not a tick, before `record`:
    /// where a 7.x fork's step runs when its vCPU stopped between the probe's stamp and the
    /// `mm_cid.lock` section (a resumed vCPU takes its pending tick first; docs/models.md §5.6,
    /// *a visit after a stall*). `None` when the next such record is `record` or later.
    fn resumed_after(&self, probe: usize, record: usize) -> Option<usize> {
        let ev = &self.trace.events;
        let cpu = ev.get(probe)?.cpu;
        (probe + 1..record).find(|&j| ev.cpu(j) == cpu && !matches!(ev.at(j).kind, EventKind::Tick))
    }

    /// The positions of a lazy-compact fork's step in window `w` (before event `i`) that give
    /// different replays, the latest first: before event `p` and before `p + 1` differ only
    /// when event `p` can see the step. The step is `copy_mm`'s `mmget` (and the thread
    /// group's growth, which sizes the futex hash): `mm_users` and `nr_threads` are read by
    /// the mm's own CID steps only (`__mm_cid_try_get`, `sched_mm_cid_migrate_to`, a thread
    /// clone, `exit_mm`; `kernel/sched/sched.h`, `core.c`, `kernel/fork.c` @6.18.15), so
    /// an event that can see it is a record of a task of the mm (its switches, migrations,
    /// forks, exits, updates, a tick it is current at) or the next record of a CPU where such
    /// a record left a step pending (a switch's CID step, T5; a wakeup's enqueue on its
    /// target, T1). Replaying the others again only spent the search's budget: at 48 vCPUs
    /// a parent's window held ~90 events and the windows of three forks took a
    /// disagreement's whole share before its T6 candidate was tried.
    fn observing_positions(&self, r: &Replayer, w: ForkWindow, mm: MmId, i: usize) -> Vec<usize> {
        let tgid = |t: Tid| self.trace.tasks.get(&t).and_then(|m| m.tgid);
        let process = tgid(w.parent);
        let member = |t: Tid| {
            t != 0
                && (r.engine.core.task(t).and_then(|x| x.mm) == Some(mm)
                    || (process.is_some() && tgid(t) == process)
                    || t == w.parent
                    || t == w.child)
        };
        let end = w.record.min(i + 1);
        // CPUs whose next record may run a step a record of the mm left pending (from a
        // little before the window: a step pending at its start runs inside it)
        let mut pending: FxHashSet<u16> = FxHashSet::default();
        let mut out = Vec::new();
        for j in w.first.saturating_sub(SEARCH_AHEAD)..end {
            let Some(e) = self.events.get(j) else {
                break;
            };
            let mut sees = member(e.tid) || pending.remove(&e.cpu);
            match e.kind {
                EventKind::SchedSwitch {
                    prev_tid, next_tid, ..
                } if member(prev_tid) || member(next_tid) => {
                    sees = true;
                    pending.insert(e.cpu);
                }
                EventKind::SchedMigrateTask {
                    tid,
                    orig_cpu,
                    dest_cpu,
                } if member(tid) => {
                    sees = true;
                    pending.insert(orig_cpu);
                    pending.insert(dest_cpu);
                }
                EventKind::SchedWakeupNew { tid, target_cpu } if member(tid) => {
                    sees = true;
                    pending.insert(target_cpu);
                }
                EventKind::SchedProcessFork { parent, child }
                    if member(parent) || member(child) =>
                {
                    sees = true;
                }
                EventKind::TaskNewtask { tid, .. }
                | EventKind::SchedProcessExec { tid, .. }
                | EventKind::SchedProcessExit { tid }
                    if member(tid) =>
                {
                    sees = true;
                    pending.insert(e.cpu);
                }
                _ => {}
            }
            if sees && j >= w.first {
                out.push(j);
            }
        }
        out.reverse();
        out
    }

    /// The positions of a lazy-compact fork's step in window `w` (before event `i`) that give
    /// different replays, the latest first, from one replay of the window with the accepted
    /// placements: before event `p` and before `p + 1` differ only when the step of event `p`
    /// reads `mm_users` or `nr_threads` (an allocation's `__mm_cid_try_get`, a migration's
    /// `sched_mm_cid_migrate_to`, a clone, an `exit_mm`; [`Self::observing_positions`] lists
    /// the records that may) or the next event is in another jiffy. `None`: the policy does
    /// not count those reads, or no snapshot lies before the window (the caller falls back
    /// on those records).
    fn reading_positions(&mut self, w: ForkWindow, mm: MmId, i: usize) -> Option<Reading> {
        let end = w.record.min(i + 1);
        let (b, snap) = self.snapshot_before(w.first)?;
        snap.engine.mm_users_reads(mm)?;
        let mut t = snapshot_ref(&snap);
        if !self.spend(end.saturating_sub(b) as u64) {
            return Some(Reading::OutOfBudget);
        }
        t.untraced.placements = self.found.clone();
        let mut out = Vec::new();
        for j in b..end {
            let Some(ev) = self.events.get(j) else {
                break;
            };
            let before = t.engine.mm_users_reads(mm);
            t.apply(j, &ev, &self.trace.tasks);
            // (the step runs at the time of the event it precedes: `init_sched_mm_cid` arms
            // a single-user mm's scan at that jiffy)
            let jiffy = |q: usize| self.events.get(q).map(|e| t.engine.core.jiffies_at(e.ts));
            if j >= w.first && (t.engine.mm_users_reads(mm) != before || jiffy(j) != jiffy(j + 1)) {
                out.push(j);
            }
        }
        out.reverse();
        Some(Reading::At(out))
    }

    /// The recent forks of `mm` a search tries for the disagreement at `i` (T2/T3), the latest
    /// first, split into those recorded at most [`SEARCH_AHEAD`] events before it and the
    /// others (far back: [`search_placements`](super::search_placements) tries the steps of
    /// the second kind before these); both empty when the budget ran out.
    pub(super) fn fork_windows(&mut self, r: &Replayer, i: usize, mm: MmId) -> [Vec<usize>; 2] {
        // (finding the windows near the disagreement reads a stretch of the capture and every
        // window)
        if !self.spend((SEARCH_LOOKBACK + self.windows.len() / 8) as u64 / 8) {
            return [Vec::new(), Vec::new()];
        }
        let mut cands: Vec<usize> = self
            .windows
            .iter()
            .enumerate()
            .filter(|&(k, w)| {
                w.first <= i
                    && w.record + SEARCH_LOOKBACK >= i
                    && self.open_window(r, k, w, (i, mm))
            })
            .map(|(k, _)| k)
            .collect();
        cands.sort_by_key(|&k| std::cmp::Reverse(self.windows[k].first));
        // (a probed fork's few positions let more forks be tried)
        let probed = cands.iter().any(|&k| self.windows[k].probed);
        cands.truncate(if probed {
            FORK_WINDOWS
        } else {
            FORK_WINDOWS / 2
        });
        if self.verbose {
            let near: Vec<_> = self
                .windows
                .iter()
                .enumerate()
                .filter(|(_, w)| w.first <= i && w.record + 400 >= i)
                .map(|(k, w)| {
                    (
                        w.child,
                        w.first,
                        w.record,
                        w.inside,
                        self.tried.contains_key(&k),
                        self.periodic.place_before(w.first).is_some(),
                    )
                })
                .collect();
            eprintln!("search: fork windows for {i}: {cands:?} near {near:?}");
        }
        let (near, far) = cands
            .into_iter()
            .partition(|&k| self.windows[k].record + SEARCH_AHEAD >= i);
        [near, far]
    }

    /// Whether fork window `k` (`w`) may still be tried for the disagreement of `mm` at `i`:
    /// not tried yet, or (neither probed nor inside its probed function, and not placed) tried
    /// for an earlier disagreement before which the window's placements stopped short of its
    /// record; a snapshot kept before it, its parent a task of `mm`.
    fn open_window(&self, r: &Replayer, k: usize, w: &ForkWindow, (i, mm): (usize, MmId)) -> bool {
        self.tried.get(&k).is_none_or(|&(_, t)| {
            !w.probed && !w.inside && t < i && t + 1 < w.record && !self.placed_fork(w.child)
        }) && self.periodic.place_before(w.first).is_some()
            && r.engine.core.task(w.parent).and_then(|t| t.mm) == Some(mm)
    }

    /// Whether an accepted step places the fork of `child`.
    fn placed_fork(&self, child: Tid) -> bool {
        self.accepted
            .iter()
            .any(|s| matches!(s, Step::EarlyFork { fork, .. } if fork.child == child))
    }

    /// The windows of `mm`'s probed 7.x forks (`inside`) whose parent's CPU recorded nothing
    /// but ticks from the probe until after the disagreement `i`: their step (the users'
    /// count, a mode flip and the walk's start) may have run anywhere in that stall (docs/
    /// models.md §5.6, *a fork's step inside its parent's stall*), so a walk the replay has in
    /// progress at `i` may not have started. A fresh probed 7.3.4 36-vCPU mcwork `workers`
    /// boot: the 37th user's fork probed at 18.123022, its CPU silent but a tick until
    /// 18.145357; 415 kept its own 35 across a switch-out at 18.123824 (the flip had not come:
    /// no `TRANSIT` CID to drop) and reported it again at 18.135277.
    pub(super) fn stalled_forks(&self, r: &Replayer, i: usize, mm: MmId) -> Vec<usize> {
        self.windows
            .iter()
            .enumerate()
            .filter(|&(k, w)| {
                w.inside
                    && w.first < i
                    && i < w.record
                    && self.open_window(r, k, w, (i, mm))
                    && self.resumed_after(w.first, w.record).is_some_and(|p| p > i)
            })
            .map(|(k, _)| k)
            .collect()
    }

    /// T2/T3: a recent fork of `mm` (one of `cands`, windows in the order to try) placed
    /// earlier in its window.
    ///
    /// `extra`: a step placed with each placement (a held `exit_mm`, T6: see
    /// [`Search::try_forks_holding`]); its replay starts before that step too.
    pub(super) fn try_forks(
        &mut self,
        r: &Replayer,
        (i, who): (usize, (u16, Tid)),
        mm: MmId,
        target: u64,
        (cands, extra, stalled): (Vec<usize>, Option<Step>, bool),
    ) -> Option<Candidate> {
        let sw = self.source().switch_in(i, who);
        for k in cands {
            // (a window tried for an earlier disagreement is tried again only at the placements
            // after that one, which could not explain it: at 48 vCPUs a fork tried and not
            // kept for one disagreement, another step explaining it, explained the next one
            // with its step right before it)
            // (tried again for the same disagreement, with a held put: the same placements)
            let after = match self.tried.get(&k) {
                _ if stalled => None,
                Some(&(after, t)) if t == i => after,
                Some(&(_, t)) => Some(t),
                None => None,
            };
            let later = |p: &usize| after.is_none_or(|t| *p > t);
            // (a window tried at a few places of its stall only may be tried whole later)
            if !stalled {
                self.tried.insert(k, (after, i));
            }
            let w = self.windows[k];
            // a placement after the disagreement cannot explain it; an owner-mode fork may
            // also leave its fixup walk running for a while (T3)
            let spans: &[u64] = if self.policy == PolicyKind::OwnerMode {
                &WALK_SPANS
            } else {
                &[]
            };
            let mut found: Vec<Candidate> = Vec::new();
            // the fewest walk visits a lazy placement needed so far: an earlier placement is
            // only worth it with fewer
            let mut fewest: Option<usize> = None;
            // a probed fork ran at its probe or before a stall of the parent's CPU: right after
            // one of that CPU's last records
            let positions: Vec<usize> = if stalled {
                // (inside the stall: right before the disagreeing task's switch-in, which
                // then still found the tasks' own CIDs, and at the stall's far end)
                let mut ps: Vec<usize> = sw
                    .into_iter()
                    .chain(self.resumed_after(w.first, w.record))
                    .filter(|&p| w.first < p && p < w.record)
                    .collect();
                ps.dedup();
                ps
            } else if w.inside {
                // the far end of a stall of the parent's CPU right after the probe first (its
                // first record after it that is not a tick), then after the probe, up to its
                // return, the latest first (a placement after the disagreement explains it by
                // the fork not having run yet)
                let resumed = self.resumed_after(w.first, w.record);
                resumed
                    .into_iter()
                    .chain(
                        (w.first + 1..=w.record)
                            .rev()
                            .filter(|&j| Some(j) != resumed)
                            .take(INSIDE_POSITIONS),
                    )
                    .collect()
            } else if w.probed {
                let cpu = self.events.get(w.record).map(|e| e.cpu);
                (w.first..w.record.min(i + 1))
                    .rev()
                    .filter(|&j| {
                        j > 0
                            && self
                                .trace
                                .events
                                .get(j - 1)
                                .is_some_and(|e| Some(e.cpu) == cpu)
                    })
                    .take(PROBED_POSITIONS)
                    .collect()
            } else if self.policy == PolicyKind::OwnerMode {
                // (the latest first, then the other end of the parent's stall, right after its
                // CPU's previous record, then the rest: the candidates of the latest two or
                // three fill the share, and a 7.3.4 48-vCPU mcwork `churn` boot's fork of 623
                // ran right after 622's record, before three exits released their CIDs, which
                // its own CID 6 shows)
                let mut ps: Vec<usize> = (w.first..w.record.min(i + 1)).rev().collect();
                if ps.len() > 2
                    && let Some(first) = ps.pop()
                {
                    ps.insert(1, first);
                }
                ps
            } else {
                // (lazy-compact: only the placements that differ)
                match self.reading_positions(w, mm, i) {
                    Some(Reading::At(ps)) => ps,
                    Some(Reading::OutOfBudget) => break,
                    None => self.observing_positions(r, w, mm, i),
                }
            };
            let positions: Vec<usize> = positions.into_iter().filter(later).collect();
            // (a long window of an owner-mode fork, not probed: past the others' share, its
            // lazy walks are still placed further back, up to LAZY_CANDIDATES of them)
            let scan = self.policy == PolicyKind::OwnerMode && !w.probed && !w.inside;
            let others_full = |found: &[Candidate]| {
                found.iter().filter(|c| !scan || !lazy(c)).count() >= SEARCH_CANDIDATES
            };
            // (the observed CID is one a sleeping task of the mm held: the flip came before
            // that task's last switch-in; lazy walks at both ends of what that leaves, tried
            // first, each with the fewest visits it needs)
            let held = if scan {
                self.holder_position(r, w, i, who, mm)
            } else {
                None
            };
            let mut spent = false;
            for p in held
                .into_iter()
                .flat_map(|h| [Some(h), (w.first < h).then_some(w.first)])
                .flatten()
                .filter(later)
            {
                let mut own = None;
                spent = !self.try_lazy_walk(w, p, (i, sw, mm, target), &mut found, &mut own);
                fewest = own.into_iter().chain(fewest).min();
                if spent {
                    break;
                }
            }
            // (when those explain the update, the window's other positions are not replayed:
            // the evidence bounds the flip to that stretch, and at 48 vCPUs their walks at once
            // and even ones took the disagreement's whole share, the later disagreements of the
            // walk none)
            let mut positions = if spent || !found.is_empty() {
                Vec::new()
            } else {
                positions
            };
            // (with a held put, only the latest: the least the allocation needs, and each
            // pairing replays from before the exit)
            if extra.is_some() {
                positions.truncate(1);
            }
            'place: for p in positions {
                let t0 = self.events.get(p).map_or(0, |e| e.ts);
                // (inside the probed function the walk ends at its return: one placement)
                let spans = if w.inside { &[][..] } else { spans };
                // (spans capped at the record alike are one placement, replayed once)
                let mut ends: Vec<u64> = std::iter::once(0)
                    .chain(spans.iter().map(|&d| t0.saturating_add(d).min(w.record_ts)))
                    .collect();
                ends.dedup();
                // (once the others fill their share, only lazy walks are placed further back)
                if others_full(&found) {
                    ends.clear();
                }
                for walk_end in ends {
                    // (with a held put, from before its exit record too)
                    let j = self.fork_snapshot_at(w, p);
                    let j = match (self.periodic.place_before(j), extra) {
                        (Some(b), Some(x)) if x.start() < b => x.start(),
                        _ => j,
                    };
                    let snap = self.snapshot_before(j);
                    let Some((b, snap)) = snap else {
                        break 'place;
                    };
                    // (what judging the candidates found so far takes is kept back)
                    let ahead = self.fork_horizon(&found, w, i) - i;
                    let reserve = if found.is_empty() {
                        0
                    } else {
                        (found.len() + 1) * ahead
                    };
                    if self.budget < (i + 1 - b + reserve) as u64 {
                        break 'place;
                    }
                    let mut t = checked(&snap, mm);
                    if !self.spend((i + 1 - b) as u64) {
                        break 'place;
                    }
                    let mut placements = self.found.clone();
                    // inside the probed function, the walk still ends at its return and
                    // visits where the probes say
                    let (walk_end, lazy) = if w.inside {
                        let end = self.events.get(w.record).map_or(0, |e| e.ts);
                        (end, true)
                    } else {
                        (walk_end, false)
                    };
                    // (it replaces where the probe put it)
                    let step = Step::EarlyFork {
                        at: p,
                        fork: EarlyFork {
                            parent: w.parent,
                            child: w.child,
                            record_ts: w.record_ts,
                            walk_end,
                            lazy,
                            probed: false,
                            thread: w.thread,
                        },
                    };
                    step.set(&mut placements);
                    if let Some(x) = extra {
                        x.set(&mut placements);
                    }
                    t.untraced.placements = placements.clone();
                    self.replay_below(&mut t, b, i, target);
                    if self.verbose {
                        eprintln!(
                            "search: fork of {} before {p} (window {}..{}){} for {i}: misses {} (to beat: {target})",
                            w.child,
                            w.first,
                            w.record,
                            extra.map_or(String::new(), |x| format!(" with {x:?}")),
                            t.score()
                        );
                    }
                    let steps = std::iter::once(step).chain(extra).collect();
                    // (a placement that flips nothing begins no walk: its other ends replay
                    // the same)
                    let same = !t.untraced.flipped(w.child);
                    if let Some(c) = Candidate::if_explains(t, placements, steps, b, target) {
                        found.push(c);
                        if others_full(&found) {
                            break;
                        }
                    }
                    if same {
                        break;
                    }
                }
                if self.policy == PolicyKind::OwnerMode
                    && !self.try_lazy_walk(w, p, (i, sw, mm, target), &mut found, &mut fewest)
                {
                    break 'place;
                }
                if others_full(&found)
                    && (!scan || found.iter().filter(|c| lazy(c)).count() >= LAZY_CANDIDATES)
                {
                    break 'place;
                }
            }
            if found.is_empty() {
                continue;
            }
            // of the placements that explain this disagreement, the one that leaves the fewest
            // misses up to a little past the fork's record
            let horizon = self.fork_horizon(&found, w, i);
            if let Some(c) = self.best(&found, i, horizon) {
                return Some(found.swap_remove(c));
            }
        }
        None
    }

    /// T2 with T6, for an update above the model's CID once neither a fork placed alone nor a
    /// step of the second kind explains it: a clone in progress (its `copy_mm` `mmget`, long
    /// before the fork's record) and an exit whose `exit_mm` is still pending both counted
    /// in the `mm_users` the disagreeing allocation read (`__mm_cid_try_get` expands while
    /// `cid < mm_users`, `kernel/sched/sched.h` @6.18.15 l.3655-3662): each alone leaves it
    /// one user short. The near windows `cands` (tried alone already), each fork at its
    /// latest position only, with each held put the second kind proposes for it whose exit
    /// was recorded inside that fork's window (both pending at once; a put held from before
    /// the clone began is the long hold this does not chase: on the seed kernel's c16 churn
    /// and c64 burst pairings with exits 170-850 events back spent the budget later steps
    /// needed); the one that leaves fewer misses than the replay `r` without them a little
    /// further on.
    pub(super) fn try_forks_holding(
        &mut self,
        r: &Replayer,
        (i, who): (usize, (u16, Tid)),
        mm: MmId,
        target: u64,
        cands: &[usize],
    ) -> Option<Candidate> {
        if cands.is_empty() || self.policy == PolicyKind::OwnerMode {
            return None;
        }
        if self.source().update_vs_model(r, i, who.1) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let puts: Vec<Step> = self
            .source()
            .step_candidates(r, i, who, mm)
            .into_iter()
            .filter(|s| matches!(s, Step::LatePut(_) | Step::LatePuts { .. }))
            .take(HELD_PUTS)
            .collect();
        for put in puts {
            if self.budget == 0 {
                break;
            }
            // (the windows the exit was recorded in)
            let first = put.start();
            let inside: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&k| self.windows[k].first <= first)
                .collect();
            if inside.is_empty() {
                continue;
            }
            let Some(c) = self.try_forks(r, (i, who), mm, target, (inside, Some(put), false))
            else {
                continue;
            };
            let horizon = (i + SEARCH_AHEAD).min(self.events.len() - 1);
            if self.ahead_at(&c.at, r, i, horizon) {
                return Some(c);
            }
        }
        None
    }
}
