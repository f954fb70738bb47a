//! What the kernel really did, as far as a trace shows it: the task current on each CPU, the CID
//! each task last reported through `rseq_update`, and which mm each task belongs to.
//!
//! A task's CID is *confirmed* once it has reported since its last switch-in; before that the
//! value shown is the one from its previous run, which the kernel may already have changed.
//! Only confirmed CIDs count toward the observed cidmask and the duplicate check.

use super::alarm::{Alarm, AlarmKind};
use super::anomaly::{Anomaly, AnomalyKind};
use super::tasks::{MmId, MmInfo, MmOrigin};
use crate::events::{CLONE_VM, CPU_UNKNOWN, Event, EventKind, TID_UNKNOWN, TgidChange, Tid};
use rustc_hash::FxHashMap;

pub mod mm_history;
mod two_cpus;

/// Tid → its task.
pub type TaskMap = crate::events::TidMap<TaskState>;

/// How long after a task moved to another CPU its records on the old one are put down to
/// per-CPU clocks that disagree rather than to a task on two CPUs at once.
pub const TWO_CPU_SLACK_NS: u64 = 1_000_000;

/// The state of one CPU: who runs there and the CID it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSlot {
    pub tid: Tid,
    pub mm: MmId,
    /// The CID the task last reported, if it ever did.
    pub cid: Option<i32>,
    /// The task reported `cid` since it was switched in here.
    pub confirmed: bool,
}

impl CpuSlot {
    pub const IDLE: CpuSlot = CpuSlot {
        tid: 0,
        mm: MmId::NONE,
        cid: None,
        confirmed: false,
    };

