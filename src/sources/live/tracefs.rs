//! tracefs: where it is mounted, and the `events/SYSTEM/EVENT/format` files that give each
//! tracepoint's id and field layout (parsed by `sources::tracefs::format`). Field offsets always
//! come from these files, never from constants, so a kernel that moves a field keeps working.

use super::LiveError;
use crate::sources::sys;
use crate::sources::tracefs::format::{EventFormat, parse};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A usable tracefs mount.
#[derive(Clone, Debug)]
pub struct Tracefs {
    pub root: PathBuf,
    /// Set when cidscope mounted it: unmounted when the last clone goes.
    pub mounted: Option<Arc<Mounted>>,
}

/// A tracefs mount cidscope made itself, unmounted on drop: the system is left as it was found.
#[derive(Debug)]
pub struct Mounted {
    pub root: PathBuf,
}

impl Mounted {
    /// Mounts tracefs at `root` (root only).
    pub fn mount(root: &Path) -> std::io::Result<Mounted> {
        sys::mount_tracefs(root)?;
        Ok(Mounted {
            root: root.to_path_buf(),
        })
    }

    /// What the user is told: what was mounted where, and that it goes at the end.
    pub fn notice(&self) -> String {
        format!(
            "tracefs was not mounted: cidscope mounted it at {} and unmounts it when it ends",
            self.root.display()
        )
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // nothing to report to at this point; a failure leaves it mounted, as before
        let _ = sys::unmount(&self.root);
    }
}

const DEFAULT_MOUNT: &str = "/sys/kernel/tracing";

fn tracefs_fix() -> String {
    format!(
        "run cidscope as root, or mount tracefs and give your user read access to its events: \
         `sudo mount -t tracefs nodev {DEFAULT_MOUNT}` (add `-o mode=755` or `gid=GROUP`)"
    )
}

impl Tracefs {
    /// Finds tracefs; mounts it at /sys/kernel/tracing when it is missing and `mount` is allowed
    /// (root). Errors name the fix.
    pub fn locate(mount: bool) -> Result<Tracefs, LiveError> {
        if let Some(t) = Self::find_mounted() {
            return Ok(t);
        }
        let root = PathBuf::from(DEFAULT_MOUNT);
        if mount {
            match Mounted::mount(&root) {
                Ok(m) => {
                    return Ok(Tracefs {
                        root,
                        mounted: Some(Arc::new(m)),
                    });
                }
                Err(e) => {
                    return Err(LiveError::NoTracefs {
                        detail: format!(
                            "tracefs is not mounted and mounting it at {DEFAULT_MOUNT} failed: {e}"
                        ),
                        fix: tracefs_fix(),
                    });
                }
            }
        }
        if sys::geteuid() != 0 {
            // Only root can mount it: the fix is privileges.
            return Err(LiveError::NoPermission {
                detail: format!(
                    "tracefs is not mounted (or not reachable) at {DEFAULT_MOUNT}, and only root can mount it"
                ),
            });
        }
        Err(LiveError::NoTracefs {
            detail: format!("tracefs is not mounted (or not readable) at {DEFAULT_MOUNT}"),
            fix: tracefs_fix(),
        })
    }

    fn find_mounted() -> Option<Tracefs> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut candidates: Vec<PathBuf> = mounts
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let (_dev, dir, fs) = (it.next()?, it.next()?, it.next()?);
                (fs == "tracefs").then(|| PathBuf::from(dir.replace("\\040", " ")))
            })
            .collect();
        candidates.push(PathBuf::from("/sys/kernel/debug/tracing"));
        candidates
            .into_iter()
            .find(|p| p.join("events").is_dir() || p.join("trace").exists())
            .map(|root| Tracefs {
                root,
                mounted: None,
            })
    }

    /// Reads and parses `events/SYSTEM/NAME/format`; `Ok(None)` when the event does not exist.
    pub fn event_format(&self, system: &str, name: &str) -> Result<Option<EventFormat>, LiveError> {
        let path = self
            .root
            .join("events")
            .join(system)
            .join(name)
            .join("format");
        match std::fs::read_to_string(&path) {
            Ok(text) => parse(text.as_bytes(), system)
                .map(Some)
                .map_err(|e| LiveError::Format {
                    path: path.display().to_string(),
                    detail: e.in_tracefs(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A missing event is fine (tick_stop is optional); an unreadable tree is not.
                if can_read_dir(&self.root.join("events")) {
                    Ok(None)
                } else {
                    Err(no_access(&path, &e))
                }
            }
            Err(e) => Err(no_access(&path, &e)),
        }
    }
}

fn can_read_dir(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok()
}

fn no_access(path: &Path, e: &std::io::Error) -> LiveError {
    LiveError::NoPermission {
        detail: format!("cannot read {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounted_at(p: &Path) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let p = p.to_string_lossy().replace(' ', "\\040");
        mounts
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(p.as_str()))
    }

    /// What cidscope mounts it unmounts when the last user goes (on a directory of its own:
    /// the system's tracefs is never touched). Needs root; says so and passes without it.
    #[test]
    fn a_mount_of_its_own_is_unmounted_at_the_end() {
        if sys::geteuid() != 0 {
            eprintln!("skipped: mounting tracefs needs root");
            return;
        }
        let dir = std::env::temp_dir().join(format!("cidscope-tracefs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = Mounted::mount(&dir).expect("mount tracefs");
        let t = Tracefs {
            root: dir.clone(),
            mounted: Some(Arc::new(m)),
        };
        assert!(mounted_at(&dir) && dir.join("events").is_dir());
        assert!(
            t.mounted
                .as_ref()
                .unwrap()
                .notice()
                .contains("unmounts it when it ends")
        );
        let t2 = t.clone();
        drop(t);
        assert!(mounted_at(&dir), "a clone still uses it");
        drop(t2);
        assert!(!mounted_at(&dir), "unmounted with the last clone");
        std::fs::remove_dir(&dir).unwrap();
    }
}
