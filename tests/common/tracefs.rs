//! A private tracefs instance for the tests that read the kernel's own files (root only).

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// A tracefs instance with rseq_update and sched_switch on, named `TAG<pid>` so that tests
/// running at once never share a buffer (reading `trace_pipe` consumes it); removed when
/// dropped.
pub struct Instance(pub PathBuf);

impl Instance {
    pub fn new(tag: &str) -> Option<Instance> {
        let t = Path::new("/sys/kernel/tracing");
        if !t.join("available_events").exists() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status();
        }
        let dir = t.join(format!("instances/{tag}{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let inst = Instance(dir);
        for e in ["rseq/rseq_update", "sched/sched_switch"] {
            std::fs::write(inst.0.join(format!("events/{e}/enable")), "1").ok()?;
        }
        std::fs::write(inst.0.join("tracing_on"), "1").ok()?;
        Some(inst)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}
