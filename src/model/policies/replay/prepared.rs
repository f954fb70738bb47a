//! What every replay of one capture through one policy starts from (stage 0 of
//! [`super::replay`]), and a whole replay with given placements.

use super::feed::{MissFeed, Misses, PUBLISH_EVERY, SearchStart};
use super::hz::resolved_cpus;
use super::outcomes::Outcomes;
use super::prepass::{PrePass, preexisting_tasks};
use super::probes;
use super::steps::SNAPSHOT_AHEAD_OF_MISS;
use super::untraced::Placements;
use super::{Replayer, resolve_params};
use crate::events::Trace;
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::params::Params;
use crate::model::policies::run::{Agreement, PolicyRun};

/// Where a replay with inferred steps checks invariants: the mms the steps can have changed,
/// and the stretches of event indices (first, last) in which they can have changed them.
pub(super) type CheckScope<'a> = (&'a [crate::model::tasks::MmId], &'a [(usize, usize)]);

/// What every replay of one capture through one policy starts from, found once: the
/// parameters resolved from the capture (P, HZ, the jiffies' phase), the CID probes' plan (the
/// CPU stoppers with it) and the tasks that existed before the capture.
pub(super) struct Prepared<'a> {
    pub trace: &'a Trace,
    pub policy: PolicyKind,
    params: Params,
    phase: u64,
    pub plan: probes::Plan,
    pre: PrePass,
    idle_holds: std::sync::Arc<rustc_hash::FxHashMap<usize, usize>>,
    /// Its replays model only the mms that existed before the capture (`Replayer::older_only`).
    older_only: bool,
    /// Its replays stop before this event (the whole capture but for a replay whose figures
    /// no later event changes).
    end: usize,
}

impl<'a> Prepared<'a> {
    pub fn new(trace: &'a Trace, policy: PolicyKind, params: &Params) -> Prepared<'a> {
        // (P once: the capture's CPU count reads every event's CPU)
        let cpus = resolved_cpus(trace, params);
        let given = Params {
            cpus,
            ..params.clone()
        };
        // the steps the capture's CID probes mark run there (docs/models.md §5.6)
        let others = || (resolve_params(trace, &given), probes::plan(trace));
        // (the first pass replays the observed state over every event: on a large capture it
        // runs beside the others, which read only the rare events and the ticks)
        // (the first pass its load ran beside, when it did)
        let ready = params.first_pass.as_ref().and_then(|f| f.of(trace));
        let (((mut params, phase), plan), pre) = if let Some(pre) = ready {
            (others(), pre.clone())
        } else if trace.events.len() < PREPASS_BESIDE_EVENTS {
            (others(), preexisting_tasks(trace, cpus))
        } else {
            std::thread::scope(|sc| {
                let pre = sc.spawn(|| preexisting_tasks(trace, cpus));
                let others = others();
                let pre = pre.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (others, pre)
            })
        };
        // (the compaction a probe saw is that kernel's policy's: another policy replayed on
        // the capture decides its own, or the comparison would only repeat the kernel's)
        // (the kernel as `--kernel-version` names it, else as the capture's header does: a
        // capture without that header replayed with the flag observes its scans too)
        let kernels_own = params.kernel_policy.or_else(|| {
            trace
                .kernel_release
                .as_deref()
                .and_then(|r| crate::model::kernel::model_for_kernel(r, trace.kernel_scan_batch))
                .and_then(|m| m.policy)
        }) == Some(policy);
        params.observed_scans = plan.probed.scan && kernels_own;
        params.migrations_traced = trace
            .events
            .any_rare(|k| matches!(k, crate::events::EventKind::SchedMigrateTask { .. }));
        let idle_holds = std::sync::Arc::new(pre.idle_holds.clone());
        Prepared {
            trace,
            policy,
            params,
            phase,
            plan,
            pre,
            idle_holds,
            older_only: false,
            end: trace.events.len(),
        }
    }

    /// The same capture prepared for another policy (a plain replay of a rival family).
    pub fn for_policy(&self, policy: PolicyKind) -> Prepared<'a> {
        let mut params = self.params.clone();
        params.observed_scans = false;
        self.with(policy, params)
    }

