//! A capture cut short (truncated by another program) while cidscope has it mapped and reads it:
//! an error naming the file and the byte offset, never SIGBUS; the TUI shows it, `q` still
//! quits, the terminal is restored and the message is said again on stderr. The same for a
//! parser that fails in the middle of a load.

mod common;

use cidscope::sources::{self, LoadOptions, Location};
use common::tmux::Tmux;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("shrunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// An ftrace text capture of about `mb` MB (regenerated, never committed): two tasks switching
/// on 4 CPUs and reporting their CIDs, timestamps always increasing.
fn big_text(path: &Path, mb: usize) {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    w.write_all(b"# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:4\n#\n")
        .unwrap();
    let (mut bytes, mut us) = (0usize, 1_000_000_000u64);
    while bytes < mb << 20 {
        let cpu = us % 4;
        let tid = 2000 + (us % 7);
        let l = format!(
            "          worker-{tid:<7} ({:>7}) [{cpu:03}] d..2. {:>5}.{:06}: sched_switch: prev_comm=worker prev_pid={tid} prev_prio=120 prev_state=S ==> next_comm=worker next_pid={} next_prio=120\n          worker-{tid:<7} ({:>7}) [{cpu:03}] ..... {:>5}.{:06}: rseq_update: cpu_id={cpu} node_id=0 mm_cid={cpu}\n",
            2000,
            us / 1_000_000,
            us % 1_000_000,
            tid + 1,
            2000,
            us / 1_000_000,
            us % 1_000_000,
        );
        w.write_all(l.as_bytes()).unwrap();
        bytes += l.len();
        us += 3;
    }
    w.flush().unwrap();
}

/// Every reader: the file opened (mapped), then cut, then read: an error at a byte offset that
/// says the file shrank, for a whole load and for a stream.
#[test]
fn a_file_cut_after_it_was_opened_is_an_error_at_an_offset() {
    for name in [
        "cyclictest.ftrace.txt",
        "cyclictest.perf-script.txt",
        "cyclictest.trace.dat",
        "cyclictest-v7.trace.dat",
        "cyclictest.perf.data",
        "cyclictest-pipe.perf.data",
    ] {
        let p = scratch(name);
        std::fs::copy(common::capture(name), &p).unwrap();
        let len = std::fs::metadata(&p).unwrap().len();
        let opts = LoadOptions::default();
        let opened = sources::open(&p, &opts).unwrap();
        truncate(&p, len / 3);
        let e = opened.load(&opts).expect_err(name);
        assert!(
            matches!(e.location, Location::Offset(o) if o >= len / 3 && o < len),
            "{name}: {e}"
        );
        assert!(
            e.to_string().contains("the file shrank while it was read"),
            "{name}: {e}"
        );
        assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
        let mut events = 0;
        let e = opened
            .stream(&opts, &mut |d| {
                events += d.events.len();
                true
            })
            .expect_err(name);
        assert!(matches!(e.location, Location::Offset(_)), "{name}: {e}");
        drop(opened);
        // opened again, the cut file is an ordinary cut capture
        let _ = sources::load(&p, &opts);
        let _ = std::fs::remove_file(&p);
    }
}

/// `cidscope stats` on a large file truncated at random moments while it reads: it ends with
/// exit 2 and a message naming the file and the offset, or (truncated before it opened it or
/// after it finished) reads what it found; it is never killed by a signal.
#[test]
fn stats_on_a_file_cut_while_it_reads_says_so() {
    let p = scratch("big-stats.ftrace.txt");
    let mut seen_cut = 0;
    for attempt in 0..8u64 {
        big_text(&p, 120);
        let child = Command::new(env!("CARGO_BIN_EXE_cidscope"))
            .args(["stats", "--json"])
            .arg(&p)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(40 + attempt * 37 % 200));
        truncate(&p, 1 << 20);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), None, "killed by a signal: {err}");
        match out.status.code() {
            Some(0) => {}
            Some(2) => {
                assert!(err.contains(&p.display().to_string()), "{err}");
                if err.contains("the file shrank while it was read") {
                    assert!(err.contains("at byte offset"), "{err}");
                    seen_cut += 1;
                }
            }
            c => panic!("exit {c:?}: {err}"),
        }
    }
    assert!(seen_cut > 0, "no attempt cut the file while it was read");
    let _ = std::fs::remove_file(&p);
}

