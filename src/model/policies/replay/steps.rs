//! The steps of the second kind a search moves (docs/models.md §5.3): T5 deferred switches,
//! T6 early `exit_mm`, T1 wakeups, T7 early releases (alone or with switches in flight), T3 walk
//! marks; and the candidates of each for one disagreement.

use super::super::kind::PolicyKind;
use super::replayer::Replayer;
use super::untraced::{EarlyExit, EarlyFork, Placements};
use super::windows::ExitWindow;
use crate::events::{EventKind, Tid};
use crate::model::tasks::MmId;

mod capture;
mod currents;
mod exits;
mod held_wakes;
mod in_flight;
mod migrations;
mod stalls;
mod visits;

pub(super) use capture::{EventsAt, NextOnCpu, NextOnCpuScan};

/// A search keeps its snapshots only this many events ahead of a miss of the plain replay (a
/// candidate starts before the miss, mostly well within this).
pub(super) const SNAPSHOT_AHEAD_OF_MISS: usize = 4096;
/// How many events back from a disagreement a fork's record may lie to be a candidate.
pub(super) const SEARCH_LOOKBACK: usize = 1500;
/// Candidates of each kind of step (T5, T6, T1) tried for one disagreement.
const STEP_CANDIDATES: usize = 4;

/// Exit release positions tried per exit (T7).
const EXIT_POSITIONS: usize = 6;