    /// The same preparation for the plain replay without seeding (pre-existing mms start
    /// empty), without inference, recording nothing (its figures only are wanted).
    pub fn unseeded(&self) -> Prepared<'a> {
        let mut params = self.params.clone();
        params.seed = false;
        params.recording = crate::model::policies::params::Recording::Off;
        params.infer = crate::model::policies::params::InferSteps::Off;
        self.with(self.policy, params)
    }

    /// [`Prepared::unseeded`] modelling only the mms that existed before the capture: its
    /// figures of those mms are the whole unseeded replay's (a policy's state is per mm, and
    /// seeding changes no other), for a share of its cost. Of the mms begun in the capture it
    /// counts nothing.
    ///
    /// It ends at the last `rseq_update` of a task that ever had such an mm: its figures
    /// change only at their updates (each is checked as its record is applied), and the model
    /// gives a task only an mm the observed history gives it.
    pub fn unseeded_older(&self) -> Prepared<'a> {
        let mut u = self.unseeded();
        u.older_only = true;
        let infos = &self.pre.observed.infos;
        let tids = self.pre.observed.tids_ever_in(|m| {
            // (as `Replayer::outside_older` tells them: an mm without its origin is older)
            m.is_real() && !infos.begins_in_capture(m)
        });
        u.end = self
            .trace
            .events
            .last_update_by(|t| tids.binary_search(&t).is_ok())
            .map_or(0, |i| i + 1);
        u
    }

    /// The events its replays run through (`[0, end)`).
    #[cfg(test)]
    pub fn end(&self) -> usize {
        self.end
    }

    /// This preparation with another policy and parameters (what the capture gave is kept).
    fn with(&self, policy: PolicyKind, params: Params) -> Prepared<'a> {
        Prepared {
            trace: self.trace,
            policy,
            params,
            phase: self.phase,
            plan: self.plan.clone(),
            pre: self.pre.clone(),
            idle_holds: self.idle_holds.clone(),
            older_only: false,
            // (it models every mm again: to the capture's end)
            end: self.trace.events.len(),
        }
    }

    /// Replays of this preparation record nothing (a comparison only).
    pub fn lean(&mut self) {
        self.params.recording = crate::model::policies::params::Recording::Off;
    }

    /// The parameters resolved from the capture.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Whether some mm that existed before the capture reports a CID (seeding seeds it).
    pub fn seeding_matters(&self) -> bool {
        self.pre.seeding_matters
    }

    /// Whether the replay was asked to check every invariant (`--check-invariants`).
    pub fn checks_all(&self) -> bool {
        self.params.check_invariants
    }

    /// A fresh replayer at the capture's start, its pre-existing tasks declared and the
    /// probes' placements set.
    pub fn replayer(&self) -> Replayer {
        let mut r = Replayer::new(self.policy, self.params.clone(), self.phase);
        // (reused tids: the observed resolution's mm ids are the timeline's)
        r.tgid_changes = self.trace.tgid_changes.clone();
        r.untraced.stoppers = self.plan.stoppers.clone();
        r.untraced.idle_holds = self.idle_holds.clone();
        r.quiet = self.pre.quiet.clone();
        r.older_only = self.older_only;
        r.share_observed(self.pre.observed.clone());
        let t0 = self.trace.events.first().map_or(0, |e| e.ts);
        for &(tid, mm) in &self.pre.tasks {
            r.declare_existing(t0, tid, mm);
        }
        r.untraced.probed = self.plan.probed;
        r.exit_records = self.plan.exit_records.clone();
        r.untraced.vm_fork_probes = self.plan.vm_forks.clone();
        r.exec_forks = self.plan.exec_forks.clone();
        r.exec_balances = self.plan.exec_balances.clone();
        r.untraced.exec_moves = self.plan.exec_moves.clone();
        r.exec_puts = self.plan.exec_puts.clone();
        r.new_mm_forks = self.plan.new_mm_forks.clone();
        r.fork_probe_child = self.plan.fork_probe.iter().map(|(&c, &i)| (i, c)).collect();
        r.exits_read = self.plan.exits_read.clone();
        r.exit_queue = self.plan.exit_queue.clone();
        r.fork_gets = self.plan.fork_gets.clone();
        r.untraced.placements = self.plan.placements.clone();
        r
    }

    /// Replays the whole capture with the untraced steps at `placements` (the probes' and any
    /// inferred ones), keeping each checked update's outcome when asked, and checking the
    /// invariants of the mms `check` names after every event that changed one inside its
    /// stretches of event indices (outside them the replay is the plain one, or far past what
    /// a step changed).
    pub fn run(
        &self,
        placements: &Placements,
        outcomes: bool,
        check: Option<CheckScope<'_>>,
    ) -> (PolicyRun, Outcomes) {
        self.run_inner(placements, outcomes, check, None)
    }

    /// [`Prepared::run`]'s figures (recording nothing), but `None` as soon as the replay has
    /// missed `limit` updates: a comparison that needs only to know the replay misses at
    /// least that many stops there (a replay's misses never fall).
    pub fn agreement_below(&self, placements: &Placements, limit: u64) -> Option<Agreement> {
        let mut r = self.replayer();
        r.untraced.placements = placements.clone();
        for (i, ev) in self.trace.events.range_model(0..self.end).enumerate() {
            r.apply(i, &ev, &self.trace.tasks);
            if r.misses() >= limit {
                return None;
            }
        }
        r.finish().agreement
    }

    /// The plain replay (the probes' placements), with each checked update's outcome, and the
    /// misses a search may explain (those of processes begun in the capture: an older one's
    /// state is seeded from what the capture shows, and a step placed for it would explain the
    /// seeding) with where the search may start: the replayer's model state at an event index
    /// far enough before the first of them (`None`: at the capture's start). Until then a
    /// search's replay is this one, so it need not run that stretch again.
    pub fn run_plain(&self) -> (PolicyRun, Outcomes, Misses<'static>) {
        let feed = MissFeed::default();
        let (run, outcomes) = self.run_plain_beside(&feed);
        (run, outcomes, feed.into_misses())
    }

    /// [`Prepared::run_plain`] for a search running beside it: the misses and the start go to
    /// `feed` as they come.
    pub fn run_plain_beside(&self, feed: &MissFeed) -> (PolicyRun, Outcomes) {
        let every = self.start_every();
        let keep = self.keeps_model_copies();
        self.run_inner(
            &self.plan.placements,
            true,
            None,
            Some((feed, keep.then_some(every))),
        )
    }

    /// Events between the copies of the plain replay's state kept for a search's start (every
    /// 1/32 of the capture: their cost is a small share of the replay's).
    fn start_every(&self) -> usize {
        (self.trace.events.len() / 32).max(SEARCH_START_MARGIN / 2)
    }

    /// How far before its first miss the plain replay's start for a search may lie, at most:
    /// the margin and one interval between copies (and a publication's delay).
    pub fn search_start_lookback(&self) -> usize {
        SEARCH_START_MARGIN + self.start_every() + PUBLISH_EVERY + 1
    }

    /// Whether the capture is small enough for a replay to hold copies of its model state (a
    /// search's start, a search beside the plain replay): no more than 100 K tasks.
    pub fn keeps_model_copies(&self) -> bool {
        self.trace.tasks.len() <= SEARCH_START_TASKS_MAX
    }

    /// The capture prepared for its kernel's model, as `stats` chooses it (the capture names
    /// its kernel).
    #[cfg(test)]
    pub fn for_its_kernel(trace: &'a Trace) -> Prepared<'a> {
        let facts = crate::model::kernel::KernelFacts::of(trace);
        let chosen = crate::model::kernel::choose(&Default::default(), &facts)
            .expect("the capture names its kernel");
        Prepared::new(trace, chosen.policy, &chosen.params)
    }

    /// [`Prepared::run_plain`] with a start kept every `every` events.
    #[cfg(test)]
    pub fn run_plain_every(&self, every: usize) -> (Outcomes, Misses<'static>) {
        let feed = MissFeed::default();
        let (_, outcomes) = self.run_inner(
            &self.plan.placements,
            true,
            None,
            Some((&feed, Some(every))),
        );
        (outcomes, feed.into_misses())
    }

    /// A replay; with `search`, the plain replay publishing the misses a search may explain to
    /// its feed, and its start, kept every so many events when asked.
    fn run_inner(
        &self,
        placements: &Placements,
        outcomes: bool,
        check: Option<CheckScope<'_>>,
        search: Option<(&MissFeed, Option<usize>)>,
    ) -> (PolicyRun, Outcomes) {
        let mut r = self.replayer();
        r.untraced.placements = placements.clone();
        if outcomes || search.is_some() {
            r.outcomes = Some(Outcomes::default());
        }
        let spans = match check {
            Some((mms, spans)) if !r.engine.core.params.check_invariants => {
                r.engine.core.check_only = Some(mms.to_vec());
                spans
            }
            _ => &[],
        };
        let start_every = search.and_then(|s| s.1);
        // (the start last taken at least a search's look-back before the first miss, and
        // those taken after it, not yet that far behind)
        let mut start: Option<SearchStart> = None;
        let mut pending: std::collections::VecDeque<SearchStart> = Default::default();
        let every = start_every.unwrap_or(usize::MAX).max(1);
        // (the next copy's event: a count, not a division on every event)
        let mut copy_at = every;
        let mut searching_from = start_every.is_some();
        let mut producer = search.map(|s| s.0.producer());
        let mut missed = false;
        let mut k = 0;
        for (i, ev) in self.trace.events.range_model(0..self.end).enumerate() {
            if !spans.is_empty() {
                while spans.get(k).is_some_and(|s| s.1 < i) {
                    k += 1;
                }
                r.engine.core.params.check_invariants = spans.get(k).is_some_and(|s| s.0 <= i);
            }
            if searching_from {
                while pending
                    .front()
                    .is_some_and(|p| p.at + SEARCH_START_MARGIN < i)
                {
                    start = pending.pop_front();
                }
                if i == copy_at {
                    copy_at = copy_at.saturating_add(every);
                    pending.push_back(SearchStart {
                        at: i,
                        replayer: r.model_copy(),
                    });
                }
            }
            let seen = r.outcomes.as_ref().map_or(0, |o| o.len());
            let probe_misses = r.probe_misses();
            r.apply(i, &ev, &self.trace.tasks);
            let Some(p) = producer.as_mut() else {
                continue;
            };
            // (a value a CID probe read that the model contradicts is a disagreement too,
            // where every update agrees: docs/models.md §5.3)
            let missed_here = r.outcomes.as_ref().is_some_and(|o| o.missed_from(seen))
                || r.probe_misses() > probe_misses;
            // (as the search tells them: the update's task's mm begun in the capture)
            let searchable = || {
                r.engine
                    .core
                    .task(ev.tid)
                    .and_then(|t| t.mm)
                    .is_some_and(|m| r.begins_in_capture(m))
            };
            if missed_here && searchable() {
                if !missed {
                    missed = true;
                    searching_from = false;
                    pending.clear();
                    p.start(start.take());
                }
                p.miss(i);
            }
            if (i + 1).is_multiple_of(PUBLISH_EVERY) {
                p.progress(i + 1);
            }
        }
        // (every miss is known: the search beside need not wait for the recording's end)
        drop(producer);
        let (run, o) = r.finish_with_outcomes();
        (run, if outcomes { o } else { Outcomes::default() })
    }
}

/// How far before the first miss a search's start must be: the search takes its snapshots
/// from this far ahead of a miss (`SNAPSHOT_AHEAD_OF_MISS`), with a margin.
const SEARCH_START_MARGIN: usize = 2 * SNAPSHOT_AHEAD_OF_MISS;
/// Captures of fewer events find the tasks that existed before them on the same thread as the
/// rest of the preparation (a thread costs more than the pass).
const PREPASS_BESIDE_EVENTS: usize = 100_000;
/// Captures of more tasks keep no start (two copies of the model's state would be held).
const SEARCH_START_TASKS_MAX: usize = 100_000;