/// The TUI loading a large file that is cut: the status bar says where the load stopped, `q`
/// quits, the terminal is restored (main screen, cursor, no mouse tracking) and the message is
/// on stderr with exit status 2.
///
/// The cut races the loader: a cut that lands before the first delta was handed over ends the
/// run at once (a load error before any event is the run's outcome, said on stderr). That
/// outcome is allowed a retry; the TUI showing the error must happen on one of three tries.
#[test]
fn the_tui_on_a_file_cut_while_it_loads_says_so_and_restores_the_terminal() {
    let p = scratch("big-tui.ftrace.txt");
    let mut ended_early = Vec::new();
    for _ in 0..3 {
        big_text(&p, 100);
        match tui_on_cut_file(&p) {
            Ok(()) => {
                let _ = std::fs::remove_file(&p);
                return;
            }
            Err(screen) => ended_early.push(screen),
        }
    }
    panic!(
        "the TUI never showed the cut; each run ended by itself:\n{}",
        ended_early.join("\n----\n")
    );
}

/// One run: `Err(screen)` when cidscope ended before showing the error in the TUI (its stderr
/// message still checked), `Ok` when the TUI showed it and everything after held.
fn tui_on_cut_file(p: &Path) -> Result<(), String> {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    // wide enough for the status bar to hold the whole message, however long the path
    let t = Tmux::start_sized("shrunk", "env PS1='$ ' bash --norc --noprofile", 240, 40);
    t.keys(&[
        &format!("{bin} {} 2>&1; echo EXIT=$?", p.display()),
        "Enter",
    ]);
    let flag = |f: &str| t.tmux(&["display", "-p", "-t", "t", f]).trim().to_string();
    // cut it once cidscope has it mapped and the TUI has the terminal: its first 4 MB stay,
    // the rest goes
    let shell = t.tmux(&["display", "-p", "-t", "t", "#{pane_pid}"]);
    let start = Instant::now();
    'mapped: loop {
        let out = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .unwrap();
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            if maps.contains(&*p.to_string_lossy()) && flag("#{alternate_on}") == "1" {
                break 'mapped;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never mapped:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    truncate(p, 4 << 20);
    let s = t.wait_for("the file shrank");
    if s.contains("EXIT=") {
        // it ended by itself: the message is on stderr (wrapped at the terminal's width)
        let joined = s.replace('\n', "");
        assert!(joined.contains("EXIT=2"), "{s}");
        assert!(joined.contains("at byte offset"), "{s}");
        return Err(s);
    }
    assert!(s.contains("load stopped"), "{s}");
    t.keys(&["q"]);
    // (the message wraps at the terminal's width)
    let s = t.wait_for("EXIT=2").replace('\n', "");
    assert!(s.contains("the file shrank while it was read"), "{s}");
    assert!(s.contains("at byte offset"), "{s}");
    assert_eq!(flag("#{alternate_on}"), "0");
    assert_eq!(flag("#{cursor_flag}"), "1");
    assert_eq!(flag("#{mouse_any_flag}"), "0");
    assert_eq!(flag("#{mouse_button_flag}"), "0");
    Ok(())
}

/// A parser bug in a late chunk of a large file (the 21st of ~30, long after the TUI took the
/// terminal; summoned by `CIDSCOPE_TEST_PANIC_IN`, as the race of a cut file once raised
/// one): the panic is contained, so the TUI keeps the terminal,
/// says where the load stopped and why, `q` quits with status 2 and the terminal is restored.
/// Nothing of the panic is printed over the screen.
#[test]
fn the_tui_on_a_parser_failure_mid_load_keeps_the_terminal_and_says_so() {
    let p = scratch("big-parser-panic.ftrace.txt");
    big_text(&p, 100);
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start_sized(
        "parserpanic",
        "env CIDSCOPE_TEST_PANIC_IN=parser:20 PS1='$ ' bash --norc --noprofile",
        240,
        40,
    );
    let flag = |f: &str| t.tmux(&["display", "-p", "-t", "t", f]).trim().to_string();
    t.keys(&[
        &format!("{bin} {} 2>&1; echo EXIT=$?", p.display()),
        "Enter",
    ]);
    let s = t.wait_for("load stopped");
    assert!(s.contains("the parser failed"), "{s}");
    assert!(
        !s.contains("panicked at"),
        "the panic was printed over the TUI:\n{s}"
    );
    assert_eq!(
        flag("#{alternate_on}"),
        "1",
        "the TUI gave the terminal back:\n{s}"
    );
    t.keys(&["q"]);
    let s = t.wait_for("\nEXIT=").replace('\n', "");
    assert!(s.contains("EXIT=2"), "{s}");
    assert!(s.contains("on purpose"), "{s}");
    assert!(!s.contains("panicked at"), "{s}");
    assert_eq!(flag("#{alternate_on}"), "0");
    assert_eq!(flag("#{cursor_flag}"), "1");
    let _ = std::fs::remove_file(&p);
}
