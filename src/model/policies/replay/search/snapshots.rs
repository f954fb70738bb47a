//! The search's snapshots of its replay: one every `every` events over the last
//! [`CHECKPOINTS_SPAN`] events before a miss, each candidate's replay starting from the last one
//! before its step.
//!
//! A snapshot is a copy of the model's state, and on a capture of thousands of tasks a copy
//! costs as much as replaying thousands of events: 0.55 ms for the 5,193 tasks of the 2.35
//! M-event bench trace.dat, 64 copies before its one miss, where the candidates started from
//! 5 of them. So only one in `keep` is copied as the replay passes (`keep` grows with the
//! tasks); the others keep their place and are made when a candidate first asks for one, from
//! the last copy before it replayed to it. Which snapshots there are, where each lies, and so
//! the search's budget and what it finds, are the same as with a copy at each.

use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::untraced::Placements;
use crate::model::policies::run::PolicyRun;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The stretch of the capture the snapshots cover, in events.
pub(super) const CHECKPOINTS_SPAN: usize = 8192;

/// A copy of `r` without its recording (a search only needs the model state).
pub(super) fn snapshot_ref(r: &Replayer) -> Replayer {
    let mut c = r.clone();
    c.engine.core.run = PolicyRun::new(r.engine.core.kind, r.engine.core.params.clone());
    c
}

/// Tasks of the model per snapshot between two copies: a copy costs about as much as
/// replaying one event per task (callgrind and wall time on the bench trace.dat), and the
/// candidates of a miss start from a few snapshots of 64, so a copy every `tasks / 128`
/// snapshots (each made later from it replays up to that many times `every` events) roughly
/// balances the two.
const TASKS_PER_SPACING: usize = 128;
/// What a copy costs besides its tasks, as so many tasks: its allocations and the fresh pages
/// they touch (callgrind and `perf stat` on the small corpus captures, where a copy of a few
/// dozen tasks at each snapshot made the search fault in megabytes it held for 8 K events).
const COPY_FIXED_TASKS: usize = 384;
/// The most snapshots between two copies.
const SPACING_MAX: usize = 64;

/// `CIDSCOPE_SNAPSHOT_SPACING=K`: a copy every K snapshots whatever the tasks (a check that
/// the places made later give the search the copies it had: `tests/inference.rs` runs the
/// corpus with it, where few tasks would copy every snapshot).
fn forced_spacing() -> Option<usize> {
    static FORCED: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| {
        std::env::var("CIDSCOPE_SNAPSHOT_SPACING")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&k| k >= 1)
    })
}

/// A snapshot: the model's state, or only its place until a candidate asks for it.
enum Snap {
    Kept(Rc<Replayer>),
    Place,
}

/// The snapshots, by the index of the event they precede.
pub(super) struct Snapshots {
    at: RefCell<BTreeMap<usize, Snap>>,
    every: usize,
    /// A copy every so many snapshots, whatever the tasks.
    keep: Option<usize>,
}

impl Snapshots {
    pub fn new(every: usize) -> Snapshots {
        Snapshots {
            at: RefCell::new(BTreeMap::new()),
            every,
            keep: forced_spacing(),
        }
    }

    /// Events between two snapshots.
    pub fn every(&self) -> usize {
        self.every
    }

    /// The first snapshot's place.
    pub fn first(&self) -> Option<usize> {
        self.at.borrow().first_key_value().map(|(&k, _)| k)
    }

    /// The place of the last snapshot at or before event `j`.
    pub fn place_before(&self, j: usize) -> Option<usize> {
        self.at.borrow().range(..=j).next_back().map(|(&k, _)| k)
    }

    pub fn has(&self, k: usize) -> bool {
        self.at.borrow().contains_key(&k)
    }

    /// Takes the snapshot before event `i` of the replay `r` (copied, or its place kept), and
    /// lets go of those older than [`CHECKPOINTS_SPAN`]. `replay(t, a, b)` replays `t` over
    /// events `a..=b` with the placements it holds.
    pub fn take(&self, i: usize, r: &mut Replayer, replay: impl Fn(&mut Replayer, usize, usize)) {
        let keep = self.keep.unwrap_or_else(|| {
            ((r.engine.core.tasks.len() + COPY_FIXED_TASKS) / TASKS_PER_SPACING)
                .clamp(1, SPACING_MAX)
        });
        let spacing = self.every * keep;
        let mut at = self.at.borrow_mut();
        let last_kept = at
            .iter()
            .rev()
            .find_map(|(&k, s)| matches!(s, Snap::Kept(_)).then_some(k));
        let copy = last_kept.is_none_or(|k| i >= k + spacing);
        at.insert(
            i,
            if copy {
                Snap::Kept(Rc::new(r.model_copy()))
            } else {
                Snap::Place
            },
        );
        while at.len() * self.every > CHECKPOINTS_SPAN {
            let Some((k, first)) = at.pop_first() else {
                break;
            };
            // (the places after a copy let go of are made from it: it moves on to the next)
            if let (Snap::Kept(s), Some((&next, Snap::Place))) = (first, at.first_key_value()) {
                let mut s = Rc::try_unwrap(s).unwrap_or_else(|s| snapshot_ref(&s));
                replay(&mut s, k, next - 1);
                at.insert(next, Snap::Kept(Rc::new(s)));
            }
        }
    }

