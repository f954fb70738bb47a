//! How cidscope runs itself again inside the guest in a role: `cidscope ROLE_FLAG ROLE ARGS..`.
//! The agent starts the workload process (`work CONFIG`); the exec workload starts its children
//! (`exec-child DEPTH END_NS`), which exec themselves.

/// argv\[1\] of cidscope run in a guest role (hidden from `--help`).
pub const ROLE_FLAG: &str = "--cidscope-vm-role";
/// The workload process: `work CONFIG` (a [`super::cmdline::GuestConfig`], encoded).
pub const WORK: &str = "work";
/// A child of the exec workload: `exec-child DEPTH END_NS`.
pub const EXEC_CHILD: &str = "exec-child";
