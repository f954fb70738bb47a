//! The search for placements of untraced kernel steps (docs/models.md §5.3) that explain the
//! observed CIDs a plain replay misses.
//!
//! The replay runs once (from the plain replay's state before its first miss, where it has
//! one: until then the two are the same replay); at each `rseq_update` it gets wrong, the search
//! tries, from snapshots of the replayer taken on the way:
//! 1. the CID step of one of the most recent CLONE_VM forks of the mm earlier in its window (T2),
//!    latest placement first, and for owner-mode a fixup walk that takes a while (T3);
//! 2. else the CID step of a switch into the mm on another CPU run at that CPU's next record
//!    (T5), `exit_mm` of an exit of the mm right at its record (T6), a remote wakeup of the
//!    mm enqueued at once (T1), or the CID release of an exit of the mm earlier in `do_exit`
//!    (T7); only when none of these explains it, the futex hash's reference gone before an
//!    earlier switch-in of the mm (`StepSource::earlier_futex_puts`), and last each of those
//!    together with each steal from the disagreeing CPU tried before (`Step::FutexPutWaking`);
//! 3. else the forks of the first kind recorded more than [`SEARCH_AHEAD`] events before the
//!    update (each of their placements replays that stretch again: they come last).
//!
//! Before both, a remote wakeup of the mm still queued on its woken CPU whose steal from the
//! disagreeing CPU emptied that CPU's slot (T1, `StepSource::steals_from_cpu`): a set slot
//! gives its CID whatever a fork's step changed.
//!
//! While a lazy fixup walk of the mm is in progress (T3) the second kind comes first: its marks
//! (alone, or with the switches in flight across the walk's fork step deferred) are what a
//! disagreement inside the walk mostly needs.
//!
//! A candidate must leave fewer disagreements up to the update and break no invariant of the
//! model for the mm (its replay checks them); of those, the one with the fewest a little
//! further on is kept and the replay goes on from it; a step of the second kind only when it
//! has fewer there than the replay without it too. The replays of a search record nothing
//! (`Core::recording`), and the work is bounded by a budget of replayed events proportional to
//! the capture, so inference costs a fixed fraction of a replay at most.

use super::super::kind::PolicyKind;
use super::super::params::Recording;

mod budget;
mod forks;
mod futex_sizes;
mod judge;
mod snapshots;
mod steps;
mod walks;
use super::beside::{AHEAD_OF_PLAIN, Publisher};
use super::feed::{Misses, PUBLISH_EVERY};
use super::replayer::Replayer;
use super::steps::{
    EventsAt, NextOnCpu, SEARCH_LOOKBACK, SNAPSHOT_AHEAD_OF_MISS, Step, StepSource,
};
use super::untraced::Placements;
use super::windows::{ExitWindow, ForkWindow};
use crate::events::{EventKind, Trace};
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;
use snapshots::{Snapshots, snapshot_ref};
use std::rc::Rc;

/// Events a search may replay (or read, at an eighth, or copy in a snapshot) in all: one per
/// this many events of the capture (bounds its cost, with the final replay, to about half of
/// what `stats` costs without inference)...
const SEARCH_BUDGET_EVENTS_PER_UNIT: u64 = 2;
/// ... plus this many on any capture: a small one can afford a few thorough searches (a few ms;
/// with 1,000 the unprobed k6.18.15-c16-churn, 3.8 K events, found no step: 178/221, with
/// 20,000 it finds 4: 216/221, what its CID probes show).
const SEARCH_BUDGET_BASE: u64 = 20_000;
/// What a search may spend on a capture of `n` events, in replayed events.
///
/// `CIDSCOPE_SEARCH_BUDGET_BASE=B` and `CIDSCOPE_SEARCH_BUDGET_PER=K` replace the base and the
/// events of the capture per budgeted event (an experiment: what a smaller or larger search
/// costs and finds, `scripts/infer-budget.py`; not for a result one reports).
pub(super) fn budget(n: u64) -> u64 {
    match budget_override() {
        (None, None) => default_budget(n),
        (base, per) => {
            n / per.unwrap_or(SEARCH_BUDGET_EVENTS_PER_UNIT) + base.unwrap_or(SEARCH_BUDGET_BASE)
        }
    }
}