/// Which step a candidate of the second kind moves, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// T2 (with T3): the CID step of a CLONE_VM fork before the event at `at`, replacing any
    /// placement of that fork so far (its probe's).
    EarlyFork { at: usize, fork: EarlyFork },
    /// T5: the CID step of the switch record at this index at its CPU's next record.
    DeferredSwitch(usize),
    /// T5: [`Step::DeferredSwitch`] for each of the first `n` switch records of `at` (several
    /// vCPUs stalled after their switch records together: one alone explains nothing when
    /// each took a CID the disagreeing task got).
    DeferredSwitches {
        at: [usize; STEP_CANDIDATES],
        n: usize,
    },
    /// T6: `exit_mm` right at the exit record at this index (before a joiner's wake).
    EarlyPut(usize),
    /// T6: `exit_mm` of the exit record at this index only at the task's last switch-out (or
    /// a record of it that is not a switch-out).
    LatePut(usize),
    /// T6: [`Step::LatePut`] of the exit record `exit` (of `tid`), its `exit_mm` run before
    /// the event at `at` when still pending then (the exiting CPU resumed before the task's
    /// next record, between two allocations of the mm).
    LatePutBy { exit: usize, tid: Tid, at: usize },
    /// The futex hash's `mm_users` reference on `mm` dropped before the event at `at`.
    FutexPut { at: usize, mm: MmId },
    /// [`Step::FutexPut`] with the CID step of the switch record `switch` deferred (T5).
    FutexPutDeferring { at: usize, mm: MmId, switch: usize },
    /// [`Step::FutexPut`] before the event at `at` with [`Step::WakeBy`] of the wakeup `wake`
    /// (of `tid`) enqueued before the event at `by`: a queued wakeup's steal emptied the
    /// disagreeing CPU's slot, and the allocation there read the fewer users an earlier
    /// allocation had shrunk `max_nr_cid` to (docs/models.md §11 item 9).
    FutexPutWaking {
        at: usize,
        mm: MmId,
        wake: usize,
        tid: Tid,
        by: usize,
    },
    /// T6: [`Step::LatePut`] for each of the first `n` exit records of `at`.
    LatePuts {
        at: [usize; STEP_CANDIDATES],
        n: usize,
    },
    /// T1: the enqueue of the remote wakeup recorded at this index at once.
    PromptWake(usize),
    /// T1: the enqueue of the migration recorded at this index at dst's next switch.
    LateEnqueue(usize),
    /// T1: the enqueue of the remote wakeup recorded at `wake` (of `tid`) before the event at
    /// `at`, between its record and dst's next switch (dst's vCPU stalled after the enqueue,
    /// or its idle loop, recording from interrupts, before it).
    WakeBy { wake: usize, tid: Tid, at: usize },
    /// T1 twice: two migrations from or to the disagreeing CPU both enqueued at once (one
    /// alone is no better: e.g. a wakeup to the CPU that finds its slot still set, then one
    /// from it that takes the slot's CID along).
    PromptWakes(usize, usize),
    /// T1 both ways: the migration recorded at `prompt` enqueued at once, the one at `late` at
    /// its dst's next switch. A task moving off the disagreeing CPU steals its slot's CID at
    /// once, and one moving onto it, enqueued only later, finds the slot empty and brings its
    /// own CID (seed 5646 boot 8: 295 leaves CPU 11 taking its 6, 293 arrives 10 ms after its
    /// wakeup with its 7).
    WakeThenLate { prompt: usize, late: usize },
    /// T7: the CID release of an exit before the event at `at`.
    EarlyExit { at: usize, exit: EarlyExit },
    /// T3: a lazy fixup walk in progress has visited `done` tasks before the event at `at`.
    WalkMark { at: usize, done: usize },
    /// T3 with T5: [`Step::WalkMark`] while the switches into the mm recorded before the
    /// walk's fork step (the first `n` of `switches`) ran their CID steps only at their CPUs'
    /// next records, after the mode flip: each then met the walk's TRANSIT mode (an unvisited
    /// task hands its own CID over with TRANSIT and drops it at its schedout).
    WalkMarkDeferring {
        at: usize,
        done: usize,
        switches: [usize; IN_FLIGHT],
        n: usize,
    },
    /// T5 with the switch probe: the CID step of the switch record at this index ran at the
    /// record (its CPU stalled before `finish_task_switch`), not by its `cid_switch_done`.
    PromptSwitch(usize),
    /// A probe at this index whose step runs inside the probed function (`cid_exit`,
    /// `cid_mmput`, `cid_mmput_async`, `cid_migrate_to`, `cid_set_cpus`): the step ran at its
    /// CPU's next record (the CPU stalled right after the probe).
    LateProbe(usize),
    /// A probe at `probe` whose step ran after it, before the event at `at` (the disagreeing
    /// task's switch-in, or the record right after that task left its CPU again; ahead of the
    /// probe CPU's next record either way).
    LateProbeBefore { probe: usize, at: usize },
    /// A `cid_mmput` probe at `probe` whose task was preempted right after it (`mmput`'s
    /// `might_sleep`, before the decrement): the step ran when the task was switched in
    /// again, at `at`; or a 7.x `cid_exit` whose release waited for `mm_cid.mutex`, up to
    /// the task's `sched_process_exit` record at `at`.
    ProbeAtResume { probe: usize, at: usize },
    /// [`Step::LateProbe`] at `probe` while the switch record `switch` ran its CID step at
    /// the record ([`Step::PromptSwitch`]): two CPUs stalled across each other.
    LateProbePrompt { probe: usize, switch: usize },
    /// T7 with T5: the CID release of an exit before the event at `at`, while the switches
    /// into the mm recorded before it (up to [`IN_FLIGHT`], the first `n` of `switches`) had
    /// not run their CID steps yet: an owner-mode fixup walk the release starts waits for
    /// each (it takes their CPUs' rq locks).
    ExitInFlight {
        at: usize,
        exit: EarlyExit,
        switches: [usize; IN_FLIGHT],
        n: usize,
    },
    /// Before the event at `at` (a migration from `cpu`, or the first event after `cpu`'s last
    /// record before its switch to `tid`, a task of the mm): `__schedule` had made `tid`
    /// `rq->curr` there already, so a migration's `sched_mm_cid_migrate_to` from `cpu` after it
    /// found the mm in use on `cpu` and stole nothing.
    CurrEarly { at: usize, cpu: u16, tid: Tid },
    /// A `cid_remote_clear` probe at this index whose CPU stalled after unsetting the slot,
    /// before `__mm_cid_put`: the CID stayed taken until that CPU's next record.
    HeldClear(usize),
    /// With the switch probe: the CID step of `cpu`'s pending switch ran right before the
    /// event at `at` (between the switch record and its `cid_switch_done`).
    SwitchStepAt { at: usize, cpu: u16 },
    /// An owner-mode walk's visit at its `cid_task_lock` probe `probe` after all, where the
    /// plain replay ran it at the walker CPU's next record (the CPU stalled after the visit,
    /// not before it: the stall's other end); with `switch`, the visited task's switch record
    /// there ran its CID step at the record too ([`Step::PromptSwitch`]: its CPU stalled
    /// before `finish_task_switch`).
    VisitAtProbe { probe: usize, switch: Option<usize> },
    /// A probed thread clone (`child`, its `cid_fork` probe at `probe`, its fork record at
    /// `record`) whose futex hash was sized at its record, for the threads left then: its
    /// vCPU stalled after the probe while threads of the mm exited, and
    /// `futex_hash_allocate_default` runs after `copy_mm` (docs/models.md §2.3).
    FutexSizedAtRecord {
        probe: usize,
        record: usize,
        child: Tid,
    },
    /// [`Step::CurrEarly`] for each of the first `n` of `at` (a wave of migrations whose
    /// source CPUs stalled inside `__schedule` together: one alone leaves the others' steals).
    CurrEarlies {
        at: [(usize, u16, Tid); STEP_CANDIDATES],
        n: usize,
    },
}

