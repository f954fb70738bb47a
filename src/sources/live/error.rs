//! Why a live session could not start or went wrong, and what fixes it.

/// Why a live session could not start or went wrong. Every message names what to do.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// Tracing needs privileges this process lacks.
    #[error("{detail}\n{fix}", fix = privilege_fix())]
    NoPermission { detail: String },
    /// tracefs is not mounted or not reachable.
    #[error("{detail}; {fix}")]
    NoTracefs { detail: String, fix: String },
    /// A tracefs format file did not parse or lacks a field.
    #[error("{path}: {detail}")]
    Format { path: String, detail: String },
    /// The workload SPEC is malformed.
    #[error("bad --workload: {0}")]
    Spec(String),
    /// A system call failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// The kernel or machine cannot do what was asked.
    #[error("{0}")]
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
        crate::sources::sys::geteuid()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
