//! The TUI on a stream (issue 14): `cat FILE | cidscope -` opens the capture and keys still
//! work (they come from the terminal, not the pipe); on a FIFO fed slowly the view shows what
//! has arrived and keeps reading until the writer closes it; on tracefs `trace_pipe`, which
//! never ends, it follows until q.

mod common;

use common::tmux::Tmux;
use std::io::Write;

#[test]
fn a_pipe_on_standard_input_opens_in_the_tui() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "streams",
        &format!("cat traces/hackbench-pipe.ftrace.txt | {bin} -; echo EXITED=$?; sleep 60"),
    );
    let s = t.wait_for("event 1 of 15176");
    assert!(s.contains("tgid 3082 hackbench"), "{s}");
    assert!(
        s.contains("<stdin>"),
        "the status bar names the input:\n{s}"
    );
    t.keys(&["Right", "l"]);
    t.wait_for("event 3 of 15176");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
}

/// The number before " events so far" on a stream's status bar.
fn so_far(screen: &str) -> Option<u64> {
    let at = screen.find(" events so far")?;
    screen[..at].rsplit(' ').next()?.parse().ok()
}

#[test]
fn a_fifo_fed_slowly_is_shown_as_it_arrives() {
    let dir = std::env::temp_dir().join(format!("cidscope-tui-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fifo = dir.join("capture");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "streams",
        &format!("{bin} {}; echo EXITED=$?; sleep 60", fifo.display()),
    );
    let text = std::fs::read_to_string("traces/hackbench-pipe.ftrace.txt").expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the fifo");
    let (head, tail) = lines.split_at(3000);
    for l in head {
        writeln!(w, "{l}").expect("write");
    }
    w.flush().expect("flush");
    let s = t.wait_for("events so far");
    assert!(s.contains("stream:"), "{s}");
    // the lanes are drawn while the stream is open
    let s = t.wait_for("per-CPU CID slots");
    let first = so_far(&s).unwrap_or(0);
    for l in &tail[..4000] {
        writeln!(w, "{l}").expect("write");
    }
    w.flush().expect("flush");
    // more arrives: the count grows and the view follows
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let s = t.screen();
        if so_far(&s).is_some_and(|n| n > first.max(1000)) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no growth:\n{s}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for l in &tail[4000..] {
        writeln!(w, "{l}").expect("write");
    }
    drop(w);
    // the writer closed it: the whole capture, as from the file
    let s = t.wait_for("event 1 of 15176");
    assert!(s.contains("tgid 3082 hackbench"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_tui_follows_trace_pipe_until_q() {
    if !common::tracefs::is_root() {
        eprintln!("skipped: needs root for tracefs");
        return;
    }
    let Some(inst) = common::tracefs::Instance::new("xtuipipe") else {
        eprintln!("skipped: no tracefs instance with rseq_update here");
        return;
    };
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let pipe = inst.0.join("trace_pipe");
    let t = Tmux::start(
        "streams",
        &format!("{bin} {}; echo EXITED=$?; sleep 60", pipe.display()),
    );
    let work = || {
        for _ in 0..20 {
            let _ = std::process::Command::new("/bin/true").status();
        }
    };
    work();
    let s = t.wait_for("events so far");
    assert!(s.contains("stream:"), "{s}");
    let first = so_far(&s).unwrap_or(0);
    // trace_pipe never ends by itself: the view keeps following what the kernel writes
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        work();
        let s = t.screen();
        if so_far(&s).is_some_and(|n| n > first) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no growth:\n{s}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // q quits while the kernel's pipe is still open
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
}
