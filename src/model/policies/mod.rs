//! Models of the kernel's mm_cid policies, fed by driver events (the models specification,
//! `docs/models.md`, §1.1).
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
//! Layout: the interface a policy implements is [`CidPolicy`] (`policy.rs`); each policy is one
//! file (`lazy_compact.rs`, `resume_batch.rs`, `owner_mode.rs`) registered in `kind.rs`; the
//! engine (`engine.rs`) runs the driver loop over the policy-independent [`Core`] (`core.rs`)
//! and the recorder (`recorder.rs`) writes the [`PolicyRun`] (`run.rs`).
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

pub mod core;
pub mod cpuset;
pub mod dirty;
pub mod driver_event;
pub mod engine;
pub mod invariant;
pub mod kind;
pub mod lazy_compact;
pub mod owner_mode;
pub mod params;
pub mod policy;
pub mod recorder;
pub mod registry;
pub mod replay;
pub mod resume_batch;
pub mod run;
pub mod script;
pub mod task;
pub mod timekeeping;
pub mod why;

pub use self::core::Core;
pub use cpuset::CpuSet;
pub use engine::{DriverEvent, Engine};
pub use invariant::{Finding, Invariant};
pub use kind::PolicyKind;
pub use params::{
    HzSource, InferSteps, JiffiesClock, KernelVersion, Params, Recording, Regime, RqClockMode,
    ScanScope, batches_per_scan, cpus_for_scan_period,
};
pub use policy::{CidPolicy, ObservedUpdate, ProbeView};
pub use registry::AnyPolicy;
pub use replay::{
    HzInference, Replayer, infer_hz, infer_hz_detail, replay, replay_all, resolve_params,
};
pub use run::{
    Agreement, Compaction, Disagreement, InferredStep, MmAgreement, ModeChange, PolicyRun,
    PredictedUpdate, ProbeChecks, ProbeMismatch, ProbeTally, ScanCycle, SlotChange, StepWindow,
    Tally, TaskCidChange, TraceGap, Trigger, Violation, WeightChange,
};
pub use task::{PerTask, Task, TaskKey};
