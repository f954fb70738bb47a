//! The candidates of the second kind for one disagreement (docs/models.md §5.3): a queued
//! wakeup's steal from the disagreeing CPU, then one step of the mm moved from its default
//! place (T5/T6/T1/T7), the fallbacks after them; each replayed from a snapshot and judged.

use super::{
    Candidate, FIXER_COST_FACTOR, FIXER_COST_SLACK, SEARCH_AHEAD, SEARCH_LOOKBACK, STEP_FIXERS,
    Search, checked,
};
use crate::events::Tid;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::steps::Step;
use crate::model::tasks::MmId;

impl Search<'_> {
    /// T1, tried first: a queued wakeup's steal from the disagreeing CPU
    /// ([`StepSource::steals_from_cpu`]); also the steps tried (a later tier skips them).
    pub(super) fn try_steals(
        &mut self,
        r: &Replayer,
        i: usize,
        who: (u16, Tid),
        mm: MmId,
        target: u64,
    ) -> (Option<Candidate>, Vec<Step>) {
        let cands = self.source().steals_from_cpu(r, i, who, mm);
        // (drawing them read the lookback; charged only where there are any: without a
        // queued wakeup of the mm nothing is read)
        if cands.is_empty() || !self.spend(SEARCH_LOOKBACK as u64 / 8) {
            return (None, Vec::new());
        }
        if self.verbose {
            eprintln!("search: steals from CPU {} for {i}: {cands:?}", who.0);
        }
        (
            self.try_these(r, i, mm, target, (cands.clone(), Vec::new())),
            cands,
        )
    }

    /// T5/T6/T1: one step of the mm moved from its default (but those in `skip`, tried
    /// already).
    pub(super) fn try_steps(
        &mut self,
        r: &Replayer,
        i: usize,
        who: (u16, Tid),
        mm: MmId,
        target: u64,
        skip: &[Step],
    ) -> Option<Candidate> {
        // (drawing the candidates reads up to twice the lookback of the capture: reading an
        // event costs about an eighth of replaying it)
        if !self.spend((i - i.saturating_sub(2 * SEARCH_LOOKBACK)) as u64 / 8) {
            return None;
        }
        let source = self.source();
        let mut cands = source.step_candidates(r, i, who, mm);
        // (tried only when none of those explains it)
        let puts = source.earlier_futex_puts(r, i, who, mm);
        // (the disagreeing task's own switch-in's step run late comes first of these: it
        // moves only the stretch from the switch-in on)
        let mut fallback: Vec<Step> = source.own_switch_late(r, i, who, mm).into_iter().collect();
        fallback.extend(puts.iter().copied());
        fallback.extend(source.short_stalls(r, i, who, mm));
        fallback.extend(source.wakes_by(r, i, who, mm));
        fallback.extend(source.wakes_after_source_left(r, i, who, mm));
        fallback.retain(|s| !skip.contains(s));
        // (last: a steal from the disagreeing CPU tried alone emptied its slot, and the
        // allocation there read fewer users, as an earlier allocation without the futex
        // reference left `max_nr_cid`: neither step alone explains it)
        for steal in skip {
            if let Step::WakeBy { wake, tid, at: by } = *steal {
                fallback.extend(puts.iter().filter_map(|p| match *p {
                    Step::FutexPut { at, mm } => Some(Step::FutexPutWaking {
                        at,
                        mm,
                        wake,
                        tid,
                        by,
                    }),
                    _ => None,
                }));
            }
        }
        // the smallest change first: the step that moves the least of the capture before the
        // disagreement (and costs the least to replay)
        cands.sort_by_key(|s| std::cmp::Reverse(s.order()));
        if self.verbose {
            eprintln!("search: step candidates for {i}: {cands:?} (else {fallback:?})");
        }
        self.try_these(r, i, mm, target, (cands, fallback))
    }

    /// Tries `cands`, then (when none explains the disagreement at `i`) `fallback`: the one
    /// with the fewest misses a little further on, if it also has fewer than the replay `r`
    /// without it.
    pub(super) fn try_these(
        &mut self,
        r: &Replayer,
        i: usize,
        mm: MmId,
        target: u64,
        (cands, fallback): (Vec<Step>, Vec<Step>),
    ) -> Option<Candidate> {
        let n = self.events.len();
        let mut found: Vec<Candidate> = Vec::new();
        // (the walk marks of one event share the replay up to it: a mark changes nothing
        // before its event, and the counts of a walk are tried in turn; those with the same
        // switches deferred share theirs, the deferrals placed)
        let mut prefixes: Vec<(usize, usize, Option<Step>, Replayer)> = Vec::new();
        let tiers = cands.len();
        // (the fixers found, the walk marks of one event counted once: the counts of one walk
        // at one place are variants of one step, and must not crowd out the other kinds)
        let (mut fixers, mut marked) = (0, Vec::new());
        let mut first_fix_cost: Option<usize> = None;
        for (k, step) in cands.into_iter().chain(fallback).enumerate() {
            if fixers >= STEP_FIXERS || (k >= tiers && !found.is_empty()) {
                break;
            }
            let s = step.start();
            let Some((b, snap)) = self.snapshot_before(s) else {
                continue;
            };
            // (what judging the candidates found so far takes is kept back)
            let ahead = (i + SEARCH_AHEAD).min(n - 1) - i;
            let reserve = if found.is_empty() {
                0
            } else {
                (found.len() + 3) * ahead
            };
            let mark = match step {
                Step::WalkMark { at, .. } if at > b => Some((at, None)),
                Step::WalkMarkDeferring {
                    at, switches, n, ..
                } if at > b => Some((at, Some(Step::DeferredSwitches { at: switches, n }))),
                _ => None,
            };
            let shared = prefixes
                .iter()
                .find(|(at, from, deferred, _)| mark == Some((*at, *deferred)) && *from == b);
            let cost = shared.map_or(i + 1 - b, |(at, ..)| i + 1 - at);
            if self.budget < (cost + reserve) as u64 {
                break;
            }
            if first_fix_cost.is_some_and(|c0| cost > FIXER_COST_FACTOR * c0 + FIXER_COST_SLACK) {
                continue;
            }
            let (mut t, start) = match (shared, mark) {
                (Some((at, _, _, p)), _) => (p.clone(), *at),
                (None, Some((at, deferred))) => {
                    let mut p = checked(&snap, mm);
                    p.untraced.placements = self.found.clone();
                    if let Some(d) = deferred {
                        d.set(&mut p.untraced.placements);
                    }
                    if !self.spend((at - b) as u64) {
                        break;
                    }
                    self.replay_to(&mut p, b, at - 1);
                    let t = p.clone();
                    prefixes.push((at, b, deferred, p));
                    (t, at)
                }
                (None, None) => (checked(&snap, mm), b),
            };
            if !self.spend((i + 1 - start) as u64) {
                break;
            }
            let mut placements = self.found.clone();
            step.set(&mut placements);
            t.untraced.placements = placements.clone();
            self.replay_below(&mut t, start, i, target);
            if self.verbose {
                eprintln!("step at {i}: {step:?} misses {} target {target}", t.score());
                if self.verbose_state {
                    eprintln!("    state: {}", t.engine.describe_mm(mm));
                }
                if let Some(v) = t.engine.core.run.violations.first() {
                    eprintln!("    breaks {} at {}: {}", v.invariant, v.ts, v.detail);
                }
                if let Some(v) = t.engine.check_invariants().first() {
                    eprintln!("    its state breaks {v:?}");
                }
            }
            let before = found.len();
            found.extend(Candidate::if_explains(t, placements, vec![step], b, target));
            if found.len() > before {
                first_fix_cost.get_or_insert(cost);
                match step {
                    Step::WalkMark { at, .. } | Step::WalkMarkDeferring { at, .. } => {
                        if !marked.contains(&at) {
                            marked.push(at);
                            fixers += 1;
                        }
                    }
                    _ => fixers += 1,
                }
            }
        }
        let horizon = (i + SEARCH_AHEAD).min(n - 1);
        let c = self.best(&found, i, horizon)?;
        if !self.ahead_at(&found[c].at, r, i, horizon) {
            return None;
        }
        Some(found.swap_remove(c))
    }
}
