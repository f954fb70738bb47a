//! The kernel's steps of one CID change (`e`): for the task the cursor is about (see
//! [`super::focus`]), its latest CID change walked step by step — the compactions since its
//! previous CID, the switch-in, the CID get (the slot's CID, or a free bit of the cidmask),
//! the rseq_update that reports it — each with the cidmask before and after. The model shown
//! first supplies what no tracepoint records (its cidmask, compactions and why); without one,
//! the steps are what the capture shows, and what it cannot show is said.

use super::overlays::{CidStep, Walk};
use super::state::State;
use crate::events::{EventKind, Tid, fmt_dur};
use crate::model::MmId;
use crate::model::policies::why::ModelCause;
use crate::model::policies::{PolicyKind, PolicyRun, Trigger};

/// Compactions shown before the switch-in, at most (the latest).
const COMPACTIONS: usize = 2;

/// The model's cidmask of `mm` at `ts`: every CID a CPU's slot holds (valid, lazy or in
/// transit) or a task of the mm owns. Its count is checked against the run's weight.
pub fn model_cidmask(run: &PolicyRun, mm: MmId, ts: u64) -> Vec<i32> {
    let mut bits: Vec<i32> = run.slots_at(mm, ts).iter().filter_map(|s| s.cid).collect();
    let end = run.task_cids.partition_point(|c| c.ts <= ts);
    let mut last: Vec<(Tid, Option<i32>)> = Vec::new();
    for c in run.task_cids[..end].iter().rev().filter(|c| c.mm == mm) {
        if !last.iter().any(|(t, _)| *t == c.tid) {
            last.push((c.tid, c.cid));
        }
    }
    bits.extend(last.iter().filter_map(|(_, c)| *c));
    bits.sort_unstable();
    bits.dedup();
    bits
}

fn names(policy: PolicyKind) -> (&'static str, &'static str, &'static str) {
    // (switch step, get, allocation from the cidmask)
    match policy {
        PolicyKind::OwnerMode => (
            "mm_cid_switch_to",
            "mm_cid_from_cpu / mm_cid_from_task",
            "mm_get_cid",
        ),
        _ => ("switch_mm_cid", "mm_cid_get", "__mm_cid_try_get"),
    }
}

fn trigger_name(policy: PolicyKind, t: Trigger) -> &'static str {
    match (t, policy) {
        (Trigger::Tick, PolicyKind::LazyCompact) => "task_mm_cid_work, queued by the tick",
        (Trigger::Tick, _) => "the tick",
        (Trigger::Resume, _) => "return to user (resume)",
    }
}

