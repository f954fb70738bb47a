//! A real terminal for end-to-end tests: a tmux server of the test's own (its socket), one
//! detached session `t` (120×40 unless sized), driven by keys and read from the screen.

use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts a session running `cmd`; `tag` names the server's socket (with pid and time, so
    /// parallel tests never share one).
    pub fn start(tag: &str, cmd: &str) -> Tmux {
        Tmux::start_sized(tag, cmd, 120, 40)
    }

    /// Like [`Tmux::start`], on a terminal of `cols` × `rows`.
    pub fn start_sized(tag: &str, cmd: &str, cols: u16, rows: u16) -> Tmux {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is needed for this test (.ci/run installs it)"
        );
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() % 1_000_000_000);
        let socket = format!("cidscope-{tag}-{}-{nanos}", std::process::id());
        let ok = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", &cols.to_string(), "-y", &rows.to_string()])
            .arg(cmd)
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux new-session")
            .success();
        assert!(ok, "tmux new-session failed");
        Tmux { socket }
    }

    /// Runs a tmux command on this server; its standard output.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types each key (a tmux key name or a literal string), with a pause after each.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let ok = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", "t", k])
                .status()
                .expect("send-keys")
                .success();
            assert!(ok, "send-keys {k:?} failed");
            sleep(Duration::from_millis(60));
        }
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// Waits until the screen contains `needle` (20 s at most), returning the screen.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_for_within(needle, Duration::from_secs(20), "")
    }

    /// Waits until the screen contains `needle`, `limit` at most (longer for a debug build under
    /// load); `what` names what the wait is for in the failure.
    pub fn wait_for_within(&self, needle: &str, limit: Duration, what: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(
                start.elapsed() < limit,
                "timed out waiting for {what} {needle:?}; screen:\n{s}"
            );
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
