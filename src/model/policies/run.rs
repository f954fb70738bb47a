//! A recorded model run: every state change a view needs, time-ordered, keyed by [`MmId`].

use super::invariant::Invariant;
use super::kind::PolicyKind;
use super::params::Params;
use crate::events::Tid;
use crate::model::alarm::Alarm;
use crate::model::lane::{Segment, SlotFlags};
use crate::model::seglane::SegLane;
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// A per-(mm, CPU) slot (`pcpu_cid`) changed, or the task of the mm running on the CPU did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SlotChange {
    pub ts: u64,
    pub cpu: u16,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    /// The task of `mm` running on `cpu`, 0 when none is.
    pub tid: Tid,
    /// The CID number in the slot (`None` = `Unset`).
    pub cid: Option<i32>,
    pub flags: SlotFlags,
}

/// A task's user-visible CID changed (`None`: it holds none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TaskCidChange {
    pub ts: u64,
    pub tid: Tid,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    pub cid: Option<i32>,
}

/// The weight (`popcount`) of an mm's `cidmask` changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WeightChange {
    pub ts: u64,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    pub weight: u32,
}

/// What made a compaction attempt run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// Queued by the scheduler tick (lazy-compact task work, resume-batch rules A/B).
    Tick,
    /// Run from the rseq resume handler after a switch, migration, registration or signal.
    Resume,
}

/// One compaction attempt: a lazy-compact `SCAN` or a resume-batch `BATCH` call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Compaction {
    pub ts: u64,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    pub cpu: u16,
    /// The task in whose context it ran.
    pub tid: Tid,
    pub trigger: Trigger,
    /// resume-batch: batch k of N (1-based); lazy-compact: `None` (one complete scan).
    pub batch: Option<(u32, u32)>,
    /// CPUs whose slots were examined (empty for a no-op attempt).
    pub cpus_scanned: Vec<u16>,
    /// CIDs released to the cidmask (slot became `Unset`).
    pub freed: Vec<i32>,
    /// CIDs marked `Lazy` (in use; released at their CPU's next switch-out).
    pub lazied: Vec<i32>,
    /// `false`: the attempt was gated (period not due, or arming) and scanned nothing.
    pub scanned: bool,
    /// cidmask weight after the attempt.
    pub weight_after: u32,
    /// Time the call took, from the simulator's cost model (0 in a replay).
    pub cost_ns: u64,
    /// When the mm's next scan period opens (`next_scan` as a time), after this attempt.
    pub next_scan_at: Option<u64>,
}

impl Compaction {
    /// A placeholder (no mm, no CPU, nothing scanned).
    pub const EMPTY: Compaction = Compaction {
        ts: 0,
        mm: MmId(0),
        cpu: 0,
        tid: 0,
        trigger: Trigger::Tick,
        batch: None,
        cpus_scanned: Vec::new(),
        freed: Vec::new(),
        lazied: Vec::new(),
        scanned: false,
        weight_after: 0,
        cost_ns: 0,
        next_scan_at: None,
    };
}

/// A complete-scan cycle of an mm: lazy-compact's scans are instant (`start == end`);
/// resume-batch's run from batch 1 to batch N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScanCycle {
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    pub start_ts: u64,
    /// `None` while the cycle is in progress at the end of the run.
    pub end_ts: Option<u64>,
    /// Batches of the cycle so far (N when complete).
    pub batches: u32,
}

/// A predicted `rseq_update`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PredictedUpdate {
    pub ts: u64,
    pub tid: Tid,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    pub cpu: u16,
    pub cid: i32,
}

/// owner-mode: the mm's mode word or its thresholds changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ModeChange {
    pub ts: u64,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    /// Raw `mode` word: 0 per-task, ONCPU per-CPU, with TRANSIT during a fixup.
    pub mode: u32,
    pub percpu: bool,
    pub transit: bool,
    pub users: u32,
    pub max_cids: u32,
    pub pcpu_thrs: u32,
}

