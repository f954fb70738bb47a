//! The final replay (stage 3) beside the search, on a capture small enough for three model
//! states at once: the search hands over each step it accepts and how far back a later one can
//! reach (`frontier`: the oldest snapshot it may still start a candidate from), and the final
//! replay follows a good stretch behind, placing each step before it gets to it. Its first
//! round is then done when the search is, instead of starting after it.
//!
//! It must be the replay [`super::infer::settle`] would run: a step that reaches back behind
//! where it already is (a window starting far before the step) or more invariant breaks than a
//! replay keeps make it give up, and `settle` runs its own. It checks the invariants of every
//! mm inside the steps' stretches (the steps' mms are not all known when it passes them);
//! `settle` only reads those of the steps' mms, which are the ones its own replay checks.

use super::infer::CHECK_AFTER;
use super::inferred::Context;
use super::prepared::Prepared;
use super::steps::Step;
use super::windows::{ExitWindow, ForkWindow};
use crate::model::policies::run::PolicyRun;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Events the final replay keeps behind the search's frontier (a step's window may start
/// before the step: this much is allowed for).
const LAG: usize = 16_384;

/// The windows the search draws its steps from.
pub(super) type Windows = Arc<(Vec<ForkWindow>, Vec<ExitWindow>)>;

#[derive(Default)]
struct State {
    windows: Option<Windows>,
    /// The steps accepted so far, in order.
    steps: Vec<Step>,
    /// No step accepted later changes an event before this index (but for its window).
    frontier: usize,
    /// The search has ended.
    done: bool,
}

/// What the search tells a final replay beside it.
#[derive(Default)]
pub(super) struct StepFeed {
    state: Mutex<State>,
    changed: Condvar,
}

impl StepFeed {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The search's side; it ends the feed when dropped, whatever happened.
    pub fn publisher(&self) -> Publisher<'_> {
        Publisher { feed: self }
    }

    fn set(&self, f: impl FnOnce(&mut State)) {
        let mut g = self.lock();
        f(&mut g);
        drop(g);
        self.changed.notify_all();
    }

    /// Waits until a step has been accepted or the search has ended; the windows then, or
    /// `None` when the search ended without a step.
    fn first_step(&self) -> Option<Windows> {
        let mut g = self.lock();
        while !g.done && g.steps.is_empty() {
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        if g.steps.is_empty() {
            return None;
        }
        g.windows.clone()
    }

    /// Waits until the frontier is past `upto` or the search has ended: the steps after the
    /// first `seen`, and whether the search has ended.
    fn past(&self, upto: usize, seen: usize) -> (Vec<Step>, usize, bool) {
        let mut g = self.lock();
        while !g.done && g.frontier <= upto {
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        (
            g.steps[seen.min(g.steps.len())..].to_vec(),
            g.frontier,
            g.done,
        )
    }
}

/// The search's handle on a feed.
pub(super) struct Publisher<'a> {
    feed: &'a StepFeed,
}

impl Publisher<'_> {
    pub fn windows(&mut self, w: Windows) {
        self.feed.set(|s| s.windows = Some(w));
    }

    /// Steps accepted, with the frontier after them.
    pub fn steps(&mut self, steps: &[Step], frontier: usize) {
        self.feed.set(|s| {
            s.steps.extend_from_slice(steps);
            s.frontier = s.frontier.max(frontier);
        });
    }

    pub fn frontier(&mut self, frontier: usize) {
        self.feed.set(|s| s.frontier = s.frontier.max(frontier));
    }
}

impl Drop for Publisher<'_> {
    fn drop(&mut self) {
        self.feed.set(|s| s.done = true);
    }
}

/// The first round of the final replay, run beside the search: the run, each checked
/// update's outcome, and the steps it placed (those inside their windows, in order).
pub(super) struct Beside {
    pub run: PolicyRun,
    pub outcomes: Vec<(usize, bool)>,
    pub steps: Vec<Step>,
}

/// Runs the final replay's first round beside the search feeding `feed`; `None` when the
/// search placed no step or the replay had to give up.
pub(super) fn final_beside(prep: &Prepared, feed: &StepFeed) -> Option<Beside> {
    let windows = feed.first_step()?;
    let cx = Context::new(prep.trace, &windows.0, &windows.1);
    let mut r = prep.replayer();
    r.outcomes = Some(Vec::new());
    let checks_all = prep.checks_all();
    let mut steps: Vec<Step> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let (mut seen, mut frontier, mut done) = (0, 0, false);
    let mut k = 0;
    for (j, ev) in prep.trace.events.iter().enumerate() {
        if !done && j + LAG >= frontier {
            let (new, f, d) = feed.past(j + LAG, seen);
            (frontier, done) = (f, d);
            seen += new.len();
            for s in new.into_iter().filter(|&s| cx.inside_window(s)) {
                let reach = cx.check_spans(&[s], CHECK_AFTER);
                let touch = reach.iter().map(|x| x.0).fold(s.start(), usize::min);
                // (this replay has passed what the step changes: it is not settle's)
                if touch < j {
                    return None;
                }
                s.set(&mut r.untraced.placements);
                spans.extend(reach);
                steps.push(s);
            }
            spans = merged(std::mem::take(&mut spans));
            k = 0;
        }
        if !checks_all {
            while spans.get(k).is_some_and(|s| s.1 < j) {
                k += 1;
            }
            r.engine.core.params.check_invariants = spans.get(k).is_some_and(|s| s.0 <= j);
        }
        r.apply(j, &ev, &prep.trace.tasks);
    }
    if steps.is_empty() || r.engine.core.run.violations.len() >= super::super::core::MAX_VIOLATIONS
    {
        return None;
    }
    let (run, outcomes) = r.finish_with_outcomes();
    Some(Beside {
        run,
        outcomes,
        steps,
    })
}

/// Stretches sorted and merged where they overlap (as `Context::check_spans` gives them).
fn merged(mut v: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    v.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(l) if a <= l.1 => l.1 = l.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}
