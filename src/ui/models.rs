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
    /// by the tick that finds them done (the runs, or what panicked in the thread).
    pub running: Option<std::sync::mpsc::Receiver<Result<Vec<PolicyRun>, String>>>,
    /// A demo's narration talks about these lane sets: the stack brings them into view.
    pub focus: Vec<crate::demo::Shows>,
    /// Presenter mode (`demo --present`): only the sets of `focus` are shown.
    pub present: bool,
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
            focus: Vec::new(),
            present: false,
        }
    }
}

/// The attempts of `mm` (every mm for `None`) that scanned, each with the trigger of the complete
/// scan it belongs to: batch k > 1 of a resume-batch scan continues the mark of batch 1 (of
/// its mm).
pub fn trigger_marks(run: &PolicyRun, mm: Option<MmId>) -> Vec<TriggerMark> {
    let mut started: Vec<(MmId, Trigger)> = Vec::new();
    let mut out = Vec::new();
    for (index, c) in run.compactions.iter().enumerate() {
        if !c.scanned || mm.is_some_and(|m| m != c.mm) {
            continue;
        }
        let starts = c.batch.is_none_or(|(k, _)| k <= 1);
        let cycle = started.iter_mut().find(|(m, _)| *m == c.mm);
        let trigger = match (starts, cycle) {
            (true, Some(s)) => {
                s.1 = c.trigger;
                c.trigger
            }
            (true, None) => {
                started.push((c.mm, c.trigger));
                c.trigger
            }
            (false, Some(s)) => s.1,
            // a batch whose scan began before the run: its own trigger
            (false, None) => c.trigger,
        };
        out.push(TriggerMark {
            ts: c.ts,
            trigger,
            starts,
            index,
        });
    }
    out
}

/// Points in time a jump key can reach, beyond what the observed timeline holds (the model
/// layers add tick/resume triggers and scan starts).
#[derive(Clone, Debug, Default)]
pub struct ModelMarks {
    pub ticks: Vec<u64>,
    pub resumes: Vec<u64>,
    pub scans: Vec<u64>,
    /// Starts of compactions by any trigger (a scan's first batch; `.` and `,` jump to them).
    pub triggers: Vec<u64>,
}

impl Models {
    /// The position of a focused set in the stack of all sets (observed first, then the models).
    pub fn position_of(&self, shows: crate::demo::Shows) -> Option<usize> {
        let observed = usize::from(self.show_observed);
        match shows {
            crate::demo::Shows::Observed => self.show_observed.then_some(0),
            crate::demo::Shows::Model(k) => self
                .views
                .iter()
                .position(|v| v.run.policy == k)
                .map(|i| observed + i),
        }
    }

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
            marks
                .triggers
                .extend(m.trigger_marks.iter().filter(|t| t.starts).map(|t| t.ts));
        }
        for v in [
            &mut marks.ticks,
            &mut marks.resumes,
            &mut marks.scans,
            &mut marks.triggers,
        ] {
            v.sort_unstable();
            v.dedup();
        }
        self.marks = marks;
    }
}

/// A compaction drawn where it happened: its start (or a later batch of the same complete
/// scan, drawn with the mark of the trigger that started the scan) and the CPUs it scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerMark {
    pub ts: u64,
    /// The trigger that started the complete scan this attempt belongs to.
    pub trigger: Trigger,
    /// Batch 1 (or a one-batch scan): the scan starts here.
    pub starts: bool,
    /// Index of the attempt in the run's compactions (its CPUs scanned).
    pub index: usize,
}

/// A complete scan over time, with its trigger (`None`: no attempt found at its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanSpan {
    pub start: u64,
    pub end: Option<u64>,
    pub trigger: Option<Trigger>,
}

pub struct ModelView {
    pub run: PolicyRun,
    /// Per CPU: the model's slot of the selected mm (`pcpu_cid[cpu]`, with the task of the mm
    /// running there, if any); with "all tasks", the running task's model CID.
    pub lanes: Vec<SegLane>,
    /// The selected mm's cidmask weight: (time, weight).
    pub weights: Vec<(u64, u16)>,
    pub mm: Option<MmId>,
    /// The selected mm's compactions that scanned, time-ordered, as they are drawn.
    pub trigger_marks: Vec<TriggerMark>,
    /// The highest CID the selected mm's slots ever hold (the cidmask strip's height).
    pub max_cid: Option<i32>,
}

impl ModelView {
    pub fn new(run: PolicyRun, sel: MmSel, ncpus: usize) -> ModelView {
        let mut v = ModelView {
            run,
            lanes: Vec::new(),
            weights: Vec::new(),
            mm: None,
            trigger_marks: Vec::new(),
            max_cid: None,
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
        self.trigger_marks = trigger_marks(&self.run, self.mm);
        self.max_cid = self
            .run
            .slots
            .iter()
            .filter(|s| self.mm.is_none_or(|m| m == s.mm))
            .filter_map(|s| s.cid)
            .max();
    }

    /// The complete scans of the selected mm, each with the trigger of its first attempt.
    pub fn scan_spans(&self) -> Vec<ScanSpan> {
        self.run
            .scans
            .iter()
            .filter(|s| self.mm.is_none_or(|m| m == s.mm))
            .map(|s| {
                let at = self.trigger_marks.partition_point(|t| t.ts < s.start_ts);
                let trigger = self.trigger_marks[at..]
                    .iter()
                    .take_while(|t| t.ts == s.start_ts)
                    .find(|t| self.run.compactions[t.index].mm == s.mm)
                    .map(|t| t.trigger);
                ScanSpan {
                    start: s.start_ts,
                    end: s.end_ts,
                    trigger,
                }
            })
            .collect()
    }

    /// The CPUs an attempt scanned.
    pub fn cpus_scanned(&self, mark: &TriggerMark) -> &[u16] {
        &self.run.compactions[mark.index].cpus_scanned
    }

    /// Compaction attempts that scanned (of the selected mm): (time, trigger).
    pub fn triggers(&self) -> impl Iterator<Item = (u64, Trigger)> + '_ {
        self.run
            .compactions
            .iter()
            .filter(move |c| c.scanned && self.mm.is_none_or(|m| m == c.mm))
            .map(|c| (c.ts, c.trigger))
    }

    /// Starts of complete scans (of the selected mm) whose trigger is not known: the only
    /// scans drawn as `S` (the others as their trigger).
    pub fn untriggered_scans(&self) -> impl Iterator<Item = u64> + '_ {
        self.scan_spans()
            .into_iter()
            .filter(|s| s.trigger.is_none())
            .map(|s| s.start)
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
                crate::stats::policy::figures_brief(
                    a.predicted.agreed,
                    a.agreed,
                    a.checked,
                    a.inferred_steps.len()
                )
            ),
            Some(a) => {
                let seen = a.seeds + a.unmodelled;
                if seen == 0 {
                    return format!("{name} model (the capture has no rseq_update)");
                }
                let mut why = Vec::new();
                if a.unmodelled > 0 {
                    why.push(format!(
                        "{} of tasks whose process is not known (no TGID column or clone/exec events)",
                        a.unmodelled
                    ));
                }
                if a.seeds > 0 {
                    why.push(format!("{} used to seed the model", a.seeds));
                }
                format!(
                    "{name} model: none of {} checked ({})",
                    crate::ui::words::count(seen, "rseq_update"),
                    why.join(", ")
                )
            }
            None => format!("{name} model"),
        }
    }
}
