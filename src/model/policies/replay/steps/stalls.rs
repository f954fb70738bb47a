//! The search's candidates where a vCPU stalled (docs/models.md §5.6): a probed step that ran
//! at the other end of a stall of its CPU, a switch whose CID step ran at its record, a
//! switch whose `rq->curr` was set long before its record, and a remote wakeup's enqueue run
//! while its woken CPU stalled (§5.3 T1).

use super::{SEARCH_LOOKBACK, STEP_CANDIDATES, Step, StepSource};
use crate::events::{EventKind, MigrateState, Probe, Tid};
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;

impl StepSource<'_> {
    /// T5 with the stall ended before the disagreeing switch-in: switches into `mm` on CPUs
    /// other than the disagreeing update's whose CPU's next record comes before that switch-in
    /// `sw` but after the disagreeing task's last record before it (it held no CID from then
    /// on), with a record of the mm's steps on another CPU in between (an allocation, a
    /// release, an exit, a migration of one of its tasks): the switch's CID step, deferred to
    /// that next record, ran after it and saw what it left. A fresh 6.18.15 48-vCPU `churn`
    /// boot: 474 is switched in on CPU 9 at 41.983371 and CPU 9 records nothing until its
    /// tick at 41.989809; 473's exit on CPU 8 freed its 1 at 41.988964 first, so 474 got 1,
    /// not the 2 that main found free on CPU 46 at 41.991256. Nearest first; a fallback (the
    /// search tries them only when no other candidate explains the update).
    pub(in crate::model::policies::replay) fn short_stalls(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if r.untraced.probed.switch {
            return Vec::new();
        }
        let Some((sw, left)) = self.switch_in_and_left(i, (cpu, tid)) else {
            return Vec::new();
        };
        let back = |to: usize| (to.saturating_sub(SEARCH_LOOKBACK)..to).rev();
        // a record of another CPU than `c` that shows a step of the mm
        let mm_step = |k: usize, c: u16| {
            self.ev(k).is_some_and(|e| {
                e.cpu != c
                    && match e.kind {
                        EventKind::SchedSwitch {
                            prev_tid, next_tid, ..
                        } => r.in_mm(prev_tid, mm) || r.in_mm(next_tid, mm),
                        EventKind::SchedMigrateTask { tid, .. }
                        | EventKind::SchedProcessExit { tid } => r.in_mm(tid, mm),
                        EventKind::Tick | EventKind::TickStop { .. } => false,
                        _ => r.in_mm(e.tid, mm),
                    }
            })
        };
        let p = &self.found;
        back(sw)
            .filter(|&j| {
                self.ev(j).is_some_and(|e| match e.kind {
                    EventKind::SchedSwitch { next_tid, .. } => {
                        e.cpu != cpu
                            && !p.deferred_switches.contains(&j)
                            && r.in_mm(next_tid, mm)
                            && self.next_on_cpu.get(j).is_some_and(|q| {
                                q < sw && q > left && (j + 1..q).any(|k| mm_step(k, e.cpu))
                            })
                    }
                    _ => false,
                })
            })
            .take(STEP_CANDIDATES)
            .map(Step::DeferredSwitch)
            .collect()
    }

    /// The disagreeing task's switch-in before event `i` and its last record before that (its
    /// switch-out: from then on it held no CID a step elsewhere could have moved).
    fn switch_in_and_left(&self, i: usize, (cpu, tid): (u16, Tid)) -> Option<(usize, usize)> {
        let back = |to: usize| (to.saturating_sub(SEARCH_LOOKBACK)..to).rev();
        let sw = self.switch_in(i, (cpu, tid))?;
        let left = back(sw).find(|&j| {
            self.ev(j).is_some_and(|e| {
                e.tid == tid
                    || matches!(e.kind, EventKind::SchedSwitch { prev_tid, .. } if prev_tid == tid)
            })
        })?;
        Some((sw, left))
    }

    /// T1 with a stall of dst: remote wakeups of the mm queued on an idle dst's wakelist whose
    /// source CPU switched to another task of the mm before dst recorded anything: dst's vCPU
    /// may have enqueued the task (`sched_ttwu_pending` → `sched_mm_cid_migrate_to`) while that
    /// task ran on the source, then stalled before its switch record, so the steal found the
    /// source's CID in use and moved none ([`Step::WakeBy`], right after the source's switch).
    /// A fresh 6.18.15 48-vCPU `workers` boot: 494 (CID 30 on CPU 41) is woken to idle CPU 0 at
    /// 30.639039, CPU 41 switches to 483 at 30.639144 (483 reports 30), and CPU 0 records
    /// nothing until 494's switch-in at 30.700948, where 494 reports 45 (an expansion), not
    /// the 30 a steal at that record would have brought along. Those to the disagreeing CPU
    /// first, then the others, nearest first, those whose dst's next record comes after the
    /// disagreeing task's last record before its switch-in; a fallback like [`Self::short_stalls`].
    pub(in crate::model::policies::replay) fn wakes_by(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if r.untraced.probed.migrate_to {
            return Vec::new();
        }
        let Some((_, left)) = self.switch_in_and_left(i, (cpu, tid)) else {
            return Vec::new();
        };
        let p = &self.found;
        let (mut out, mut others) = (Vec::new(), Vec::new());
        for (j, x, orig_cpu, dest_cpu) in self.migrations_before(i) {
            if out.len() + others.len() >= 2 * STEP_CANDIDATES {
                break;
            }
            if orig_cpu == dest_cpu
                || !r.in_mm(x, mm)
                || p.wake_placed(x)
                || p.prompt_wakes.contains(&j)
                || p.late_enqueues.contains(&j)
            {
                continue;
            }
            // dst's next record (where the replay runs the queued enqueue; after dst's idle
            // switch that holds it) and the source's switch into another task of the mm
            // before it
            let from = r.untraced.enqueue_not_before(j);
            let Some(n) = (from + 1..i + 1).find(|&q| {
                self.ev(q).is_some_and(|e| {
                    e.cpu == dest_cpu && !matches!(e.kind, EventKind::TickStop { .. })
                })
            }) else {
                continue;
            };
            let switch = (from + 1..n).find(|&q| {
                self.ev(q).is_some_and(|e| {
                    e.cpu == orig_cpu
                        && matches!(e.kind, EventKind::SchedSwitch { next_tid, .. }
                            if next_tid != x && r.in_mm(next_tid, mm))
                })
            });
            // (as for a short stall: dst's enqueue pending after the disagreeing task left)
            let Some(q) = switch.filter(|&q| q + 1 < n && n > left) else {
                continue;
            };
            let step = Step::WakeBy {
                wake: j,
                tid: x,
                at: q + 1,
            };
            if dest_cpu == cpu && x == tid {
                out.push(step);
            } else {
                others.push(step);
            }
        }
        out.extend(others);
        out.truncate(STEP_CANDIDATES);
        out
    }

    /// T1 with a stall of dst, the source gone idle: remote wakeups of the mm still queued on
    /// an idle dst's wakelist at the disagreeing update `i` (dst records nothing but a
    /// `tick_stop` until after it), whose source CPU switched from a task of the mm to idle or
    /// a task of another mm after the wakeup's record and before the disagreeing task's
    /// switch-in `sw`. dst's vCPU may have run the IPI's enqueue (`sched_ttwu_pending` →
    /// `activate_task` → `sched_mm_cid_migrate_to`, `kernel/sched/core.c` @6.18.15
    /// l.3790–3825, l.2137) right after that switch and stalled before recording anything: the
    /// steal then found the source's CID unused (`src_rq->curr` not of the mm, l.10528–10532,
    /// l.10554–10593) and took it, moving it to dst (l.10651–10654) or, with dst's slot set and
    /// `mm_users` below the allowed CPUs, dropping it (l.10633–10637, l.10647–10650), before
    /// the disagreeing task's allocation. [`Step::WakeBy`] right after that switch: within the
    /// enqueue's window (after the wakeup's record, before dst's next record). A fresh 6.18.15
    /// 24-vCPU `workers` boot: 295 (CID 1 on CPU 13) is woken from CPU 13 to idle CPU 16 at
    /// 13.400612; CPU 13 runs 311 (which reports 1) and goes idle at 13.401306; CPU 16 records
    /// nothing until 13.419702; 301 reports 1 at 13.415000 (dropped by the steal), not the 6
    /// the model had, and 311 then 6. Also right after the source's last such switch before
    /// `sw` when the source ran the mm again in between (a fresh 48-vCPU boot: 473 woken from
    /// CPU 15 to idle CPU 16 at 34.608288, 472 reports CPU 15's 9 at 34.608597 and 34.633956,
    /// and 25 at 34.653131: the steal came after 472's second switch-out, 34.634381). Nearest
    /// first; a fallback like [`Self::short_stalls`].
    pub(in crate::model::policies::replay) fn wakes_after_source_left(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if r.untraced.probed.migrate_to {
            return Vec::new();
        }
        let Some(sw) = self.switch_in(i, (cpu, tid)) else {
            return Vec::new();
        };
        let p = &self.found;
        let queued: Vec<(u16, Tid)> = r
            .untraced
            .queued_wakes()
            .filter(|&(_, x)| r.in_mm(x, mm) && !p.wake_placed(x))
            .collect();
        if queued.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut seen: Vec<Tid> = Vec::new();
        for (j, x, orig_cpu, dest_cpu) in self.migrations_before(i) {
            if out.len() >= STEP_CANDIDATES || seen.len() >= queued.len() {
                break;
            }
            // the wakeup whose enqueue is still queued: its task's last migration, recorded
            // before the switch-in
            if seen.contains(&x) || !queued.contains(&(dest_cpu, x)) {
                continue;
            }
            seen.push(x);
            if j >= sw || orig_cpu == dest_cpu {
                continue;
            }
            // the source's next switch away from the mm, before the switch-in (and after
            // dst's idle switch that holds the enqueue); then its last one before the
            // switch-in, when the source ran the mm again in between (the enqueue came after
            // that: a steal at the first would have taken the CID the source's task then
            // found in its slot)
            let from = r.untraced.enqueue_not_before(j);
            let away = |q: &usize| {
                self.ev(*q).is_some_and(|e| {
                    e.cpu == orig_cpu
                        && matches!(e.kind, EventKind::SchedSwitch { prev_tid, next_tid, .. }
                            if r.in_mm(prev_tid, mm) && !r.in_mm(next_tid, mm))
                })
            };
            let first = (from + 1..sw).find(away);
            let last = first.and_then(|f| (f + 1..sw).rev().find(away));
            for q in first.into_iter().chain(last) {
                out.push(Step::WakeBy {
                    wake: j,
                    tid: x,
                    at: q + 1,
                });
            }
        }
        out
    }

    /// [`Self::wakes_after_source_left`] from the disagreeing update's own CPU (lazy-compact
    /// and resume-batch): the disagreeing switch-in found that CPU's slot set in the model, and
    /// `mm_cid_get` returns a set slot's CID as it is (`kernel/sched/sched.h` @6.18.15
    /// l.3754–3758), whatever `mm_users` or `max_nr_cid` say; only a step that emptied the slot
    /// before the switch-in gives another CID there, and a queued wakeup's steal from that CPU
    /// (`__sched_mm_cid_migrate_from_try_steal_cid`, `kernel/sched/core.c` @6.18.15
    /// l.10554–10593) is one. Tried before the forks of the mm (a fork's step changes only
    /// `mm_users`, which a set slot does not read). A fresh 6.18.15 24-vCPU `workers` boot:
    /// 303 (CID 7 on CPU 22) is woken from idle CPU 22 to idle CPU 1 at 13.464391, CPU 22
    /// runs 304 (which reports 7) until 13.465006, and CPU 1 records nothing until 13.542309;
    /// 304's switch-in on CPU 22 at 13.536911 reports 10, 303 then 7 on CPU 1. Then the
    /// other way: a steal from that CPU the replay ran at an interrupt of an idle dst, held
    /// past the switch-in ([`Self::wakes_held_past_irqs`]).
    pub(in crate::model::policies::replay) fn steals_from_cpu(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if self.policy == PolicyKind::OwnerMode {
            return Vec::new();
        }
        let from_cpu = |j: usize| {
            self.ev(j).is_some_and(|e| {
                matches!(e.kind, EventKind::SchedMigrateTask { orig_cpu, .. } if orig_cpu == cpu)
            })
        };
        self.wakes_after_source_left(r, i, (cpu, tid), mm)
            .into_iter()
            .filter(|s| matches!(*s, Step::WakeBy { wake, .. } if from_cpu(wake)))
            .chain(self.wakes_held_past_irqs(r, i, (cpu, tid), mm))
            .collect()
    }

    /// With the switch probe, the disagreeing task's own switch (record `sw`, CPU `cpu`) whose
    /// CPU stalled before its `cid_switch_done`: its CID step ran in between, after the steps
    /// of the mm's other switches that took the CIDs below the one it reported (`obs`) and
    /// before those that took the ones above. Right after the switch-in (a `cid_switch_done`
    /// in that window) of the task whose next update reports `obs` - 1, and right before that
    /// of the task whose next one reports `obs` + 1 ([`Step::SwitchStepAt`]). A fresh 6.18.15
    /// 48-vCPU `workers` boot: 487 is switched in on CPU 34 at 13.093682 and its
    /// `cid_switch_done` comes at 13.122457; it reports 27, 485 (switched in at 13.109870)
    /// 26 and 490 (13.111588) 28, where the model's step at the probe gave 487 34 and at the
    /// record 23.
    pub(in crate::model::policies::replay) fn own_step_between(
        &self,
        r: &Replayer,
        (sw, i): (usize, usize),
        cpu: u16,
        mm: MmId,
    ) -> Vec<Step> {
        let Some(mm_cid) = self.reported_cid(i) else {
            return Vec::new();
        };
        let obs = i64::from(mm_cid);
        // (the own switch's `cid_switch_done`: its CPU's next record)
        let Some(done) = self.next_on_cpu.get(sw).filter(|&q| q < i) else {
            return Vec::new();
        };
        // (one pass: each switch-in of the window, paired with its task's next update)
        let mut open: FxHashMap<Tid, usize> = FxHashMap::default();
        let mut out = Vec::new();
        let end = (done + 2 * SEARCH_LOOKBACK).min(self.events.len());
        for q in sw + 1..end {
            let Some(e) = self.ev(q) else { break };
            match e.kind {
                EventKind::Probe {
                    probe: Probe::SwitchDone,
                    ..
                } if q < done && e.cpu != cpu && r.task_mm(e.tid) == Some(mm) => {
                    open.insert(e.tid, q);
                }
                EventKind::RseqUpdate { mm_cid, .. } => {
                    let Some(at) = open.remove(&e.tid) else {
                        continue;
                    };
                    let got = i64::from(mm_cid);
                    if got == obs - 1 {
                        out.push(Step::SwitchStepAt { at: at + 1, cpu });
                    } else if got == obs + 1 {
                        out.push(Step::SwitchStepAt { at, cpu });
                    }
                }
                _ => {}
            }
            if open.is_empty() && q >= done {
                break;
            }
        }
        out.truncate(2);
        out
    }

    /// The two ends of a stall (docs/models.md §5.6): switches into `mm` on CPUs other than
    /// `cpu` recorded before the switch-in `sw` whose `cid_switch_done` comes after it
    /// ([`Step::PromptSwitch`]), and probes of `mm`'s steps before `sw` whose CPU records
    /// nothing more until after it ([`Step::LateProbe`]); nearest first.
    pub(super) fn probe_flips(
        &self,
        r: &Replayer,
        (sw, i): (usize, usize),
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        let p = &self.found;
        // whether CPU c records nothing in (j, to]
        let quiet_until = |j: usize, to: usize, c: u16| {
            !(j + 1..=to).any(|q| self.ev(q).is_some_and(|e| e.cpu == c))
        };
        let quiet_until_sw = |j: usize, c: u16| quiet_until(j, sw, c);
        // the disagreeing task's switch-out of `cpu` after its update: a probed step that
        // ran only after it left (its CPU stalled past both) found the update's CID still
        // in `cpu`'s slot, and took it away from an idle CPU
        let left = (i + 1..(i + SEARCH_LOOKBACK).min(self.events.len())).find(|&q| {
            self.ev(q).is_some_and(|e| {
                e.cpu == cpu
                    && matches!(e.kind, EventKind::SchedSwitch { prev_tid, .. } if prev_tid == tid)
            })
        });
        let mut out = Vec::new();
        let mut switches = 0;
        let mut straddles = 0;
        // the probes of the mm's steps (`is`) recorded after the switch record j, before CPU
        // c's next record (its `cid_switch_done`), which itself comes before `sw`: the switch's
        // step may have run before or after each
        let straddled = |j: usize, c: u16, is: fn(Probe) -> bool| -> Vec<usize> {
            let Some(done) = (j + 1..sw).find(|&q| self.ev(q).is_some_and(|e| e.cpu == c)) else {
                return Vec::new();
            };
            (j + 1..done)
                .filter(|&q| {
                    self.ev(q).is_some_and(|e| {
                        matches!(e.kind, EventKind::Probe { probe, .. } if is(probe))
                            && r.task_mm(e.tid) == Some(mm)
                    })
                })
                .collect()
        };
        // a fork's `mmget`, an `mmput`: the mm's `mm_users` changes (7.x's `mm_cid.users`, which
        // sets `max_cids`, changes at `cid_fork` and `cid_exit`)
        let users_changes = |j: usize, c: u16| {
            straddled(j, c, |p| {
                matches!(p, Probe::MmPut | Probe::Fork | Probe::Exit)
            })
        };
        // 7.x: the mm's fixup walk ended (`cid_fork_done`: the flip to per-CPU mode,
        // `mm_cid_complete_transit`): run before the flip, the step of a switch in or out of
        // the mm saw the mode in TRANSIT (a schedout drops its transit CID then,
        // `mm_cid_schedout`)
        let walk_ends = |j: usize, c: u16| {
            self.policy == PolicyKind::OwnerMode
                && !straddled(j, c, |p| p == Probe::ForkDone).is_empty()
        };
        let mut probes = 0;
        let mut steals = 0;
        let mut resumes = 0;
        // a task preempted right after its probe at j (its next record is its own switch-out
        // as runnable): the index of its next switch-in
        let resumed_at = |j: usize, t: Tid| {
            let out = (j + 1..sw).find(|&q| {
                self.ev(q).is_some_and(|e| {
                    e.tid == t
                        || matches!(e.kind, EventKind::SchedSwitch { prev_tid, .. } if prev_tid == t)
                })
            })?;
            let preempted = self.ev(out).is_some_and(|e| {
                matches!(e.kind, EventKind::SchedSwitch { prev_tid, prev_state, .. }
                    if prev_tid == t && prev_state.runnable())
            });
            if !preempted {
                return None;
            }
            (out + 1..sw).find(|&q| {
                self.ev(q).is_some_and(
                    |e| matches!(e.kind, EventKind::SchedSwitch { next_tid, .. } if next_tid == t),
                )
            })
        };
        // whether another CPU records something between j and CPU c's next record (a stall of
        // c there can matter)
        let stalled_after = |j: usize, c: u16| {
            (j + 1..=sw)
                .find(|&q| self.ev(q).is_some_and(|e| e.cpu == c))
                .is_none_or(|q| q > j + 1)
        };
        for j in (sw.saturating_sub(SEARCH_LOOKBACK)..sw).rev() {
            if switches >= STEP_CANDIDATES
                && probes >= STEP_CANDIDATES
                && resumes >= STEP_CANDIDATES
                && steals >= STEP_CANDIDATES
            {
                break;
            }
            let Some(e) = self.ev(j) else { continue };
            if let EventKind::Probe {
                probe: Probe::MmPut,
                ..
            } = e.kind
                && resumes < STEP_CANDIDATES
                && !p.late_probes.contains_key(&j)
                && r.task_mm(e.tid) == Some(mm)
                && let Some(at) = resumed_at(j, e.tid)
            {
                out.push(Step::ProbeAtResume { probe: j, at });
                resumes += 1;
            }
            // 7.x: `sched_mm_cid_exit` takes `mm_cid.mutex` before it removes the user, so
            // exits that come together wait for each other there (spinning or asleep): the
            // release ran as late as right before the task's `sched_process_exit` record
            if let EventKind::Probe {
                probe: Probe::Exit,
                num,
                ..
            } = e.kind
                && self.policy == PolicyKind::OwnerMode
                && resumes < STEP_CANDIDATES
                && !p.late_probes.contains_key(&j)
            {
                let t = Probe::exiting_task(e.tid, num);
                let exit_record = (j + 1..j + SEARCH_LOOKBACK).find(|&q| {
                    self.ev(q).is_some_and(
                        |e| matches!(e.kind, EventKind::SchedProcessExit { tid } if tid == t),
                    )
                });
                if r.task_mm(t) == Some(mm)
                    && let Some(at) = exit_record
                {
                    out.push(Step::ProbeAtResume { probe: j, at });
                    resumes += 1;
                }
            }
            match e.kind {
                // (into the mm, or out of it: an owner-mode schedout in TRANSIT mode drops
                // the task's CID, `mm_cid_schedout`)
                EventKind::SchedSwitch {
                    next_tid, prev_tid, ..
                } if switches < STEP_CANDIDATES
                    && e.cpu != cpu
                    && r.untraced.probed.switch
                    && !p.prompt_switches.contains(&j)
                    && (r.task_mm(next_tid) == Some(mm) || r.task_mm(prev_tid) == Some(mm))
                    && quiet_until_sw(j, e.cpu) =>
                {
                    out.push(Step::PromptSwitch(j));
                    switches += 1;
                }
                // a switch into the mm whose CID step came before an mm_users change recorded
                // between it and its `cid_switch_done`: 6.13+'s `__mm_cid_try_get` shrinks
                // `max_nr_cid` to min(nr_cpus_allowed, mm_users) as it read it then
                EventKind::SchedSwitch {
                    next_tid, prev_tid, ..
                } if straddles < STEP_CANDIDATES
                    && sw != j
                    && r.untraced.probed.switch
                    && !p.prompt_switches.contains(&j) =>
                {
                    let into = r.task_mm(next_tid) == Some(mm);
                    let changes = if into {
                        users_changes(j, e.cpu)
                    } else {
                        Vec::new()
                    };
                    if !changes.is_empty() {
                        out.push(Step::PromptSwitch(j));
                        // (or between two of the changes: right after each, the last few)
                        out.extend(changes.iter().rev().take(STEP_CANDIDATES).map(|&q| {
                            Step::SwitchStepAt {
                                at: q + 1,
                                cpu: e.cpu,
                            }
                        }));
                        straddles += 1;
                    } else if (into || r.task_mm(prev_tid) == Some(mm)) && walk_ends(j, e.cpu) {
                        out.push(Step::PromptSwitch(j));
                        straddles += 1;
                    }
                }
                // beyond the nearest probes, a move's steal from the disagreeing CPU (its
                // `cid_migrate_to` reads `src`) whose CPU stalled after the probe: a later move
                // to that CPU then found its slot still set, and the switch-in there found it
                // emptied (`sched_mm_cid_migrate_to`, core.c @6.12.117 l.10356-10380)
                EventKind::Probe {
                    probe: Probe::MigrateTo,
                    num,
                    ptr,
                } if probes >= STEP_CANDIDATES
                    && steals < STEP_CANDIDATES
                    && MigrateState::from_ptr(ptr).src == Some(i32::from(cpu))
                    && !p.late_probes.contains_key(&j)
                    && r.task_mm(num) == Some(mm)
                    && stalled_after(j, e.cpu) =>
                {
                    out.push(Step::LateProbe(j));
                    steals += 1;
                }
                // (a probe of the disagreeing task's own CPU too: its step may have run only
                // at that CPU's next record, after what other CPUs did meanwhile)
                EventKind::Probe { probe, num, ptr }
                    if probes < STEP_CANDIDATES
                        && !p.late_probes.contains_key(&j)
                        && stalled_after(j, e.cpu) =>
                {
                    let task = if num == 0 { e.tid } else { num };
                    let of = match probe {
                        // (an owner-mode walk's visit of a task: its step follows the
                        // `task_rq_lock`; of a CPU: the walker's mm)
                        Probe::Exit | Probe::MigrateTo | Probe::SetCpus | Probe::TaskLock => {
                            r.task_mm(task)
                        }
                        Probe::MmPut | Probe::RqLock => r.task_mm(e.tid),
                        Probe::MmPutAsync => Some(mm),
                        _ => None,
                    };
                    // a remote clear: the slot went at the probe, the CID's bit only at the
                    // other end of the stall (`sched_mm_cid_remote_clear`, core.c @6.18.15
                    // l.10657-10711)
                    if probe == Probe::RemoteClear
                        && r.task_mm(e.tid) == Some(mm)
                        && !p.held_clears.contains(&j)
                        && quiet_until_sw(j, e.cpu)
                    {
                        out.push(Step::HeldClear(j));
                        probes += 1;
                    }
                    if of == Some(mm) {
                        out.push(Step::LateProbe(j));
                        // (its CPU silent past the switch-in: the step may have run anywhere
                        // before; right before the switch-in is what can explain it)
                        if quiet_until_sw(j, e.cpu) {
                            out.push(Step::LateProbeBefore { probe: j, at: sw });
                            // (a move's steal from the disagreeing CPU that ran while the
                            // disagreeing task was current there: it found the mm in use and
                            // left the slot, `t->last_mm_cid = -1`,
                            // `__sched_mm_cid_migrate_from_fetch_cid` and `_try_steal_cid`,
                            // core.c @6.18.15 l.10500-10560)
                            if probe == Probe::MigrateTo
                                && MigrateState::from_ptr(ptr).src == Some(i32::from(cpu))
                                && left.is_some_and(|l| l > sw + 1)
                            {
                                out.push(Step::LateProbeBefore {
                                    probe: j,
                                    at: sw + 1,
                                });
                            }
                            if let Some(left) = left
                                && quiet_until(j, left, e.cpu)
                            {
                                out.push(Step::LateProbeBefore {
                                    probe: j,
                                    at: left + 1,
                                });
                            }
                        }
                        probes += 1;
                    }
                }
                _ => {}
            }
        }
        out
    }
}