/// A broken model invariant (L1–L5, R1–R5, O1–O6) or an impossible state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub ts: u64,
    #[serde(serialize_with = "ser_opt_mm")]
    pub mm: Option<MmId>,
    /// The invariant's name in the spec (`L1`, `R4`, `O3`, `EXHAUSTED`, ...).
    pub invariant: Invariant,
    pub detail: String,
}

/// checked/agreed counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub checked: u64,
    pub agreed: u64,
}

impl Tally {
    pub fn add(&mut self, ok: bool) {
        self.checked += 1;
        self.agreed += ok as u64;
    }
    pub fn ratio(&self) -> f64 {
        if self.checked == 0 {
            1.0
        } else {
            self.agreed as f64 / self.checked as f64
        }
    }
}

/// An observed `rseq_update` whose CID the model did not predict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    pub ts: u64,
    pub tid: Tid,
    pub cpu: u16,
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    /// Index of the `rseq_update` in the trace's events.
    pub event_index: usize,
    pub observed: i32,
    pub predicted: Option<i32>,
    /// The model's view of the mm at that instant (slots, cidmask, mm_users, ...).
    pub model_state: String,
}

/// Agreement of one mm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MmAgreement {
    #[serde(serialize_with = "ser_mm")]
    pub mm: MmId,
    /// The mm began inside the capture (fork without CLONE_VM, or exec).
    pub begins_in_capture: bool,
    pub checked: u64,
    pub agreed: u64,
    /// Observations used to seed the state (not checked).
    pub seeds: u64,
    pub first_disagreement: Option<Disagreement>,
}

/// A kernel step the trace does not mark, placed by the replay where the observed CIDs require
/// it (docs/models.md §5.3): reported, never silent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceGap {
    /// The task the step belongs to (the CLONE_VM child, the task switched in, woken, exiting).
    pub tid: Tid,
    /// Its record in the capture (`sched_process_fork`, `sched_switch`, ...).
    pub record_ts: u64,
    /// Where the model ran the step instead.
    pub placed_ts: u64,
    pub reason: &'static str,
}

/// The traced events that bound where the kernel could have run an inferred step: it ran after
/// `from` and before `to` (docs/models.md §5.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepWindow {
    pub from_ts: u64,
    /// The record that opens the window, in words (`rseq_update of 312`, `sched_switch to 312
    /// on CPU 3`, ...).
    pub from: String,
    pub to_ts: u64,
    /// The record that closes it (`sched_process_exit of 312`, `next record of CPU 3`, ...).
    pub to: String,
}

/// An untraced kernel step the inference placed away from its default place (docs/models.md
/// §5.3): which, by how much, inside which window, and what it changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InferredStep {
    /// The step's kind (`early_fork`, `deferred_switch`, `early_exit`, ...; docs/models.md §5.3
    /// names each with its rule, T1-T7, and §5.6 the probed ones).
    pub kind: &'static str,
    /// The task the step belongs to.
    pub tid: Tid,
    /// Its record (the `sched_process_fork`, `sched_switch`, `sched_process_exit`, probe ...).
    pub record_ts: u64,
    /// Where the model ran it.
    pub placed_ts: u64,
    /// `placed_ts - record_ts` (negative: before its record).
    pub displacement_ns: i64,
    /// Where the kernel could have run it: the placement lies inside.
    pub window: StepWindow,
    /// Observed updates from this step to the next inferred one that the plain replay got
    /// wrong and the replay with the inferred steps gets right.
    pub fixed: u64,
    /// ... and the other way: right in the plain replay, wrong with the steps.
    pub broken: u64,
}

/// A value a CID probe read from the kernel that the model held otherwise (docs/models.md
/// §5.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProbeMismatch {
    pub ts: u64,
    /// The task the probe names.
    pub tid: Tid,
    pub probe: &'static str,
    /// The kernel's name of the value (`mm_users`, `nr_cpus_allowed`, `migrate_from_cpu`,
    /// `last_mm_cid`).
    pub value: &'static str,
    /// -1 for the kernel's -1.
    pub kernel: i64,
    pub model: i64,
}

