//! The replay's figures: its disagreements as a search scores a candidate, and the agreement
//! with the capture when it ends.

use super::Replayer;
use crate::model::policies::run::{Agreement, PolicyRun};
use crate::model::tasks::MmId;

impl Replayer {
    /// Disagreements so far (checked − agreed).
    pub fn misses(&self) -> u64 {
        self.total.checked - self.total.agreed
    }

    /// What a search holds a candidate's replay to: its disagreements and the values read by
    /// the CID probes that it contradicts. A step that explains an update but leaves the model
    /// off what a probe read there is a fit, not what the kernel ran (docs/models.md §5.3).
    pub fn score(&self) -> u64 {
        self.misses() + self.probe_misses()
    }

    /// The values read by the CID probes so far that the model contradicts.
    pub fn probe_misses(&self) -> u64 {
        self.probe_checks.checked - self.probe_checks.matched
    }

    /// The agreement so far.
    pub fn agreement(&self) -> Agreement {
        let probe_checks = self.probe_checks_now();
        Agreement {
            policy: self.engine.kind().id(),
            checked: self.total.checked,
            agreed: self.total.agreed,
            first_disagreement: self.first.clone(),
            seeded: self.engine.core.params.seed,
            seeds: self.seeds,
            fresh: self.fresh,
            preexisting: self.pre,
            unmodelled: self.unmodelled,
            per_mm: self
                .per_mm
                .iter()
                .filter(|a| a.mm != MmId::UNKNOWN)
                .cloned()
                .collect(),
            predicted: self.total,
            predicted_fresh: self.fresh,
            inferred_steps: Vec::new(),
            inference: String::new(),
            trace_gaps: self.untraced.gaps().to_vec(),
            probe_checks: probe_checks.clone(),
            predicted_probe_checks: probe_checks.tally(),
        }
    }

    /// Ends the replay, handing over what it kept of the outcomes too.
    pub fn finish_with_outcomes(mut self) -> (PolicyRun, super::super::outcomes::Outcomes) {
        let o = self.outcomes.take().unwrap_or_default();
        (self.finish(), o)
    }

    /// Ends the replay.
    pub fn finish(self) -> PolicyRun {
        let agreement = self.compare.then(|| self.agreement());
        let mut run = self.engine.finish();
        run.agreement = agreement;
        run
    }
}