/// [`budget`] without the environment's override.
pub(super) fn default_budget(n: u64) -> u64 {
    n / SEARCH_BUDGET_EVENTS_PER_UNIT + SEARCH_BUDGET_BASE
}

/// The budget's base and its events per unit from the environment, read once.
fn budget_override() -> (Option<u64>, Option<u64>) {
    static SET: std::sync::OnceLock<(Option<u64>, Option<u64>)> = std::sync::OnceLock::new();
    *SET.get_or_init(|| {
        let var = |name| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        (
            var("CIDSCOPE_SEARCH_BUDGET_BASE"),
            var("CIDSCOPE_SEARCH_BUDGET_PER").filter(|&k| k >= 1),
        )
    })
}

/// Once a step explains a disagreement, the candidates after it are tried only where their
/// replay is at most this many times as long as its (plus [`FIXER_COST_SLACK`] events): the
/// candidates come smallest change first, and those that move far more of the capture seldom
/// explain it better, while their replays took the budget the next disagreements needed (a
/// fresh probed 6.12.117 45-vCPU `workers` boot: 14,000 events on switch steps 1,000-1,300
/// events back after a step 5 events back had explained the miss; docs/models.md §5.3).
const FIXER_COST_FACTOR: usize = 2;
const FIXER_COST_SLACK: usize = 200;

/// Events between the snapshots of a search at up to 16 CPUs (more CPUs: more state to copy,
/// proportionally fewer snapshots; the stretch they cover: `snapshots::CHECKPOINTS_SPAN`).
const CHECKPOINT_EVERY: usize = 64;
/// What a snapshot costs, in replayed events (its copy of the model's state).
const SNAPSHOT_COST: u64 = 64;
/// The share of the budget one disagreement may spend (the others get a chance too).
const PER_MISS_SHARE: u64 = 4;
/// Placements a search compares for one disagreement.
const SEARCH_CANDIDATES: usize = 8;
/// Steps of the second kind that explain a disagreement a search compares (nearest first; the
/// walk marks of one event count once).
const STEP_FIXERS: usize = 3;
/// The most recent forks of the mm a search tries for one disagreement.
const FORK_WINDOWS: usize = 8;
/// Positions a search tries for a probed fork (after the parent CPU's last records).
const PROBED_POSITIONS: usize = 4;
/// ... and for one whose step runs inside the probed function (between it and its return).
const INSIDE_POSITIONS: usize = 64;
/// Events past a disagreement (or a fork's record) over which a search compares its
/// candidates.
const SEARCH_AHEAD: usize = 200;
/// How long a search lets an owner-mode fixup walk take (ns; capped at the fork's record).
const WALK_SPANS: [u64; 6] = [
    500_000,
    1_000_000,
    2_000_000,
    4_000_000,
    8_000_000,
    u64::MAX,
];

/// A candidate that explains a disagreement: the replayer at it, the placements with it, the
/// checkpoints retaken on its way.
struct Candidate {
    at: Replayer,
    placements: Placements,
    /// The steps it adds to the accepted ones.
    steps: Vec<Step>,
    /// The snapshot its replay started from.
    from: usize,
}

/// A candidate's replayer: from a snapshot, its invariant checks on `mm` (a placement that
/// breaks one is never kept: [`broke`] looks where the candidate is judged, the final replay
/// after every event).
fn checked(snap: &Replayer, mm: MmId) -> Replayer {
    let mut t = snap.clone();
    t.engine.core.check_only = Some(vec![mm]);
    t
}

/// Whether a candidate's model breaks an invariant of its mm now.
fn broke(t: &Replayer) -> bool {
    !t.engine.core.run.violations.is_empty() || !t.engine.check_invariants().is_empty()
}

impl Candidate {
    /// The replay `at` (from snapshot `from`, with `placements`) as a candidate when it explains
    /// the disagreement: fewer misses than `target` and no invariant broken.
    fn if_explains(
        at: Replayer,
        placements: Placements,
        steps: Vec<Step>,
        from: usize,
        target: u64,
    ) -> Option<Candidate> {
        (at.score() < target && !broke(&at)).then_some(Candidate {
            at,
            placements,
            steps,
            from,
        })
    }
}

