//! Stages 6 and 8 of [`Replayer::apply`]: a recording task's own pending `exit_mm`, and each
//! record's own driver events (docs/models.md §5.1).

use super::Replayer;
use super::since::Since;
use crate::events::{CLONE_THREAD, CLONE_VM, Event, EventKind, Probe, Tid};
use crate::model::policies::engine::DriverEvent;

impl Replayer {
    /// Stage 6: `exit_mm` of a task that passed `sched_process_exit`, at its own next
    /// record: its futex wake of a joiner in the same mm comes first (recorded as a
    /// migration: the put is returned, to run after the record), then `mmput`; anything else
    /// it records comes after `mmput`.
    pub(super) fn own_exit_mm(&mut self, ev: &Event) -> Option<Tid> {
        let ts = ev.ts;
        let mut put_after = None;
        // (placed late, the put waits past a preemption or a sleep in the exit path, e.g.
        // exit_mm's mmap_read_lock: switched out but not dead, the task may be before mmput)
        let paused = matches!(ev.kind, EventKind::SchedSwitch { prev_tid, prev_state, .. }
            if prev_tid == ev.tid && !prev_state.dead());
        let waits = paused && self.exiting.get(&ev.tid).is_some_and(Option::is_some);
        if let Some(late) = (!waits).then(|| self.exiting.remove(&ev.tid)).flatten() {
            if let Some(record_ts) = late {
                self.untraced.late_put_done(ev.tid, record_ts, ts);
                if let Some(t) = self.engine.core.task_mut(ev.tid) {
                    t.exit_mm_held = false;
                }
            }
            let joiner = match ev.kind {
                EventKind::SchedMigrateTask { tid, .. } => {
                    let mm = self.engine.core.task(ev.tid).and_then(|t| t.mm);
                    mm.is_some() && self.engine.core.task(tid).and_then(|t| t.mm) == mm
                }
                _ => false,
            };
            if joiner {
                put_after = Some(ev.tid);
            } else {
                self.engine.step(ts, &DriverEvent::MmPut { tid: ev.tid });
            }
        }
        put_after
    }

