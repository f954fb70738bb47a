//! `live --record` is crash-safe: written as the capture arrives, in chunks flushed about every
//! second, so a recorder killed at any moment leaves a file that replays up to its last flush
//! and says it was cut; a hangup ends the recording cleanly; a full disk stops it at once.
//!
//! These attach to tracepoints and mount a tmpfs: they need root (CI runs as root); without it
//! they print why and pass.

mod common;

use common::tmux::Tmux;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Attaching sessions share the machine's two CPUs: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn skip_unless_root(test: &str) -> bool {
    if is_root() {
        return false;
    }
    println!("SKIP {test}: attaching to tracepoints needs root (CI runs as root)");
    true
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cidscope")
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cidscope-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A headless recording of a busy workload, long enough to be stopped by the test.
fn start_recording(path: &Path) -> Child {
    Command::new(bin())
        .args([
            "live",
            "--attach",
            "--duration",
            "60",
            "--workload",
            "hog:3,migrate:1:20ms,churn:50/s",
            "--record",
        ])
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs cidscope live")
}

/// Waits until the recording's header is on disk (the session attached and the file exists).
fn wait_for_header(path: &Path, child: &mut Child) {
    let start = Instant::now();
    while std::fs::metadata(path).map_or(0, |m| m.len()) == 0 {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("cidscope live ended before recording: {st}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no recording header after 30 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `stats --json` of `path`: it must succeed.
fn stats(path: &Path) -> serde_json::Value {
    let st = Command::new(bin())
        .args(["stats", "--json"])
        .arg(path)
        .output()
        .expect("runs cidscope stats");
    assert!(
        st.status.success(),
        "stats of {}: {}",
        path.display(),
        String::from_utf8_lossy(&st.stderr)
    );
    serde_json::from_slice(&st.stdout).expect("stats JSON")
}

/// What the file says about itself: the `# cidscope-chunk: N events=E` lines as (N, E), the
/// event lines before the last of them, all whole event lines, and whether it ended.
struct Layout {
    chunks: Vec<(u64, u64)>,
    lines_at_last_chunk: u64,
    lines: u64,
    ended: bool,
}

fn layout(path: &Path) -> Layout {
    let data = std::fs::read(path).expect("read recording");
    // a last line without its newline is not a whole line
    let whole = match data.iter().rposition(|&b| b == b'\n') {
        Some(p) => &data[..=p],
        None => &data[..0],
    };
    let mut l = Layout {
        chunks: Vec::new(),
        lines_at_last_chunk: 0,
        lines: 0,
        ended: false,
    };
    for line in String::from_utf8_lossy(whole).lines() {
        if let Some(r) = line.strip_prefix("# cidscope-chunk: ") {
            let mut f = r.split_whitespace();
            let n = f.next().and_then(|n| n.parse().ok()).expect("chunk number");
            let e = f
                .next()
                .and_then(|e| e.strip_prefix("events="))
                .and_then(|e| e.parse().ok())
                .expect("chunk events");
            l.chunks.push((n, e));
            l.lines_at_last_chunk = l.lines;
        } else if line.starts_with("# cidscope-record: end") {
            l.ended = true;
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            l.lines += 1;
        }
    }
    l
}

/// Moments in 0.05..3.2 s, different on each run (printed, so a failure can be replayed).
fn random_moments(n: usize) -> Vec<Duration> {
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    (0..n)
        .map(|_| {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Duration::from_millis(50 + x % 3150)
        })
        .collect()
}

#[test]
fn a_recording_killed_at_random_moments_replays_up_to_its_last_flush() {
    if skip_unless_root("a_recording_killed_at_random_moments_replays_up_to_its_last_flush") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("kill-rec");
    let mut moments = random_moments(3);
    // and one kill after the second flush for certain
    moments.push(Duration::from_millis(2600));
    println!("SIGKILL moments after the header: {moments:?}");
    for (i, at) in moments.iter().enumerate() {
        let path = dir.join(format!("r{i}.txt"));
        let mut child = start_recording(&path);
        wait_for_header(&path, &mut child);
        std::thread::sleep(*at);
        child.kill().expect("SIGKILL"); // std's kill is SIGKILL
        let st = child.wait().expect("reaped");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(libc::SIGKILL), "killed at {at:?}: {st}");

        let l = layout(&path);
        assert!(!l.ended, "killed at {at:?}, yet the file has its end line");
        // chunks are numbered from 1 and count the events written before their line
        for (k, &(n, e)) in l.chunks.iter().enumerate() {
            assert_eq!(n, k as u64 + 1, "killed at {at:?}: chunk numbers");
            assert!(
                k == 0 || e > l.chunks[k - 1].1,
                "killed at {at:?}: chunk {n} is empty"
            );
        }
        let flushed = l.chunks.last().map_or(0, |c| c.1);
        assert_eq!(
            flushed, l.lines_at_last_chunk,
            "killed at {at:?}: the last chunk line counts the event lines before it"
        );
        // flushed about every second: a kill 2.2 s after the header finds at least one chunk
        if *at >= Duration::from_millis(2200) {
            assert!(
                !l.chunks.is_empty(),
                "killed {at:?} after the header, no chunk was flushed"
            );
        }

        let v = stats(&path);
        assert_eq!(v["format"], "ftrace", "killed at {at:?}: {v}");
        assert_eq!(
            v["events"].as_u64(),
            Some(l.lines),
            "killed at {at:?}: stats reads every whole event line: {v}"
        );
        let cut = v["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .filter_map(|w| w.as_str())
            .find(|w| w.starts_with("recording-cut:"))
            .unwrap_or_else(|| panic!("killed at {at:?}: no recording-cut warning: {v}"))
            .to_string();
        match l.chunks.last() {
            Some(&(n, e)) => {
                assert!(
                    cut.contains(&format!("last complete chunk is #{n} ({e} events)")),
                    "{cut}"
                );
                assert!(
                    v["event_counts"]["rseq_update"].as_u64().unwrap_or(0) > 0,
                    "killed at {at:?}: a flushed chunk of this workload has rseq_update: {v}"
                );
            }
            None => assert!(cut.contains("no chunk of it is complete"), "{cut}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hangup_ends_the_recording_cleanly() {
    if skip_unless_root("a_hangup_ends_the_recording_cleanly") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("hup-rec");
    let path = dir.join("r.txt");
    let mut child = start_recording(&path);
    wait_for_header(&path, &mut child);
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child's pid.
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    let out = child.wait_with_output().expect("reaped");
    assert!(
        out.status.success(),
        "SIGHUP: {} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let l = layout(&path);
    assert!(l.ended, "a hangup leaves a finished recording");
    let v = stats(&path);
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
    assert_eq!(v["events"].as_u64(), Some(l.lines), "{v}");
    // the reserved entries count holds the events
    let head = std::fs::read_to_string(&path).expect("read");
    assert!(
        head.contains(&format!(
            "# entries-in-buffer/entries-written: {0}/{0} ",
            l.lines
        )),
        "{}",
        &head[..head.len().min(300)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Unmounts the tmpfs when the test ends, passing or not.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A 64 KiB tmpfs (a disk that fills within a second of recording), if it can be mounted.
fn tiny_disk(tag: &str) -> Option<Mount> {
    let dir = scratch(tag);
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(Mount(dir))
}

#[test]
fn a_full_disk_stops_the_recording_at_once() {
    if skip_unless_root("a_full_disk_stops_the_recording_at_once") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(m) = tiny_disk("full-rec") else {
        println!("SKIP a_full_disk_stops_the_recording_at_once: cannot mount a tmpfs");
        return;
    };
    let dir = m.0.clone();
    let path = dir.join("r.txt");
    let start = Instant::now();
    let out = start_recording(&path)
        .wait_with_output()
        .expect("runs cidscope live");
    // --duration is 60 s: it stopped because writing failed, not because the session ended
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the session went on after the disk filled"
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("write failed") && err.contains("the recording stopped"),
        "{err}"
    );
    assert!(err.contains(&path.display().to_string()), "{err}");
    // what did fit still replays, and says it was cut
    let v = stats(&path);
    let w = v["warnings"].to_string();
    assert!(w.contains("recording-cut"), "{v}");
}

/// In the TUI a full disk shows on the status line while the session goes on, not at `q`.
#[test]
fn a_full_disk_stops_the_recording_visibly_in_the_tui() {
    if skip_unless_root("a_full_disk_stops_the_recording_visibly_in_the_tui") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(m) = tiny_disk("full-tui") else {
        println!("SKIP a_full_disk_stops_the_recording_visibly_in_the_tui: cannot mount a tmpfs");
        return;
    };
    let path = m.0.join("r.txt");
    let t = Tmux::start(
        "rec",
        &format!(
            "{} live --attach --duration 60 --workload hog:3,migrate:1:20ms --record {}; echo EXITED=$?; sleep 60",
            bin(),
            path.display()
        ),
    );
    t.wait_for("REC ");
    // the message line names the error at once ...
    t.wait_for("RECORDING STOPPED: --record");
    let s = t.wait_for("No space left on device");
    assert!(s.contains(&path.display().to_string()), "{s}");
    // ... and once a key clears it, the status bar still says so while the session goes on
    t.keys(&["Right"]);
    let s = t.wait_for("✖ RECORDING STOPPED (write failed)");
    assert!(s.contains("● LIVE"), "the session goes on:\n{s}");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=2"), "{s}");
}
