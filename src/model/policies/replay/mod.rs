//! Replay of a capture through a model (§5): canonical events → driver events, and the
//! comparison of every observed `rseq_update` with the model's prediction.
//!
//! Translation (§5.1): `sched_switch` → SWITCH; any record whose task is not the one the model
//! has on that CPU → an implicit SWITCH first (captures miss some switches, e.g. away from
//! idle); `sched_migrate_task` with orig ≠ dest → MIGRATE; `task_newtask` + `sched_process_fork`
//! → FORK (`clone_flags & CLONE_VM` = shares mm); `sched_wakeup_new` → first placement;
//! `sched_process_exec` → EXEC; `sched_process_exit` → EXIT; the tick's `hrtimer_expire_entry`
//! → TICK; `tick_stop` → tick stopped; `rseq_update` → a RET_USER
//! that had TIF_NOTIFY_RESUME and a registered rseq area (both forced), then the comparison.
//!
//! mm identities are those of [`ObservedState`] (run in lockstep), so model lanes line up
//! with the observed lanes of a `timeline::Timeline` built from the same trace.
//!
//! Seeding (`Params::seed`): an mm that existed before the capture has a history the model
//! never saw (slots, cidmask, `max_nr_cid`, `next_scan`). Its `mm_users` is the number of its
//! tasks the capture shows before they could have been created; its CPU slots start unknown;
//! the first `rseq_update` of the mm on each CPU seeds that slot (the observed CID becomes the
//! slot's `Valid` CID, is set in the cidmask, raises `max_nr_cid`, and is taken from any other
//! slot that held it); such an observation is counted as a seed, not checked. Its `next_scan`
//! stays unknown (no tick queues a scan) until a fork re-arms it or an `rseq_update` shows the
//! tick-scan signature (no switch-in or migration since the task's previous update, a tick on
//! its CPU in between): the model then runs that scan. Without seeding, such mms start empty.

//!
//! Untraced steps (docs/models.md §5.3, `untraced.rs`): the kernel runs some CID steps away
//! from the tracepoint next to them, and at many CPUs other CPUs act in the gap. When the plain
//! replay disagrees, `search.rs` looks for placements of those steps that explain the observed
//! CIDs; the replay is run again with them, and each is reported in `Agreement::trace_gaps`.

mod hz;
mod prepass;
mod probed;
mod probes;
mod replayer;
mod search;
mod steps;
mod untraced;
mod windows;

pub use hz::{HZ_CANDIDATES, HzInference, infer_hz, infer_hz_detail, resolve_params, tick_phase};
pub use prepass::{PrePass, preexisting_tasks};
pub use probed::Probed;
pub use replayer::Replayer;
pub use untraced::{EarlyExit, EarlyFork, Placements};
pub use windows::{ExitWindow, ForkWindow, exit_windows, fork_windows};

use super::kind::PolicyKind;
use super::params::{Params, UntracedSearch};
use super::run::PolicyRun;
use crate::events::Trace;

/// A fresh replayer for `trace`, with its pre-existing tasks declared and its stoppers named.
fn new_replayer(trace: &Trace, policy: PolicyKind, params: &Params) -> Replayer {
    let (mut resolved, phase) = resolve_params(trace, params);
    // the steps the capture's CID probes mark run there (docs/models.md §5.6)
    let plan = probes::plan(trace);
    // (the compaction a probe saw is that kernel's policy's: another policy replayed on the
    // capture decides its own, or the comparison would only repeat the kernel's)
    let kernels_own = trace
        .kernel_release
        .as_deref()
        .and_then(|r| crate::model::kernel::model_for_kernel(r, trace.kernel_scan_batch))
        .and_then(|m| m.policy)
        == Some(policy);
    resolved.observed_scans = plan.probed.scan && kernels_own;
    let ncpus = resolved.cpus;
    let mut r = Replayer::new(policy, resolved, phase);
    // (reused tids: the observed resolution's mm ids are the timeline's)
    r.tgid_changes = trace.tgid_changes.clone();
    r.untraced.stoppers = trace
        .tasks
        .iter()
        .filter(|(_, m)| trace.strings.get_str(m.comm).starts_with("migration/"))
        .map(|(&t, _)| t)
        .collect();
    let t0 = trace.events.first().map_or(0, |e| e.ts);
    let pre = preexisting_tasks(trace, ncpus);
    r.quiet = pre.quiet;
    for (tid, mm) in pre.tasks {
        r.declare_existing(t0, tid, mm);
    }
    r.untraced.probed = plan.probed;
    r.exit_records = plan.exit_records;
    r.untraced.vm_fork_probes = plan.vm_forks;
    r.untraced.placements = plan.placements;
    r
}