/// Switches in flight an [`Step::ExitInFlight`] defers at most.
const IN_FLIGHT: usize = 4;

impl Step {
    /// The first event the step changes.
    pub(super) fn start(self) -> usize {
        match self {
            Step::DeferredSwitch(s)
            | Step::PromptSwitch(s)
            | Step::LateProbe(s)
            | Step::EarlyPut(s)
            | Step::LatePut(s)
            | Step::PromptWake(s)
            | Step::LateEnqueue(s)
            | Step::HeldClear(s) => s,
            Step::EarlyExit { at, .. }
            | Step::EarlyFork { at, .. }
            | Step::WalkMark { at, .. }
            | Step::FutexPut { at, .. }
            | Step::CurrEarly { at, .. }
            | Step::SwitchStepAt { at, .. } => at,
            Step::LatePutBy { exit, .. } => exit,
            Step::WakeBy { wake, .. } => wake,
            Step::LatePuts { at, n } | Step::DeferredSwitches { at, n } => {
                at[..n].iter().copied().min().unwrap_or(0)
            }
            Step::PromptWakes(a, b) => a.min(b),
            Step::WakeThenLate { prompt, late } => prompt.min(late),
            Step::FutexPutDeferring { at, switch, .. } => at.min(switch),
            Step::FutexPutWaking { at, wake, .. } => at.min(wake),
            Step::LateProbePrompt { probe, switch } => probe.min(switch),
            Step::LateProbeBefore { probe, .. }
            | Step::ProbeAtResume { probe, .. }
            | Step::FutexSizedAtRecord { probe, .. } => probe,
            Step::VisitAtProbe { probe, switch } => switch.map_or(probe, |s| s.min(probe)),
            Step::CurrEarlies { at, n } => at[..n].iter().map(|a| a.0).min().unwrap_or(0),
            Step::ExitInFlight {
                switches, n, at, ..
            }
            | Step::WalkMarkDeferring {
                switches, n, at, ..
            } => switches[..n].iter().copied().min().unwrap_or(at).min(at),
        }
    }

    /// Where the search's "smallest change first" order puts the step: its start, but a walk
    /// mark with switches deferred beside the plain mark of the same count (it is the same
    /// walk's progress, the fewest visits first).
    pub(super) fn order(self) -> usize {
        match self {
            Step::WalkMarkDeferring { at, .. } => at,
            _ => self.start(),
        }
    }

