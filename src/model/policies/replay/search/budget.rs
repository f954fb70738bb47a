//! The search's spending of its budget ([`super::budget`]): events taken from it, and a
//! candidate's replay that stops (and gives back what it did not replay) as soon as it can no
//! longer qualify.

use super::Search;
use crate::model::policies::replay::replayer::Replayer;

impl Search<'_> {
    /// Takes `steps` replayed events from the budget; false (and the budget spent) when it
    /// has not that many left.
    pub(super) fn spend(&mut self, steps: u64) -> bool {
        if self.budget < steps {
            self.budget = 0;
            return false;
        }
        self.budget -= steps;
        true
    }

    /// [`Self::replay_to`] for a candidate that must end with fewer than `below` misses, its
    /// events spent already: it stops at the event that brings its misses to `below` (a
    /// replay's misses never fall, so it can no longer qualify) and gives the events it did
    /// not replay back to the budget. False when it stopped there.
    pub(super) fn replay_below(
        &mut self,
        t: &mut Replayer,
        from: usize,
        to: usize,
        below: u64,
    ) -> bool {
        for j in from..=to {
            if t.score() >= below {
                self.budget += (to + 1 - j) as u64;
                return false;
            }
            let Some(ev) = self.events.get(j) else {
                break;
            };
            t.apply(j, &ev, &self.trace.tasks);
        }
        t.score() < below
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::Prepared;
    use super::super::super::ahead;
    use super::super::super::steps::EventsAt;
    use super::*;
    use crate::model::policies::kind::PolicyKind;
    use crate::model::policies::params::{Params, Recording};
    use crate::model::policies::replay::search::Snapshots;

    /// A search over `trace` with nothing in its budget, for `f`.
    fn with_search(trace: &crate::events::Trace, f: impl FnOnce(&mut Search<'_>, &Prepared)) {
        let prep = Prepared::new(trace, PolicyKind::LazyCompact, &Params::default());
        let store = &trace.events;
        let next = ahead::scan(store, None)
            .expect("a pass nothing stops ends")
            .next;
        let mut s = Search {
            trace,
            events: EventsAt::new(store, 0),
            policy: PolicyKind::LazyCompact,
            windows: &[],
            exits: &[],
            next_on_cpu: next,
            found: prep.plan.placements.clone(),
            accepted: Vec::new(),
            groups: Vec::new(),
            mms: Vec::new(),
            periodic: Snapshots::new(64),
            tried: Default::default(),
            budget: 0,
            verbose: false,
            verbose_state: false,
            out: None,
        };
        f(&mut s, &prep);
    }

    /// A candidate's replay stops at the event that brings its misses to the bound and gives
    /// back the events after it; one that stays below the bound replays them all.
    #[test]
    fn a_replay_that_cannot_qualify_stops_and_gives_back_what_it_did_not_replay() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/kernels-plain/k6.18.15-c4-forks.ftrace.txt"
        );
        let trace = crate::sources::load(std::path::Path::new(path), &Default::default())
            .expect("the corpus capture loads");
        let n = trace.events.len();
        with_search(&trace, |s, prep| {
            let quiet = |mut r: Replayer| {
                r.engine.core.recording = Recording::Off;
                r
            };
            // the plain replay's first miss, by the same replayer run event by event
            let mut r = quiet(prep.replayer());
            let first = (0..n)
                .find(|&j| {
                    let ev = s.events.get(j).expect("in the capture");
                    r.apply(j, &ev, &trace.tasks);
                    r.score() > 0
                })
                .expect("the plain lazy-compact replay of this capture misses");
            let mut t = quiet(prep.replayer());
            assert!(!s.replay_below(&mut t, 0, n - 1, 1));
            assert_eq!(t.score(), 1);
            assert_eq!(
                s.budget,
                (n - 1 - first) as u64,
                "first miss at {first} of {n}"
            );
            s.budget = 0;
            let mut t = quiet(prep.replayer());
            assert!(s.replay_below(&mut t, 0, n - 1, u64::MAX));
            assert_eq!(s.budget, 0);
            assert!(t.score() >= 1);
        });
    }
}