    /// Stage 8: the record's own driver events; a probe whose step runs later (`late`) runs
    /// nothing here.
    pub(super) fn record(&mut self, idx: usize, ev: &Event, late: Option<(Option<usize>, bool)>) {
        let ts = ev.ts;
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                prev_state,
                ..
            } => {
                let slept = !prev_state.runnable();
                self.untraced
                    .flush_probed_move(&mut self.engine, ts, next_tid);
                let defer = self
                    .untraced
                    .switch_record(idx, ts, prev_tid, next_tid, slept);
                self.know(ts, next_tid);
                self.untraced
                    .unpin_outside(&mut self.engine, ts, next_tid, ev.cpu);
                self.engine.core.defer_switch = defer;
                self.switch_to(ts, ev.cpu, next_tid);
                self.engine.core.defer_switch = false;
            }
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } if orig_cpu != dest_cpu => {
                self.know(ts, tid);
                self.untraced
                    .flush_wakelist(&mut self.engine, ts, None, Some(tid));
                self.untraced
                    .migrate(&mut self.engine, (idx, ts, ev.tid), tid, orig_cpu, dest_cpu);
                self.since.mark(tid, Since::SWITCHED);
            }
            EventKind::SchedProcessFork { child, .. } if self.untraced.forked_early(child) => {
                self.pending_clone.remove(&child);
                self.futex_get_at_record(ts, child);
            }
            EventKind::SchedProcessFork { parent, child } => {
                self.know(ts, parent);
                let pmm = self.model_mm(parent);
                let cmm = self.obs_mm(child).filter(|m| !self.outside_older(*m));
                let flags = self.pending_clone.remove(&child);
                let shares = match flags {
                    Some(f) => f & CLONE_VM != 0,
                    None => cmm.is_some() && cmm == pmm,
                };
                // without task_newtask's flags, a child sharing the mm is taken for a thread
                let thread = flags.map_or(shares, |f| {
                    f & (CLONE_VM | CLONE_THREAD) == (CLONE_VM | CLONE_THREAD)
                });
                // the model's parent must carry the mm the resolution gave it
                let model_pmm = self.engine.core.task(parent).and_then(|t| t.mm);
                if shares && pmm.is_some() && model_pmm != pmm {
                    self.engine.step(
                        ts,
                        &DriverEvent::Existing {
                            tid: parent,
                            mm: pmm,
                            cpu: ev.cpu,
                            has_rseq: true,
                        },
                    );
                }
                // (a CLONE_VM fork recorded has run its step: the state before a fork of the
                // mm is history unless another one is still inside `sched_mm_cid_fork`)
                if let Some(mm) = pmm.filter(|&m| shares && !self.in_fork.values().any(|&x| x == m))
                {
                    self.fork_before.remove(&mm);
                }
                self.engine.step(
                    ts,
                    &DriverEvent::Fork {
                        parent,
                        child,
                        shares_mm: shares,
                        new_mm: if shares { None } else { cmm },
                        thread,
                    },
                );
                self.since.forget(child);
            }
            EventKind::SchedWakeupNew { tid, target_cpu } => {
                self.untraced
                    .unpin_outside(&mut self.engine, ts, tid, target_cpu);
                self.engine.step(
                    ts,
                    &DriverEvent::WakeupNew {
                        tid,
                        cpu: target_cpu,
                    },
                );
            }
            EventKind::SchedProcessExec { tid, old_tid } => {
                if !self.past_exec_put.is_empty() {
                    self.past_exec_put.remove(&tid);
                    self.past_exec_put.remove(&old_tid);
                }
                self.untraced.exec(&mut self.engine, ts, tid);
                // (where only the older mms are modelled, a task outside them stays outside:
                // its exec changes none of them)
                let outside =
                    self.older_only && self.engine.core.task(tid).is_none_or(|t| t.mm.is_none());
                if let Some(new_mm) = self.obs_mm(tid).filter(|_| !outside) {
                    self.engine.step(
                        ts,
                        &DriverEvent::Exec {
                            tid,
                            cpu: ev.cpu,
                            new_mm,
                        },
                    );
                }
                self.since.mark(tid, Since::SWITCHED);
            }
            EventKind::SchedProcessExit { tid } => {
                if !self.untraced.exited_early(tid) {
                    self.engine.step(ts, &DriverEvent::Exit { tid });
                }
                let before = self.engine.core.params.exit_mm_before_exit_record();
                if self.untraced.probed.mm_put {
                    // exit_mm's mmput runs at its probe (before or after this record)
                } else if self.untraced.exit_mm_at_record(idx, ts, tid, before) {
                    self.engine.step(ts, &DriverEvent::MmPut { tid });
                } else {
                    let late = self.untraced.late_put(idx).then_some(ts);
                    if let (Some(_), Some(t)) = (late, self.engine.core.task_mut(tid)) {
                        t.exit_mm_held = true;
                    }
                    self.exiting.insert(tid, late);
                }
            }
            EventKind::Tick => {
                self.engine.step(ts, &DriverEvent::Tick { cpu: ev.cpu });
                let curr = self.engine.core.curr.get(ev.cpu as usize).copied();
                if let Some(c) = curr.filter(|&c| c != 0) {
                    self.since.mark(c, Since::TICKED);
                }
            }
            EventKind::TickStop { success: true } => {
                self.engine.step(ts, &DriverEvent::TickStop { cpu: ev.cpu });
            }
            EventKind::RseqUpdate { mm_cid, .. } => self.update(idx, ev, mm_cid),
            EventKind::Probe { probe, num, ptr } if late.is_none() => {
                let held = probe == Probe::RemoteClear && self.untraced.held_clear(idx, ev.tid, ts);
                self.engine.core.hold_clear_put = held;
                self.probe(ts, idx, ev.tid, probe, num, ptr);
                self.engine.core.hold_clear_put = false;
                if held {
                    let cleared = num.min(u16::MAX as u32) as u16;
                    self.held_clears.push((ev.cpu, ev.tid, cleared));
                }
            }
            _ => {}
        }
    }
}
