//! Stages 2 and 3 of a replay (docs/models.md §5.3): the proposal of placements for the
//! untraced steps where the plain replay disagrees, and the final replay that keeps only those
//! a reviewer would accept.
//!
//! The proposal is data: a list of [`Step`]s, each naming the event it moves and where to,
//! found by `search.rs` from snapshots of a replay. The final replay runs the capture once more
//! with them ([`Placements`] built from the list) and each step is reported as an
//! [`InferredStep`] with the window it lies in and the updates it changed.

use super::super::kind::PolicyKind;
use super::super::run::{Agreement, InferredStep, PolicyRun};
use super::ahead;
use super::beside::{Beside, StepFeed, Windows};
use super::feed::{self, Misses};
use super::inferred::{self, CHECK_AFTER, Context};
use super::outcomes::Outcomes;
use super::prepared::Prepared;
use super::search;
use super::steps::Step;
use super::steps::{EventsAt, SEARCH_LOOKBACK};
use super::untraced::Placements;
use super::windows::{ExitWindow, ForkWindow};
use crate::model::tasks::MmId;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest capture whose other family's plain replay runs before the search
/// ([`rival_first`]): where it costs no more than the search may spend by default
/// (`search::default_budget`, n/2 + 20,000 events).
const RIVAL_FIRST_EVENTS: u64 = 40_000;

/// Final replays that may drop a step that broke an invariant before all are dropped.
const VETTING_ROUNDS: usize = 3;

/// What the proposal stage found: the steps in the order they were accepted, and the windows
/// they were drawn from.
pub(super) struct Proposal {
    pub steps: Vec<Step>,
    /// The candidate each step came with (`steps`' length; one candidate may place two).
    groups: Vec<u32>,
    /// The mms whose misses they explain.
    mms: Vec<MmId>,
    windows: Windows,
    /// The other family's plain replay, where it ran before the search ([`rival_first`]).
    pub rival: Option<Agreement>,
}

impl Proposal {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    fn empty(windows: Windows) -> Proposal {
        Proposal {
            steps: Vec::new(),
            groups: Vec::new(),
            mms: Vec::new(),
            windows,
            rival: None,
        }
    }
}

/// A policy's family: the kernels whose steps it models (6.4-6.18 and the seed-000 patches;
/// 6.19+).
fn family(p: PolicyKind) -> &'static str {
    match p {
        PolicyKind::OwnerMode => "6.19+",
        PolicyKind::LazyCompact | PolicyKind::ResumeBatch => "6.4-6.18",
    }
}

/// The policy of the capture's kernel, when its release is known (`--kernel-version`, the
/// capture's header).
fn kernel_policy(prep: &Prepared) -> Option<PolicyKind> {
    prep.params().kernel_policy.or_else(|| {
        let t = prep.trace;
        t.kernel_release
            .as_deref()
            .and_then(|r| crate::model::kernel::model_for_kernel(r, t.kernel_scan_batch))
            .and_then(|m| m.policy)
    })
}

/// The family of the capture's kernel where it is known: from its release (the policy it
/// runs), else from what the capture shows of it ([`crate::model::kernel::family_shown`]),
/// with why in words.
fn known_family(prep: &Prepared) -> Option<(&'static str, String)> {
    if let Some(k) = kernel_policy(prep) {
        return Some((
            family(k),
            format!("the capture's kernel runs {k} ({})", family(k)),
        ));
    }
    crate::model::kernel::family_shown(prep.trace).map(|shown| {
        let f = family(shown.policy);
        (f, format!("the capture's kernel is {f}: {}", shown.because))
    })
}

/// Whether inference may refine `prep`'s policy on this capture at all: steps are timings of
/// the kernel's own code, and a policy of another family than the capture's kernel (its
/// release known, or its family shown by the capture) has steps that kernel never runs.
/// `Err` says why inference does not run.
pub(super) fn family_allows(prep: &Prepared) -> Result<(), String> {
    let asked = prep.policy;
    match known_family(prep) {
        Some((f, why)) if f != family(asked) => Err(format!(
            "not run: {why}; the steps {asked} would place are not that kernel's"
        )),
        _ => Ok(()),
    }
}