struct Search<'a> {
    trace: &'a Trace,
    events: EventsAt<'a>,
    policy: PolicyKind,
    windows: &'a [ForkWindow],
    exits: &'a [ExitWindow],
    next_on_cpu: NextOnCpu,
    /// The placements accepted so far (the probes' and `accepted`'s).
    found: Placements,
    /// The steps accepted so far, in order.
    accepted: Vec<Step>,
    /// Which candidate each accepted step came with (0, 1, ...: one candidate may place two).
    groups: Vec<u32>,
    /// The mms they were accepted for.
    mms: Vec<MmId>,
    /// Snapshots every so many events over the last `snapshots::CHECKPOINTS_SPAN`: every candidate's
    /// replay starts from the last one before its step.
    periodic: Snapshots,
    /// Windows tried already: the placements tried were those after the first index (all,
    /// when none), for the disagreement at the second (placements before it).
    tried: FxHashMap<usize, (Option<usize>, usize)>,
    budget: u64,
    /// CIDSCOPE_SEARCH_TRACE set: each disagreement and candidate on stderr (a debugging aid).
    verbose: bool,
    /// CIDSCOPE_SEARCH_TRACE=2: also the model's state of the mm after each candidate step.
    verbose_state: bool,
    /// A final replay beside, told each step accepted and the frontier.
    out: Option<Publisher<'a>>,
}

/// Whether `CIDSCOPE_SEARCH_TRACE` is set: the search and the settling of its steps say on
/// stderr what they try and why they keep or drop it (a debugging aid).
pub(super) fn tracing() -> bool {
    std::env::var_os("CIDSCOPE_SEARCH_TRACE").is_some()
}

