//! The first pass of a replay over the capture: which tasks existed before it began, with their
//! mm, and which pre-existing mms never report a CID (not modelled).

use crate::events::{Event, EventChunks, EventKind, TID_UNKNOWN, Tid, TidSet, Trace};
use crate::model::observed::mm_history::{MmHistory, MmLog};
use crate::model::observed::{Context, ObservedState};
use crate::model::tasks::{MmId, MmOrigin};
use rustc_hash::{FxHashMap, FxHashSet};

/// What a replay learns from a first pass over the capture.
#[derive(Clone, Debug, PartialEq)]
pub struct PrePass {
    /// Tasks that existed before the capture, with their mm at first sight.
    pub tasks: Vec<(Tid, Option<MmId>)>,
    /// Pre-existing mms without a single `rseq_update` in the capture.
    pub quiet: FxHashSet<MmId>,
    /// Whether some mm that existed before the capture reports a CID in it (seeding has
    /// something to seed: without one, a replay without seeding checks what the seeded one
    /// checks, with the same figures).
    pub seeding_matters: bool,
    /// Per `sched_migrate_task` record (index): the last switch of its dst CPU to idle
    /// between it and the moved task's next record ([`IdleHolds`]).
    pub idle_holds: FxHashMap<usize, usize>,
    /// What the observed state says of each task's mm over the capture, and the mms it makes:
    /// what a replay of the capture reads instead of following an observed state itself.
    pub observed: std::sync::Arc<MmHistory>,
}

/// Remote wakeups whose enqueue on dst came after dst went idle (docs/models.md §5.3 T1, *an
/// idle pick holds the enqueue back*): `__schedule` picks the idle task only with nothing
/// runnable queued (`kernel/sched/core.c` @6.18.15 `__pick_next_task` l.5954–5985: the idle
/// task when `pick_next_task_fair` finds none, `kernel/sched/fair.c` l.8834, l.8887–8904, not
/// even by a newidle pull), so a task queued on dst's wakelist was not enqueued there
/// (`sched_ttwu_pending`, `core.c` l.3790–3825) before a switch of dst to idle that comes
/// between the wakeup's record and the task's next record.
#[derive(Default)]
struct IdleHolds {
    /// Per moved task: its migration record not yet followed by a record of the task, and
    /// the last idle switch of dst since.
    open: FxHashMap<Tid, (usize, u16, Option<usize>)>,
    /// Per CPU: the tasks moved to it whose migration is open (some may be closed since).
    to: FxHashMap<u16, Vec<Tid>>,
    holds: FxHashMap<usize, usize>,
}

impl IdleHolds {
    fn see(&mut self, i: usize, ev: &crate::events::Event) {
        let close = |s: &mut Self, t: Tid| {
            if let Some((m, _, Some(idle))) = s.open.remove(&t) {
                s.holds.insert(m, idle);
            }
        };
        if !self.open.is_empty() {
            close(self, ev.tid);
        }
        match ev.kind {
            EventKind::SchedSwitch { next_tid: 0, .. } => {
                if let Some(v) = self.to.get_mut(&ev.cpu) {
                    let open = &mut self.open;
                    v.retain(|t| match open.get_mut(t) {
                        Some(o) if o.1 == ev.cpu => {
                            o.2 = Some(i);
                            true
                        }
                        _ => false,
                    });
                }
            }
            EventKind::SchedSwitch { next_tid, .. } => close(self, next_tid),
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } => {
                close(self, tid);
                if orig_cpu != dest_cpu && tid != 0 && tid != TID_UNKNOWN {
                    self.open.insert(tid, (i, dest_cpu, None));
                    self.to.entry(dest_cpu).or_default().push(tid);
                }
            }
            _ => {}
        }
    }
}

/// Tasks the capture shows that existed before it began (not created by a fork inside it),
/// with the mm the observed resolution gives them at first sight.
pub fn preexisting_tasks(trace: &Trace, ncpus: u32) -> PrePass {
    let mut p = FirstPass::new(trace, ncpus);
    for ev in trace.events.iter_model() {
        p.see(&ev);
    }
    p.finish()
}

/// [`preexisting_tasks`] over the capture's events as a load hands them over, in pieces, before
/// its store is made (`trace` has the capture's tasks; its events are not read). The same
/// result, given the same events in the same order.
fn preexisting_tasks_of(trace: &Trace, chunks: &mut dyn EventChunks) -> PrePass {
    // (the observed state grows to the CPUs the events name: the count does not change
    // which tasks and mms it makes; a header's count is not trusted, a damaged one can
    // name billions)
    let mut p = FirstPass::new(trace, 0);
    while let Some(c) = chunks.next_chunk() {
        for ev in c {
            p.see(ev);
        }
    }
    p.finish()
}

/// A first pass run beside a capture's load ([`preexisting_tasks_of`]), for the replays of
/// that capture ([`crate::model::policies::Params::first_pass`]): with the count and the first
/// and last times of the events it saw, so that a replay of another capture runs its own.
#[derive(Clone)]
pub struct FirstPassOf(std::sync::Arc<(PrePass, (usize, u64, u64))>);

impl FirstPassOf {
    /// The first pass over `chunks`, the events of the capture whose metadata is `trace`.
    pub fn beside(trace: &Trace, chunks: &mut dyn EventChunks) -> FirstPassOf {
        let mut seen = Counted {
            inner: chunks,
            n: 0,
            first: None,
            last: 0,
        };
        let pre = preexisting_tasks_of(trace, &mut seen);
        let mark = (seen.n, seen.first.unwrap_or(0), seen.last);
        FirstPassOf(std::sync::Arc::new((pre, mark)))
    }

