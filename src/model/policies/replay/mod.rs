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

mod ahead;
mod beside;
mod exit_queue;
mod feed;
mod fork_gets;
mod hz;
mod infer;
mod inferred;
mod late_reads;
mod outcomes;
mod prepared;
mod prepass;
mod probed;
mod probes;
mod replayer;
mod search;
mod steps;
mod untraced;
mod windows;

pub use ahead::side_priority;
pub use hz::{HZ_CANDIDATES, HzInference, infer_hz, infer_hz_detail, resolve_params, tick_phase};
pub use prepass::{FirstPassOf, PrePass, preexisting_tasks};
pub use probed::Probed;
pub use replayer::Replayer;
pub use untraced::{EarlyExit, EarlyFork, Placements};
pub use windows::{ExitWindow, ForkWindow, exit_windows, fork_windows};

use super::kind::PolicyKind;
use super::params::{InferSteps, Params};
use super::run::{self, PolicyRun};
use crate::events::Trace;
use prepared::Prepared;

/// Replays `trace` through `policy`. `params.cpus == 0` takes the capture's CPU count,
/// `params.hz == 0` infers HZ from the tick spacing (default 1000).
///
/// Three stages, each whole before the next:
/// 1. the plain replay: every untraced step at its default place (or at its probe);
/// 2. with `params.infer` on and misses left, the proposal: placements of untraced steps that
///    explain them (`infer::propose`, data: a list of steps, each inside its window);
/// 3. the final replay with those steps, keeping only steps that break no invariant of the
///    model and do not turn the plain figure into a fit it is not (`infer::settle`).
///
/// `agreement.predicted` is stage 1's figure, `agreed` stage 3's, `inferred_steps` the steps
/// with what each changed.
pub fn replay(trace: &Trace, policy: PolicyKind, params: &Params) -> PolicyRun {
    let t0 = std::time::Instant::now();
    let prep = Prepared::new(trace, policy, params);
    replay_prepared(&prep, t0)
}

/// [`replay`] of the model's own parameters (`params.seed` on), and beside it, on another
/// thread, the plain replay without seeding (what seeding adds to the prediction: `stats`'
/// `without_seeding`). Both start from one preparation (HZ, probes, the tasks that existed
/// before the capture): the two runs differ in seeding and inference only. `beside` false runs
/// them one after the other (a capture of many tasks: their states are not held at once).
///
/// Seeding changes only the mms that existed before the capture, and a policy's state is per
/// mm: the replay without seeding models those only ([`Prepared::unseeded_older`]), and the
/// figures of the mms begun in the capture are the seeded plain replay's ([`without_seeding`]).
pub fn replay_with_unseeded(
    trace: &Trace,
    policy: PolicyKind,
    params: &Params,
    beside: bool,
) -> (PolicyRun, Option<run::Agreement>) {
    let t0 = std::time::Instant::now();
    let prep = Prepared::new(trace, policy, params);
    if !params.seed {
        return (replay_prepared(&prep, t0), None);
    }
    // (made where it runs: finding its end reads the capture's updates from the end)
    let older_figures = || {
        let older = prep.unseeded_older();
        older.run(&older.plan.placements, false, None).0.agreement
    };
    if !prep.seeding_matters() {
        // no mm that existed before the capture reports a CID: seeding changes no figure,
        // and the plain replay's are those without it (run it when that proves wrong)
        let run = replay_prepared(&prep, t0);
        let u = match run.agreement.as_ref().and_then(plain_figures) {
            Some(u) => Some(u),
            None => combine(older_figures(), &run),
        };
        return (run, u);
    }
    let (run, u) = if !beside {
        let u = older_figures();
        (replay_prepared(&prep, t0), u)
    } else {
        std::thread::scope(|sc| {
            let side = sc.spawn(|| {
                ahead::side_priority();
                older_figures()
            });
            let run = replay_prepared(&prep, t0);
            let side = side.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (run, side)
        })
    };
    let u = combine(u, &run);
    (run, u)
}

/// [`without_seeding`] of a replay of the older mms and the seeded run, where both have
/// figures.
fn combine(older: Option<run::Agreement>, run: &PolicyRun) -> Option<run::Agreement> {
    Some(without_seeding(older?, run.agreement.as_ref()?))
}

