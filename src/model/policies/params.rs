//! What a model is configured with: kernel variant, rseq regime, clocks, scan scope, and the
//! numbers of §0 (P, HZ, B).

use super::kind::PolicyKind;

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
    /// An idle CPU reads the current time; a CPU running a task reads its clock as of its last
    /// update the capture shows (its tick, a switch, an enqueue): a busy CPU's `rq->clock`
    /// advances at those and not in between, so it lags by up to a tick (§2.4).
    #[default]
    Running,
    /// Always the current time (the spec's first form).
    Now,
    /// The CPU's clock advances only on scheduling activity on that CPU (switch, tick,
    /// enqueue), so a CPU that went idle tick-less keeps an old clock (unverified effect).
    Stale,
}

/// How the replay counts `jiffies` (docs/models.md §5.4; the 100 ms scan of 6.4-6.18 and
/// resume-batch is due by them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JiffiesClock {
    /// As the kernel does: the CPU with the do_timer duty advances them at its tick, a CPU
    /// with its idle tick stopped at its interrupts ([`crate::model::policies::timekeeping`]).
    /// Needs the boundaries from the ticks' CLOCK_MONOTONIC `now=` and the `tick_stop`s that
    /// hand the duty on; a capture without either is replayed with `boundaries`.
    #[default]
    Timekeeper,
    /// At every boundary, wherever a tick records it.
    Boundaries,
}

impl JiffiesClock {
    /// Its name on the command line and in `model_agreement.jiffies`.
    pub fn id(self) -> &'static str {
        match self {
            JiffiesClock::Timekeeper => "timekeeper",
            JiffiesClock::Boundaries => "boundaries",
        }
    }
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

/// Where a model's CONFIG_HZ came from (`model_agreement.hz_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HzSource {
    /// Given (`--hz`, a simulator setting, a test).
    #[default]
    Given,
    /// From what is known of the kernel: its CONFIG_HZ, which a `cidscope vm` capture names.
    Kernel,
    /// The tick expiries clearly support it (docs/models.md §5.4): the phases of `ticks`
    /// ticks gather within its period (mean resultant length, ‰) far more than within the
    /// period of any HZ it does not divide (`against_milli`).
    Ticks {
        ticks: u64,
        concentration_milli: u32,
        against_milli: u32,
    },
    /// Not known: neither given nor named by the capture, and the ticks do not clearly support
    /// one value (too few, or their phases gather nowhere clearly; `best` is the candidate
    /// they lean to). `used` is the value the model ran with.
    Unknown {
        used: u32,
        ticks: u64,
        best: u32,
        concentration_milli: u32,
    },
}

impl HzSource {
    /// For JSON and text: `given`, `kernel config (CONFIG_HZ)`, `tick expiries (...)`,
    /// `unknown (...)`.
    pub fn describe(self) -> String {
        match self {
            HzSource::Given => "given".into(),
            HzSource::Kernel => "kernel config (CONFIG_HZ)".into(),
            HzSource::Ticks {
                ticks,
                concentration_milli,
                against_milli,
            } => format!(
                "tick expiries ({ticks} ticks fall at one phase of its period: concentration {:.2}, at most {:.2} for a HZ it does not divide)",
                concentration_milli as f64 / 1000.0,
                against_milli as f64 / 1000.0
            ),
            HzSource::Unknown {
                used,
                ticks,
                best,
                concentration_milli,
            } => format!(
                "unknown: {used} used (not given, not named by the capture, and {ticks} tick expiries support no value clearly: the most concentrated, {best}, at {:.2}; give --hz)",
                concentration_milli as f64 / 1000.0
            ),
        }
    }
}

/// Whether a replay infers the kernel steps a capture does not mark (docs/models.md §5.3):
/// `--infer-steps auto|off`. The same whatever named the policy (`--policy`,
/// `--kernel-version`, the capture's own header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InferSteps {
    /// After the plain replay, propose placements of untraced steps where it disagrees, keep
    /// those that pass the checks of `replay::infer`, and replay again with them.
    #[default]
    Auto,
    /// The plain replay only: every step at its default place.
    Off,
}

impl InferSteps {
    pub fn id(self) -> &'static str {
        match self {
            InferSteps::Auto => "auto",
            InferSteps::Off => "off",
        }
    }
}

