//! End to end: the real binary in a real terminal (tmux), driven by keys, read from the screen.

mod common;

use common::tmux::Tmux;

#[test]
fn scrub_help_and_quit_in_a_real_terminal() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} traces/hackbench-pipe.ftrace.txt; echo EXITED=$?; sleep 60"),
    );
    let s = t.wait_for("event 1 of 15176");
    assert!(s.contains("tgid 3082 hackbench"), "{s}");
    t.keys(&["Right", "Right", "l"]);
    t.wait_for("event 4 of 15176");
    t.keys(&["h"]);
    t.wait_for("event 3 of 15176");
    t.keys(&["End"]);
    t.wait_for("event 15176 of 15176");
    t.keys(&["g"]);
    t.wait_for("event 1 of 15176");
    t.keys(&["+", "+"]);
    let s = t.wait_for("event 1 of 15176");
    assert!(s.contains("window"), "{s}");
    t.keys(&["Tab"]);
    t.wait_for("[2/4]");
    t.keys(&["?"]);
    t.wait_for("keys — press any key to close");
    t.keys(&["Escape"]);
    let s = t.wait_for("per-CPU CID slots");
    assert!(
        !s.contains("press any key to close"),
        "Esc closes the help:\n{s}"
    );
    t.keys(&["q"]);
    // The TUI ends and the shell line shows its exit status.
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
    assert!(
        !s.contains("per-CPU CID slots"),
        "alternate screen not left:\n{s}"
    );
}

#[test]
fn search_markers_and_jumps_without_a_mouse() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} traces/hackbench-pipe.ftrace.txt; echo EXITED=$?; sleep 60"),
    );
    t.wait_for("event 1 of 15176");
    // search a task by tid; n walks the matches
    t.keys(&["/"]);
    t.wait_for("/▏");
    t.keys(&["t", "i", "d", ":", "3", "0", "9", "0", "Enter"]);
    let s = t.wait_for("match 1 of ");
    assert!(s.contains("hackbench-3090") || s.contains("-3090"), "{s}");
    t.keys(&["n"]);
    t.wait_for("match 2 of ");
    t.keys(&["N"]);
    t.wait_for("match 1 of ");
    // a named marker, then away and back
    t.keys(&["m", "k"]);
    t.wait_for("marker k set");
    let at_k = event_number(&t.screen());
    t.keys(&["End"]);
    t.wait_for("event 15176 of 15176");
    t.keys(&["'", "k"]);
    t.wait_for("at marker k");
    assert_eq!(event_number(&t.screen()), at_k);
    // CID changes of the selected process
    t.keys(&["g", "c"]);
    t.wait_for("CID change 1 of ");
    t.keys(&["c"]);
    t.wait_for("CID change 2 of ");
    // model-only jumps say where they come from
    t.keys(&["t"]);
    t.wait_for("they come from a CID model");
    // a range with a and b
    t.keys(&["g", "a", "l", "l", "l", "b"]);
    t.wait_for("range A–B");
    // show only CPU 1
    t.keys(&["f", "1", "Enter"]);
    t.wait_for("CPUs [1]");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

/// The cursor's event number from the detail pane ("event N of M").
fn event_number(screen: &str) -> u64 {
    let at = screen.find("  event ").expect("event line");
    screen[at + 8..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("event number")
}

#[test]
fn a_large_capture_shows_progress_and_quits_during_the_load() {
    // ~70 MB of ftrace text: the debug build needs seconds to read it.
    let dir = std::env::temp_dir().join(format!("cidscope-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("big.ftrace.txt");
    {
        use std::io::Write;
        let f = std::fs::File::create(&path).expect("create");
        let mut w = std::io::BufWriter::new(f);
        writeln!(w, "# tracer: nop").expect("write");
        for i in 0..800_000u64 {
            let cpu = i % 2;
            writeln!(
                w,
                "          worker-{}    [{cpu:03}] .....  {}.{:06}: rseq_update: cpu_id={cpu} node_id=0 mm_cid={cpu}",
                100 + cpu,
                10 + i / 1_000_000,
                i % 1_000_000
            )
            .expect("write");
        }
    }
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} {}; echo EXITED=$?; sleep 60", path.display()),
    );
    let s = t.wait_for("loading ");
    assert!(s.contains("% "), "a progress figure: {s}");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn live_session_follows_pauses_and_ends_scrubbable() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    // As root the kernel trace is attached too; otherwise the workload's rseq areas alone.
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false);
    let attach = if root { "--attach" } else { "" };
    let t = Tmux::start(
        "e2e",
        &format!(
            "{bin} live {attach} --duration 4 --workload hog:3,migrate:1:20ms; echo EXITED=$?; sleep 60"
        ),
    );
    t.wait_for("● LIVE");
    let s = t.wait_for("user space: CIDs the threads read from their rseq areas");
    if root {
        assert!(s.contains("kernel: rseq_update events"), "{s}");
    }
    t.keys(&["Space"]);
    t.wait_for("PAUSED (capture goes on)");
    t.keys(&["Space"]);
    t.wait_for("● LIVE");
    let s = t.wait_for("the session ended after");
    assert!(
        s.contains("ENDED") || s.contains("scrub it like a replay"),
        "{s}"
    );
    // scrubbable after the end: step back through the session
    t.keys(&["g", "l"]);
    if root {
        t.wait_for("event 2 of ");
    }
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
    assert!(s.contains("samples"), "the summary follows the TUI: {s}");
}

#[test]
fn sim_and_compare_in_a_real_terminal() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!(
            "{bin} sim --cpus 16 --policy resume-batch --batch 4 --workload hogs --threads 20 --duration 400ms; echo EXITED=$?; sleep 60"
        ),
    );
    t.wait_for("resume-batch model");
    t.keys(&["s"]);
    t.wait_for("scan start 1 of ");
    t.keys(&["l"]);
    t.wait_for("scan batch ");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
    let t = Tmux::start(
        "e2e",
        &format!(
            "{bin} traces/v5-workers.ftrace.txt --compare observed,lazy-compact,owner-mode; echo EXITED=$?; sleep 60"
        ),
    );
    let s = t.wait_for("lazy-compact model: 3492/3492 rseq_updates predicted");
    assert!(s.contains("owner-mode model"), "{s}");
    assert!(s.contains("diff"), "{s}");
    t.keys(&["t"]);
    t.wait_for("tick-triggered compaction 1 of ");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}
