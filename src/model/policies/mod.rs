//! Models of the kernel's mm_cid policies, fed by driver events (the models specification,
//! `../shared/docs/cid-models.md`, §1.1).
//!
//! * [`lazy_compact`]: Linux 6.4–6.18 (per-CPU lazy CIDs, 100 ms task-work scan), §2;
//! * [`resume_batch`]: the never-merged 2025 series compacting in batches from the rseq resume
//!   handler, §3 (everything of §2 except its handlers);
//! * [`owner_mode`]: the 6.19 rewrite (per-task / per-CPU ownership with TRANSIT fixups), §4.
//!
//! How to use:
//! * a capture: [`replay()`]`(&trace, kind, &params)` → [`PolicyRun`] (with an [`Agreement`]
//!   against the observed `rseq_update`s), keyed by the same `MmId`s as `model::observed` and
//!   `timeline::Timeline`; [`replay_all`] for a compare view;
//! * a synthetic schedule: `crate::sim::simulate(&cfg)` → `SimOutput { trace, run, summary }`
//!   (it drives the same [`Replayer`], so `run` lines up with `Timeline::build(&trace)`);
//! * step by step: [`Engine::step`] with [`DriverEvent`]s, or [`script::Script`] (tests).
//!
//! ```no_run
//! use cidscope::model::policies::{replay, Params, PolicyKind};
//! # let trace = cidscope::events::Trace::new("x", cidscope::sources::formats::FTRACE);
//! let run = replay(&trace, PolicyKind::LazyCompact, &Params::default());
//! let seg = run.segment_at(0, 1_000_000); // model lane of CPU 0 (timeline::Segment)
//! let w = run.weight_at(cidscope::model::MmId(0), 1_000_000); // cidmask weight
//! let p = run.scan_progress_at(cidscope::model::MmId(0), 1_000_000); // batch k of N
//! # let _ = (seg, w, p);
//! ```
//!
//! The model is deterministic and knows nothing of file formats or the UI.

pub mod cpuset;
pub mod driver;
pub mod lazy_compact;
pub mod owner_mode;
pub mod replay;
pub mod resume_batch;
pub mod run;
pub mod script;

pub use cpuset::CpuSet;
pub use driver::{Core, DriverEvent, Engine, Task};
pub use replay::{Replayer, infer_hz, replay, replay_all, resolve_params};
pub use run::{
    Agreement, Compaction, Disagreement, MmAgreement, ModeChange, PolicyRun, PredictedUpdate,
    ScanCycle, SlotChange, Tally, TaskCidChange, Trigger, Violation, WeightChange, slot_flags,
};

/// Which CID policy a model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyKind {
    LazyCompact,
    ResumeBatch,
    OwnerMode,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 3] = [
        PolicyKind::LazyCompact,
        PolicyKind::ResumeBatch,
        PolicyKind::OwnerMode,
    ];

    /// The name used on the command line and in JSON.
    pub fn id(self) -> &'static str {
        match self {
            PolicyKind::LazyCompact => "lazy-compact",
            PolicyKind::ResumeBatch => "resume-batch",
            PolicyKind::OwnerMode => "owner-mode",
        }
    }

    pub fn from_id(s: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|p| p.id() == s)
    }

    /// rseq emission regime of the kernels that ran this policy (§1.2).
    pub fn default_regime(self) -> Regime {
        match self {
            PolicyKind::LazyCompact | PolicyKind::ResumeBatch => Regime::Legacy,
            PolicyKind::OwnerMode => Regime::Fast,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            PolicyKind::LazyCompact => "Linux 6.4-6.18: per-CPU lazy CIDs, 100 ms task-work scan",
            PolicyKind::ResumeBatch => {
                "2025 series (never merged): batched scan from the rseq resume handler"
            }
            PolicyKind::OwnerMode => "Linux 6.19+: per-task / per-CPU ownership, no scan",
        }
    }
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Kernel-version variants of lazy-compact's `ALLOC` and `MIGRATE` (§2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelVersion {
    /// 6.4–6.12: first-zero allocation only, no `recent_cid`, per-task `nr_cpus_allowed`.
    V6_4,
    /// 6.13 (and 6.13.y before the S3 backport): `recent_cid` + expansion, no shrink.
    V6_13,
    /// 6.14–6.18: with the `max_nr_cid` shrink.
    #[default]
    V6_14,
}