/// Replays `trace` through `policy` with the untraced steps at `placements`.
fn replay_placed(
    trace: &Trace,
    policy: PolicyKind,
    params: &Params,
    placements: &Placements,
) -> PolicyRun {
    let mut r = new_replayer(trace, policy, params);
    // (a search's placements include the probes' own)
    if !placements.is_empty() {
        r.untraced.placements = placements.clone();
    }
    for (i, ev) in trace.events.iter().enumerate() {
        r.apply(i, &ev, &trace.tasks);
    }
    r.finish()
}

/// Replays `trace` through `policy`. `params.cpus == 0` takes the capture's CPU count,
/// `params.hz == 0` infers HZ from the tick spacing (default 1000).
///
/// When some observed CIDs disagree, the replay looks for placements of untraced steps that
/// explain them (docs/models.md §5.3) and replays again with them; the placements are reported
/// in `agreement.trace_gaps`.
pub fn replay(trace: &Trace, policy: PolicyKind, params: &Params) -> PolicyRun {
    let run = replay_placed(trace, policy, params, &Placements::default());
    // The search fills trace gaps of the kernel's own policy; unless that policy is known to be
    // the kernel's, a model that misses half of the observations is taken for the wrong one
    // for this capture, and no placement is looked for (Params::untraced).
    let missed = run.agreement.as_ref().is_some_and(|a| {
        a.agreed < a.checked
            && match params.untraced {
                UntracedSearch::WhenClose => a.agreed * 2 >= a.checked,
                UntracedSearch::Always => true,
                UntracedSearch::Never => false,
            }
    });
    if !missed {
        return run;
    }
    // a probed step ran by its probe: its window ends there (docs/models.md §5.6)
    let plan = probes::plan(trace);
    let mut windows = fork_windows(trace);
    for w in &mut windows {
        if let Some(&p) = plan.fork_probe.get(&w.child) {
            w.probed = true;
            match plan.fork_done.get(&w.child) {
                // 7.x: the step (sched_mm_cid_fork's add-user, allocation, walk) runs inside
                // the probed function, after the probe and before its return
                Some(&d) if policy == PolicyKind::OwnerMode && d > p => {
                    w.first = p;
                    w.record = d;
                    w.inside = true;
                }
                // 6.x: copy_mm's mmget comes right before it
                _ => {
                    w.record = w.record.min(p);
                    w.first = w.first.min(w.record);
                }
            }
        }
    }
    let mut exits = exit_windows(trace);
    for w in &mut exits {
        // (the release runs inside the probed function: at the probe, or late)
        if let Some(&p) = plan.exit_probe.get(&w.tid) {
            w.record = w.record.min(p);
            w.first = w.record;
        }
    }
    let start = new_replayer(trace, policy, params);
    let found = search::search_placements(trace, policy, start, &windows, &exits);
    if found.is_empty() {
        return run;
    }
    let placed = replay_placed(trace, policy, params, &found);
    let agreed = |r: &PolicyRun| r.agreement.as_ref().map_or(0, |a| a.agreed);
    if agreed(&placed) > agreed(&run) {
        placed
    } else {
        run
    }
}

/// Replays `trace` through each of `policies` (the compare view: one run per model).
pub fn replay_all(trace: &Trace, policies: &[PolicyKind], params: &Params) -> Vec<PolicyRun> {
    policies.iter().map(|&k| replay(trace, k, params)).collect()
}
