//! The terminal is always restored: after q, Ctrl-C, every catchable exit signal (TERM, HUP,
//! INT, QUIT, USR1, USR2: exit 128 + the signal), hangups and a panic, the shell is back in
//! cooked mode with echo, the cursor is visible, mouse tracking is off and the main screen
//! shows. SIGPIPE leaves the TUI running; SIGTSTP and Ctrl-Z suspend it (terminal restored) and
//! `fg` repaints it; tiny terminals (1×1, 6×40, 20×5) run without a panic.

mod common;

use common::tmux::Tmux;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A shell in a real terminal, to run cidscope from and inspect afterwards.
struct Shell {
    t: Tmux,
}

impl Shell {
    fn start(env: &str) -> Shell {
        Shell {
            t: Tmux::start(
                "restore",
                &format!("env {env} PS1='$ ' bash --norc --noprofile"),
            ),
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        self.t.tmux(args)
    }

    fn send(&self, keys: &[&str]) {
        self.t.keys(keys)
    }

    fn wait_for(&self, needle: &str) -> String {
        self.t.wait_for(needle)
    }

    /// Starts cidscope from the shell and waits for its first frame.
    fn open_tui(&self) {
        let bin = env!("CARGO_BIN_EXE_cidscope");
        self.send(&[
            &format!("{bin} traces/hog-threads.ftrace.txt; echo EXIT=$?"),
            "Enter",
        ]);
        self.wait_for("per-CPU CID slots");
    }

    fn cidscope_pid(&self) -> String {
        let shell = self.tmux(&["display", "-p", "-t", "t", "#{pane_pid}"]);
        let out = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .expect("pgrep");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The shell is usable again: main screen, visible cursor, cooked mode with echo.
    fn assert_restored(&self, exit: &str) {
        let s = self.wait_for(&format!("EXIT={exit}"));
        assert!(
            !s.contains("per-CPU CID slots"),
            "still on the TUI screen:\n{s}"
        );
        assert_eq!(
            self.tmux(&["display", "-p", "-t", "t", "#{alternate_on}"])
                .trim(),
            "0"
        );
        assert_eq!(
            self.tmux(&["display", "-p", "-t", "t", "#{cursor_flag}"])
                .trim(),
            "1"
        );
        assert_eq!(
            self.tmux(&["display", "-p", "-t", "t", "#{mouse_any_flag}"])
                .trim(),
            "0",
            "mouse tracking still on"
        );
        self.send(&[
            "stty -a | tr ' ' '\\n' | grep -xE -- '-?(icanon|echo|isig)' | tr '\\n' ' '; echo END",
            "Enter",
        ]);
        let s = self.wait_for("END\n");
        let line = s.lines().rev().find(|l| l.contains("icanon")).unwrap_or("");
        assert!(
            line.contains("icanon") && !line.contains("-icanon"),
            "not cooked: {line}"
        );
        assert!(
            line.contains("echo") && !line.contains("-echo "),
            "no echo: {line}"
        );
        assert!(
            line.contains("isig") && !line.contains("-isig"),
            "no signals: {line}"
        );
    }
}

#[test]
fn restored_after_q() {
    let sh = Shell::start("");
    sh.open_tui();
    sh.send(&["q"]);
    sh.assert_restored("0");
}

#[test]
fn restored_after_ctrl_c() {
    let sh = Shell::start("");
    sh.open_tui();
    sh.send(&["C-c"]);
    sh.assert_restored("0");
}

#[test]
fn restored_after_sigterm() {
    let sh = Shell::start("");
    sh.open_tui();
    let pid = sh.cidscope_pid();
    assert!(!pid.is_empty());
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    // 143 = 128 + SIGTERM, whether the loop saw the flag or the watchdog ended it (waited for
    // at a line's start: the command line, back on the main screen first, has `EXIT=` too)
    sh.wait_for(
        "
EXIT=",
    );
    sh.assert_restored("143");
}

#[test]
fn restored_after_a_panic() {
    let sh = Shell::start("CIDSCOPE_TEST_PANIC=1");
    let bin = env!("CARGO_BIN_EXE_cidscope");
    sh.send(&[
        &format!("{bin} traces/hog-threads.ftrace.txt; echo EXIT=$?"),
        "Enter",
    ]);
    // (at a line's start: the command line typed above has `EXIT=` too, and matched before
    // the panic's message was printed on a loaded machine)
    let s = sh.wait_for(
        "
EXIT=",
    );
    assert!(
        s.contains("panicking inside the TUI on purpose"),
        "panic message on the main screen:\n{s}"
    );
    sh.assert_restored("101");
}

/// A panic in the TUI's model thread (a bug, summoned by `CIDSCOPE_TEST_PANIC_IN=model:0`): the
/// TUI goes on with the terminal its own and says so on the message line; `q` exits 0 and
/// restores the terminal. Nothing of the panic is printed over the screen.
#[test]
fn a_panic_in_the_model_thread_leaves_the_tui_running() {
    let sh = Shell::start("CIDSCOPE_TEST_PANIC_IN=model:0");
    let bin = env!("CARGO_BIN_EXE_cidscope");
    sh.send(&[
        &format!("{bin} --policy lazy-compact traces/hog-threads.ftrace.txt; echo EXIT=$?"),
        "Enter",
    ]);
    let s = sh.wait_for("models: internal error");
    assert!(s.contains("per-CPU CID slots"), "{s}");
    assert!(!s.contains("panicked at"), "printed over the TUI:\n{s}");
    assert_eq!(
        sh.tmux(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim(),
        "1",
        "the TUI gave the terminal back:\n{s}"
    );
    sh.send(&["q"]);
    sh.assert_restored("0");
}

/// A panic in a worker decoding a trace.dat's CPU while the TUI loads it (a bug, summoned by
/// `CIDSCOPE_TEST_PANIC_IN=decoder:1`): the load is an error that says so (exit 2), and the
/// terminal is restored.
#[test]
fn a_panic_in_a_decoder_is_a_load_error() {
    let sh = Shell::start("CIDSCOPE_TEST_PANIC_IN=decoder:1");
    let bin = env!("CARGO_BIN_EXE_cidscope");
    sh.send(&[
        &format!("{bin} traces/cyclictest.trace.dat; echo EXIT=$?"),
        "Enter",
    ]);
    let s = sh.wait_for(
        "
EXIT=",
    );
    let joined = s.replace('\n', "");
    assert!(joined.contains("the reader failed"), "{s}");
    assert!(joined.contains("panicking on purpose"), "{s}");
    sh.assert_restored("2");
}

#[test]
fn exits_when_its_terminal_hangs_up() {
    let sh = Shell::start("");
    sh.open_tui();
    let pid = sh.cidscope_pid();
    assert!(!pid.is_empty());
    sh.tmux(&["kill-server"]);
    let start = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "cidscope {pid} still runs 5 s after its terminal went away"
        );
        sleep(Duration::from_millis(100));
    }
}