/// What a model run records of the states it goes through (`PolicyRun`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Recording {
    /// Everything a view needs: slots, task CIDs, weights, CPU lanes, alarms, compactions,
    /// predicted updates (the TUI, exports).
    #[default]
    Full,
    /// What a summary reports: the ABI alarms, compactions, scans, modes and predicted updates;
    /// no slot, task-CID, weight or lane history (`stats`).
    Summary,
    /// Nothing but the comparison with the observed CIDs (the inference's search).
    Off,
}

/// Model parameters. `cpus == 0` and `hz == 0` mean "take them from the capture" in a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// P: possible CPUs (`nr_cpu_ids`).
    pub cpus: u32,
    /// CONFIG_HZ.
    pub hz: u32,
    /// Where `hz` came from (set by a replay's parameter resolution).
    pub hz_source: HzSource,
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
    /// Replay: whether to infer placements of untraced steps (docs/models.md §5.3).
    pub infer: InferSteps,
    /// What the run records (`stats` needs no history of slots and lanes).
    pub recording: Recording,
    /// The policy the capture's kernel runs, when its release is known (`--kernel-version`,
    /// the capture's header): inference places only steps of that kernel's family.
    pub kernel_policy: Option<PolicyKind>,
    /// The process-private futex hash (6.17+): when a thread's clone grows it,
    /// `futex_ref_drop` takes an `mm_users` reference held across RCU grace periods
    /// (docs/models.md §2.3, "the futex hash's reference").
    pub futex_hash_ref: bool,
    /// Replay of a capture with the scan probes (`cid_scan`, `cid_remote_clear`, docs/models.md
    /// §5.6): the compaction's slot clears are observed ([`super::DriverEvent::ObservedClear`]),
    /// the policy runs no scan of its own.
    pub observed_scans: bool,
    /// Replay of a capture that records `sched_migrate_task`: a task switched in away from the
    /// CPU the model placed it on was migrated by a record the capture lost (an overwritten
    /// ring buffer), and the switch-in runs that migration first (docs/models.md §5.3 T8).
    /// Without the event nothing says where a task is queued.
    pub migrations_traced: bool,
    /// Replay: the jiffies' boundaries from the ticks' CLOCK_MONOTONIC `now=` (whole multiples
    /// of TICK_NSEC there) instead of the earliest phase of the ticks' record times
    /// (`--mono-jiffies`, docs/models.md §5.4).
    pub mono_jiffies: bool,
    /// How `jiffies` advance ([`JiffiesClock`]).
    pub jiffies: JiffiesClock,
    /// Replay: the first pass over this capture, when its load ran it beside (what a replay
    /// of another capture ignores: `FirstPassOf` knows the events it saw).
    pub first_pass: Option<crate::model::policies::replay::FirstPassOf>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            cpus: 0,
            hz: 0,
            hz_source: HzSource::Given,
            batch: 8,
            version: KernelVersion::default(),
            regime: None,
            rq_clock: RqClockMode::default(),
            scan: ScanScope::default(),
            seed: true,
            check_invariants: false,
            infer: InferSteps::Auto,
            recording: Recording::Full,
            kernel_policy: None,
            futex_hash_ref: false,
            observed_scans: false,
            migrations_traced: false,
            mono_jiffies: false,
            jiffies: JiffiesClock::default(),
            first_pass: None,
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

    /// The rseq regime a model of `kind` runs in: the one asked for, else the policy's own.
    pub fn regime_for(&self, kind: PolicyKind) -> Regime {
        self.regime.unwrap_or(kind.default_regime())
    }

    /// Whether `exit_mm` runs before `trace_sched_process_exit` (6.4–6.12: `kernel/exit.c`
    /// @6.12.117 l.941/945) rather than after it (6.18.15 l.943/954, 7.2.13 l.958/975);
    /// docs/models.md §5.3 T6.
    pub fn exit_mm_before_exit_record(&self) -> bool {
        self.version == KernelVersion::V6_4
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
pub fn batches_per_scan(cpus: u32, batch: u32) -> u32 {
    cpus.div_ceil(batch.max(1))
}

/// The CPU count at which a complete batched scan takes `period_ms` when one batch of `b`
/// CPUs takes `ms_per_batch` (§6 V12: 100 / (15/16) · 8 ≈ 853).
pub fn cpus_for_scan_period(ms_per_batch: f64, b: u32, period_ms: f64) -> f64 {
    if ms_per_batch <= 0.0 {
        return f64::INFINITY;
    }
    period_ms / ms_per_batch * b as f64
}
