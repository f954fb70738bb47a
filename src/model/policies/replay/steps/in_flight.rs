//! The search's candidates where switches into the mm were in flight (their CID steps not run
//! yet, T5) across another untraced step of the mm: a T7 release whose walk back waits for
//! them, and a T3 walk's fork step they straddle (docs/models.md §5.3).

use super::{EXIT_POSITIONS, IN_FLIGHT, SEARCH_LOOKBACK, Step, StepSource};
use crate::events::{EventKind, Tid};
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;

impl StepSource<'_> {
    /// T7 with T5 (owner-mode): an exit of another task of the mm whose window ends after the
    /// disagreeing task's switch-in `sw` and begins before its update `i`, its release placed
    /// between the two, while `sw` and the other switches into the mm in flight there had not
    /// run their CID steps: the fixup walk a switch back to per-task mode starts waits for
    /// each at its CPU (docs/models.md §5.3 T7).
    pub(super) fn in_flight_candidates(
        &self,
        r: &Replayer,
        (sw, i): (usize, usize),
        tid: Tid,
        mm: MmId,
    ) -> Vec<Step> {
        if self.policy != PolicyKind::OwnerMode {
            return Vec::new();
        }
        let p = &self.found;
        // the disagreeing task's switch must still be in flight at its update
        if p.deferred_switches.contains(&sw) || self.next_on_cpu.get(sw) != Some(i) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (w, exit) in self.exits_near(r, (tid, None), mm, |w| w.first <= i && w.record > sw) {
            let lo = w.first.max(sw + 1);
            for at in (lo..=i).rev().take(EXIT_POSITIONS) {
                let mut switches = [0; IN_FLIGHT];
                let mut n = 0;
                for j in (sw.saturating_sub(SEARCH_LOOKBACK)..at).rev() {
                    if n == IN_FLIGHT {
                        break;
                    }
                    let Some(e) = self.ev(j) else { continue };
                    if let EventKind::SchedSwitch { next_tid, .. } = e.kind
                        && r.task_mm(next_tid) == Some(mm)
                        && !p.deferred_switches.contains(&j)
                        && self.next_on_cpu.get(j).is_some_and(|q| q >= at)
                    {
                        switches[n] = j;
                        n += 1;
                    }
                }
                if switches[..n].contains(&sw) {
                    out.push(Step::ExitInFlight {
                        at,
                        exit,
                        switches,
                        n,
                    });
                }
            }
        }
        out
    }

    /// T3 with T5 (owner-mode): the switches into `mm` (of tasks other than `tid`, not
    /// deferred yet) recorded before the placed fork step that started the lazy walk in
    /// progress, whose CPUs recorded nothing more until after it: their vCPUs stalled across
    /// the mode flip, so their CID steps (`context_switch` → `mm_cid_switch_to`, after
    /// `trace_sched_switch`: `kernel/sched/core.c` @7.2.13 l.7247/7277) may have run in the
    /// walk's TRANSIT mode (nearest the placement first, at most [`IN_FLIGHT`]).
    pub(super) fn in_flight_at_walk(
        &self,
        r: &Replayer,
        sw: usize,
        tid: Tid,
        mm: MmId,
    ) -> ([usize; IN_FLIGHT], usize) {
        let mut switches = [0; IN_FLIGHT];
        let mut n = 0;
        let Some(child) = r.untraced.lazy_walk_child(mm) else {
            return (switches, n);
        };
        let Some(p) = self
            .found
            .early_forks
            .iter()
            .find(|(_, v)| v.iter().any(|f| f.child == child))
            .map(|(&at, _)| at)
            .filter(|&p| p <= sw)
        else {
            return (switches, n);
        };
        for j in (p.saturating_sub(SEARCH_LOOKBACK)..p).rev() {
            if n == IN_FLIGHT {
                break;
            }
            let Some(e) = self.events.get(j) else {
                continue;
            };
            if let EventKind::SchedSwitch { next_tid, .. } = e.kind
                && next_tid != tid
                && next_tid != 0
                && r.task_mm(next_tid) == Some(mm)
                && !self.found.deferred_switches.contains(&j)
                && self.next_on_cpu.get(j).is_some_and(|q| q > p)
            {
                switches[n] = j;
                n += 1;
            }
        }
        (switches, n)
    }
}
