//! The first pass of a replay over the capture: which tasks existed before it began, with their
//! mm, and which pre-existing mms never report a CID (not modelled).

use crate::events::{EventKind, TID_UNKNOWN, Tid, Trace};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::tasks::{MmId, MmInfo, MmOrigin};
use rustc_hash::FxHashSet;

/// The mms the observed resolution creates, in order.
#[derive(Clone, Default)]
pub(super) struct Infos(pub(super) Vec<MmInfo>);
impl Sink for Infos {
    fn new_mm(&mut self, _id: MmId, info: MmInfo) {
        self.0.push(info);
    }
    fn cpu_changed(&mut self, _ts: u64, _cpu: u16, _slot: &CpuSlot) {}
}

/// What a replay learns from a first pass over the capture.
#[derive(Clone)]
pub struct PrePass {
    /// Tasks that existed before the capture, with their mm at first sight.
    pub tasks: Vec<(Tid, Option<MmId>)>,
    /// Pre-existing mms without a single `rseq_update` in the capture.
    pub quiet: FxHashSet<MmId>,
    /// Whether some mm that existed before the capture reports a CID in it (seeding has
    /// something to seed: without one, a replay without seeding checks what the seeded one
    /// checks, with the same figures).
    pub seeding_matters: bool,
}

/// Tasks the capture shows that existed before it began (not created by a fork inside it),
/// with the mm the observed resolution gives them at first sight.
pub fn preexisting_tasks(trace: &Trace, ncpus: u32) -> PrePass {
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut obs = ObservedState::new(ncpus as usize);
    let mut infos = Infos::default();
    let mut created: FxHashSet<Tid> = FxHashSet::default();
    let mut seen: FxHashSet<Tid> = FxHashSet::default();
    let mut pending: Vec<Tid> = Vec::new();
    let mut out: Vec<(Tid, Option<MmId>)> = Vec::new();
    let mut note = |t: Tid, created: &FxHashSet<Tid>, pending: &mut Vec<Tid>| {
        if t != 0 && t != TID_UNKNOWN && !created.contains(&t) && seen.insert(t) {
            pending.push(t);
        }
    };
    let mut reporting: FxHashSet<MmId> = FxHashSet::default();
    for ev in &trace.events {
        match ev.kind {
            EventKind::TaskNewtask { tid, .. } => {
                created.insert(tid);
            }
            EventKind::SchedProcessFork { child, .. } => {
                created.insert(child);
            }
            _ => {}
        }
        obs.apply(&ev, &ctx, &mut infos);
        if let EventKind::RseqUpdate { .. } = ev.kind {
            reporting.insert(obs.mm_of(ev.tid));
        }
        note(ev.tid, &created, &mut pending);
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => {
                note(prev_tid, &created, &mut pending);
                note(next_tid, &created, &mut pending);
            }
            EventKind::SchedMigrateTask { tid, .. }
            | EventKind::SchedWakeupNew { tid, .. }
            | EventKind::SchedProcessExit { tid } => note(tid, &created, &mut pending),
            EventKind::SchedProcessFork { parent, .. } => note(parent, &created, &mut pending),
            _ => {}
        }
        if !pending.is_empty() {
            pending.retain(|&t| match obs.tasks.get(&t).map(|s| s.mm) {
                Some(m) => {
                    out.push((t, m.is_real().then_some(m)));
                    false
                }
                None => true,
            });
        }
    }
    out.extend(pending.into_iter().map(|t| (t, None)));
    // A process's main thread holds its mm even when it never runs in the capture (blocked
    // in a join or wait): count the leader named by the TGID column.
    let mut leaders: Vec<(Tid, Option<MmId>)> = Vec::new();
    for (i, info) in infos.0.iter().enumerate() {
        if let (Some(g), MmOrigin::Tgid) = (info.tgid, info.origin)
            && !seen.contains(&g)
            && !created.contains(&g)
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
    let quiet = older()
        .filter(|m| !reporting.contains(m))
        .collect::<FxHashSet<MmId>>();
    let seeding_matters = older().any(|m| reporting.contains(&m));
    let tasks = out
        .into_iter()
        .map(|(t, m)| (t, m.filter(|m| !quiet.contains(m))))
        .collect();
    PrePass {
        tasks,
        quiet,
        seeding_matters,
    }
}