    /// The CID this CPU holds for `mm`, if confirmed.
    pub fn confirmed_cid(&self, mm: MmId) -> Option<i32> {
        if self.mm == mm && self.confirmed {
            self.cid
        } else {
            None
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskState {
    pub mm: MmId,
    pub cid: Option<i32>,
    /// CPU the task runs on, if running.
    pub on_cpu: Option<u16>,
    pub confirmed: bool,
    pub exited: bool,
    /// How many tasks used this tid before this one in the capture (a reused tid: fork after
    /// exit, or a changed TGID column).
    pub incarnation: u32,
    /// When `on_cpu` last moved to another CPU.
    pub since: u64,
}

impl TaskState {
    /// A task of `mm` first seen (or made anew on its tid) at `since`, running on `on_cpu`.
    fn new(mm: MmId, on_cpu: Option<u16>, incarnation: u32, since: u64) -> TaskState {
        TaskState {
            mm,
            cid: None,
            on_cpu,
            confirmed: false,
            exited: false,
            incarnation,
            since,
        }
    }
}

/// Read-only facts the capture gives about tasks.
pub struct Context<'a> {
    pub tasks: &'a crate::events::TaskTable,
    /// Tids whose TGID column changed, in time order ([`Trace::tgid_changes`]).
    ///
    /// [`Trace::tgid_changes`]: crate::events::Trace::tgid_changes
    pub tgid_changes: &'a [TgidChange],
    /// Possible CPUs: the bound every CID must stay below.
    pub ncpus: u32,
}

/// Receives what changed while events are applied (the index builder listens; a replay from a
/// checkpoint does not).
pub trait Sink {
    fn new_mm(&mut self, _id: MmId, _info: MmInfo) {}
    fn cpu_changed(&mut self, _ts: u64, _cpu: u16, _slot: &CpuSlot) {}
    fn alarm(&mut self, _alarm: Alarm) {}
    /// An impossible state: damage in the capture, counted where it is noticed.
    fn anomaly(&mut self, _anomaly: Anomaly) {}
    /// `tid` now belongs to `mm` ([`MmId::UNKNOWN`]: no task of that tid any more, or its mm
    /// is not known): each change of what [`ObservedState::mm_of`] says of a task, as it is
    /// made (a replay's history of the tasks' mms is built from these).
    fn task_mm(&mut self, _tid: Tid, _mm: MmId) {}
}

/// A sink that ignores everything.
pub struct NoSink;
impl Sink for NoSink {}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ObservedState {
    pub cpus: Vec<CpuSlot>,
    /// The tasks, by tid (see [`crate::events::TidMap`] for why not a hash map).
    pub tasks: TaskMap,
    /// Thread-group id → its current mm.
    tgid_mm: crate::events::TidMap<MmId>,
    /// Per mm allocated so far, the TGID it was created for (its entry in `tgid_mm` may have
    /// moved on since: an exec). Ids are handed out in event order, so a replay from a
    /// checkpoint allocates the same ids.
    mm_tgid: Vec<Option<Tid>>,
    /// clone_flags from task_newtask, waiting for the matching sched_process_fork.
    pending_clone: FxHashMap<Tid, u64>,
    /// The next of the context's TGID changes to apply.
    next_change: usize,
    /// The TGID of each tid whose TGID column changed, as of the events applied.
    tgid_now: FxHashMap<Tid, Tid>,
    /// Per CPU, the time of its last lost-event marker (its switches may be missing since).
    lost_at: Vec<u64>,
    /// Per CPU: its task may be shown on another CPU too. Set for every CPU whose task's
    /// `on_cpu` names another CPU (or none), cleared when the CPU's task changes; only records on
    /// such a CPU need [`Self::check_two_cpus`], which would otherwise cost a lookup per record.
    twice: Vec<bool>,
    /// Duplicate CIDs held back until the earlier holder's next record says what it was: an
    /// `rseq_update`, a switch-out that blocks it, a fork or an exec (it still held the CID: the
    /// alarm is raised, with its own time; a preemption says nothing) or its `sched_process_exit` (it was exiting: `do_exit`
    /// released the CID before the exit record, docs/models.md T7; no alarm). [`Self::flush`]
    /// raises what is still held at the end.
    held: Vec<(Alarm, Tid)>,
    pub exiting_holders: u64, // duplicates whose holder's next record was its exit
    /// Follow which mm each task belongs to only ([`Self::mm_only`]).
    mm_only: bool,
}

impl ObservedState {
    pub fn new(ncpus: usize) -> ObservedState {
        ObservedState {
            cpus: vec![CpuSlot::IDLE; ncpus],
            twice: vec![false; ncpus],
            ..Default::default()
        }
    }

    /// A state that resolves tasks to mms only, as a model's replay reads them: the same tasks
    /// and mms, made in the same order, as [`Self::new`]'s (the mm ids are the capture's), but
    /// no CID is followed, so no slot is confirmed, no duplicate or task on two CPUs is found
    /// and no alarm raised (and a task's `incarnation` does not count a TGID change after a
    /// report). A replay applies every event to one of these, where the CID
    /// bookkeeping (a look at every CPU per `rseq_update`) is most of the cost.
    pub fn mm_only(ncpus: usize) -> ObservedState {
        ObservedState {
            mm_only: true,
            ..ObservedState::new(ncpus)
        }
    }

    pub fn mm_count(&self) -> u32 {
        self.mm_tgid.len() as u32
    }

    /// Applies one event.
    pub fn apply(&mut self, ev: &Event, ctx: &Context, sink: &mut impl Sink) {
        if !self.held.is_empty() {
            self.resolve_held(ev, sink);
        }
        while let Some(ch) = ctx
            .tgid_changes
            .get(self.next_change)
            .filter(|ch| ch.ts <= ev.ts)
        {
            self.next_change += 1;
            self.tgid_changed(*ch, ctx, sink);
        }
        if ev.cpu == CPU_UNKNOWN {
            // A record on no known CPU places no task: only what needs no CPU is applied.
            match ev.kind {
                EventKind::TaskNewtask { .. }
                | EventKind::SchedProcessFork { .. }
                | EventKind::SchedProcessExec { .. }
                | EventKind::SchedProcessExit { .. } => {}
                _ => return,
            }
        }
        let c = ev.cpu as usize;
        if ev.cpu != CPU_UNKNOWN && c >= self.cpus.len() {
            self.cpus.resize(c + 1, CpuSlot::IDLE);
        }
        if ev.cpu != CPU_UNKNOWN && c >= self.twice.len() {
            self.twice.resize(self.cpus.len(), false);
        }
        if matches!(ev.kind, EventKind::Lost { .. }) {
            if c >= self.lost_at.len() {
                self.lost_at.resize(c + 1, 0);
            }
            self.lost_at[c] = ev.ts.max(1);
            // Switches and reports of this CPU may be missing: its CID is no longer known.
            let tid = self.cpus[c].tid;
            if let Some(t) = self.tasks.get_mut(&tid) {
                t.confirmed = false;
            }
            if self.cpus[c].confirmed {
                self.cpus[c].confirmed = false;
                sink.cpu_changed(ev.ts, ev.cpu, &self.cpus[c]);
            }
            return;
        }
        if ev.cpu != CPU_UNKNOWN
            && !self.mm_only
            && self.cpus[c].tid == ev.tid
            && ev.tid != 0
            && ev.tid != TID_UNKNOWN
        {
            debug_assert!(
                self.twice[c] || !self.shown_on_another_cpu(ev),
                "{ev:?}: its task is shown on two CPUs, unflagged"
            );
            if self.twice[c] {
                self.check_two_cpus(ev, sink);
            }
        }
        // Every record names the task current on its CPU: this also catches switches the
        // capture missed (on some VMs the switch away from idle is never recorded).
        if ev.cpu != CPU_UNKNOWN && self.cpus[c].tid != ev.tid && ev.tid != TID_UNKNOWN {
            self.switch_in(ev.ts, ev.cpu, ev.tid, ctx, sink);
        }
        match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => {
                self.switch_in(ev.ts, ev.cpu, next_tid, ctx, sink);
            }
            // (a report of no known task does nothing below either)
            EventKind::RseqUpdate { .. } if self.mm_only && ev.tid != TID_UNKNOWN => {
                self.task(ev.tid, ctx, sink);
            }
            EventKind::RseqUpdate { .. } if self.mm_only => {}
            EventKind::RseqUpdate { mm_cid, cpu_id, .. } => {
                if cpu_id != ev.cpu as i32 && ev.tid != TID_UNKNOWN {
                    sink.anomaly(Anomaly {
                        ts: ev.ts,
                        cpu: ev.cpu,
                        kind: AnomalyKind::CpuIdMismatch {
                            tid: ev.tid,
                            cpu_id,
                        },
                    });
                }
                self.report(ev, mm_cid, ctx, sink)
            }
            EventKind::TaskNewtask { tid, clone_flags } => {
                self.pending_clone.insert(tid, clone_flags);
            }
            EventKind::SchedProcessFork { parent, child } => {
                self.fork(ev.ts, parent, child, ctx, sink)
            }
            EventKind::SchedProcessExec { tid, old_tid } => {
                self.exec(ev.ts, tid, old_tid, ctx, sink)
            }
            EventKind::SchedProcessExit { tid } => {
                let t = self.task(tid, ctx, sink);
                t.exited = true;
                t.cid = None;
                t.confirmed = false;
                self.refresh_task_slot(ev.ts, tid, sink);
            }
            _ => {}
        }
    }

    fn switch_in(&mut self, ts: u64, cpu: u16, tid: Tid, ctx: &Context, sink: &mut impl Sink) {
        let c = cpu as usize;
        let prev = self.cpus[c].tid;
        if prev == tid {
            return;
        }
        if self.mm_only {
            // (the task is made here, as below; what it reported is not followed)
            self.cpus[c] = if tid == 0 {
                CpuSlot::IDLE
            } else {
                CpuSlot {
                    tid,
                    mm: self.task(tid, ctx, sink).mm,
                    ..CpuSlot::IDLE
                }
            };
            return;
        }
        if let Some(p) = self.tasks.get_mut(&prev) {
            if p.on_cpu == Some(cpu) {
                p.on_cpu = None;
            }
            p.confirmed = false;
        }
        self.twice[c] = false;
        if tid == 0 {
            self.cpus[c] = CpuSlot::IDLE;
            sink.cpu_changed(ts, cpu, &self.cpus[c]);
            return;
        }
        let t = self.task(tid, ctx, sink);
        let was_on = t.on_cpu.replace(cpu);
        if was_on != Some(cpu) {
            t.since = ts;
        }
        t.confirmed = false;
        self.moved_from(was_on, cpu, tid);
        // A task runs on one CPU: if the capture still shows it elsewhere, an event was lost
        // there; stop trusting that CPU's CID.
        if let Some(d) = was_on.filter(|&d| d != cpu)
            && let Some(s) = self.cpus.get_mut(d as usize).filter(|s| s.tid == tid)
        {
            s.confirmed = false;
            sink.cpu_changed(ts, d, &self.cpus[d as usize]);
        }
        self.set_slot(ts, cpu, tid, sink);
    }

    /// Shows `tid` and its current state in `cpu`'s slot.
    fn set_slot(&mut self, ts: u64, cpu: u16, tid: Tid, sink: &mut impl Sink) {
        let slot = match self.tasks.get(&tid) {
            Some(t) => CpuSlot {
                tid,
                mm: t.mm,
                cid: t.cid,
                confirmed: t.confirmed,
            },
            None => CpuSlot {
                tid,
                ..CpuSlot::IDLE
            },
        };
        let c = cpu as usize;
        if self.cpus[c] != slot {
            self.cpus[c] = slot;
            sink.cpu_changed(ts, cpu, &slot);
        }
    }

    /// Refreshes the slot of the CPU `tid` runs on, if the capture shows it there.
    fn refresh_task_slot(&mut self, ts: u64, tid: Tid, sink: &mut impl Sink) {
        let on = self.tasks.get(&tid).and_then(|t| t.on_cpu);
        if let Some(cpu) = on
            && self.cpus.get(cpu as usize).is_some_and(|s| s.tid == tid)
        {
            self.set_slot(ts, cpu, tid, sink);
        }
    }

    fn report(&mut self, ev: &Event, cid: i32, ctx: &Context, sink: &mut impl Sink) {
        let tid = ev.tid;
        if tid == TID_UNKNOWN {
            return;
        }
        let t = self.task(tid, ctx, sink);
        t.cid = Some(cid);
        t.confirmed = true;
        let was_on = t.on_cpu.replace(ev.cpu);
        // (on a CPU still showing it after it moved: the overlap keeps its start)
        if was_on.is_none() {
            t.since = ev.ts;
        }
        let mm = t.mm;
        self.moved_from(was_on, ev.cpu, tid);
        let c = ev.cpu as usize;
        let slot = CpuSlot {
            tid,
            mm,
            cid: Some(cid),
            confirmed: true,
        };
        if self.cpus[c] != slot {
            self.cpus[c] = slot;
            sink.cpu_changed(ev.ts, ev.cpu, &slot);
        }
        if cid < 0 || cid as u32 >= ctx.ncpus {
            sink.alarm(Alarm {
                ts: ev.ts,
                cpu: ev.cpu,
                kind: AlarmKind::CidOutOfRange {
                    mm,
                    tid,
                    cid,
                    bound: ctx.ncpus,
                },
            });
        }
        if mm.is_real() {
            for (d, s) in self.cpus.iter().enumerate() {
                if d != c && s.tid != tid && s.confirmed_cid(mm) == Some(cid) {
                    let a = Alarm {
                        ts: ev.ts,
                        cpu: ev.cpu,
                        kind: AlarmKind::DuplicateCid {
                            mm,
                            cid,
                            tids: [s.tid, tid],
                        },
                    };
                    self.held.push((a, s.tid));
                }
            }
        }
    }

    /// The state of `tid`, created on first sight with the mm its TGID names (or unknown).
    fn task(&mut self, tid: Tid, ctx: &Context, sink: &mut impl Sink) -> &mut TaskState {
        // (one lookup for a task already there: this runs for most events)
        if let Some(r) = self.tasks.row_of(tid) {
            return self.tasks.at_mut(r);
        }
        let mm = match self.tgid_of_tid(tid, ctx) {
            _ if tid == 0 => MmId::NONE,
            Some(g) => self.mm_of_tgid(g, tid, 0, sink),
            None => MmId::UNKNOWN,
        };
        sink.task_mm(tid, mm);
        self.tasks
            .get_or_insert_with(tid, || TaskState::new(mm, None, 0, 0))
    }

    fn new_mm(&mut self, info: MmInfo, sink: &mut impl Sink) -> MmId {
        let id = MmId(self.mm_tgid.len() as u32);
        self.mm_tgid.push(info.tgid);
        if let Some(g) = info.tgid {
            self.tgid_mm.insert(g, id);
        }
        sink.new_mm(id, info);
        id
    }

    fn mm_of_tgid(&mut self, tgid: Tid, _tid: Tid, ts: u64, sink: &mut impl Sink) -> MmId {
        if let Some(&m) = self.tgid_mm.get(&tgid) {
            return m;
        }
        self.new_mm(
            MmInfo {
                tgid: Some(tgid),
                leader: tgid,
                origin: MmOrigin::Tgid,
                first_ts: ts,
            },
            sink,
        )
    }

    fn fork(&mut self, ts: u64, parent: Tid, child: Tid, ctx: &Context, sink: &mut impl Sink) {
        let flags = self.pending_clone.remove(&child);
        let parent_mm = self.task(parent, ctx, sink).mm;
        let child_tgid = self.tgid_of_tid(child, ctx);
        let parent_tgid = self
            .tgid_of_tid(parent, ctx)
            .or_else(|| self.tgid_of(parent_mm));
        let shares = match (flags, child_tgid) {
            (Some(f), _) => Some(f & CLONE_VM != 0),
            (None, Some(ct)) if Some(ct) == parent_tgid => Some(true),
            (None, Some(ct)) if ct == child => Some(false),
            _ => None,
        };
        let mm = match shares {
            Some(true) => {
                if parent_mm.is_real() {
                    parent_mm
                } else {
                    // The parent's mm was unknown; the clone proves it exists and is shared.
                    let id = self.new_mm(
                        MmInfo {
                            tgid: parent_tgid,
                            leader: parent,
                            origin: MmOrigin::Anonymous,
                            first_ts: ts,
                        },
                        sink,
                    );
                    self.set_mm(ts, parent, id, sink);
                    id
                }
            }
            Some(false) => self.new_mm(
                MmInfo {
                    tgid: Some(child),
                    leader: child,
                    origin: MmOrigin::Fork,
                    first_ts: ts,
                },
                sink,
            ),
            None => MmId::UNKNOWN,
        };
        // A reused pid starts over: a new task (after an exit, the next one of this tid).
        let incarnation = self
            .tasks
            .get(&child)
            .map_or(0, |t| t.incarnation + t.exited as u32);
        self.flag_shown(child);
        self.tasks
            .insert(child, TaskState::new(mm, None, incarnation, ts));
        sink.task_mm(child, mm);
    }

    /// The TGID the capture gives `tid` as of the events applied: its latest changed one, else
    /// its first.
    fn tgid_of_tid(&self, tid: Tid, ctx: &Context) -> Option<Tid> {
        self.tgid_now
            .get(&tid)
            .copied()
            .or_else(|| ctx.tasks.get(&tid).and_then(|m| m.tgid))
    }

    /// `tid`'s TGID column changed: from now on it is a task of `tgid`. A task that reported
    /// no CID yet (just forked, its process not known before) moves there; one that did is
    /// gone, and a new task of that process uses its tid.
    fn tgid_changed(&mut self, ch: TgidChange, ctx: &Context, sink: &mut impl Sink) {
        let TgidChange { ts, tid, tgid } = ch;
        self.tgid_now.insert(tid, tgid);
        if tid == 0 {
            return;
        }
        let Some(&t) = self.tasks.get(&tid) else {
            return;
        };
        if self.tgid_of(t.mm) == Some(tgid) {
            return;
        }
        let mm = self.mm_of_tgid(tgid, tid, ts, sink);
        let on_cpu = self
            .cpus
            .iter()
            .position(|s| s.tid == tid)
            .map(|c| c as u16);
        let incarnation = t.incarnation + (t.cid.is_some() || t.exited) as u32;
        self.tasks
            .insert(tid, TaskState::new(mm, on_cpu, incarnation, ts));
        sink.task_mm(tid, mm);
        self.flag_shown(tid);
        for c in 0..self.cpus.len() {
            if self.cpus[c].tid == tid {
                self.set_slot(ts, c as u16, tid, sink);
            }
        }
        let _ = ctx;
    }

    /// [`Self::mm_of`] and how many earlier tasks used `tid` (0 for its first), as of the
    /// events applied, in one lookup.
    pub fn mm_and_incarnation(&self, tid: Tid) -> (MmId, u32) {
        if tid == 0 {
            return (MmId::NONE, 0);
        }
        self.tasks
            .get(&tid)
            .map_or((MmId::UNKNOWN, 0), |t| (t.mm, t.incarnation))
    }

    fn exec(&mut self, ts: u64, tid: Tid, old_tid: Tid, ctx: &Context, sink: &mut impl Sink) {
        // A non-leader thread that execs takes over the leader's pid.
        if old_tid != tid
            && let Some(mut t) = self.tasks.remove(&old_tid)
        {
            sink.task_mm(old_tid, MmId::UNKNOWN);
            self.flag_shown(old_tid);
            self.flag_shown(tid);
            if let Some(leader) = self.tasks.remove(&tid) {
                t.on_cpu = t.on_cpu.or(leader.on_cpu);
            }
            sink.task_mm(tid, t.mm);
            self.tasks.insert(tid, t);
        }
        self.task(tid, ctx, sink);
        let id = self.new_mm(
            MmInfo {
                tgid: Some(tid),
                leader: tid,
                origin: MmOrigin::Exec,
                first_ts: ts,
            },
            sink,
        );
        self.set_mm(ts, tid, id, sink);
    }

    fn set_mm(&mut self, ts: u64, tid: Tid, mm: MmId, sink: &mut impl Sink) {
        let Some(t) = self.tasks.get_mut(&tid) else {
            return;
        };
        t.mm = mm;
        sink.task_mm(tid, mm);
        // The CID reported for the old mm means nothing in the new one.
        t.cid = None;
        t.confirmed = false;
        self.refresh_task_slot(ts, tid, sink);
    }

    fn tgid_of(&self, mm: MmId) -> Option<Tid> {
        let g = (*self.mm_tgid.get(mm.0 as usize)?)?;
        (self.tgid_mm.get(&g) == Some(&mm)).then_some(g)
    }

    /// The mm of a task now, as far as known.
    pub fn mm_of(&self, tid: Tid) -> MmId {
        self.mm_and_incarnation(tid).0
    }

    /// The observed cidmask of `mm`: confirmed CIDs of its running tasks, sorted.
    pub fn cidmask(&self, mm: MmId) -> Vec<i32> {
        let mut v: Vec<i32> = self
            .cpus
            .iter()
            .filter_map(|s| s.confirmed_cid(mm))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{PrevState, StrId};

    #[derive(Default)]
    struct Rec {
        mms: Vec<(MmId, MmInfo)>,
        changes: Vec<(u64, u16, CpuSlot)>,
        alarms: Vec<Alarm>,
    }
    impl Sink for Rec {
        fn new_mm(&mut self, id: MmId, info: MmInfo) {
            self.mms.push((id, info));
        }
        fn cpu_changed(&mut self, ts: u64, cpu: u16, slot: &CpuSlot) {
            self.changes.push((ts, cpu, *slot));
        }
        fn alarm(&mut self, a: Alarm) {
            self.alarms.push(a);
        }
    }

    fn ev(ts: u64, cpu: u16, tid: Tid, kind: EventKind) -> Event {
        Event { ts, tid, cpu, kind }
    }
    fn sw(ts: u64, cpu: u16, prev: Tid, next: Tid) -> Event {
        ev(
            ts,
            cpu,
            prev,
            EventKind::SchedSwitch {
                prev_tid: prev,
                next_tid: next,
                next_comm: StrId(0),
                next_prio: 120,
                prev_state: PrevState::from_text(b"S"),
            },
        )
    }
    fn up(ts: u64, cpu: u16, tid: Tid, cid: i32) -> Event {
        ev(
            ts,
            cpu,
            tid,
            EventKind::RseqUpdate {
                cpu_id: cpu as i32,
                node_id: 0,
                mm_cid: cid,
            },
        )
    }
    fn tgids(pairs: &[(Tid, Tid)]) -> crate::events::TaskTable {
        pairs
            .iter()
            .map(|&(t, g)| {
                (
                    t,
                    crate::events::TaskMeta {
                        tgid: Some(g),
                        comm: StrId(0),
                    },
                )
            })
            .collect()
    }

    fn run(events: &[Event], meta: &crate::events::TaskTable) -> (ObservedState, Rec) {
        run_with(events, meta, &[])
    }

    fn run_with(
        events: &[Event],
        meta: &crate::events::TaskTable,
        tgid_changes: &[TgidChange],
    ) -> (ObservedState, Rec) {
        let ctx = Context {
            tasks: meta,
            tgid_changes,
            ncpus: 2,
        };
        let mut st = ObservedState::new(2);
        let mut rec = Rec::default();
        for e in events {
            st.apply(e, &ctx, &mut rec);
        }
        // as every consumer does at the end: what is held is raised, in time order
        st.flush(&mut rec);
        rec.alarms.sort_by_key(|a| a.ts);
        (st, rec)
    }

    fn exit(ts: u64, cpu: u16, tid: Tid) -> Event {
        Event {
            ts,
            tid,
            cpu,
            kind: EventKind::SchedProcessExit { tid },
        }
    }

    /// A thread that reports the CID of one still shown running: a duplicate if that one
    /// records on (a switch-out, an rseq_update), no finding if its next record is its exit
    /// (`do_exit` released the CID before the exit record, docs/models.md T7).
    #[test]
    fn a_duplicate_waits_for_the_holders_next_record() {
        let meta = tgids(&[(10, 10), (11, 10)]);
        let base = [
            sw(1, 0, 0, 10),
            up(2, 0, 10, 0),
            sw(3, 1, 0, 11),
            up(4, 1, 11, 0),
        ];
        let ctx = Context {
            tasks: &meta,
            tgid_changes: &[],
            ncpus: 2,
        };
        let mut st = ObservedState::new(2);
        let mut rec = Rec::default();
        for e in &base {
            st.apply(e, &ctx, &mut rec);
        }
        assert!(rec.alarms.is_empty(), "held until 10 records again");
        // a tick of the holder tells nothing
        st.apply(
            &Event {
                ts: 5,
                tid: 10,
                cpu: 0,
                kind: EventKind::Tick,
            },
            &ctx,
            &mut rec,
        );
        assert!(rec.alarms.is_empty());
        let mut exiting = st.clone();
        exiting.apply(&exit(6, 0, 10), &ctx, &mut rec);
        exiting.flush(&mut rec);
        assert!(rec.alarms.is_empty());
        assert_eq!(exiting.exiting_holders, 1);
        // preempted (R+): it may be in do_exit; blocked (S) still holding it: the duplicate,
        // at its own time
        let mut preempted = sw(6, 0, 10, 0);
        if let EventKind::SchedSwitch { prev_state, .. } = &mut preempted.kind {
            *prev_state = PrevState::from_text(b"R+");
        }
        st.apply(&preempted, &ctx, &mut rec);
        assert!(rec.alarms.is_empty());
        st.apply(&sw(7, 0, 0, 10), &ctx, &mut rec);
        st.apply(&sw(8, 0, 10, 0), &ctx, &mut rec);
        assert_eq!(rec.alarms.len(), 1);
        assert_eq!(rec.alarms[0].ts, 4);
        assert_eq!(st.exiting_holders, 0);
    }

    #[test]
    fn switch_then_report_confirms_cid() {
        let meta = tgids(&[(10, 10), (11, 10)]);
        let (st, _) = run(&[sw(1, 0, 0, 10), up(2, 0, 10, 0)], &meta);
        assert_eq!(st.cpus[0].tid, 10);
        assert_eq!(st.cpus[0].cid, Some(0));
        assert!(st.cpus[0].confirmed);
        assert_eq!(st.cidmask(st.mm_of(10)), vec![0]);
        // switched out and in again: the old CID is shown, unconfirmed, until the next report
        let (st, _) = run(
            &[
                sw(1, 0, 0, 10),
                up(2, 0, 10, 1),
                sw(3, 0, 10, 11),
                sw(4, 0, 11, 10),
            ],
            &meta,
        );
        assert_eq!((st.cpus[0].cid, st.cpus[0].confirmed), (Some(1), false));
        assert!(st.cidmask(st.mm_of(10)).is_empty());
    }

    #[test]
    fn migration_moves_the_task_and_its_cid() {
        let meta = tgids(&[(10, 10), (11, 10)]);
        let evs = [
            sw(1, 0, 0, 10),
            up(2, 0, 10, 0),
            sw(3, 0, 10, 0),
            ev(
                4,
                1,
                0,
                EventKind::SchedMigrateTask {
                    tid: 10,
                    orig_cpu: 0,
                    dest_cpu: 1,
                },
            ),
            sw(5, 1, 0, 10),
            up(6, 1, 10, 0),
            sw(7, 0, 0, 11),
            up(8, 0, 11, 1),
        ];
        let (st, rec) = run(&evs, &meta);
        assert_eq!(st.cpus[0].tid, 11);
        assert_eq!(st.cpus[1].tid, 10);
        assert_eq!(st.cidmask(st.mm_of(10)), vec![0, 1]);
        assert!(rec.alarms.is_empty());
        assert_eq!(rec.mms.len(), 1);
    }

    #[test]
    fn duplicate_and_out_of_range_raise_alarms() {
        let meta = tgids(&[(10, 10), (11, 10)]);
        let (_, rec) = run(
            &[
                sw(1, 0, 0, 10),
                up(2, 0, 10, 0),
                sw(3, 1, 0, 11),
                up(4, 1, 11, 0),
                up(5, 1, 11, 2),
            ],
            &meta,
        );
        assert_eq!(rec.alarms.len(), 2);
        assert!(matches!(
            rec.alarms[0].kind,
            AlarmKind::DuplicateCid {
                cid: 0,
                tids: [10, 11],
                ..
            }
        ));
        assert!(matches!(
            rec.alarms[1].kind,
            AlarmKind::CidOutOfRange {
                cid: 2,
                bound: 2,
                ..
            }
        ));
    }

    #[test]
    fn exit_clears_the_cid() {
        let meta = tgids(&[(10, 10)]);
        let (st, _) = run(
            &[
                sw(1, 0, 0, 10),
                up(2, 0, 10, 0),
                ev(3, 0, 10, EventKind::SchedProcessExit { tid: 10 }),
            ],
            &meta,
        );
        assert_eq!(st.cpus[0].cid, None);
        assert!(st.tasks[&10].exited);
    }

    #[test]
    fn lost_events_do_not_change_state_and_next_record_resyncs() {
        let meta = tgids(&[(10, 10), (12, 12)]);
        let (st, _) = run(
            &[
                sw(1, 0, 0, 10),
                up(2, 0, 10, 0),
                ev(3, 0, 0, EventKind::Lost { count: Some(5) }),
                up(4, 0, 12, 0),
            ],
            &meta,
        );
        // the switch 10 -> 12 was lost; the record of 12 on CPU 0 shows it runs there now
        assert_eq!(st.cpus[0].tid, 12);
        assert_eq!(st.tasks[&10].on_cpu, None);
    }

    #[test]
    fn mm_from_clone_flags_fork_and_exec() {
        let none = crate::events::TaskTable::default();
        let evs = [
            // 20 clones thread 21 (CLONE_VM) and process 22 (no CLONE_VM); 22 execs
            ev(
                1,
                0,
                20,
                EventKind::TaskNewtask {
                    tid: 21,
                    clone_flags: 0x3d0f00,
                },
            ),
            ev(
                2,
                0,
                20,
                EventKind::SchedProcessFork {
                    parent: 20,
                    child: 21,
                },
            ),
            ev(
                3,
                0,
                20,
                EventKind::TaskNewtask {
                    tid: 22,
                    clone_flags: 0x1200000,
                },
            ),
            ev(
                4,
                0,
                20,
                EventKind::SchedProcessFork {
                    parent: 20,
                    child: 22,
                },
            ),
            ev(
                5,
                1,
                22,
                EventKind::SchedProcessExec {
                    tid: 22,
                    old_tid: 22,
                },
            ),
            // fork without task_newtask and without TGIDs: unknown
            ev(
                6,
                0,
                20,
                EventKind::SchedProcessFork {
                    parent: 20,
                    child: 23,
                },
            ),
        ];
        let (st, rec) = run(&evs, &none);
        assert_eq!(st.mm_of(20), st.mm_of(21));
        assert!(st.mm_of(20).is_real());
        assert_ne!(st.mm_of(22), st.mm_of(20));
        assert_eq!(st.mm_of(23), MmId::UNKNOWN);
        let origins: Vec<_> = rec.mms.iter().map(|(_, i)| i.origin).collect();
        assert_eq!(
            origins,
            vec![MmOrigin::Anonymous, MmOrigin::Fork, MmOrigin::Exec]
        );
        assert_eq!(rec.mms[2].1.tgid, Some(22));
    }

    /// A tid reused by another process (its TGID column changes, no exit seen): from the
    /// change on it is a new task of the new process, so its CID is no duplicate of the old
    /// process's CIDs.
    #[test]
    fn a_tid_whose_tgid_changes_is_a_new_task_of_the_new_process() {
        let meta = tgids(&[(11, 10), (12, 10)]);
        let evs = [
            up(1, 0, 11, 0),
            up(2, 1, 12, 1),
            // tid 11 now shows TGID 20, on CPU 0, with CID 1 while 12 (tgid 10) holds 1
            up(5, 0, 11, 1),
        ];
        let (st, rec) = run(&evs, &meta);
        assert_eq!(rec.alarms.len(), 1, "without the change: a false duplicate");
        assert_eq!(st.mm_of(11), st.mm_of(12));
        let ch = [TgidChange {
            ts: 5,
            tid: 11,
            tgid: 20,
        }];
        let (st, rec) = run_with(&evs, &meta, &ch);
        assert!(rec.alarms.is_empty(), "{:?}", rec.alarms);
        assert_ne!(st.mm_of(11), st.mm_of(12));
        assert_eq!(st.mm_and_incarnation(11).1, 1);
        assert_eq!(rec.mms.last().map(|(_, i)| i.tgid), Some(Some(20)));
        // a fork after an exit is the next task of that tid too
        let evs = [
            up(1, 0, 11, 0),
            ev(2, 0, 11, EventKind::SchedProcessExit { tid: 11 }),
            ev(
                3,
                1,
                12,
                EventKind::SchedProcessFork {
                    parent: 12,
                    child: 11,
                },
            ),
        ];
        let (st, _) = run(&evs, &meta);
        assert_eq!(st.mm_and_incarnation(11).1, 1);
    }

    proptest::proptest! {
        /// `mm_only` makes the same tasks and mms as the full state whatever the events: forks
        /// with and without CLONE_VM, execs that take over another tid, TGID changes, exits,
        /// lost markers and records on no known CPU, among switches and updates of few tids.
        #[test]
        fn mm_only_resolves_tasks_as_the_full_state(
            evs in proptest::collection::vec((0u8..10, 0u32..9, 0u32..9, 0u16..4, any_flags()), 0..300),
            tgid_of in proptest::collection::vec(proptest::option::of(1u32..9), 9),
            changes in proptest::collection::vec((0u64..300, 1u32..9, 1u32..9), 0..4),
        ) {
            let meta: crate::events::TaskTable = tgid_of
                .iter()
                .enumerate()
                .filter_map(|(t, g)| g.map(|g| (t as Tid, crate::events::TaskMeta { tgid: Some(g), comm: StrId(0) })))
                .collect();
            let mut changes: Vec<TgidChange> = changes
                .iter()
                .map(|&(ts, tid, tgid)| TgidChange { ts: ts * 10, tid, tgid })
                .collect();
            changes.sort_by_key(|c| c.ts);
            let ctx = Context { tasks: &meta, tgid_changes: &changes, ncpus: 4 };
            let (mut full, mut lean) = (ObservedState::new(4), ObservedState::mm_only(4));
            let (mut a, mut b) = (Rec::default(), Rec::default());
            for (i, &(k, t, u, cpu, flags)) in evs.iter().enumerate() {
                let cpu = if k == 9 { CPU_UNKNOWN } else { cpu };
                let kind = match k {
                    0 | 1 => EventKind::SchedSwitch {
                        prev_tid: t,
                        next_tid: u,
                        next_comm: StrId(0),
                        next_prio: 120,
                        prev_state: PrevState::from_text(b"S"),
                    },
                    2 | 3 => EventKind::RseqUpdate { cpu_id: cpu as i32, node_id: 0, mm_cid: u as i32 },
                    4 => EventKind::TaskNewtask { tid: u, clone_flags: flags },
                    5 => EventKind::SchedProcessFork { parent: t, child: u },
                    6 => EventKind::SchedProcessExec { tid: t, old_tid: u },
                    7 => EventKind::SchedProcessExit { tid: u },
                    8 => EventKind::Lost { count: Some(1) },
                    _ => EventKind::SchedProcessFork { parent: t, child: u },
                };
                let e = ev(i as u64 * 10, cpu, t, kind);
                full.apply(&e, &ctx, &mut a);
                lean.apply(&e, &ctx, &mut b);
                for x in 0..9 {
                    proptest::prop_assert_eq!(full.mm_of(x), lean.mm_of(x), "event {}: {:?}, tid {}", i, e, x);
                }
            }
            proptest::prop_assert_eq!(a.mms, b.mms);
            proptest::prop_assert!(b.alarms.is_empty());
        }
    }

    fn any_flags() -> impl proptest::strategy::Strategy<Value = u64> {
        proptest::prop_oneof![
            proptest::strategy::Just(CLONE_VM),
            proptest::strategy::Just(0u64)
        ]
    }
}
