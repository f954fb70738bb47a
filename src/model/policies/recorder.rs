//! The recording of a model run: after each driver event, every slot, task CID, weight and CPU
//! lane the handlers marked dirty is compared with what was recorded last and appended to the
//! [`super::run::PolicyRun`] when it changed; the ABI alarms are raised here too.

use super::core::Core;
use super::policy::CidPolicy;
use super::run::{SlotChange, TaskCidChange, WeightChange};
use super::task::{PerTask, Task};
use crate::events::Tid;
use crate::model::alarm::{Alarm, AlarmKind};
use crate::model::lane::{Segment, SlotFlags};
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;

mod holders;
use holders::Holders;

/// What was recorded last, per slot, task and mm, and who holds which CID.
#[derive(Clone, Default)]
pub struct Recorder {
    last_slot: FxHashMap<(MmId, u16), (Tid, Option<i32>, SlotFlags)>,
    /// Per task, the mm and visible CID recorded last (a full recording's).
    last_task: FxHashMap<Tid, (MmId, Option<i32>)>,
    last_weight: FxHashMap<MmId, u32>,
    /// (mm, CID) → the running task holding it, for the ABI alarms.
    holders: Holders,
    /// Per task, the CID it holds while running, for the ABI alarms: by the task's key, not
    /// hashed by tid (a summary's replay looks it up for every dirty task of every step).
    held: PerTask<Option<(MmId, u32)>>,
    /// The CIDs taken by the last event's tasks, checked once every release is done (kept to
    /// reuse its allocation: this runs after every event).
    acquire: Vec<(Tid, MmId, u32, u16)>,
}

impl Recorder {
    /// The task went away (its pid is reused, or it is renamed): it holds no CID any more.
    pub fn forget(&mut self, task: &Task) {
        if let Some(h) = self.held.get_mut(task).take() {
            self.holders.remove(h);
        }
    }

