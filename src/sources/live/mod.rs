//! Live sources: watch CIDs being handed out now, on this machine.
//!
//! * [`workload`]: cidscope's own threads (periodic, hog, churn, migrate, sleeper) each read the
//!   CID the kernel wrote into their rseq area and report it as an [`rseq_area::RseqSample`]. Needs no
//!   privileges.
//! * [`attach`]: `perf_event_open` on the rseq/sched/task/timer tracepoints, one ring buffer per
//!   CPU, decoded through the tracefs format files into canonical [`Event`]s. Needs root or
//!   CAP_PERFMON plus tracefs access.
//! * [`session::LiveSession`] runs either or both and hands out time-ordered batches without ever
//!   blocking the capture (`export::ftrace` writes a session as ftrace text that
//!   [`crate::sources::load`] replays).
//!
//! Both clocks are CLOCK_MONOTONIC (perf `use_clockid`), so trace events and rseq-area samples
//! share one time axis. The raw system calls (and all unsafe code) live in `sources::sys`.
//!
//! [`Event`]: crate::events::Event

pub mod attach;
mod capture;
pub mod cpus;
pub mod error;
pub mod filter;
pub mod kallsyms;
pub mod procfs;
pub mod rseq_area;
pub mod session;
pub mod spec;
mod store;
pub mod tracefs;
pub mod workload;

pub use attach::{Scope, check_privileges};
pub use cpus::{online_cpus, parse_cpu_list, possible_cpus};
pub use error::{LiveError, perf_event_paranoid, privilege_fix};
pub use rseq_area::RseqSample;
pub use session::{
    LiveBatch, LiveCapture, LiveCounters, LiveOptions, LiveSession, LiveTap, TapBatch,
};
pub use spec::WorkloadSpec;