    /// The last snapshot at or before event `j` and its place, made from the copy before it
    /// if it is only a place (and kept: the candidates of a miss come back to a few).
    pub fn before(
        &self,
        j: usize,
        replay: impl Fn(&mut Replayer, usize, usize),
    ) -> Option<(usize, Rc<Replayer>)> {
        let mut at = self.at.borrow_mut();
        let (&b, s) = at.range(..=j).next_back()?;
        if let Snap::Kept(s) = s {
            return Some((b, s.clone()));
        }
        // (the first snapshot is always a copy: `take` moves one on when it lets go of it)
        let (a, base) = at.range(..b).rev().find_map(|(&k, s)| match s {
            Snap::Kept(s) => Some((k, s)),
            Snap::Place => None,
        })?;
        let mut t = snapshot_ref(base);
        replay(&mut t, a, b - 1);
        let t = Rc::new(t);
        at.insert(b, Snap::Kept(t.clone()));
        Some((b, t))
    }

    /// The replay goes on from the snapshot at `from` with `placements` (a step accepted
    /// there): those after it are let go of (they were taken without the step), and the
    /// places taken after it will be made from it, with them.
    pub fn restart_at(&self, from: usize, placements: &Placements) {
        let mut at = self.at.borrow_mut();
        let _ = at.split_off(&(from + 1));
        if let Some(Snap::Kept(s)) = at.get_mut(&from) {
            Rc::make_mut(s).untraced.placements = placements.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Trace;
    use crate::model::policies::replay::prepared::Prepared;

    fn load(name: &str) -> Trace {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
        crate::sources::load(&path, &Default::default()).expect("the capture loads")
    }

    /// What a snapshot holds that its use can tell apart: the time, the tasks, each CPU's
    /// current task and clock, the misses so far and each mm's state.
    fn state(r: &Replayer) -> String {
        let c = &r.engine.core;
        let mut tasks: Vec<_> = c.tasks.iter().collect();
        tasks.sort_by_key(|(t, _)| **t);
        let mut mms: Vec<_> = c.tasks.values().filter_map(|t| t.mm).collect();
        mms.sort_unstable();
        mms.dedup();
        let mms: Vec<String> = mms.iter().map(|&m| r.engine.describe_mm(m)).collect();
        format!(
            "now {} misses {} curr {:?} clock {:?} tasks {tasks:?} mms {mms:?}",
            c.now,
            r.misses(),
            c.curr,
            c.rq_clock
        )
    }

    /// Snapshots copied one in 5 and made later from the copy before give the states the
    /// replay had there, as the snapshots copied at each do, before and after the oldest are
    /// let go of (a made one then moves on from a copy let go of).
    #[test]
    fn a_snapshot_made_from_the_copy_before_is_the_state_the_replay_had() {
        let trace = load("traces/kernels/k6.18.15-cidscope-seed000-c16-burst.ftrace.txt.zst");
        let prep = Prepared::for_its_kernel(&trace);
        let mut r = prep.replayer();
        let events = &trace.events;
        let replay = |t: &mut Replayer, a: usize, b: usize| {
            for j in a..=b {
                let ev = events.get_model(j).expect("an event of the capture");
                t.apply(j, &ev, &trace.tasks);
            }
        };
        let every = 16;
        let each = Snapshots {
            keep: Some(1),
            ..Snapshots::new(every)
        };
        let sparse = Snapshots {
            keep: Some(5),
            ..Snapshots::new(every)
        };
        let n = events.len();
        assert!(
            n > 4 * CHECKPOINTS_SPAN,
            "{n} events: too few to let snapshots go"
        );
        let (mut compared, mut made) = (0, 0);
        for (i, ev) in events.iter_model().enumerate() {
            if i.is_multiple_of(every) {
                each.take(i, &mut r, replay);
                sparse.take(i, &mut r, replay);
            }
            r.apply(i, &ev, &trace.tasks);
            // (now and then, a snapshot some way back, as a candidate asks for one)
            // (and near the oldest, made from a copy moved on when the one before was let go)
            let oldest = each.first().map_or(0, |f| f + (i % 5) * every + i % 3);
            if i % 997 == 500 || i % 1009 == 7 {
                let j = if i % 997 == 500 {
                    i.saturating_sub(i % 2311)
                } else {
                    oldest
                };
                let was_place = sparse
                    .place_before(j)
                    .is_some_and(|b| matches!(sparse.at.borrow().get(&b), Some(Snap::Place)));
                match (each.before(j, replay), sparse.before(j, replay)) {
                    (Some((ka, a)), Some((kb, b))) => {
                        assert_eq!(ka, kb, "the same place");
                        assert_eq!(state(&a), state(&b), "the snapshot before event {j}");
                        compared += 1;
                        made += usize::from(was_place);
                    }
                    (a, b) => assert_eq!(a.map(|x| x.0), b.map(|x| x.0)),
                }
            }
        }
        assert!(
            compared > 20 && made > 10,
            "{compared} compared, {made} made"
        );
    }
}