/// Where the capture's kernel is not known, whether the steps inferred for `prep`'s policy
/// explain the capture better than the other family explains it, without any and with the same
/// steps (`agreed` of `checked` against that family's replays): steps that only bring a policy
/// up to what the other family predicts by itself, or reaches with them too (a vCPU stall
/// both families need), are no evidence for the policy's family, and a capture that cannot
/// tell the families apart must not make a wrong one fit. `Err` says why the steps are dropped.
pub(super) fn beats_other_family(
    prep: &Prepared,
    run: &PolicyRun,
    steps: &[Step],
    rival_plain: Option<&Agreement>,
) -> Result<(), String> {
    if known_family(prep).is_some() {
        return Ok(());
    }
    let asked = prep.policy;
    let rival = rival_policy(asked);
    let Some(a) = run.agreement.as_ref() else {
        return Ok(());
    };
    let lean = rival_prepared(prep);
    let pct = |x: u64, n: u64| 100.0 * x as f64 / n.max(1) as f64;
    let limit = misses_that_lose(a, prep.trace.events.updates_at_most() as u64);
    // the rival's plain replay first (it may have run before the search): the steps of the
    // second only when it is beaten. Each stops once its misses make it lose (`None`): its
    // share can then only be below `a`'s.
    for with_steps in [false, true] {
        let r = match (with_steps, rival_plain) {
            (false, Some(b)) => Some(b.clone()),
            (false, None) => lean.agreement_below(&lean.plan.placements, limit),
            (true, _) => lean.agreement_below(&placements(&lean, steps), limit),
        };
        let Some(b) = r.as_ref() else {
            continue;
        };
        // (as shares: the two replays may check a seed more or less)
        if a.agreed as u128 * b.checked as u128 > b.agreed as u128 * a.checked as u128 {
            continue;
        }
        return Err(if with_steps {
            format!(
                "steps dropped: with them {asked} agrees with {:.1}% of the observed CIDs, and {rival} ({}) with the same steps with {:.1}%: the capture does not tell the two families apart (its kernel is not named: --kernel-version would say)",
                pct(a.agreed, a.checked),
                family(rival),
                pct(b.agreed, b.checked)
            )
        } else {
            format!(
                "steps dropped: with them {asked} agrees with {:.1}% of the observed CIDs, no more than {rival} ({}) predicts without any ({:.1}%): the capture does not show {asked}'s family (its kernel is not named: --kernel-version would say)",
                pct(a.agreed, a.checked),
                family(rival),
                pct(b.agreed, b.checked)
            )
        });
    }
    Ok(())
}

/// The family [`beats_other_family`] holds a policy against.
fn rival_policy(asked: PolicyKind) -> PolicyKind {
    match asked {
        PolicyKind::OwnerMode => PolicyKind::LazyCompact,
        _ => PolicyKind::OwnerMode,
    }
}

/// `prep` for the family [`beats_other_family`] holds its policy against, its figures only.
fn rival_prepared<'a>(prep: &Prepared<'a>) -> Prepared<'a> {
    let mut lean = prep.for_policy(rival_policy(prep.policy));
    lean.lean();
    lean
}

/// The misses from which a replay's share of agreement is certainly below `a`'s (agreed of
/// checked), where it checks at most `updates` updates: with `m` misses its share is at most
/// `1 - m / updates`, below `a`'s once `m * a.checked > updates * (a.checked - a.agreed)`.
/// `u64::MAX` (never) where `a` checked nothing.
fn misses_that_lose(a: &Agreement, updates: u64) -> u64 {
    if a.checked == 0 {
        return u64::MAX;
    }
    let missed = (a.checked - a.agreed) as u128;
    let m = updates as u128 * missed / a.checked as u128 + 1;
    u64::try_from(m).unwrap_or(u64::MAX)
}

/// The other family's plain replay, run before the search where the capture's kernel is not
/// named and that replay costs no more than the search may spend (a small capture: most of
/// what inference costs there is the search). When it predicts every observed CID, no step
/// can make `prep`'s policy beat it ([`beats_other_family`] would drop them all), so no search
/// is needed: `Err` says why. It stops at its first miss (all this asks); where it has none,
/// [`beats_other_family`] reuses its figures.
fn rival_first(prep: &Prepared) -> Result<Option<Agreement>, String> {
    let n = prep.trace.events.len() as u64;
    if known_family(prep).is_some() || n > RIVAL_FIRST_EVENTS {
        return Ok(None);
    }
    let rival = rival_policy(prep.policy);
    let lean = rival_prepared(prep);
    let b = lean.agreement_below(&lean.plan.placements, 1);
    match &b {
        Some(b) if b.checked > 0 && b.agreed == b.checked => Err(format!(
            "not run: {rival} ({}) predicts every observed CID of this capture without any step, so no step could make {} explain it better (its kernel is not named: --kernel-version would say)",
            family(rival),
            prep.policy
        )),
        _ => Ok(b),
    }
}

