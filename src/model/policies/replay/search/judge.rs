//! Judging the candidates that explain a disagreement ([`super::search_placements`]): the one
//! with the fewest misses a short stretch on, ties among places of one probed step told apart
//! further on, and whether it beats the replay without it. A miss is a disagreeing update or a
//! value a CID probe read that the model contradicts ([`Replayer::score`]).

use super::snapshots::snapshot_ref;
use super::{Candidate, Search, broke};
use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::steps::Step;

/// How many candidates tied at the horizon [`Search::best`] replays further to tell apart.
const TIED_CANDIDATES: usize = 4;

/// The probe whose step a candidate of one step places later than the probe (the places of
/// one stall's end that [`Search::best`] tells apart further on).
fn late_probe(steps: &[Step]) -> Option<usize> {
    match steps {
        [
            Step::LateProbe(p)
            | Step::LateProbeBefore { probe: p, .. }
            | Step::LateProbePrompt { probe: p, .. },
        ] => Some(*p),
        _ => None,
    }
}

impl Search<'_> {
    /// Of the candidates, the one with the fewest misses at `horizon` that breaks no
    /// invariant on the way; of several as few, the one with the fewest a stretch as long
    /// further on ([`Self::break_tie`]).
    pub(super) fn best(&mut self, found: &[Candidate], i: usize, horizon: usize) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        let mut tied: Vec<(usize, Replayer)> = Vec::new();
        for (c, cand) in found.iter().enumerate() {
            if !self.spend((horizon - i) as u64) {
                break;
            }
            let mut a = snapshot_ref(&cand.at);
            // (only fewer misses than the best so far could replace it; as few tie with it
            // where both place one probed step, `late_probe`, and are told apart further on:
            // the counts of one walk mark and its deferrals often tie by the dozen, and on
            // captures without probes a budget spent on them placed fewer steps later, 17
            // updates fewer agreed over the corpus and 154 sweep boots)
            let probe = best.and_then(|b| late_probe(&found[b.1].steps));
            let ties = probe.is_some() && late_probe(&cand.steps) == probe;
            let below = best.map_or(u64::MAX, |b| b.0 + u64::from(ties));
            if !self.replay_below(&mut a, i + 1, horizon, below) {
                continue;
            }
            if broke(&a) {
                if self.verbose {
                    eprintln!(
                        "best: {:?} breaks {:?}",
                        cand.steps,
                        a.engine.check_invariants().first()
                    );
                }
                continue;
            }
            if self.verbose {
                eprintln!("best: {:?} misses {} at {horizon}", cand.steps, a.score());
            }
            match best {
                Some((m, _)) if a.score() == m => tied.push((c, a)),
                _ => {
                    best = Some((a.score(), c));
                    tied = vec![(c, a)];
                }
            }
        }
        // (the first few, and only where the budget also leaves the placement's own check
        // ahead, `ahead_at`)
        let far = (horizon + (horizon - i)).min(self.events.len().saturating_sub(1));
        tied.truncate(TIED_CANDIDATES);
        let cost = (tied.len() * (far - horizon) + 2 * (horizon - i)) as u64;
        if tied.len() > 1 && self.budget >= cost {
            return Some(self.break_tie(tied, horizon, far));
        }
        best.map(|b| b.1)
    }

    /// Of candidates with as few misses at `horizon`, the one with the fewest at `far` (the
    /// first of those as few, and the first where the budget ends): two places of one step
    /// often differ only where a later switch-in reads the slot they left (a fresh probed
    /// 6.18.15 36-vCPU `workers` boot: a move's steal from CPU 3 run while 386 was current
    /// there, which left the slot, and run after 386 left, which emptied it, agree up to
    /// 380's switch-in to CPU 3 206 events on).
    fn break_tie(&mut self, tied: Vec<(usize, Replayer)>, horizon: usize, far: usize) -> usize {
        let first = tied[0].0;
        let mut best: Option<(u64, usize)> = None;
        for (c, mut a) in tied {
            if !self.spend((far - horizon) as u64) {
                break;
            }
            let below = best.map_or(u64::MAX, |b| b.0);
            if !self.replay_below(&mut a, horizon + 1, far, below) || broke(&a) {
                continue;
            }
            if self.verbose {
                eprintln!("tie: candidate {c} misses {} at {far}", a.score());
            }
            best = Some((a.score(), c));
        }
        best.map_or(first, |b| b.1)
    }

    /// Whether `cand` (a moved step, replayed to event `i`) still has fewer misses than the plain
    /// replay `plain` (at `i` too) at `horizon`: a step that explains one update but costs more
    /// further on is not taken (a T7 release placed early can cost later updates of the mm more
    /// than it explains).
    pub(super) fn ahead_at(
        &mut self,
        cand: &Replayer,
        plain: &Replayer,
        i: usize,
        horizon: usize,
    ) -> bool {
        if !self.spend(2 * (horizon - i) as u64) {
            return false;
        }
        let mut a = snapshot_ref(cand);
        let mut b = snapshot_ref(plain);
        for j in i + 1..=horizon {
            let Some(ev) = self.events.get(j) else {
                break;
            };
            let (ma, mb) = (a.score(), b.score());
            a.apply(j, &ev, &self.trace.tasks);
            b.apply(j, &ev, &self.trace.tasks);
            if self.verbose && (a.score() > ma || b.score() > mb) {
                eprintln!(
                    "ahead: event {j} ts {} tid {} cand {} plain {}",
                    ev.ts,
                    ev.tid,
                    a.score() - ma,
                    b.score() - mb
                );
            }
        }
        if self.verbose {
            eprintln!(
                "ahead: at {horizon} candidate {} plain {}; breaks {:?}",
                a.score(),
                b.score(),
                a.engine.check_invariants().first()
            );
        }
        a.score() < b.score() && !broke(&a)
    }
}
