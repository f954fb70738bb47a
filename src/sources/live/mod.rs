//! Live sources: watch CIDs being handed out now, on this machine.
//!
//! * [`workload`]: cidscope's own threads (periodic, hog, churn, migrate, sleeper) each read the
//!   CID the kernel wrote into their rseq area and report it as an [`RseqSample`]. Needs no
//!   privileges.
//! * [`attach`]: `perf_event_open` on the rseq/sched/task/timer tracepoints, one ring buffer per
//!   CPU, decoded through the tracefs format files into canonical [`Event`]s. Needs root or
//!   CAP_PERFMON plus tracefs access.
//! * [`session::LiveSession`] runs either or both and hands out time-ordered batches without ever
//!   blocking the capture (`export::ftrace` writes a session as ftrace text that
//!   [`crate::sources::load`] replays).
//!
//! Both clocks are CLOCK_MONOTONIC (perf `use_clockid`), so trace events and rseq-area samples
//! share one time axis. All unsafe code and raw system calls live in [`sys`].
//!
//! [`Event`]: crate::events::Event

pub mod attach;
pub mod filter;
pub mod kallsyms;
pub mod rseq_area;
pub mod session;
pub mod spec;
pub mod sys;
pub mod tracefs;
pub mod workload;

pub use crate::events::EventAux;
pub use attach::{Scope, check_privileges};
pub use session::{LiveBatch, LiveCapture, LiveCounters, LiveOptions, LiveSession};
pub use spec::WorkloadSpec;

use crate::events::Tid;
use std::fmt;

/// One CID a thread read from its own rseq area: at `ts` (CLOCK_MONOTONIC ns) thread `tid` ran
/// on `cpu` holding `cid`. Reported when the values change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RseqSample {
    pub ts: u64,
    pub tid: Tid,
    pub cpu: u16,
    pub cid: i32,
}

/// Why a live session could not start or went wrong. Every message names what to do.
#[derive(Debug)]
pub enum LiveError {
    /// Tracing needs privileges this process lacks.
    NoPermission { detail: String },
    /// tracefs is not mounted or not reachable.
    NoTracefs { detail: String, fix: String },
    /// A tracefs format file did not parse or lacks a field.
    Format { path: String, detail: String },
    /// The workload SPEC is malformed.
    Spec(String),
    /// A system call failed.
    Io {
        what: String,
        source: std::io::Error,
    },
    /// The kernel or machine cannot do what was asked.
    Unsupported(String),
}

impl LiveError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> LiveError {
        LiveError::Io {
            what: what.into(),
            source,
        }
    }

    /// True when the fix is privileges (the CLI exits 2 with the fix either way).
    pub fn is_permission(&self) -> bool {
        matches!(
            self,
            LiveError::NoPermission { .. } | LiveError::NoTracefs { .. }
        )
    }
}

/// `kernel.perf_event_paranoid`, if readable.
pub fn perf_event_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// The fix for missing tracing privileges, with this process's state.
pub fn privilege_fix() -> String {
    let paranoid = perf_event_paranoid().map_or("unknown".to_string(), |p| p.to_string());
    format!(
        "attaching to tracepoints needs tracing privileges. Fix one of:\n  \
         * run as root: sudo cidscope ...\n  \
         * or grant CAP_PERFMON: sudo setcap cap_perfmon+ep \"$(command -v cidscope)\"\n    \
         (or lower kernel.perf_event_paranoid: sudo sysctl kernel.perf_event_paranoid=-1;\n    \
         raw tracepoint data needs -1 or CAP_PERFMON, now {paranoid})\n  \
         * and make tracefs readable for the event formats: sudo mount -t tracefs nodev \
         /sys/kernel/tracing\n    (if missing), then sudo mount -o remount,mode=755 /sys/kernel/tracing\n\
         (euid {}; the synthetic workload, `cidscope live` without --attach, needs no privileges)",
        sys::geteuid()
    )
}

impl fmt::Display for LiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveError::NoPermission { detail } => {
                write!(f, "{detail}\n{}", privilege_fix())
            }
            LiveError::NoTracefs { detail, fix } => write!(f, "{detail}; {fix}"),
            LiveError::Format { path, detail } => write!(f, "{path}: {detail}"),
            LiveError::Spec(m) => write!(f, "bad --workload: {m}"),
            LiveError::Io { what, source } => write!(f, "{what}: {source}"),
            LiveError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LiveError {}

/// Number of possible CPUs (the bound of every CID), from /sys/devices/system/cpu/possible.
pub fn possible_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()))
        .map(|v| v.iter().max().map_or(1, |m| m + 1) as u32)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
}

/// Online CPUs, from /sys/devices/system/cpu/online.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()))
        .unwrap_or_else(|| (0..possible_cpus() as usize).collect())
}

/// `0-3,5,7-8` → [0,1,2,3,5,7,8].
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse().ok()?),
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("0,2-3"), Some(vec![0, 2, 3]));
        assert_eq!(parse_cpu_list("x"), None);
        assert!(possible_cpus() >= 1);
        assert!(!online_cpus().is_empty());
    }

    #[test]
    fn permission_message_names_the_fixes() {
        let m = LiveError::NoPermission {
            detail: "perf_event_open: EACCES".into(),
        }
        .to_string();
        for needle in ["root", "CAP_PERFMON", "perf_event_paranoid", "tracefs"] {
            assert!(m.contains(needle), "{needle} missing in {m}");
        }
    }
}