impl KernelVersion {
    pub fn id(self) -> &'static str {
        match self {
            KernelVersion::V6_4 => "6.4",
            KernelVersion::V6_13 => "6.13",
            KernelVersion::V6_14 => "6.14",
        }
    }
    pub fn from_id(s: &str) -> Option<KernelVersion> {
        match s {
            "6.4" | "6.4-6.12" => Some(KernelVersion::V6_4),
            "6.13" => Some(KernelVersion::V6_13),
            "6.14" | "6.14-6.18" | "6.18" => Some(KernelVersion::V6_14),
            _ => None,
        }
    }
}

/// rseq `UPDATE` emission regime (§1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// ≤ 6.18: an `UPDATE` on every return to user with TIF_NOTIFY_RESUME.
    Legacy,
    /// ≥ 6.19: an `UPDATE` only when the task's IDs changed.
    Fast,
}

impl Regime {
    pub fn id(self) -> &'static str {
        match self {
            Regime::Legacy => "legacy",
            Regime::Fast => "fast",
        }
    }
}

/// What `rq_clock(c)` reads in the age pass (§2.4 fidelity note).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RqClockMode {
    /// Always the current time (the spec's default).
    #[default]
    Now,
    /// The CPU's clock advances only on scheduling activity on that CPU (switch, tick,
    /// enqueue), so a CPU that went idle tick-less keeps an old clock (unverified effect).
    Stale,
}

/// Which CPUs a scan (lazy-compact `SCAN`, resume-batch `BATCH`) walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScanScope {
    /// Every possible CPU, as all three policies do.
    #[default]
    All,
    /// Only CPUs the mm ran on since its last complete scan, plus CPUs still holding one of
    /// its CIDs (the seed-001 "visited_cpus" idea of §7; not part of any policy).
    Visited,
}

/// Model parameters. `cpus == 0` and `hz == 0` mean "take them from the capture" in a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// P: possible CPUs (`nr_cpu_ids`).
    pub cpus: u32,
    /// CONFIG_HZ.
    pub hz: u32,
    /// B: resume-batch `CONFIG_RSEQ_CID_SCAN_BATCH`.
    pub batch: u32,
    pub version: KernelVersion,
    /// `None`: the policy's own regime.
    pub regime: Option<Regime>,
    pub rq_clock: RqClockMode,
    pub scan: ScanScope,
    /// Replay only: seed the state of mms that existed before the capture from their first
    /// observations (see [`replay`]).
    pub seed: bool,
    /// Check every invariant of the policy (L1–L5, R1–R5, O1–O6) after every event and
    /// record breaks as [`Violation`]s. Costly: tests and `--check`.
    pub check_invariants: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            cpus: 0,
            hz: 0,
            batch: 8,
            version: KernelVersion::default(),
            regime: None,
            rq_clock: RqClockMode::default(),
            scan: ScanScope::default(),
            seed: true,
            check_invariants: false,
        }
    }
}

impl Params {
    pub const DEFAULT_HZ: u32 = 1000;

    pub fn with_cpus(cpus: u32) -> Params {
        Params {
            cpus,
            hz: Self::DEFAULT_HZ,
            ..Default::default()
        }
    }

    pub fn regime_for(&self, kind: PolicyKind) -> Regime {
        self.regime.unwrap_or(kind.default_regime())
    }

    /// `msecs_to_jiffies(100)`: the scan period D in jiffies (HZ=250 → 25, HZ=1000 → 100).
    pub fn scan_delay_jiffies(&self) -> u64 {
        (100 * self.hz as u64).div_ceil(1000).max(1)
    }

    /// One jiffy in ns.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz.max(1) as u64
    }
}

/// `ceil(P / B)`: batches in one complete resume-batch scan (§6 V1).
pub fn batches_per_scan(p: u32, b: u32) -> u32 {
    p.div_ceil(b.max(1))
}

/// The CPU count at which a complete batched scan takes `period_ms` when one batch of `b`
/// CPUs takes `ms_per_batch` (§6 V12: 100 / (15/16) · 8 ≈ 853).
pub fn cpus_for_scan_period(ms_per_batch: f64, b: u32, period_ms: f64) -> f64 {
    if ms_per_batch <= 0.0 {
        return f64::INFINITY;
    }
    period_ms / ms_per_batch * b as f64
}
