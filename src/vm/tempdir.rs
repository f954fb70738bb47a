//! The run's temporary directory (initramfs, console log, socket, capture): removed when
//! dropped, and at `exit()` too.

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

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        LIVE_DIRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d != &self.0);
    }
}