/// The model's state held against what the CID probes read from the kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProbeChecks {
    /// CID probe records the replay read: with `checked` 0 the probes compared nothing (they
    /// read no state this model keeps), which is not agreement.
    pub probe_events: u64,
    /// Values compared.
    pub checked: u64,
    pub matched: u64,
    /// The first mismatches (at most [`ProbeChecks::KEPT`]).
    pub mismatches: Vec<ProbeMismatch>,
}

/// Values read by the CID probes: compared, and matched by the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProbeTally {
    pub checked: u64,
    pub matched: u64,
}

impl ProbeChecks {
    pub const KEPT: usize = 64;

    pub fn tally(&self) -> ProbeTally {
        ProbeTally {
            checked: self.checked,
            matched: self.matched,
        }
    }

    pub fn compare(&mut self, m: ProbeMismatch) {
        self.checked += 1;
        if m.kernel == m.model {
            self.matched += 1;
        } else if self.mismatches.len() < Self::KEPT {
            self.mismatches.push(m);
        }
    }
}

/// How well a replayed model predicts the observed `rseq_update` CIDs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Agreement {
    pub policy: &'static str,
    /// Checked observations (all modelled mms; seeding observations excluded).
    pub checked: u64,
    pub agreed: u64,
    pub first_disagreement: Option<Disagreement>,
    /// Whether mms that existed before the capture were seeded from their first observations.
    pub seeded: bool,
    /// Observations used as seeds.
    pub seeds: u64,
    /// mms that began inside the capture.
    pub fresh: Tally,
    /// mms that existed before the capture.
    pub preexisting: Tally,
    /// `rseq_update`s of tasks whose mm is unknown (not modelled).
    pub unmodelled: u64,
    pub per_mm: Vec<MmAgreement>,
    /// The plain replay's figures (no inferred step): `predicted.agreed` of
    /// `predicted.checked` observations, and of those of the mms that began inside the
    /// capture. Equal to `agreed`/`fresh` when nothing was inferred.
    pub predicted: Tally,
    pub predicted_fresh: Tally,
    /// The steps the inference placed; `agreed` is with them (docs/models.md §5.3).
    pub inferred_steps: Vec<InferredStep>,
    /// What the inference did, in words: how many steps it placed, or why it did not run
    /// (`--infer-steps off`, nothing to explain, another family's capture).
    pub inference: String,
    /// Untraced kernel steps the replay placed from the observations (empty when every step
    /// could stay at its record), one entry per placement the replay ran.
    pub trace_gaps: Vec<TraceGap>,
    /// The model's state held against the state the capture's CID probes read (§5.6; zero
    /// checks without probes).
    pub probe_checks: ProbeChecks,
    /// The plain replay's `probe_checks` (no inferred step): a step may explain only what a
    /// probe read, where every update agrees.
    pub predicted_probe_checks: ProbeTally,
}

/// Everything one model run produced. Vectors are time-ordered.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyRun {
    pub policy: PolicyKind,
    #[serde(skip)]
    pub params: Params,
    pub slots: Vec<SlotChange>,
    pub task_cids: Vec<TaskCidChange>,
    pub weights: Vec<WeightChange>,
    pub compactions: Vec<Compaction>,
    pub scans: Vec<ScanCycle>,
    pub updates: Vec<PredictedUpdate>,
    /// The predicted updates a summary's recording counted and let go (`Recording::Summary`:
    /// their number and each mm's CIDs are all it reports; a list of every update held 34 MB
    /// for the 1.4 M updates of the bench capture).
    #[serde(skip)]
    pub folded: FoldedUpdates,
    pub modes: Vec<ModeChange>,
    /// The two ABI guarantees (unique CID among running threads of an mm, CID < P).
    #[serde(skip)]
    pub alarms: Vec<Alarm>,
    pub violations: Vec<Violation>,
    /// Per CPU, the model's lane in the timeline's form: who runs, its mm, its model CID,
    /// the slot's LAZY/TRANSIT/ONCPU flags (CONFIRMED is set whenever the model has a CID).
    #[serde(skip)]
    pub lanes: Vec<SegLane>,
    pub agreement: Option<Agreement>,
    /// Driver events the model handled.
    pub model_events: u64,
}

