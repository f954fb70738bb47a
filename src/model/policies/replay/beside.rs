//! The final replay (stage 3) beside the search, on a capture small enough for three model
//! states at once: the search hands over each step it accepts and how far back a later one can
//! reach (`frontier`: the oldest snapshot it may still start a candidate from), and the final
//! replay follows a good stretch behind, placing each step before it gets to it. It starts at
//! the search's first step (a search that finds none needs no final replay), from the
//! capture's start; before the plain replay's first miss it follows the plain replay (no step
//! goes before the search's start, a look-back before that miss). Its first round is then done
//! soon after the plain replay, instead of starting after the search.
//!
//! It must be the replay [`super::infer::settle`] would run: a step that reaches back behind
//! where it already is (a window starting far before the step) or more invariant breaks than a
//! replay keeps make it give up, and `settle` runs its own. It checks the invariants of every
//! mm inside the steps' stretches (the steps' mms are not all known when it passes them);
//! `settle` only reads those of the steps' mms, which are the ones its own replay checks.

use super::feed::{Board, MissFeed};
use super::inferred::{CHECK_AFTER, Context, merged};
use super::outcomes::Outcomes;
use super::prepared::Prepared;
use super::steps::Step;
use super::windows::{ExitWindow, ForkWindow};
use crate::model::policies::run::PolicyRun;
use std::sync::Arc;

/// Events the final replay keeps behind the search's frontier (a step's window may start
/// before the step: this much is allowed for).
const LAG: usize = 16_384;
/// While the search waits for the plain replay's next misses, how far behind the plain
/// replay's progress a step for a miss it has not reached yet may reach, as a rule (the
/// snapshots a candidate starts from, a step's look-back): the frontier the search hands over
/// then (a final replay beside gives up in the rare case a step reaches further back).
pub(super) const AHEAD_OF_PLAIN: usize = 4 * 4096 + super::steps::SEARCH_LOOKBACK;

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
pub(super) struct StepFeed(Board<State>);

impl StepFeed {
    /// The search's side; it ends the feed when dropped, whatever happened.
    pub fn publisher(&self) -> Publisher<'_> {
        Publisher { feed: self }
    }

    /// Waits until the frontier is past `upto` or the search has ended: the steps after the
    /// first `seen`, the windows, the frontier and whether the search has ended.
    fn past(&self, upto: usize, seen: usize) -> Progress {
        let g = self.0.when(|g| g.done || g.frontier > upto);
        Progress {
            steps: g.steps[seen.min(g.steps.len())..].to_vec(),
            windows: g.windows.clone(),
            frontier: g.frontier,
            done: g.done,
        }
    }

    /// Waits until the search has accepted a step or ended: whether it has a step.
    fn first_step(&self) -> bool {
        !self
            .0
            .when(|g| g.done || !g.steps.is_empty())
            .steps
            .is_empty()
    }
}

/// What a final replay beside learns from the search.
struct Progress {
    steps: Vec<Step>,
    windows: Option<Windows>,
    frontier: usize,
    done: bool,
}

/// The search's handle on a feed.
pub(super) struct Publisher<'a> {
    feed: &'a StepFeed,
}

impl Publisher<'_> {
    pub fn windows(&mut self, w: Windows) {
        self.feed.0.set(|s| s.windows = Some(w));
    }

    /// Steps accepted, with the frontier after them.
    pub fn steps(&mut self, steps: &[Step], frontier: usize) {
        self.feed.0.set(|s| {
            s.steps.extend_from_slice(steps);
            s.frontier = s.frontier.max(frontier);
        });
    }

    pub fn frontier(&mut self, frontier: usize) {
        self.feed.0.set(|s| s.frontier = s.frontier.max(frontier));
    }
}

impl Drop for Publisher<'_> {
    fn drop(&mut self) {
        self.feed.0.set(|s| s.done = true);
    }
}

/// The first round of the final replay, run beside the search: the run, each checked
/// update's outcome, and the steps it placed (those inside their windows, in order).
pub(super) struct Beside {
    pub run: PolicyRun,
    pub outcomes: Outcomes,
    pub steps: Vec<Step>,
}

/// Runs the final replay's first round beside the plain replay feeding `misses` and the
/// search feeding `feed`; `None` when the search placed no step or the replay had to give up.
pub(super) fn final_beside(prep: &Prepared, misses: &MissFeed, feed: &StepFeed) -> Option<Beside> {
    // (nothing is replayed before the plain replay's first miss a search may explain: a
    // capture it replays without one needs no final replay, and following it there would
    // double the replay's work for nothing)
    if !misses.first_miss() {
        return None;
    }
    // (nor before the search's first step: where it finds none, following the plain replay
    // would be a replay for nothing; it catches up from the capture's start)
    if !feed.first_step() {
        return None;
    }
    let mut r = prep.replayer();
    r.outcomes = Some(Outcomes::default());
    let checks_all = prep.checks_all();
    let mut cx: Option<Context> = None;
    // (set once: the context borrows it)
    let windows: std::cell::OnceCell<Windows> = std::cell::OnceCell::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    // how far it may go: `bound` events (a step accepted later changes none before it)
    let (mut bound, mut seen, mut done) = (0, 0, false);
    let mut k = 0;
    let before_start = prep.search_start_lookback();
    for (j, ev) in prep.trace.events.iter_model().enumerate() {
        while !done && j + LAG >= bound {
            let (progress, start_at, plain_done) = misses.progress_past(j + LAG + before_start);
            let Some(at) = start_at.or(plain_done.then_some(0)) else {
                // before the first miss: the search's start will be at most a look-back
                // before the events the plain replay has not reached
                bound = progress.saturating_sub(before_start);
                continue;
            };
            let p = feed.past(j + LAG, seen);
            bound = p.frontier.max(at);
            done = p.done;
            seen += p.steps.len();
            if let Some(w) = p.windows {
                let _ = windows.set(w);
            }
            if !p.steps.is_empty() {
                let w = windows.get()?;
                let cx = cx.get_or_insert_with(|| Context::new(prep.trace, &w.0, &w.1));
                for s in p.steps.into_iter().filter(|&s| cx.inside_window(s)) {
                    let reach = cx.check_spans(&[s], CHECK_AFTER);
                    let touch = reach.iter().map(|x| x.0).fold(s.start(), usize::min);
                    // (this replay has passed what the step changes: not settle's)
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