/// The walk for the task the cursor is about; an error says why there is none.
pub fn walk(st: &State) -> Result<Walk, String> {
    let task = super::focus::focus_task(st)
        .ok_or_else(|| "no task of the process at the cursor".to_string())?;
    let ch = st
        .timeline
        .last_cid_change(&st.trace, task, st.view.cursor)
        .ok_or_else(|| format!("task {task} reports no CID at or before the cursor"))?;
    let at = st.trace.events.ts(ch.idx);
    let origin = st.origin();
    let rel = |ts: u64| format!("+{}", fmt_dur(ts.saturating_sub(origin)));
    let model = st.models.views.first().map(|m| &m.run);
    let mm = ch.mm;
    let mask = |ts: u64| model.map(|r| model_cidmask(r, mm, ts));
    let mut steps = Vec::new();
    let prev_ts = st
        .timeline
        .task_cid_changes
        .changes(task)
        .and_then(|l| {
            let k = l.count_upto(st.view.cursor).checked_sub(2)?;
            l.get(k)
        })
        .map(|i| st.trace.events.ts(i as usize));
    if let Some(old) = ch.old {
        steps.push(CidStep {
            name: "its previous CID".into(),
            ts: prev_ts.unwrap_or(at),
            text: format!(
                "task {task} held CID {old}{}",
                prev_ts.map_or(String::new(), |t| format!(" (reported at {})", rel(t)))
            ),
            before: None,
            after: prev_ts.and_then(mask),
        });
    }
    let policy = model.map(|r| r.policy);
    if let (Some(run), Some(p)) = (model, policy) {
        let lo = prev_ts.map_or(0, |t| run.compactions.partition_point(|c| c.ts <= t));
        let hi = run.compactions.partition_point(|c| c.ts <= at);
        let mut shown: Vec<_> = run.compactions[lo..hi]
            .iter()
            .filter(|c| c.mm == mm && c.scanned)
            .rev()
            .take(COMPACTIONS)
            .collect();
        shown.reverse();
        for c in shown {
            let (freed, lazied) = run.compaction_slots(c);
            let list = |v: &[crate::model::policies::why::SlotCid]| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.iter()
                        .map(|s| s.cid.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            let cpus = match (c.cpus_scanned.first(), c.cpus_scanned.last()) {
                (Some(a), Some(b)) if a != b => format!("CPUs {a}-{b}"),
                (Some(a), _) => format!("CPU {a}"),
                _ => "no CPU".into(),
            };
            let batch = c
                .batch
                .map_or(String::new(), |(k, n)| format!(", scan batch {k} of {n}"));
            steps.push(CidStep {
                name: format!("compaction ({}{batch})", trigger_name(p, c.trigger)),
                ts: c.ts,
                text: format!(
                    "on CPU{} in task {}: scanned the slots of {cpus}; freed {}, lazied {}; weight {} after",
                    c.cpu,
                    c.tid,
                    list(&freed),
                    list(&lazied),
                    c.weight_after
                ),
                before: mask(c.ts.saturating_sub(1)),
                after: mask(c.ts),
            });
        }
    }
    let (switch_fn, get_fn, alloc_fn) = names(policy.unwrap_or(PolicyKind::LazyCompact));
    if let Some(i) = ch.switch_in {
        let e = st.trace.events.at(i);
        let prev = match e.kind {
            EventKind::SchedSwitch { .. } => format!("{}-{}", st.trace.comm_of(e.tid), e.tid),
            _ => "?".into(),
        };
        let held = match (model, ch.slot_before) {
            (Some(run), _) => run
                .slots_at(mm, e.ts.saturating_sub(1))
                .iter()
                .find(|s| s.cpu == e.cpu)
                .and_then(|s| s.cid)
                .map_or("no CID".to_string(), |c| format!("CID {c}")),
            (None, Some((c, t))) => format!("CID {c} (last shown for task {t})"),
            (None, None) => "no CID the capture shows".into(),
        };
        let how = if model.is_some() {
            "the model's"
        } else {
            "the capture's"
        };
        steps.push(CidStep {
            name: format!("switch-in ({switch_fn})"),
            ts: e.ts,
            text: format!(
                "sched_switch on CPU{}: {prev} → {}-{task}; the CPU's slot (pcpu_cid) held {held} for the process ({how} view)",
                e.cpu,
                st.trace.comm_of(task)
            ),
            before: mask(e.ts.saturating_sub(1)),
            after: mask(e.ts),
        });
    }
    match model.and_then(|r| r.why_cid(task, at).map(|w| (r, w))) {
        Some((run, w)) => {
            let cid = w.change.cid.map_or("none".to_string(), |c| c.to_string());
            let text = match &w.cause {
                ModelCause::SlotOfCpu(cpu) => format!(
                    "{get_fn}: CPU{cpu}'s slot holds CID {cid} for the process, valid: the task takes it, the cidmask does not change"
                ),
                ModelCause::Allocated(Some(cpu)) => format!(
                    "{get_fn}: CPU{cpu}'s slot held no CID the task may use: {alloc_fn} takes the first zero bit of the cidmask, {cid}, and the slot keeps it"
                ),
                ModelCause::Allocated(None) => {
                    format!("{get_fn}: {alloc_fn} takes the first zero bit of the cidmask, {cid}")
                }
                ModelCause::First => format!(
                    "the task's first CID in the model (fork, exec or registration): {alloc_fn} takes the first zero bit, {cid}"
                ),
                ModelCause::Compacted(c) => format!(
                    "the compaction at {} ({}) took the old CID back: {get_fn} gives CID {cid}",
                    rel(c.ts),
                    trigger_name(run.policy, c.trigger)
                ),
                ModelCause::ModeSwitch(m) => format!(
                    "a mode switch to {} ({} users, max_cids {}): the CID moves with it, now {cid}",
                    if m.percpu { "per-CPU" } else { "per-task" },
                    m.users,
                    m.max_cids
                ),
            };
            steps.push(CidStep {
                name: format!("get ({get_fn})"),
                ts: w.change.ts,
                text,
                before: mask(w.change.ts.saturating_sub(1)),
                after: mask(w.change.ts),
            });
        }
        None => steps.push(CidStep {
            name: format!("get ({get_fn})"),
            ts: at,
            text: format!(
                "{}: which path of {get_fn} ran (the slot's CID, or a free bit by {alloc_fn}) is not in the capture; --policy P shows a model's",
                ch.cause.describe()
            ),
            before: None,
            after: None,
        }),
    }
    let obs_before = ch
        .idx
        .checked_sub(1)
        .map(|i| st.timeline.state_after(&st.trace, i).cidmask(mm));
    let obs_after = st.timeline.state_after(&st.trace, ch.idx).cidmask(mm);
    steps.push(CidStep {
        name: "rseq_update".into(),
        ts: at,
        text: format!(
            "on return to user the task reports CID {} on CPU{} (the capture's cidmask: CIDs its running tasks confirmed)",
            ch.new, ch.cpu
        ),
        before: obs_before,
        after: Some(obs_after),
    });
    let source = match model {
        Some(r) => format!("{} model (slots and task CIDs)", r.policy.id()),
        None => "the capture (confirmed CIDs of running tasks)".into(),
    };
    Ok(Walk {
        title: format!(
            "task {task} {}CID {} on CPU{} at {}",
            ch.old.map_or(String::new(), |o| format!("CID {o} → ")),
            ch.new,
            ch.cpu,
            rel(at)
        ),
        source,
        steps,
        at: 0,
    })
}