    /// What it found, when it ran over `trace`'s events.
    pub fn of(&self, trace: &Trace) -> Option<&PrePass> {
        let (pre, (n, first, last)) = &*self.0;
        let ev = &trace.events;
        let same = ev.len() == *n && (*n == 0 || (ev.ts(0) == *first && ev.ts(n - 1) == *last));
        same.then_some(pre)
    }
}

impl PartialEq for FirstPassOf {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for FirstPassOf {}

impl std::fmt::Debug for FirstPassOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FirstPassOf({} events)", (self.0).1.0)
    }
}

/// Pieces passed on, counted, with the first and last times.
struct Counted<'a> {
    inner: &'a mut dyn EventChunks,
    n: usize,
    first: Option<u64>,
    last: u64,
}

impl EventChunks for Counted<'_> {
    fn next_chunk(&mut self) -> Option<&[Event]> {
        let c = self.inner.next_chunk()?;
        if let (Some(a), Some(b)) = (c.first(), c.last()) {
            self.first.get_or_insert(a.ts);
            self.last = b.ts;
        }
        self.n += c.len();
        Some(c)
    }
}

/// The first pass, event by event.
struct FirstPass<'a> {
    ctx: Context<'a>,
    obs: ObservedState,
    /// The mms made and each change of a task's mm.
    log: MmLog,
    /// Event index.
    i: usize,
    // (tested for every tid of every event: pages of tids, not hashes)
    created: TidSet,
    seen: TidSet,
    pending: Vec<Tid>,
    out: Vec<(Tid, Option<MmId>)>,
    /// Per mm id, whether it reported a CID (one per update, so indexed, not hashed).
    reporting: Vec<bool>,
    holds: IdleHolds,
}

impl<'a> FirstPass<'a> {
    fn new(trace: &'a Trace, ncpus: u32) -> FirstPass<'a> {
        FirstPass {
            ctx: Context {
                tasks: &trace.tasks,
                tgid_changes: &trace.tgid_changes,
                ncpus,
            },
            obs: ObservedState::mm_only(ncpus as usize),
            log: MmLog::default(),
            i: 0,
            created: TidSet::default(),
            seen: TidSet::default(),
            pending: Vec::new(),
            out: Vec::new(),
            reporting: Vec::new(),
            holds: IdleHolds::default(),
        }
    }

    fn note(&mut self, t: Tid) {
        if t != 0 && t != TID_UNKNOWN && !self.created.contains(t) && self.seen.insert(t) {
            self.pending.push(t);
        }
    }

    fn see(&mut self, ev: &Event) {
        self.holds.see(self.i, ev);
        self.log.at = u32::try_from(self.i).unwrap_or(u32::MAX);
        self.i += 1;
        match ev.kind {
            EventKind::TaskNewtask { tid, .. } => {
                self.created.insert(tid);
            }
            EventKind::SchedProcessFork { child, .. } => {
                self.created.insert(child);
            }
            _ => {}
        }
        self.obs.apply(ev, &self.ctx, &mut self.log);
        if let EventKind::RseqUpdate { .. } = ev.kind {
            let m = self.obs.mm_of(ev.tid);
            if m.is_real() {
                let k = m.0 as usize;
                if self.reporting.len() <= k {
                    self.reporting.resize(k + 1, false);
                }
                self.reporting[k] = true;
            }
        }
        self.note(ev.tid);
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => {
                self.note(prev_tid);
                self.note(next_tid);
            }
            EventKind::SchedMigrateTask { tid, .. }
            | EventKind::SchedWakeupNew { tid, .. }
            | EventKind::SchedProcessExit { tid } => self.note(tid),
            EventKind::SchedProcessFork { parent, .. } => self.note(parent),
            _ => {}
        }
        if !self.pending.is_empty() {
            let (obs, out) = (&self.obs, &mut self.out);
            self.pending
                .retain(|&t| match obs.tasks.get(&t).map(|s| s.mm) {
                    Some(m) => {
                        out.push((t, m.is_real().then_some(m)));
                        false
                    }
                    None => true,
                });
        }
    }

    fn finish(self) -> PrePass {
        let FirstPass {
            log,
            created,
            seen,
            pending,
            mut out,
            reporting,
            holds,
            ..
        } = self;
        let history = log.history();
        let infos = &history.infos;
        out.extend(pending.into_iter().map(|t| (t, None)));
        // A process's main thread holds its mm even when it never runs in the capture (blocked
        // in a join or wait): count the leader named by the TGID column.
        let mut leaders: Vec<(Tid, Option<MmId>)> = Vec::new();
        for (i, info) in infos.0.iter().enumerate() {
            if let (Some(g), MmOrigin::Tgid) = (info.tgid, info.origin)
                && !seen.contains(g)
                && !created.contains(g)
            {
                leaders.push((g, Some(MmId(i as u32))));
            }
        }
        out.extend(leaders);
        let older = || {
            infos
                .0
                .iter()
                .enumerate()
                .filter(|(_, info)| !info.begins_in_capture())
                .map(|(i, _)| MmId(i as u32))
        };
        let reported = |m: &MmId| reporting.get(m.0 as usize).copied().unwrap_or(false);
        let quiet = older()
            .filter(|m| !reported(m))
            .collect::<FxHashSet<MmId>>();
        let seeding_matters = older().any(|m| reported(&m));
        let tasks = out
            .into_iter()
            .map(|(t, m)| (t, m.filter(|m| !quiet.contains(m))))
            .collect();
        PrePass {
            tasks,
            quiet,
            seeding_matters,
            idle_holds: holds.holds,
            observed: std::sync::Arc::new(history),
        }
    }
}