/// The windows of the capture's forks and exits, narrowed by its probes: a probed step ran by
/// its probe (docs/models.md §5.6).
fn windows(
    prep: &Prepared,
    mut forks: Vec<ForkWindow>,
    mut exits: Vec<ExitWindow>,
) -> (Vec<ForkWindow>, Vec<ExitWindow>) {
    let plan = &prep.plan;
    for w in &mut forks {
        if let Some(&p) = plan.fork_probe.get(&w.child) {
            w.probed = true;
            match plan.fork_done.get(&w.child) {
                // 7.x: the step (sched_mm_cid_fork's add-user, allocation, walk) runs inside
                // the probed function, after the probe and before its return
                Some(&d) if prep.policy == PolicyKind::OwnerMode && d > p => {
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
    for w in &mut exits {
        // (the release runs inside the probed function: at the probe, or late)
        if let Some(&p) = plan.exit_probe.get(&w.tid) {
            w.record = w.record.min(p);
            w.first = w.record;
        }
    }
    (forks, exits)
}

/// Stage 2: the steps that explain misses of the plain replay, each inside its window.
/// `misses`: the plain replay's misses a search may explain (event indices) and its model
/// state before the first, where the search may start; all known, or published by a plain
/// replay running beside. `Err` says why no search ran although the plain replay missed (the
/// other family predicts every observed CID: [`rival_first`]).
pub(super) fn propose(
    prep: &Prepared,
    mut misses: Misses<'_>,
    beside: Option<&StepFeed>,
) -> Result<Proposal, String> {
    // (a final replay beside learns the search ended from this, whatever happens)
    let mut out = beside.map(|f| f.publisher());
    let store = &prep.trace.events;
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        // (on a large capture with the plain replay beside, the pass over the capture runs
        // ahead of the first miss on a core the plain replay leaves idle: `ahead.rs`)
        let stopped = &stop;
        let early = misses
            .feed()
            .filter(|_| ahead::worth_it(store.len(), true))
            .map(|feed| {
                sc.spawn(move || {
                    // (not before the first miss or the replay's last stretch: until then the
                    // other core has the summary and the replay without seeding to run)
                    feed.first_miss_or_past(ahead::start_point(store.len()))
                        .then(|| ahead::scan_ahead(store, stopped))
                        .flatten()
                })
            });
        let give_up = || stop.store(true, Ordering::Relaxed);
        // (nothing else is decoded before the plain replay's first miss a search may explain:
        // there may be none)
        let Some(start) = misses.start() else {
            give_up();
            return Ok(Proposal::empty(Arc::new((Vec::new(), Vec::new()))));
        };
        // (where the other family leaves no room, the search would only find steps to drop)
        let rival = rival_first(prep).inspect_err(|_| give_up())?;
        // (the events from the search's start on, decoded a chunk at a time as the search and
        // its candidates first read them)
        let from = start.as_ref().map_or(0, |s| s.at);
        let base = from.saturating_sub(2 * SEARCH_LOOKBACK);
        let events = EventsAt::new(store, base);
        let (scan, next) = match early.and_then(|h| feed::joined(h)) {
            Some(s) => (s.windows, s.next),
            None => {
                // (one pass: the windows and the next record on each CPU)
                let s = ahead::scan(store, None);
                let s = s.expect("a pass nothing stops ends");
                (s.windows, s.next)
            }
        };
        let windows: Windows = Arc::new(windows(prep, scan.forks, scan.exits));
        if let Some(o) = out.as_mut() {
            o.windows(windows.clone());
        }
        // (the misses are those of processes begun in the capture, the only ones it searches)
        let (steps, groups, mms) = search::search_placements(
            prep.trace,
            (events, next),
            prep.policy,
            start.map_or_else(|| (prep.replayer(), 0), |s| (s.replayer, s.at)),
            (&windows.0, &windows.1),
            (misses, out),
        );
        Ok(Proposal {
            steps,
            groups,
            mms,
            windows,
            rival,
        })
    })
}

/// The placements of the probes with `steps` added in order.
fn placements(prep: &Prepared, steps: &[Step]) -> Placements {
    let mut p = prep.plan.placements.clone();
    for s in steps {
        s.set(&mut p);
    }
    p
}

/// Stage 3: the final replay with the proposed steps, checking the invariants of their mms
/// after every event: when one breaks, the step placed last before the break is dropped and
/// the replay runs again (a placement that breaks an invariant is never kept). The result
/// keeps the plain replay's figures as `predicted`; when the steps explain nothing more, the
/// plain run is the result.
pub(super) fn settle(
    prep: &Prepared,
    proposal: Proposal,
    plain: PolicyRun,
    plain_outcomes: &Outcomes,
    beside: Option<Beside>,
) -> (PolicyRun, Vec<Step>) {
    let cx = Context::new(prep.trace, &proposal.windows.0, &proposal.windows.1);
    let verbose = search::tracing();
    let (mut steps, mut groups): (Vec<Step>, Vec<u32>) = proposal
        .steps
        .into_iter()
        .zip(proposal.groups)
        .filter(|(s, _)| cx.inside_window(*s))
        .unzip();
    // (the updates agreed, then the CID probes' values matched: a step that explains only
    // what a probe read, where every update agrees, is kept too)
    let agreed = |r: &PolicyRun| {
        r.agreement
            .as_ref()
            .map_or((0, 0), |a| (a.agreed, a.probe_checks.matched))
    };
    let mut round = 0;
    let mut first = beside;
    let (mut run, outcomes) = loop {
        if steps.is_empty() {
            return (plain, Vec::new());
        }
        // (the first round may have run beside the search, with the same steps)
        let (run, outcomes) = match first.take().filter(|b| b.steps == steps) {
            Some(b) => (b.run, b.outcomes),
            None => {
                let spans = cx.check_spans(&steps, CHECK_AFTER);
                prep.run(
                    &placements(prep, &steps),
                    true,
                    Some((&proposal.mms, &spans)),
                )
            }
        };
        // (a break the plain replay has too is not the steps')
        let new_breaks = || {
            run.violations
                .iter()
                .filter(|v| !plain.violations.contains(v))
        };
        let first_break = new_breaks()
            .filter(|v| v.mm.is_none_or(|m| proposal.mms.contains(&m)))
            .map(|v| v.ts)
            .min();
        if verbose {
            for v in new_breaks().take(3) {
                eprintln!("settle: steps {steps:?} break {v:?}");
            }
        }
        let Some(at) = first_break else {
            // (steps that together explain no more than the plain replay: the search's last
            // candidate may have undone what the ones before explained, and those run again
            // without its steps; a whole fresh probed 7.3.4 24-vCPU `workers` boot: 405 with a
            // fork moved again, 495 without it, 460 plain)
            let last = groups.last().copied();
            let earlier = groups.iter().any(|&g| Some(g) != last);
            if agreed(&run) <= agreed(&plain) && earlier && round + 1 < VETTING_ROUNDS {
                round += 1;
                while groups.last().copied() == last {
                    groups.pop();
                    steps.pop();
                }
                continue;
            }
            break (run, outcomes);
        };
        round += 1;
        if round >= VETTING_ROUNDS {
            return (plain, Vec::new());
        }
        // the step placed last at or before the break
        match cx.last_placed_before(&steps, at) {
            Some(k) => {
                steps.remove(k);
                groups.remove(k);
            }
            None => return (plain, Vec::new()),
        }
    };
    if verbose {
        eprintln!(
            "settle: steps {steps:?}: agreed and probe values {:?} (plain {:?})",
            agreed(&run),
            agreed(&plain)
        );
    }
    if agreed(&run) <= agreed(&plain) {
        return (plain, Vec::new());
    }
    // (the checks were the inference's: what the user asked for is the plain run's)
    if !prep.checks_all() {
        run.violations.clear();
    }
    let described: Vec<InferredStep> =
        inferred::describe_all(&cx, &steps, plain_outcomes, &outcomes);
    if let (Some(a), Some(p)) = (&mut run.agreement, &plain.agreement) {
        a.predicted = p.predicted;
        a.predicted_fresh = p.predicted_fresh;
        a.predicted_probe_checks = p.predicted_probe_checks;
        a.inferred_steps = described;
    }
    (run, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, EventKind, EventStore, TaskMeta, Trace};

    /// A proposal of a capture whose kernel is named (a search always runs there).
    fn searched(p: Result<Proposal, String>) -> Proposal {
        p.expect("the kernel is named: no rival refuses the search")
    }

    /// A corpus capture whose plain replay misses and whose search places steps, behind a
    /// prelude of `n` updates of a one-thread process (so that its first miss lies far in).
    fn late_misses(n: usize) -> Trace {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/kernels/k6.18.15-c16-churn.ftrace.txt.zst"
        );
        let t = crate::sources::load(std::path::Path::new(path), &Default::default())
            .expect("the corpus capture loads");
        let t0 = t.events.first().map_or(0, |e| e.ts);
        let tid = 999_999;
        let mut events = EventStore::new();
        for k in 0..n {
            events.push(Event {
                ts: t0 - 1_000_000_000 + k as u64 * 1000,
                tid,
                cpu: 0,
                kind: EventKind::RseqUpdate {
                    cpu_id: 0,
                    node_id: 0,
                    mm_cid: 0,
                },
            });
        }
        events.extend(t.events.iter());
        let mut t = t;
        t.events = events;
        t.tasks.insert(
            tid,
            TaskMeta {
                tgid: Some(tid),
                comm: Default::default(),
            },
        );
        t
    }

    /// A search after the plain replay, and one beside it on the misses it publishes, on
    /// `trace` prepared for its kernel's model.
    fn after_and_beside(trace: &Trace) -> (Proposal, Proposal) {
        let prep = Prepared::for_its_kernel(trace);
        let (_, _, misses) = prep.run_plain();
        let after = searched(propose(&prep, misses, None));
        let feed = super::super::feed::MissFeed::default();
        let beside = std::thread::scope(|sc| {
            let side = sc.spawn(|| propose(&prep, Misses::fed(&feed), None));
            let _ = prep.run_plain_beside(&feed);
            searched(side.join().expect("the search beside"))
        });
        (after, beside)
    }

    /// A rival's replay stopped at [`misses_that_lose`] stops exactly where the whole replay
    /// misses at least that many, and then the whole replay's share is below the asked
    /// policy's: the early stop decides as the whole replay would.
    #[test]
    fn a_rival_stopped_where_it_loses_loses_the_whole_comparison() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/kernels-plain/k6.18.15-c32-workers.ftrace.txt"
        );
        let trace = crate::sources::load(std::path::Path::new(path), &Default::default())
            .expect("the corpus capture loads");
        let prep = Prepared::new(&trace, PolicyKind::LazyCompact, &Default::default());
        let asked = prep.run(&prep.plan.placements, false, None).0.agreement;
        let asked = asked.expect("the replay compares");
        let lean = rival_prepared(&prep);
        let whole = lean.run(&lean.plan.placements, false, None).0.agreement;
        let whole = whole.expect("the rival compares");
        let updates = trace.events.updates_at_most() as u64;
        assert!(whole.checked <= updates && asked.checked <= updates);
        let whole_misses = whole.checked - whole.agreed;
        assert!(whole_misses > 0, "owner-mode misses on a 6.18 capture");
        // the asked figures as they are, and as shares on either side of the rival's
        let mut tried = 0;
        for missed in [
            0,
            1,
            asked.checked - asked.agreed,
            whole_misses,
            asked.checked,
        ] {
            let a = Agreement {
                agreed: asked.checked - missed,
                ..asked.clone()
            };
            let limit = misses_that_lose(&a, updates);
            let stopped = lean.agreement_below(&lean.plan.placements, limit);
            assert_eq!(stopped.is_none(), whole_misses >= limit, "limit {limit}");
            match stopped {
                None => {
                    tried += 1;
                    assert!(
                        a.agreed as u128 * whole.checked as u128
                            > whole.agreed as u128 * a.checked as u128
                    );
                }
                Some(b) => assert_eq!(b, whole),
            }
        }
        assert!(tried >= 2, "stopped {tried} times");
        assert_eq!(
            misses_that_lose(
                &Agreement {
                    checked: 0,
                    agreed: 0,
                    ..asked
                },
                9
            ),
            u64::MAX
        );
    }

    /// The rival's plain replay runs first exactly where it costs no more than the search's
    /// default budget (the bound is a constant: an experiment's budget must not move it).
    #[test]
    fn the_rival_runs_first_where_it_costs_no_more_than_the_default_search() {
        for n in [0, 1_000, 39_999, 40_000, 40_001, 80_000, 1 << 20] {
            assert_eq!(n > RIVAL_FIRST_EVENTS, n > search::default_budget(n), "{n}");
        }
    }

    /// A search started from the plain replay's model state before its first miss places the
    /// steps one started at the capture's start places (the start saves replaying the stretch
    /// in which the two are the same replay).
    #[test]
    fn a_search_from_the_plain_replays_state_places_the_same_steps() {
        let trace = late_misses(30_000);
        let prep = Prepared::for_its_kernel(&trace);
        let (_, misses) = prep.run_plain_every(256);
        let (misses, start) = misses.into_parts();
        let start = start.expect("a start before the first miss");
        let first_miss = misses.first().copied().expect("a miss");
        assert!(
            start.at > 20_000 && start.at < first_miss,
            "start {} first miss {first_miss}",
            start.at
        );
        let from_start = searched(propose(&prep, Misses::all(misses.clone(), None), None));
        let from_state = searched(propose(&prep, Misses::all(misses, Some(start)), None));
        assert!(!from_start.steps.is_empty(), "the search places steps");
        assert_eq!(from_start.steps, from_state.steps);
        assert_eq!(from_start.mms, from_state.mms);
    }

    /// The final replay's first round run beside the search gives the run `settle` makes
    /// after it: the same steps, figures, recording and invariant checks.
    #[test]
    fn a_final_replay_beside_the_search_is_the_one_after_it() {
        use super::super::beside::{StepFeed, final_beside};
        use super::super::feed::MissFeed;
        let trace = late_misses(30_000);
        let prep = Prepared::for_its_kernel(&trace);
        let (plain, outcomes, misses) = prep.run_plain();
        let proposal = searched(propose(&prep, misses, None));
        let (after, after_steps) = settle(&prep, proposal, plain.clone(), &outcomes, None);
        let (misses, steps) = (MissFeed::default(), StepFeed::default());
        let (proposal, beside) = std::thread::scope(|sc| {
            let search = sc.spawn(|| propose(&prep, Misses::fed(&misses), Some(&steps)));
            let fin = sc.spawn(|| final_beside(&prep, &misses, &steps));
            let _ = prep.run_plain_beside(&misses);
            (
                searched(search.join().expect("the search")),
                fin.join().expect("the final replay"),
            )
        });
        let beside = beside.expect("a first round beside the search");
        assert_eq!(beside.steps, after_steps);
        let (got, got_steps) = settle(&prep, proposal, plain, &outcomes, Some(beside));
        assert!(!got_steps.is_empty());
        assert_eq!(got_steps, after_steps);
        let json = |r: &PolicyRun| serde_json::to_string(r).expect("a run serializes");
        assert_eq!(json(&got), json(&after));
        assert_eq!(got.alarms.len(), after.alarms.len());
    }

    /// A search beside the plain replay, on the misses it publishes as it goes, places the
    /// steps a search after it places (the misses ahead of the search are known when it needs
    /// them, and it stops where the last one's look-ahead ends).
    #[test]
    fn a_search_beside_the_plain_replay_places_the_same_steps() {
        let (after, beside) = after_and_beside(&late_misses(30_000));
        assert!(!after.steps.is_empty(), "the search places steps");
        assert_eq!(after.steps, beside.steps);
        assert_eq!(after.mms, beside.mms);
    }

    /// On a capture large enough for the pass over it to run ahead of the first miss
    /// (`ahead.rs`), the search beside places the steps and draws the windows a search after
    /// the plain replay does.
    #[test]
    fn a_pass_run_ahead_of_the_first_miss_gives_the_same_proposal() {
        let trace = late_misses(super::ahead::AHEAD_EVENTS_MIN);
        assert!(super::ahead::worth_it(trace.events.len(), true));
        let (after, beside) = after_and_beside(&trace);
        assert!(!after.steps.is_empty(), "the search places steps");
        assert_eq!(after.steps, beside.steps);
        assert_eq!(after.mms, beside.mms);
        assert_eq!(after.windows, beside.windows);
    }
}