/// The figures of the plain replay without seeding: those of the mms that existed before the
/// capture from `older` (a replay modelling those only), those of the mms begun in it from
/// `seeded`'s plain replay (seeding never touches them).
fn without_seeding(older: run::Agreement, seeded: &run::Agreement) -> run::Agreement {
    let fresh = seeded.predicted_fresh;
    let pre = older.preexisting;
    let total = run::Tally {
        checked: fresh.checked + pre.checked,
        agreed: fresh.agreed + pre.agreed,
    };
    run::Agreement {
        checked: total.checked,
        agreed: total.agreed,
        fresh,
        predicted: total,
        predicted_fresh: fresh,
        unmodelled: seeded.unmodelled,
        per_mm: older
            .per_mm
            .into_iter()
            .filter(|a| !a.begins_in_capture)
            .collect(),
        first_disagreement: None,
        ..older
    }
}

/// The plain replay's figures of a seeded run that seeded nothing (what a replay without
/// seeding gives); `None` when it checked an mm that existed before the capture.
fn plain_figures(a: &run::Agreement) -> Option<run::Agreement> {
    (a.seeds == 0 && a.preexisting.checked == 0).then(|| run::Agreement {
        checked: a.predicted.checked,
        agreed: a.predicted.agreed,
        fresh: a.predicted_fresh,
        seeded: false,
        inferred_steps: Vec::new(),
        ..a.clone()
    })
}

/// The three stages of [`replay`] on a preparation made at `t0`. Where the capture is small
/// enough for three model states at once, the proposal (stage 2) runs beside the plain replay,
/// on the misses it publishes as it goes (`feed.rs`), and the final replay's first round beside
/// both, on the steps the search hands over (`beside.rs`); the results are those of the stages
/// run one after the other.
fn replay_prepared(prep: &Prepared<'_>, t0: std::time::Instant) -> PolicyRun {
    let timing = std::env::var_os("CIDSCOPE_TIMING").is_some();
    let policy = prep.policy;
    let t1 = t0.elapsed();
    let infer = prep.params().infer == InferSteps::Auto;
    let family = infer.then(|| infer::family_allows(prep));
    let plain_only = || prep.run(&prep.plan.placements, false, None);
    // (stage 2's result: `None` with inference off, `Err` why the family refuses it or why
    // no search ran)
    let (plain, outcomes, stage2) = match family {
        Some(Ok(())) if prep.keeps_model_copies() => {
            // three threads: the plain replay, the search behind it, the final replay's
            // first round behind the search
            let (misses, steps) = (feed::MissFeed::default(), beside::StepFeed::default());
            std::thread::scope(|sc| {
                let search =
                    sc.spawn(|| infer::propose(prep, feed::Misses::fed(&misses), Some(&steps)));
                let fin = sc.spawn(|| beside::final_beside(prep, &misses, &steps));
                let (plain, outcomes) = prep.run_plain_beside(&misses);
                let (proposal, fin) = (feed::joined(search), feed::joined(fin));
                (plain, outcomes, Some(proposal.map(|p| (p, fin))))
            })
        }
        Some(Ok(())) => {
            let (plain, outcomes, misses) = prep.run_plain();
            let proposal = infer::propose(prep, misses, None);
            (plain, outcomes, Some(proposal.map(|p| (p, None))))
        }
        Some(Err(why)) => {
            let (run, o) = plain_only();
            (run, o, Some(Err(why)))
        }
        None => {
            let (run, o) = plain_only();
            (run, o, None)
        }
    };
    let t2 = t0.elapsed();
    let note = |what: &str| {
        if timing {
            eprintln!(
                "replay {policy}: prepare {t1:?}, plain and proposal {:?}, {what} {:?}",
                t2 - t1,
                t0.elapsed() - t2
            );
        }
    };
    // (a value a CID probe read that the plain replay contradicts is one too: search.rs)
    let missed = plain
        .agreement
        .as_ref()
        .is_some_and(|a| a.agreed < a.checked || a.probe_checks.matched < a.probe_checks.checked);
    let mut plain = plain;
    let why = match stage2 {
        None => "off (--infer-steps off): the plain replay".to_string(),
        _ if !missed => {
            "nothing to infer: the plain replay agrees with every observed CID".to_string()
        }
        Some(Err(why)) => why,
        Some(Ok((proposal, beside))) => {
            let rival = proposal.rival.clone();
            let mut run = if proposal.is_empty() {
                plain
            } else {
                // (the plain run is kept for the case the steps are dropped)
                let (run, kept) = infer::settle(prep, proposal, plain.clone(), &outcomes, beside);
                let steps = run
                    .agreement
                    .as_ref()
                    .is_some_and(|a| !a.inferred_steps.is_empty());
                match steps.then(|| infer::beats_other_family(prep, &run, &kept, rival.as_ref())) {
                    Some(Err(why)) => {
                        note("final+family");
                        if let Some(a) = &mut plain.agreement {
                            a.inference = why;
                        }
                        return plain;
                    }
                    _ => run,
                }
            };
            note("final");
            let n = run.agreement.as_ref().map_or(0, |a| a.inferred_steps.len());
            if let Some(a) = &mut run.agreement {
                a.inference = if n == 0 {
                    "auto: no placement of an untraced step explains a miss within the search's budget".to_string()
                } else {
                    format!("auto: {n} untraced steps placed where the plain replay missed")
                };
            }
            return run;
        }
    };
    note("done");
    if let Some(a) = &mut plain.agreement {
        a.inference = why;
    }
    plain
}

