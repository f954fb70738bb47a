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

mod hz;
mod prepass;
mod replayer;

pub use hz::{HZ_CANDIDATES, HzInference, infer_hz, infer_hz_detail, resolve_params, tick_phase};
pub use prepass::{PrePass, preexisting_tasks};
pub use replayer::Replayer;

use super::kind::PolicyKind;
use super::params::Params;
use super::run::PolicyRun;
use crate::events::Trace;

/// Replays `trace` through `policy`. `params.cpus == 0` takes the capture's CPU count,
/// `params.hz == 0` infers HZ from the tick spacing (default 1000).
pub fn replay(trace: &Trace, policy: PolicyKind, params: &Params) -> PolicyRun {
    let (p, phase) = resolve_params(trace, params);
    let ncpus = p.cpus;
    let mut r = Replayer::new(policy, p, phase);
    let t0 = trace.events.first().map_or(0, |e| e.ts);
    let pre = preexisting_tasks(trace, ncpus);
    r.quiet = pre.quiet;
    for (tid, mm) in pre.tasks {
        r.declare_existing(t0, tid, mm);
    }
    for (i, ev) in trace.events.iter().enumerate() {
        r.apply(i, &ev, &trace.tasks);
    }
    r.finish()
}

/// Replays `trace` through each of `policies` (the compare view: one run per model).
pub fn replay_all(trace: &Trace, policies: &[PolicyKind], params: &Params) -> Vec<PolicyRun> {
    policies.iter().map(|&k| replay(trace, k, params)).collect()
}