    pub(super) fn set(self, p: &mut Placements) {
        match self {
            Step::EarlyFork { at, fork } => {
                for v in p.early_forks.values_mut() {
                    v.retain(|f| f.child != fork.child);
                }
                p.early_forks.entry(at).or_default().push(fork);
            }
            Step::DeferredSwitch(s) => {
                p.deferred_switches.insert(s);
            }
            Step::EarlyPut(s) => {
                p.early_puts.insert(s);
            }
            Step::LatePut(s) => {
                p.late_puts.insert(s);
            }
            Step::LatePuts { at, n } => p.late_puts.extend(at[..n].iter().copied()),
            Step::LatePutBy { exit, tid, at } => {
                p.late_puts.insert(exit);
                p.late_puts_by.entry(at).or_default().push(tid);
            }
            Step::DeferredSwitches { at, n } => p.deferred_switches.extend(at[..n].iter().copied()),
            Step::FutexPut { at, mm } => p.futex_puts.entry(at).or_default().push(mm),
            Step::FutexPutDeferring { at, mm, switch } => {
                p.futex_puts.entry(at).or_default().push(mm);
                p.deferred_switches.insert(switch);
            }
            Step::FutexPutWaking {
                at, mm, tid, by, ..
            } => {
                p.futex_puts.entry(at).or_default().push(mm);
                p.wakes_by.entry(by).or_default().push(tid);
            }
            Step::PromptWake(s) => {
                p.prompt_wakes.insert(s);
            }
            Step::LateEnqueue(s) => {
                p.late_enqueues.insert(s);
            }
            Step::WakeBy { wake, tid, at } => {
                p.wakes_by.entry(at).or_default().push(tid);
                p.held_wakes.insert(wake, at);
            }
            Step::PromptWakes(a, b) => {
                p.prompt_wakes.insert(a);
                p.prompt_wakes.insert(b);
            }
            Step::WakeThenLate { prompt, late } => {
                p.prompt_wakes.insert(prompt);
                p.late_enqueues.insert(late);
            }
            Step::EarlyExit { at, exit } => p.early_exits.entry(at).or_default().push(exit),
            Step::ExitInFlight {
                at,
                exit,
                switches,
                n,
            } => {
                p.early_exits.entry(at).or_default().push(exit);
                p.deferred_switches.extend(switches[..n].iter().copied());
            }
            Step::WalkMark { at, done } => {
                let m = p.walk_marks.entry(at).or_insert(0);
                *m = (*m).max(done);
            }
            Step::WalkMarkDeferring {
                at,
                done,
                switches,
                n,
            } => {
                let m = p.walk_marks.entry(at).or_insert(0);
                *m = (*m).max(done);
                p.deferred_switches.extend(switches[..n].iter().copied());
            }
            Step::PromptSwitch(s) => {
                p.prompt_switches.insert(s);
            }
            Step::LateProbe(s) => {
                p.late_probes.insert(s, None);
            }
            Step::LateProbeBefore { probe, at } => {
                p.late_probes.insert(probe, Some(at));
            }
            Step::ProbeAtResume { probe, at } => {
                p.late_probes.insert(probe, Some(at));
                p.resumed_probes.insert(probe);
            }
            Step::LateProbePrompt { probe, switch } => {
                p.late_probes.insert(probe, None);
                p.prompt_switches.insert(switch);
            }
            Step::HeldClear(s) => {
                p.held_clears.insert(s);
            }
            Step::FutexSizedAtRecord { child, .. } => {
                p.futex_sized_at_record.insert(child);
            }
            Step::VisitAtProbe { probe, switch } => {
                p.late_probes.remove(&probe);
                p.stalled_visits.remove(&probe);
                if let Some(s) = switch {
                    p.prompt_switches.insert(s);
                }
            }
            Step::SwitchStepAt { at, cpu } => p.switch_steps_at.entry(at).or_default().push(cpu),
            Step::CurrEarly { at, cpu, tid } => {
                p.early_currs.entry(at).or_default().push((cpu, tid))
            }
            Step::CurrEarlies { at, n } => {
                for &(a, cpu, tid) in &at[..n] {
                    p.early_currs.entry(a).or_default().push((cpu, tid));
                }
            }
        }
    }
}

/// What the candidates of a disagreement are drawn from: the capture and the placements the
/// search has accepted so far.
pub(super) struct StepSource<'a> {
    /// The capture's events.
    pub events: &'a EventsAt<'a>,
    pub policy: PolicyKind,
    pub exits: &'a [ExitWindow],
    pub next_on_cpu: &'a NextOnCpu,
    pub found: &'a Placements,
}

