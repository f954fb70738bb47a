//! Model runs as the UI shows them: each model's per-CPU slots of the selected process, its
//! weight curve, its compaction triggers and scan progress. Rebuilt when the selection changes,
//! so drawing never computes more than a frame needs.

use super::selection::MmSel;
use crate::model::MmId;
use crate::model::kernel::{Asked, ChosenModel};
use crate::model::policies::run::ScanProgress;
use crate::model::policies::{PolicyKind, PolicyRun, Trigger};
use crate::timeline::{SegLane, Segment};

/// The CID models shown beside (or instead of) what the capture shows.
pub struct Models {
    pub views: Vec<ModelView>,
    /// Whether the observed lanes are shown (a `--compare` list may leave them out).
    pub show_observed: bool,
    /// Jump targets of every model shown.
    pub marks: ModelMarks,
    /// Models to run once the capture is read.
    pub request: Option<ModelRequest>,
    /// The model chosen for the capture (its kernel's, or `--policy`), and why: the title says
    /// it.
    pub chosen: Option<ChosenModel>,
    /// The models replaying in a thread of their own (the drawing goes on meanwhile): taken in
    /// by the tick that finds them done.
    pub running: Option<std::sync::mpsc::Receiver<Vec<PolicyRun>>>,
}

/// Models to run once the capture is read: the chosen one (`model::kernel::choose` from the
/// flags and the capture's kernel) first, then `others`.
#[derive(Clone, Debug, Default)]
pub struct ModelRequest {
    pub asked: Asked,
    /// `--compare` (and `--policy`) models, in order.
    pub others: Vec<PolicyKind>,
}

impl Default for Models {
    fn default() -> Models {
        Models {
            views: Vec::new(),
            show_observed: true,
            marks: ModelMarks::default(),
            request: None,
            chosen: None,
            running: None,
        }
    }
}

/// Points in time a jump key can reach, beyond what the observed timeline holds (the model
/// layers add tick/resume triggers and scan starts).
#[derive(Clone, Debug, Default)]
pub struct ModelMarks {
    pub ticks: Vec<u64>,
    pub resumes: Vec<u64>,
    pub scans: Vec<u64>,
}

impl Models {
    /// Shows these runs, for the selection `sel` on `ncpus` CPUs.
    pub fn set(&mut self, runs: Vec<PolicyRun>, sel: MmSel, ncpus: usize) {
        self.views = runs
            .into_iter()
            .map(|r| ModelView::new(r, sel, ncpus))
            .collect();
        self.refresh_marks();
    }

    /// Follows a new selection in the views and their jump targets.
    pub fn select(&mut self, sel: MmSel, ncpus: usize) {
        for m in &mut self.views {
            m.select(sel, ncpus);
        }
        self.refresh_marks();
    }

    /// The jump targets of every model: a key jumps to the next mark of any model shown (the
    /// first model alone may have none: owner-mode never scans).
    fn refresh_marks(&mut self) {
        let mut marks = ModelMarks::default();
        for m in &self.views {
            for (ts, trig) in m.triggers() {
                match trig {
                    Trigger::Tick => marks.ticks.push(ts),
                    Trigger::Resume => marks.resumes.push(ts),
                }
            }
            marks.scans.extend(m.scan_starts());
        }
        for v in [&mut marks.ticks, &mut marks.resumes, &mut marks.scans] {
            v.sort_unstable();
            v.dedup();
        }
        self.marks = marks;
    }
}

pub struct ModelView {
    pub run: PolicyRun,
    /// Per CPU: the model's slot of the selected mm (`pcpu_cid[cpu]`, with the task of the mm
    /// running there, if any); with "all tasks", the running task's model CID.
    pub lanes: Vec<SegLane>,
    /// The selected mm's cidmask weight: (time, weight).
    pub weights: Vec<(u64, u16)>,
    pub mm: Option<MmId>,
}

impl ModelView {
    pub fn new(run: PolicyRun, sel: MmSel, ncpus: usize) -> ModelView {
        let mut v = ModelView {
            run,
            lanes: Vec::new(),
            weights: Vec::new(),
            mm: None,
        };
        v.select(sel, ncpus);
        v
    }

    /// Rebuilds the lanes and weights for a new selection.
    pub fn select(&mut self, sel: MmSel, ncpus: usize) {
        match sel {
            MmSel::All => {
                self.mm = None;
                self.lanes = self.run.lanes.clone();
                self.weights.clear();
            }
            MmSel::Mm(mm) => {
                self.mm = Some(mm);
                let n = ncpus.max(self.run.lanes.len());
                let mut lanes: Vec<SegLane> = vec![SegLane::new(); n];
                for s in self.run.slots.iter().filter(|s| s.mm == mm) {
                    let c = s.cpu as usize;
                    if c >= lanes.len() {
                        lanes.resize(c + 1, SegLane::new());
                    }
                    let seg = Segment {
                        start: s.ts,
                        tid: s.tid,
                        mm,
                        cid: s.cid.unwrap_or(Segment::NO_CID),
                        flags: (s.flags & (Segment::LAZY | Segment::TRANSIT | Segment::ONCPU))
                            | Segment::CONFIRMED.when(s.tid != 0),
                    };
                    let lane = &mut lanes[c];
                    match lane.last() {
                        Some(last) if last.start == seg.start => lane.set_last(seg),
                        _ => lane.push(seg),
                    }
                }
                self.lanes = lanes;
                self.weights = self
                    .run
                    .weight_series(mm)
                    .into_iter()
                    .map(|(t, w)| (t, w.min(u16::MAX as u32) as u16))
                    .collect();
            }
        }
    }

    /// Compaction attempts that scanned (of the selected mm): (time, trigger).
    pub fn triggers(&self) -> impl Iterator<Item = (u64, Trigger)> + '_ {
        self.run
            .compactions
            .iter()
            .filter(move |c| c.scanned && self.mm.is_none_or(|m| m == c.mm))
            .map(|c| (c.ts, c.trigger))
    }

    /// Starts of complete scans (of the selected mm).
    pub fn scan_starts(&self) -> impl Iterator<Item = u64> + '_ {
        self.run
            .scans
            .iter()
            .filter(move |s| self.mm.is_none_or(|m| m == s.mm))
            .map(|s| s.start_ts)
    }

    /// The scan of the selected mm at `ts`: progress and the CPUs of its latest batch.
    pub fn scan_at(&self, ts: u64) -> Option<(ScanProgress, Vec<u16>, Option<u64>)> {
        let mm = self.mm?;
        let p = self.run.scan_progress_at(mm, ts)?;
        let end = self.run.compactions.partition_point(|c| c.ts <= ts);
        let last = self.run.compactions[..end]
            .iter()
            .rev()
            .find(|c| c.mm == mm && c.scanned)?;
        Some((p, last.cpus_scanned.clone(), last.next_scan_at))
    }

    /// One line naming the model and how well it matches the capture.
    pub fn title(&self) -> String {
        let name = self.run.policy.id();
        match &self.run.agreement {
            Some(a) if a.checked > 0 => format!(
                "{name} model: {}",
                crate::stats::policy::figures(
                    a.predicted.agreed,
                    a.agreed,
                    a.checked,
                    a.inferred_steps.len()
                )
            ),
            Some(_) => format!("{name} model (no rseq_update to check)"),
            None => format!("{name} model"),
        }
    }
}