/// Replays `trace` through `policy` and returns the steps that explain some of its
/// disagreements, in the order they were accepted (empty when none do), with the candidate
/// each came with (a number per candidate, in order).
///
/// `misses`: where the plain replay disagreed on a process begun in the capture (event
/// indices, in order), all of them or as a plain replay running beside publishes them. Snapshots are taken only in the stretch before
/// one of them that a candidate may start in, and the search ends when its budget is spent. `r`
/// is the replayer at event `from` (the capture's start, or the plain replay's state far
/// enough before its first miss).
pub fn search_placements(
    trace: &Trace,
    (events, next_on_cpu): (EventsAt<'_>, NextOnCpu),
    policy: PolicyKind,
    (mut r, from): (Replayer, usize),
    (windows, exits): (&[ForkWindow], &[ExitWindow]),
    (mut misses, out): (Misses<'_>, Option<Publisher<'_>>),
) -> (Vec<Step>, Vec<u32>, Vec<MmId>) {
    let n = events.len();
    // (the search compares predictions only)
    r.engine.core.recording = Recording::Off;
    r.engine.core.params.check_invariants = false;
    let mut s = Search {
        trace,
        events,
        policy,
        windows,
        exits,
        next_on_cpu,
        // the probes' placements (docs/models.md §5.6) are the start
        found: r.untraced.placements.clone(),
        accepted: Vec::new(),
        groups: Vec::new(),
        mms: Vec::new(),
        periodic: Snapshots::new(
            CHECKPOINT_EVERY * (r.engine.core.params.cpus as usize / 16).max(1),
        ),
        tried: FxHashMap::default(),
        budget: budget(n as u64),
        verbose: tracing(),
        verbose_state: std::env::var("CIDSCOPE_SEARCH_TRACE").is_ok_and(|v| v == "2"),
        out,
    };
    let mut i = from;
    // (what explained disagreements may still get back)
    let mut refund = s.budget;
    // the next miss of the plain replay at or after i
    let mut next_miss = 0;
    while s.budget > 0 {
        // (past the plain replay's last miss and the look-ahead of its search, nothing is
        // left to explain)
        // (while it waits for the plain replay's next misses, a final replay beside may
        // follow the plain replay: a step for a miss not reached yet will not reach far back)
        let f = s.frontier(i);
        let out = &mut s.out;
        let waiting = |progress: usize| {
            if let Some(o) = out.as_mut() {
                o.frontier(f.max(progress.saturating_sub(AHEAD_OF_PLAIN)));
            }
        };
        if !misses.before_end(i, SEARCH_AHEAD, n, waiting) {
            break;
        }
        // (what the misses must be known up to: the snapshots' look-ahead)
        misses.ensure(i + SNAPSHOT_AHEAD_OF_MISS + 1);
        while misses.get(next_miss).is_some_and(|m| m < i) {
            next_miss += 1;
        }
        if misses
            .get(next_miss)
            .is_some_and(|m| m <= i + SNAPSHOT_AHEAD_OF_MISS)
        {
            s.checkpoint(i, &mut r);
        }
        let Some(ev) = s.events.get(i) else {
            break;
        };
        let (before, probes_before) = (r.misses(), r.probe_misses());
        r.apply(i, &ev, &trace.tasks);
        // (an update the model misses, or a value read by a CID probe that it contradicts:
        // a probed step that ran late shows only there when the updates agree)
        let missed = (r.misses() > before && matches!(ev.kind, EventKind::RseqUpdate { .. }))
            || r.probe_misses() > probes_before;
        if missed && s.verbose {
            eprintln!("search: miss at event {i}, budget {}", s.budget);
        }
        if missed && s.budget > 0 {
            // (the misses of processes begun in the capture: an older one's state is seeded
            // from what the capture shows, and a step placed for it would explain the seeding)
            let mm = r
                .engine
                .core
                .task(ev.tid)
                .and_then(|t| t.mm)
                .filter(|&m| r.begins_in_capture(m));
            if let Some(mm) = mm {
                let target = r.score();
                let who = (ev.cpu, ev.tid);
                // (this disagreement may spend a share of what is left, the rest waits)
                let left = s.budget;
                let share = (left / PER_MISS_SHARE).max(left.min(SEARCH_BUDGET_BASE));
                s.budget = share;
                // (while a lazy walk of the mm is in progress, its marks come first: the
                // walk's progress, not another fork, is what a disagreement inside it
                // mostly shows; a fork placed again would only mark the same walk)
                let cand = if r.untraced.lazy_walk(mm).is_some() {
                    // (unless the walk's own fork had not started it yet: its parent's CPU
                    // stalled right after the probe, past the disagreement)
                    let stalled = s.stalled_forks(&r, i, mm);
                    let late = if stalled.is_empty() {
                        None
                    } else {
                        s.try_forks(&r, (i, who), mm, target, (stalled, None, true))
                    };
                    match late.or_else(|| s.try_steps(&r, i, who, mm, target, &[])) {
                        Some(c) => Some(c),
                        None if s.budget > 0 => {
                            // (of the forks, only the walk's own placed again: another fork
                            // moved does not move the walk, and on plain 7.3.4 24-48-vCPU
                            // `workers` boots those tries took what the next marks needed)
                            let [near, far] = s.fork_windows(&r, i, mm);
                            let walker = r.untraced.lazy_walk_child(mm);
                            let all = near
                                .into_iter()
                                .chain(far)
                                .filter(|&k| Some(s.windows[k].child) == walker)
                                .collect();
                            s.try_forks(&r, (i, who), mm, target, (all, None, false))
                        }
                        None => None,
                    }
                } else {
                    // (a queued wakeup's steal from the disagreeing CPU before the forks: a
                    // fork's step does not change what a set slot gives)
                    let (steal, tried) = s.try_steals(&r, i, who, mm, target);
                    match steal {
                        Some(c) => Some(c),
                        None if s.budget == 0 => None,
                        None => {
                            // (the forks recorded long before the disagreement after the
                            // steps: each of their placements replays that stretch again)
                            let [near, far] = s.fork_windows(&r, i, mm);
                            let mut cand = None;
                            if !near.is_empty() && s.budget > 0 {
                                cand = s.try_forks(
                                    &r,
                                    (i, who),
                                    mm,
                                    target,
                                    (near.clone(), None, false),
                                );
                            }
                            if cand.is_none() && s.budget > 0 {
                                cand = s.try_steps(&r, i, who, mm, target, &tried);
                            }
                            // (a stalled clone's futex hash sized for the threads left)
                            if cand.is_none() && s.budget > 0 {
                                cand = s.try_futex_sizes(&r, i, mm, target);
                            }
                            // (a clone in progress and a held exit_mm together)
                            if cand.is_none() && s.budget > 0 {
                                cand = s.try_forks_holding(&r, (i, who), mm, target, &near);
                            }
                            if cand.is_none() && !far.is_empty() && s.budget > 0 {
                                cand = s.try_forks(&r, (i, who), mm, target, (far, None, false));
                            }
                            cand
                        }
                    }
                };
                s.budget = left - (share - s.budget);
                // (a disagreement explained gives back what it spent, up to the budget once
                // more in all: the budget bounds a search in vain, not one that keeps finding)
                if cand.is_some() {
                    let back = (left - s.budget).min(refund);
                    refund -= back;
                    s.budget += back;
                }
                if let Some(c) = cand {
                    if s.verbose {
                        eprintln!(
                            "search: {:?} for {i}: misses {target} -> {}",
                            c.steps,
                            c.at.score()
                        );
                    }
                    if !s.mms.contains(&mm) {
                        s.mms.push(mm);
                    }
                    let seen = s.accepted.len();
                    r = s.accept(c, i);
                    let f = s.frontier(i);
                    if let Some(o) = s.out.as_mut() {
                        o.steps(&s.accepted[seen..], f);
                    }
                }
            }
        }
        i += 1;
        if i.is_multiple_of(PUBLISH_EVERY) {
            let f = s.frontier(i);
            if let Some(o) = s.out.as_mut() {
                o.frontier(f);
            }
        }
    }
    if s.verbose {
        eprintln!("search: done, budget left {}", s.budget);
    }
    (s.accepted, s.groups, s.mms)
}

impl Search<'_> {
    /// No step accepted from now on changes an event before this index (but for its window):
    /// a candidate starts from a snapshot kept, or from one taken at `i` or later.
    fn frontier(&self, i: usize) -> usize {
        self.periodic.first().map_or(i, |b| b.min(i))
    }

    /// Keeps the snapshots a later candidate may start from: every `every` events.
    fn checkpoint(&mut self, i: usize, r: &mut Replayer) {
        if i.is_multiple_of(self.periodic.every()) {
            self.budget = self.budget.saturating_sub(SNAPSHOT_COST);
            self.periodic.take(i, r, |t, a, b| self.replay_to(t, a, b));
        }
    }

    /// The last snapshot at or before event `j`, and its place.
    fn snapshot_before(&self, j: usize) -> Option<(usize, Rc<Replayer>)> {
        self.periodic.before(j, |t, a, b| self.replay_to(t, a, b))
    }

    /// Takes `cand`, found for the disagreement at `i`: its steps join the accepted ones, and
    /// the snapshots its replay passed are taken again with them (the replay goes on from it).
    fn accept(&mut self, cand: Candidate, i: usize) -> Replayer {
        self.found = cand.placements;
        let group = self.groups.last().map_or(0, |g| g + 1);
        self.groups
            .extend(std::iter::repeat_n(group, cand.steps.len()));
        self.accepted.extend(cand.steps);
        let from = cand.from;
        let snap = self
            .periodic
            .has(from)
            .then(|| self.snapshot_before(from))
            .flatten();
        let Some(mut t) = snap.map(|(_, s)| snapshot_ref(&s)) else {
            return cand.at;
        };
        // the snapshots after its start were taken without the step
        self.periodic.restart_at(from, &self.found);
        t.untraced.placements = self.found.clone();
        for j in from..=i {
            if j > from {
                self.checkpoint(j, &mut t);
            }
            let Some(ev) = self.events.get(j) else {
                break;
            };
            t.apply(j, &ev, &self.trace.tasks);
        }
        self.budget = self.budget.saturating_sub((i + 1 - from) as u64);
        t
    }

    /// Replays `t` over events `from..=to`.
    fn replay_to(&self, t: &mut Replayer, from: usize, to: usize) {
        for j in from..=to {
            let Some(ev) = self.events.get(j) else {
                break;
            };
            t.apply(j, &ev, &self.trace.tasks);
        }
    }

    /// The candidates a search draws from the capture for the disagreement at `i`.
    fn source(&self) -> StepSource<'_> {
        StepSource {
            events: &self.events,
            policy: self.policy,
            exits: self.exits,
            next_on_cpu: &self.next_on_cpu,
            found: &self.found,
        }
    }
}
