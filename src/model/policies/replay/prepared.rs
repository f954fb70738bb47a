//! What every replay of one capture through one policy starts from (stage 0 of
//! [`super::replay`]), and a whole replay with given placements.

use super::prepass::{PrePass, preexisting_tasks};
use super::probes;
use super::untraced::Placements;
use super::{Replayer, resolve_params};
use crate::events::{Tid, Trace};
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::params::Params;
use crate::model::policies::run::PolicyRun;
use rustc_hash::FxHashSet;

/// Where a replay with inferred steps checks invariants: the mms the steps can have changed,
/// and the stretches of event indices (first, last) in which they can have changed them.
pub(super) type CheckScope<'a> = (&'a [crate::model::tasks::MmId], &'a [(usize, usize)]);

/// What every replay of one capture through one policy starts from, found once: the
/// parameters resolved from the capture (P, HZ, the jiffies' phase), the CID probes' plan, the
/// tasks that existed before the capture and the CPU stoppers.
pub(super) struct Prepared<'a> {
    pub trace: &'a Trace,
    pub policy: PolicyKind,
    params: Params,
    phase: u64,
    pub plan: probes::Plan,
    pre: PrePass,
    stoppers: FxHashSet<Tid>,
}

impl<'a> Prepared<'a> {
    pub fn new(trace: &'a Trace, policy: PolicyKind, params: &Params) -> Prepared<'a> {
        let (mut params, phase) = resolve_params(trace, params);
        // the steps the capture's CID probes mark run there (docs/models.md §5.6)
        let plan = probes::plan(trace);
        // (the compaction a probe saw is that kernel's policy's: another policy replayed on
        // the capture decides its own, or the comparison would only repeat the kernel's)
        let kernels_own = trace
            .kernel_release
            .as_deref()
            .and_then(|r| crate::model::kernel::model_for_kernel(r, trace.kernel_scan_batch))
            .and_then(|m| m.policy)
            == Some(policy);
        params.observed_scans = plan.probed.scan && kernels_own;
        let pre = preexisting_tasks(trace, params.cpus);
        let stoppers = trace
            .tasks
            .iter()
            .filter(|(_, m)| trace.strings.get_str(m.comm).starts_with("migration/"))
            .map(|(&t, _)| t)
            .collect();
        Prepared {
            trace,
            policy,
            params,
            phase,
            plan,
            pre,
            stoppers,
        }
    }

    /// The same capture prepared for another policy (a plain replay of a rival family).
    pub fn for_policy(&self, policy: PolicyKind) -> Prepared<'a> {
        let mut params = self.params.clone();
        params.observed_scans = false;
        Prepared {
            trace: self.trace,
            policy,
            params,
            phase: self.phase,
            plan: self.plan.clone(),
            pre: self.pre.clone(),
            stoppers: self.stoppers.clone(),
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
        r.untraced.stoppers = self.stoppers.clone();
        r.quiet = self.pre.quiet.clone();
        let t0 = self.trace.events.first().map_or(0, |e| e.ts);
        for &(tid, mm) in &self.pre.tasks {
            r.declare_existing(t0, tid, mm);
        }
        r.untraced.probed = self.plan.probed;
        r.exit_records = self.plan.exit_records.clone();
        r.untraced.vm_fork_probes = self.plan.vm_forks.clone();
        r.exec_forks = self.plan.exec_forks.clone();
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
    ) -> (PolicyRun, Vec<(usize, bool)>) {
        let mut r = self.replayer();
        r.untraced.placements = placements.clone();
        if outcomes {
            r.outcomes = Some(Vec::new());
        }
        let spans = match check {
            Some((mms, spans)) if !r.engine.core.params.check_invariants => {
                r.engine.core.check_only = Some(mms.to_vec());
                spans
            }
            _ => &[],
        };
        let mut k = 0;
        for (i, ev) in self.trace.events.iter().enumerate() {
            if !spans.is_empty() {
                while spans.get(k).is_some_and(|s| s.1 < i) {
                    k += 1;
                }
                r.engine.core.params.check_invariants = spans.get(k).is_some_and(|s| s.0 <= i);
            }
            r.apply(i, &ev, &self.trace.tasks);
        }
        r.finish_with_outcomes()
    }
}