fn ser_mm<S: serde::Serializer>(mm: &MmId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(mm.0)
}

fn ser_opt_mm<S: serde::Serializer>(mm: &Option<MmId>, s: S) -> Result<S::Ok, S::Error> {
    match mm {
        Some(m) => s.serialize_some(&m.0),
        None => s.serialize_none(),
    }
}

/// Progress of a scan cycle at an instant, for the scan-batch widget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanProgress {
    /// Batches done in the current (or last) cycle, and N.
    pub done: u32,
    pub of: u32,
    pub cycle_start: u64,
    pub complete: bool,
}

/// Predicted updates counted and let go: how many, and the CIDs each mm was given.
#[derive(Clone, Debug, Default)]
pub struct FoldedUpdates {
    pub count: u64,
    /// Per mm, its predicted CIDs, sorted, each once.
    pub cids: FxHashMap<MmId, Vec<i32>>,
    /// Per mm (by id), the CIDs below 64 in `cids`: most updates fold nothing new, found
    /// without a hash.
    low: Vec<u64>,
}

impl FoldedUpdates {
    /// Counts `updates` and keeps their CIDs.
    pub fn fold(&mut self, updates: &[PredictedUpdate]) {
        self.count += updates.len() as u64;
        for u in updates {
            if (0..64).contains(&u.cid) && u.mm.is_real() {
                let m = u.mm.0 as usize;
                if self.low.len() <= m {
                    self.low.resize(m + 1, 0);
                }
                let bit = 1u64 << u.cid;
                if self.low[m] & bit != 0 {
                    continue;
                }
                self.low[m] |= bit;
            }
            let v = self.cids.entry(u.mm).or_default();
            if let Err(k) = v.binary_search(&u.cid) {
                v.insert(k, u.cid);
            }
        }
    }
}

impl PolicyRun {
    /// Predicted updates, those kept and those let go (`PolicyRun::folded`).
    pub fn predicted_updates(&self) -> u64 {
        self.updates.len() as u64 + self.folded.count
    }

    /// Per mm, the CIDs its predicted updates gave, sorted, each once (those kept and those
    /// let go).
    pub fn predicted_cids(&self) -> FxHashMap<MmId, Vec<i32>> {
        let mut by_mm = self.folded.cids.clone();
        for u in &self.updates {
            by_mm.entry(u.mm).or_default().push(u.cid);
        }
        for v in by_mm.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        by_mm
    }

    pub fn new(policy: PolicyKind, params: Params) -> PolicyRun {
        PolicyRun {
            policy,
            params,
            slots: Vec::new(),
            task_cids: Vec::new(),
            weights: Vec::new(),
            compactions: Vec::new(),
            scans: Vec::new(),
            updates: Vec::new(),
            folded: FoldedUpdates::default(),
            modes: Vec::new(),
            alarms: Vec::new(),
            violations: Vec::new(),
            lanes: Vec::new(),
            agreement: None,
            model_events: 0,
        }
    }

    /// Weight of `mm`'s cidmask at `ts` (0 before its first change).
    pub fn weight_at(&self, mm: MmId, ts: u64) -> u32 {
        let end = self.weights.partition_point(|w| w.ts <= ts);
        self.weights[..end]
            .iter()
            .rev()
            .find(|w| w.mm == mm)
            .map_or(0, |w| w.weight)
    }

    /// The weight series of one mm: (ts, weight).
    pub fn weight_series(&self, mm: MmId) -> Vec<(u64, u32)> {
        self.weights
            .iter()
            .filter(|w| w.mm == mm)
            .map(|w| (w.ts, w.weight))
            .collect()
    }