impl StepSource<'_> {
    /// Event `j`, if the capture has one.
    pub(super) fn ev(&self, j: usize) -> Option<crate::events::Event> {
        self.events.get(j)
    }

    /// The CID the update at event `i` reports (`None`: event `i` is no update).
    pub(super) fn reported_cid(&self, i: usize) -> Option<i32> {
        match self.ev(i)?.kind {
            EventKind::RseqUpdate { mm_cid, .. } => Some(mm_cid),
            _ => None,
        }
    }

    /// How the CID the update at event `i` reports compares with the model's CID of its task
    /// `tid` (`Greater`: above the model's); `None` when event `i` is no update or the model
    /// gives the task no CID.
    pub(super) fn update_vs_model(
        &self,
        r: &Replayer,
        i: usize,
        tid: Tid,
    ) -> Option<std::cmp::Ordering> {
        Some(self.reported_cid(i)?.cmp(&r.engine.task_cid(tid)?))
    }

    /// The migrations (wakeups placing a task, as `sched_migrate_task` records them) within
    /// [`SEARCH_LOOKBACK`] before event `i`, latest first: (event, task, from CPU, to CPU).
    pub(super) fn migrations_before(
        &self,
        i: usize,
    ) -> impl Iterator<Item = (usize, Tid, u16, u16)> + '_ {
        (i.saturating_sub(SEARCH_LOOKBACK)..i)
            .rev()
            .filter_map(move |j| match self.ev(j)?.kind {
                EventKind::SchedMigrateTask {
                    tid,
                    orig_cpu,
                    dest_cpu,
                } => Some((j, tid, orig_cpu, dest_cpu)),
                _ => None,
            })
    }

    /// The disagreeing task's switch-in: the last switch to `tid` on `cpu` before event `i`
    /// (within [`SEARCH_LOOKBACK`]).
    pub(super) fn switch_in(&self, i: usize, (cpu, tid): (u16, Tid)) -> Option<usize> {
        (i.saturating_sub(SEARCH_LOOKBACK)..i).rev().find(|&j| {
            self.events.get(j).is_some_and(|e| {
                e.cpu == cpu
                    && matches!(e.kind, EventKind::SchedSwitch { next_tid, .. } if next_tid == tid)
            })
        })
    }

    /// T5 for the disagreeing update at event `i`: [`Step::DeferredSwitch`] of its task's own
    /// switch-in (not yet deferred), where a switch into `mm` on another CPU is recorded
    /// before this CPU's next record and so may have taken a CID first. Under TCG a vCPU can
    /// stall between `sched_switch` and `switch_mm_cid` while others go on (a fresh 6.18.15
    /// 48-vCPU `workers` boot: 465 switched in on CPU 11 at 11.412371, 467 on CPU 13 at
    /// 11.412983; 465's first update, at 11.418339, reports 7 and 467's 6).
    pub(super) fn own_switch_late(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Option<Step> {
        let sw = self.switch_in(i, (cpu, tid))?;
        if r.untraced.probed.switch || self.found.deferred_switches.contains(&sw) {
            return None;
        }
        let next = self.next_on_cpu.get(sw)?;
        (sw + 1..next)
            .any(|j| {
                self.ev(j).is_some_and(|e| {
                    e.cpu != cpu
                        && matches!(e.kind, EventKind::SchedSwitch { next_tid, .. }
                            if r.task_mm(next_tid) == Some(mm))
                })
            })
            .then_some(Step::DeferredSwitch(sw))
    }

    /// T5/T6/T1 candidates for the disagreeing update of `tid` on `cpu` (event `i`).
    pub(super) fn step_candidates(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        let Some(sw) = self.switch_in(i, (cpu, tid)) else {
            return Vec::new();
        };
        let back = sw.saturating_sub(SEARCH_LOOKBACK)..sw;
        let p = &self.found;
        // T5: a switch of another task of the mm on another CPU whose CID step ran late
        let switches = back.clone().rev().filter(|&j| {
            self.ev(j).is_some_and(|e| match e.kind {
                EventKind::SchedSwitch { next_tid, .. } => {
                    e.cpu != cpu
                        && !p.deferred_switches.contains(&j)
                        && self.next_on_cpu.get(j).is_some_and(|q| q > sw)
                        && r.task_mm(next_tid) == Some(mm)
                }
                _ => false,
            })
        });
        // T6: an exit of the mm that records nothing more before the observing switch-in but
        // (for a late put) switch-outs in its exit path short of the last: its exit_mm may
        // have come before a joiner's wake, or only after the switch-in
        let quiet_exit = |j: usize, x: Tid, pauses: bool| {
            !(j + 1..sw).any(|q| {
                self.ev(q).is_some_and(|e| {
                    e.tid == x
                        && !(pauses
                            && matches!(e.kind, EventKind::SchedSwitch { prev_tid, prev_state, .. }
                                if prev_tid == x && !prev_state.dead()))
                })
            })
        };
        let exits_of_mm = |pauses: bool| -> Vec<usize> {
            back.clone()
                .rev()
                .filter(|&j| {
                    self.ev(j).is_some_and(|e| match e.kind {
                        EventKind::SchedProcessExit { tid: x } => {
                            r.task_mm(x) == Some(mm) && quiet_exit(j, x, pauses)
                        }
                        _ => false,
                    })
                })
                .take(STEP_CANDIDATES)
                .collect()
        };
        let early_puts = exits_of_mm(false)
            .into_iter()
            .filter(|j| !p.early_puts.contains(j));
        let late: Vec<usize> = exits_of_mm(true)
            .into_iter()
            .filter(|j| !p.late_puts.contains(j))
            .collect();
        // several threads exiting together (a burst's end) are all still before mmput
        let all_late = (late.len() > 1).then(|| {
            let mut js = [0; STEP_CANDIDATES];
            js[..late.len()].copy_from_slice(&late);
            Step::LatePuts {
                at: js,
                n: late.len(),
            }
        });
        // lazy-compact: a late put that ended before the switch-in still counts when an
        // allocation of the mm ran while it was held: `mm_cid_get` shrinks `max_nr_cid` to
        // min(nr_cpus_allowed, mm_users) (`__mm_cid_try_get`, sched.h @6.18.15 l.3634-3662)
        // and only expands it again one CID at a time, so the mm_users that allocation saw
        // decides where a later one starts (a fresh 6.18.15 48-vCPU churn boot: 488's exit at
        // 13.034243 held past 495's switch-in at 13.040274, so 497 expands to 4, not 3, at
        // 13.054553). A higher floor and limit give the same or a higher CID (but for the
        // first-zero fallback), so only an update above the model's CID is tried this way,
        // and only the nearest such exit (any later allocation may shrink `max_nr_cid` again;
        // one candidate, replayed from before its exit record, bounds the cost)
        let above = self.update_vs_model(r, i, tid) == Some(std::cmp::Ordering::Greater);
        let held = (above && self.policy != PolicyKind::OwnerMode)
            .then(|| {
                self.held_across_allocation(r, back.clone(), sw, mm)
                    .into_iter()
                    .find(|j| !p.late_puts.contains(j) && !late.contains(j))
            })
            .flatten();
        // a late put accepted before whose `exit_mm` is still pending at the switch-in: it
        // may have run in between (the exiting CPU resumed before the task's next record; a
        // fresh 6.18.15 boot of the seed kernel: 507's exit record at 8.033933, its switch-out
        // only at 8.036797, 508's allocation at 8.035605 saw it, 509's at 8.036090 did not)
        let by: Vec<Step> = back
            .clone()
            .rev()
            .filter(|j| p.late_puts.contains(j))
            .filter_map(|j| match self.ev(j)?.kind {
                EventKind::SchedProcessExit { tid: x }
                    if r.task_mm(x) == Some(mm)
                        && quiet_exit(j, x, true)
                        && !p.late_puts_by.values().any(|v| v.contains(&x)) =>
                {
                    Some(Step::LatePutBy {
                        exit: j,
                        tid: x,
                        at: sw,
                    })
                }
                _ => None,
            })
            .take(STEP_CANDIDATES)
            .collect();
        let late_puts = late
            .clone()
            .into_iter()
            .map(Step::LatePut)
            .chain(all_late)
            .chain(held.map(Step::LatePut))
            .chain(by);
        // a step a probe marks ran there (docs/models.md §5.6): no candidate moves it
        let probed = r.untraced.probed;
        let switches: Vec<usize> = if probed.switch {
            Vec::new()
        } else {
            switches.take(STEP_CANDIDATES).collect()
        };
        // with probes: a switch into the mm on another CPU whose step ran at its record, or
        // a probed step of the mm that ran only at its CPU's next record (the two ends of a
        // stall of that CPU)
        let mut steps: Vec<Step> = Vec::new();
        // (the disagreeing task's own switch, its step placed by the search: not yet)
        let own = probed.switch && !p.prompt_switches.contains(&sw);
        if probed.any() {
            let flips = self.probe_flips(r, (sw, i), (cpu, tid), mm);
            // the disagreeing task's own switch ran its step at the record, alone or with a
            // probed step of another CPU that ran late
            if own {
                steps.push(Step::PromptSwitch(sw));
            }
            let pairs: Vec<Step> = flips
                .iter()
                .filter_map(|f| match *f {
                    Step::LateProbe(probe) if own => {
                        Some(Step::LateProbePrompt { probe, switch: sw })
                    }
                    _ => None,
                })
                .collect();
            steps.extend(flips);
            steps.extend(pairs);
            steps.extend(self.visits_at_probe(r, sw, mm));
        }
        let futex = r.engine.futex_ref_held(mm) && !probed.futex_put;
        steps.extend(switches.iter().copied().map(Step::DeferredSwitch));
        if switches.len() > 1 {
            let mut at = [0; STEP_CANDIDATES];
            at[..switches.len()].copy_from_slice(&switches);
            steps.push(Step::DeferredSwitches {
                at,
                n: switches.len(),
            });
        }
        // T5, a switch already deferred to its CPU's next record: its CID step ran before the
        // disagreeing switch-in (anywhere in its window; the latest end that can matter)
        if !probed.switch {
            let held = back
                .clone()
                .rev()
                .filter(|j| p.deferred_switches.contains(j))
                .filter_map(|j| {
                    let e = self.ev(j)?;
                    let EventKind::SchedSwitch { next_tid, .. } = e.kind else {
                        return None;
                    };
                    (e.cpu != cpu
                        && self.next_on_cpu.get(j).is_some_and(|q| q > sw)
                        && r.task_mm(next_tid) == Some(mm))
                    .then_some(Step::SwitchStepAt { at: sw, cpu: e.cpu })
                })
                .take(STEP_CANDIDATES);
            steps.extend(held);
        }
        if !probed.mm_put {
            steps.extend(early_puts.map(Step::EarlyPut).chain(late_puts));
        }
        if !probed.migrate_to {
            steps.extend(self.migration_candidates(r, (back.start, i), cpu, mm));
        }
        // the futex hash's reference was gone by the switch-in (alone, or with a switch of
        // the mm whose CID step ran late)
        if futex {
            steps.push(Step::FutexPut { at: sw, mm });
            steps.extend(switches.iter().map(|&switch| Step::FutexPutDeferring {
                at: sw,
                mm,
                switch,
            }));
        }
        if !probed.exit {
            let observed = self.reported_cid(i).filter(|&c| c >= 0);
            steps.extend(self.exit_candidates(r, sw, (tid, observed), mm));
            steps.extend(self.in_flight_candidates(r, (sw, i), tid, mm));
        }
        // T3: a lazy walk in progress had visited more tasks by the switch-in's step (the fewest
        // first); with the switch probe the switch's CID step runs by its `cid_switch_done`
        // (the CPU's next record), which a walk begun after the switch record can precede
        if let Some((done, tasks)) = r.untraced.lazy_walk(mm) {
            let (switches, n) = self.in_flight_at_walk(r, sw, tid, mm);
            for k in done + 1..=tasks {
                steps.push(Step::WalkMark { at: sw, done: k });
                if n > 0 {
                    steps.push(Step::WalkMarkDeferring {
                        at: sw,
                        done: k,
                        switches,
                        n,
                    });
                }
            }
            let step = (sw + 1..=i)
                .find(|&q| self.events.get(q).is_some_and(|e| e.cpu == cpu))
                .filter(|_| probed.switch);
            if let Some(step) = step {
                steps.extend((done + 1..=tasks).map(|done| Step::WalkMark { at: step, done }));
            }
        }
        // (last: where another step explains as much, that one is kept)
        steps.extend(self.early_currents(r, (sw, i), mm));
        // (last: where the switch's step at its record or at its probe explains as much, so
        // does one of these, and those two ends are the plainer account)
        if own {
            steps.extend(self.own_step_between(r, (sw, i), cpu, mm));
        }
        steps
    }
}