    /// Records what the last event changed.
    pub fn flush<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        self.tasks(core, policy);
        self.slots(core, policy);
        self.weights(core, policy);
        self.lanes(core, policy);
    }

    /// Only what a summary needs: the ABI alarms (the dirty marks are consumed).
    pub fn flush_alarms<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        self.tasks_with(core, policy, false);
        core.dirty.clear();
    }

    /// Task CIDs and the ABI checks: releases first, so a CID handed from prev to next in one
    /// switch is not a duplicate.
    fn tasks<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        self.tasks_with(core, policy, true);
    }

    /// [`Recorder::tasks`]; `history`: also each task's CID changes and the slots and lanes
    /// they touch.
    fn tasks_with<P: CidPolicy>(&mut self, core: &mut Core, policy: &P, history: bool) {
        // (this runs after every event: no work when it marked no task, no sort for one)
        if core.dirty.tasks.is_empty() {
            return;
        }
        let mut tasks = std::mem::take(&mut core.dirty.tasks);
        if tasks.len() > 1 {
            tasks.sort_unstable();
            tasks.dedup();
        }
        let now = core.now;
        for &tid in &tasks {
            // (a task gone was forgotten where it went: `Engine::rename`, a reused pid's fork)
            let Some(t) = core.tasks.get(&tid) else {
                continue;
            };
            let vis = policy.visible_cid(t);
            let want = match (t.running && t.active, t.mm, vis) {
                (true, Some(m), Some(n)) if n >= 0 => Some((m, n as u32)),
                _ => None,
            };
            if history {
                let mm = t.mm.unwrap_or(MmId::UNKNOWN);
                if t.running {
                    core.dirty.cpus.push(t.cpu);
                    if let Some(m) = t.mm {
                        core.dirty.slots.push((m, t.cpu));
                    }
                }
                if self.last_task.get(&tid) != Some(&(mm, vis)) {
                    self.last_task.insert(tid, (mm, vis));
                    core.run.task_cids.push(TaskCidChange {
                        ts: now,
                        tid,
                        mm,
                        cid: vis,
                    });
                }
            }
            let held = self.held.get_mut(t);
            if *held != want {
                if let Some(h) = held.take()
                    && self.holders.get(h) == Some(tid)
                {
                    self.holders.remove(h);
                }
                if let Some((m, n)) = want {
                    *held = Some((m, n));
                    self.acquire.push((tid, m, n, t.cpu));
                }
            }
        }
        tasks.clear();
        core.dirty.tasks = tasks;
        if !self.acquire.is_empty() {
            self.acquired(core);
        }
    }

    /// The CIDs the last event's tasks took, checked once every release of it is done (a CID
    /// handed on in it is no duplicate).
    fn acquired(&mut self, core: &mut Core) {
        let now = core.now;
        for &(tid, m, n, cpu) in &self.acquire {
            if let Some(other) = self.holders.get((m, n))
                && other != tid
                && core
                    .tasks
                    .get(&other)
                    .is_some_and(|o| *self.held.get(o) == Some((m, n)))
            {
                core.run.alarms.push(Alarm {
                    ts: now,
                    cpu,
                    kind: AlarmKind::DuplicateCid {
                        mm: m,
                        cid: n as i32,
                        tids: [other, tid],
                    },
                });
            }
            if n >= core.params.cpus {
                core.run.alarms.push(Alarm {
                    ts: now,
                    cpu,
                    kind: AlarmKind::CidOutOfRange {
                        mm: m,
                        tid,
                        cid: n as i32,
                        bound: core.params.cpus,
                    },
                });
            }
            self.holders.insert((m, n), tid);
        }
        self.acquire.clear();
    }

    fn slots<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        let now = core.now;
        let mut slots = std::mem::take(&mut core.dirty.slots);
        slots.sort_unstable();
        slots.dedup();
        for &(mm, c) in &slots {
            if c as u32 >= core.params.cpus {
                continue;
            }
            let (cid, flags) = policy.slot_view(mm, c);
            let tid = match core.curr_task(c) {
                Some(t) if t.mm == Some(mm) => t.tid,
                _ => 0,
            };
            let key = (mm, c);
            if self.last_slot.get(&key) != Some(&(tid, cid, flags)) {
                self.last_slot.insert(key, (tid, cid, flags));
                core.run.slots.push(SlotChange {
                    ts: now,
                    cpu: c,
                    mm,
                    tid,
                    cid,
                    flags,
                });
            }
            core.dirty.cpus.push(c);
        }
        slots.clear();
        core.dirty.slots = slots;
    }

    fn weights<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        let now = core.now;
        let mut mms = std::mem::take(&mut core.dirty.mms);
        mms.sort_unstable();
        mms.dedup();
        for &mm in &mms {
            let w = policy.weight(mm);
            if self.last_weight.get(&mm) != Some(&w) {
                self.last_weight.insert(mm, w);
                core.run.weights.push(WeightChange {
                    ts: now,
                    mm,
                    weight: w,
                });
            }
        }
        mms.clear();
        core.dirty.mms = mms;
    }

    /// Lanes: who runs on each dirty CPU, with its model CID and the slot's flags.
    fn lanes<P: CidPolicy>(&mut self, core: &mut Core, policy: &P) {
        let now = core.now;
        let mut cpus = std::mem::take(&mut core.dirty.cpus);
        cpus.sort_unstable();
        cpus.dedup();
        for &c in &cpus {
            let Some(lane) = core.run.lanes.get(c as usize) else {
                continue;
            };
            let seg = match core.curr_task(c) {
                None => Segment {
                    start: now,
                    tid: 0,
                    mm: MmId::NONE,
                    cid: Segment::NO_CID,
                    flags: SlotFlags::EMPTY,
                },
                Some(t) => {
                    let vis = if t.active {
                        policy.visible_cid(t)
                    } else {
                        None
                    };
                    let flags = match t.mm {
                        Some(m) => policy.lane_flags(t, m, c),
                        None => SlotFlags::EMPTY,
                    };
                    Segment {
                        start: now,
                        tid: t.tid,
                        mm: t.mm.unwrap_or(MmId::UNKNOWN),
                        cid: vis.unwrap_or(Segment::NO_CID),
                        flags: flags | Segment::CONFIRMED.when(vis.is_some()),
                    }
                }
            };
            let last = lane.last();
            let lane = &mut core.run.lanes[c as usize];
            match last {
                Some(l) if l.same_state(&seg) => {}
                Some(l) if l.start == now => {
                    lane.set_last(seg);
                    let n = lane.len();
                    if n >= 2 && lane.at(n - 2).same_state(&lane.at(n - 1)) {
                        lane.pop();
                    }
                }
                _ => lane.push(seg),
            }
        }
        cpus.clear();
        core.dirty.cpus = cpus;
    }
}