/// Replays `trace` through each of `policies` (the compare view: one run per model).
pub fn replay_all(trace: &Trace, policies: &[PolicyKind], params: &Params) -> Vec<PolicyRun> {
    policies.iter().map(|&k| replay(trace, k, params)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> Trace {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
        crate::sources::load(&path, &Default::default()).expect("the capture loads")
    }

    /// A summary's recording keeps of the predicted updates only their number and each mm's
    /// CIDs: those a full recording's list gives.
    #[test]
    fn a_summary_counts_the_updates_a_full_recording_lists() {
        use crate::model::policies::params::Recording;
        let trace = load("traces/kernels/k6.18.15-c16-churn.ftrace.txt.zst");
        let run = |recording| {
            let params = Params {
                recording,
                ..Params::default()
            };
            replay(&trace, PolicyKind::LazyCompact, &params)
        };
        let (full, summary) = (run(Recording::Full), run(Recording::Summary));
        assert!(
            full.folded.count == 0 && full.updates.len() > 100,
            "{}",
            full.updates.len()
        );
        assert!(summary.folded.count > 0, "nothing folded");
        assert_eq!(summary.predicted_updates(), full.updates.len() as u64);
        // (the full recording's CIDs are its list's alone)
        assert_eq!(summary.predicted_cids(), full.predicted_cids());
    }

    /// The figures without seeding are the seeded plain replay's where no mm that existed
    /// before the capture reports a CID, and otherwise its figures of the mms begun in the
    /// capture with a replay's of the older mms alone: they must be those of a whole replay
    /// run without seeding, also where that replay misses most updates of the older mms (the
    /// per-mm split must hold where the figures are not all agreement).
    #[test]
    fn figures_without_seeding_are_the_unseeded_replays() {
        let (mut shortcuts, mut older_misses, mut cut_short) = (0, false, false);
        for name in [
            "traces/kernels/k6.18.15-c16-churn.ftrace.txt.zst",
            "traces/kernels/k6.12.117-c16-exec.ftrace.txt.zst",
            "traces/cyclictest.ftrace.txt",
            "traces/cyclictest-pipe.perf.data",
        ] {
            let trace = load(name);
            let policy = PolicyKind::LazyCompact;
            let params = Params::default();
            let prep = Prepared::new(&trace, policy, &params);
            shortcuts += !prep.seeding_matters() as usize;
            let (_, quick) = replay_with_unseeded(&trace, policy, &params, true);
            let unseeded = prep.unseeded();
            let (run, _) = unseeded.run(&unseeded.plan.placements, false, None);
            let (a, b) = (quick.expect("figures"), run.agreement.expect("figures"));
            let figures = |a: &run::Agreement| (a.checked, a.agreed, a.fresh, a.preexisting);
            assert_eq!(figures(&a), figures(&b), "{name}");
            older_misses |= b.preexisting.agreed < b.preexisting.checked;
            // (the replay of the older mms ends at their last update)
            let end = prep.unseeded_older().end();
            cut_short |= b.preexisting.checked > 0 && end < trace.events.len();
        }
        // (both kinds of capture are among them)
        assert!(
            (1..4).contains(&shortcuts),
            "{shortcuts} of 4 without seeding"
        );
        assert!(
            older_misses,
            "no capture whose older mms the replay without seeding misses"
        );
        assert!(
            cut_short,
            "no capture whose older mms report CIDs and stop before its end"
        );
    }
}