    /// Compaction attempts of one mm.
    pub fn compactions_of(&self, mm: MmId) -> impl Iterator<Item = &Compaction> + '_ {
        self.compactions.iter().filter(move |c| c.mm == mm)
    }

    /// Attempts that scanned, by trigger: (tick, resume).
    pub fn compaction_counts(&self, mm: Option<MmId>) -> (u64, u64) {
        let mut t = (0, 0);
        for c in &self.compactions {
            if c.scanned && mm.is_none_or(|m| m == c.mm) {
                match c.trigger {
                    Trigger::Tick => t.0 += 1,
                    Trigger::Resume => t.1 += 1,
                }
            }
        }
        t
    }

    /// Scan progress of `mm` at `ts`: the last successful attempt at or before `ts`.
    pub fn scan_progress_at(&self, mm: MmId, ts: u64) -> Option<ScanProgress> {
        let end = self.compactions.partition_point(|c| c.ts <= ts);
        let last = self.compactions[..end]
            .iter()
            .rev()
            .find(|c| c.mm == mm && c.scanned)?;
        let (done, of) = last.batch.unwrap_or((1, 1));
        let cycle_start = self.scans[..self.scans.partition_point(|s| s.start_ts <= ts)]
            .iter()
            .rev()
            .find(|s| s.mm == mm)
            .map_or(last.ts, |s| s.start_ts);
        Some(ScanProgress {
            done,
            of,
            cycle_start,
            complete: done == of,
        })
    }

    /// owner-mode: the mode of `mm` at `ts`.
    pub fn mode_at(&self, mm: MmId, ts: u64) -> Option<&ModeChange> {
        let end = self.modes.partition_point(|m| m.ts <= ts);
        self.modes[..end].iter().rev().find(|m| m.mm == mm)
    }

    /// A lane per thread of `mm`: the model's CID of each thread over time (from the model's
    /// per-CPU lanes, whose last segments end at `end`).
    pub fn thread_lanes(&self, mm: MmId, end: u64) -> crate::model::ThreadLanes {
        crate::model::ThreadLanes::build(&self.lanes, mm, end)
    }

    /// The model's lane segment of `cpu` covering `ts`.
    pub fn segment_at(&self, cpu: usize, ts: u64) -> Option<Segment> {
        let lane = self.lanes.get(cpu)?;
        lane.get(lane.index_at(ts)?)
    }

    /// Slot states of `mm` at `ts`, one per CPU that ever had a slot change: (cpu, change).
    pub fn slots_at(&self, mm: MmId, ts: u64) -> Vec<SlotChange> {
        let end = self.slots.partition_point(|s| s.ts <= ts);
        let mut by_cpu: FxHashMap<u16, SlotChange> = FxHashMap::default();
        for s in self.slots[..end].iter().filter(|s| s.mm == mm) {
            by_cpu.insert(s.cpu, *s);
        }
        let mut v: Vec<SlotChange> = by_cpu.into_values().collect();
        v.sort_by_key(|s| s.cpu);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folding in pieces keeps what sorting every update's CID per mm gives: CIDs past the
    /// low bits, negative ones, mms past the ids and unknown ones included.
    #[test]
    fn folded_cids_are_every_updates_cids_sorted_once() {
        let mms = [MmId(0), MmId(3), MmId(70_000), MmId::UNKNOWN];
        let cids = [0, 1, 63, 64, 200, -1, 5];
        let updates: Vec<PredictedUpdate> = (0..500u32)
            .map(|i| PredictedUpdate {
                ts: i as u64,
                tid: i % 9,
                mm: mms[(i as usize * 7) % mms.len()],
                cpu: 0,
                cid: cids[(i as usize * 5 + i as usize / 11) % cids.len()],
            })
            .collect();
        let mut f = FoldedUpdates::default();
        for piece in updates.chunks(37) {
            f.fold(piece);
        }
        let mut want: FxHashMap<MmId, Vec<i32>> = FxHashMap::default();
        for u in &updates {
            want.entry(u.mm).or_default().push(u.cid);
        }
        for v in want.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        assert_eq!(f.count, 500);
        assert_eq!(f.cids, want);
    }
}
