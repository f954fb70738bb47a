//! What is derived from the index for the current selection, so a frame reads it instead of
//! computing it: the selected process's observed weight series, and (big captures) per-column
//! summary pyramids of the lanes and weight series shown.

use super::models::ModelView;
use super::selection::{MmSel, Selection};
use crate::events::Tid;
use crate::model::MmId;
use crate::timeline::summary::{LanePyramid, MaxPyramid};
use crate::timeline::{SegLane, ThreadLanes, Timeline};

/// Below this many lane segments a frame reads the segments directly (exact and fast enough).
pub const SUMMARY_THRESHOLD: usize = 50_000;

/// Summary pyramids of the lanes and weight series shown, for the selection they were built for.
pub struct Summaries {
    pub sel: MmSel,
    pub observed: Vec<LanePyramid>,
    pub weight: Option<MaxPyramid>,
    /// Per model view: its lanes' pyramids and its weight's.
    pub models: Vec<(Vec<LanePyramid>, Option<MaxPyramid>)>,
}

#[derive(Default)]
pub struct Derived {
    /// Per-column summaries for the current selection (big captures only; small ones are
    /// drawn exactly from their segments).
    pub summaries: Option<Summaries>,
    /// The observed cidmask weight of the selected process over time (derived from the lanes
    /// when the selection or the data changes).
    pub weights: Vec<(u64, u16)>,
    /// The data grew since the weights were built.
    pub weights_stale: bool,
    /// Events loaded when the weights were last rebuilt.
    pub weights_at: usize,
    /// Thread lanes of the selected process (built when the thread view is on).
    pub threads: Option<Threads>,
}

/// The thread lanes of one process: what the capture shows and what each model gives it.
pub struct Threads {
    pub sel: MmSel,
    /// Events loaded when they were built.
    pub built_at: usize,
    pub when: std::time::Instant,
    /// Rows: every thread that ran in any set, by tid.
    pub tids: Vec<Tid>,
    pub observed: ThreadLanes,
    /// Per model view.
    pub models: Vec<ThreadLanes>,
    /// Summary pyramids of the observed and model thread lanes (big captures): per set, per
    /// row of `tids`.
    pub pyramids: Option<Vec<Vec<LanePyramid>>>,
}

impl Threads {
    pub fn build(
        tl: &Timeline,
        models: &[ModelView],
        mm: MmId,
        built_at: usize,
        growing: bool,
    ) -> Threads {
        let observed = tl.thread_lanes(mm);
        let models: Vec<ThreadLanes> = models
            .iter()
            .map(|m| m.run.thread_lanes(mm, tl.last_ts))
            .collect();
        let mut tids: Vec<Tid> = observed
            .tids
            .iter()
            .chain(models.iter().flat_map(|m| m.tids.iter()))
            .copied()
            .collect();
        tids.sort_unstable();
        tids.dedup();
        let segs = observed.segments() + models.iter().map(ThreadLanes::segments).sum::<usize>();
        let pyramids = (segs >= SUMMARY_THRESHOLD && !growing).then(|| {
            std::iter::once(&observed)
                .chain(models.iter())
                .map(|set| {
                    tids.iter()
                        .map(|&t| {
                            LanePyramid::build(
                                set.lane_of(t).unwrap_or(SegLane::empty()),
                                tl.first_ts,
                                tl.last_ts,
                                |s| s.tid != 0,
                            )
                        })
                        .collect()
                })
                .collect()
        });
        Threads {
            sel: MmSel::Mm(mm),
            built_at,
            when: std::time::Instant::now(),
            tids,
            observed,
            models,
            pyramids,
        }
    }

    /// The lanes of set `k` (0 = observed, 1.. = the model views).
    pub fn set(&self, k: usize) -> Option<&ThreadLanes> {
        match k {
            0 => Some(&self.observed),
            k => self.models.get(k - 1),
        }
    }
}

impl Derived {
    /// Derives the selected process's weight series from the lanes.
    pub fn refresh_weights(&mut self, tl: &Timeline, sel: MmSel) {
        self.weights = match sel {
            MmSel::Mm(m) => tl
                .weight_series(Some(m))
                .into_iter()
                .nth(m.0 as usize)
                .unwrap_or_default(),
            MmSel::All => Vec::new(),
        };
    }

    /// Rebuilds the weights and the summaries for the selection (after a load, a selection
    /// change or new models). No summaries are built for small captures or while the data
    /// still grows (`growing`): each delta would outdate them.
    pub fn refresh_summaries(
        &mut self,
        tl: &Timeline,
        sel: &Selection,
        models: &[ModelView],
        growing: bool,
    ) {
        self.refresh_weights(tl, sel.selected());
        let segs: usize = tl.lanes.iter().map(SegLane::len).sum();
        if segs < SUMMARY_THRESHOLD || growing {
            self.summaries = None;
            return;
        }
        let (origin, end) = (tl.first_ts, tl.last_ts);
        let observed = tl
            .lanes
            .iter()
            .map(|l| LanePyramid::build(l, origin, end, |s| sel.admits(s)))
            .collect();
        let weight = match sel.selected() {
            MmSel::Mm(_) => Some(MaxPyramid::build(&self.weights, origin, end)),
            MmSel::All => None,
        };
        let models = models
            .iter()
            .map(|m| {
                let admit_slots = m.mm.is_some();
                let lanes = m
                    .lanes
                    .iter()
                    .map(|l| {
                        LanePyramid::build(l, origin, end, |s| {
                            if admit_slots {
                                s.cid().is_some() || s.tid != 0
                            } else {
                                s.tid != 0
                            }
                        })
                    })
                    .collect();
                let w = (!m.weights.is_empty()).then(|| MaxPyramid::build(&m.weights, origin, end));
                (lanes, w)
            })
            .collect();
        self.summaries = Some(Summaries {
            sel: sel.selected(),
            observed,
            weight,
            models,
        });
    }
}
