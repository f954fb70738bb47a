//! The run's temporary directory (initramfs, console log, socket, capture): removed when
//! dropped, and at `exit()` too. A run killed outright (SIGKILL, a crash) cannot clean up, so
//! each new run first removes the directories of runs whose process is gone.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

/// Temporary directories alive now: removed at exit too, when the process leaves through
/// `exit()` without dropping them (the TUI's signal watchdog on a hangup).
static LIVE_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_live_dirs() {
    if let Ok(dirs) = LIVE_DIRS.try_lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl TempDir {
    pub fn new() -> Result<TempDir, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        // an initramfs is tens of MB: what killed runs left behind goes first
        sweep_stale(&base);
        sweep_stale(std::path::Path::new("/tmp"));
        let name = format!(
            "cidscope-vm-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        // the socket inside must fit a sockaddr_un (108 bytes)
        let p = match base.join(&name) {
            p if p.as_os_str().len() <= 80 => p,
            _ => PathBuf::from("/tmp").join(&name),
        };
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| super::sys::at_exit(remove_live_dirs));
        LIVE_DIRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.clone());
        Ok(TempDir(p))
    }
}

/// The PID in a run directory's name `cidscope-vm-PID-N`, if it is one.
fn run_dir_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("cidscope-vm-")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Removes the run directories under `base` whose process no longer exists (a PID that is
/// alive, whatever it runs now, keeps its directory: it may be another cidscope's run).
/// Returns how many went.
fn sweep_stale(base: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(run_dir_pid) else {
            continue;
        };
        let alive =
            pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists();
        if !alive && e.file_type().is_ok_and(|t| t.is_dir()) {
            removed += usize::from(std::fs::remove_dir_all(e.path()).is_ok());
        }
    }
    removed
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        LIVE_DIRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d != &self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dir_names_give_their_pid() {
        assert_eq!(run_dir_pid("cidscope-vm-1234-0"), Some(1234));
        assert_eq!(run_dir_pid("cidscope-vm-1234-17"), Some(1234));
        assert_eq!(run_dir_pid("cidscope-vm-1234"), None);
        assert_eq!(run_dir_pid("cidscope-vm-x-0"), None);
        assert_eq!(run_dir_pid("other-1234-0"), None);
    }

    /// A dead run's directory goes; a live process's and anything else stay.
    #[test]
    fn a_sweep_removes_only_the_directories_of_dead_runs() {
        let base = std::env::temp_dir().join(format!("cidscope-sweep-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // a PID that was alive a moment ago and is reaped now
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_dir = base.join(format!("cidscope-vm-{dead}-0"));
        let live_dir = base.join(format!("cidscope-vm-{}-5", std::process::id()));
        let init_dir = base.join("cidscope-vm-1-0");
        let other = base.join("cidscope-vm-notes");
        for d in [&dead_dir, &live_dir, &init_dir, &other] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("initrd.img"), b"x").unwrap();
        }
        assert_eq!(sweep_stale(&base), 1);
        assert!(!dead_dir.exists());
        assert!(live_dir.exists() && init_dir.exists() && other.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
