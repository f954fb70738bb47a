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
    t.wait_for("keys and glyphs");
    t.keys(&["Escape"]);
    let s = t.wait_for("per-CPU CID slots");
    assert!(!s.contains("keys and glyphs"), "Esc closes the help:\n{s}");
    // on the main screen Esc closes nothing and never quits
    t.keys(&["Escape"]);
    t.wait_for("nothing to close: q quits");
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
    t.wait_for("lazy-compact model: predicted 3492/3492");
    // (the diff row comes once every compared set has its replay: a loaded machine is slower)
    let s = t.wait_for("diff");
    assert!(s.contains("owner-mode model"), "{s}");
    t.keys(&["t"]);
    t.wait_for("tick-triggered compaction 1 of ");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

#[test]
fn picker_filters_and_picks_and_thread_lanes_toggle() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} traces/v5-workers.ftrace.txt; echo EXITED=$?; sleep 60"),
    );
    // the first pick: the busiest process born in the capture
    let s = t.wait_for("event 1 of 7980");
    assert!(s.contains("tgid 1244 (after exec) mcwork"), "{s}");
    t.keys(&["P"]);
    t.wait_for("processes — type to filter");
    // filter to the rustc process (tgid 1216), then pick it
    t.keys(&["1", "2", "1", "6"]);
    let s = t.wait_for("filter: 1216");
    assert!(s.contains("1 of 24 shown"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("showing tgid 1216");
    assert!(
        s.contains("│ tgid 1216"),
        "the title shows the process:\n{s}"
    );
    assert!(!s.contains("processes — type to filter"), "closed:\n{s}");
    // Esc closes the picker without a change
    t.keys(&["P"]);
    t.wait_for("processes — type to filter");
    t.keys(&["Escape"]);
    let s = t.wait_for("per-CPU CID slots");
    assert!(s.contains("│ tgid 1216"), "{s}");
    // search switches process: tgid:1244
    t.keys(&["/", "t", "g", "i", "d", ":", "1", "2", "4", "4", "Enter"]);
    let s = t.wait_for("showing tgid 1244");
    assert!(s.contains("│ tgid 1244 (after exec) mcwork"), "{s}");
    // thread lanes and back
    t.keys(&["v"]);
    let s = t.wait_for("thread lanes: the CID each thread holds");
    assert!(s.contains("5 threads of tgid 1244"), "{s}");
    assert!(s.contains("1248"), "a row per thread:\n{s}");
    t.keys(&["v"]);
    t.wait_for("per-CPU CID slots");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

/// `attach --pid P` opens the live TUI on the process (as root; otherwise it says why and the
/// test passes, like tests/live.rs).
#[test]
fn attach_opens_the_tui_on_a_pid() {
    if !is_root() {
        println!("SKIP attach_opens_the_tui_on_a_pid: attaching needs root (CI runs as root)");
        return;
    }
    // a busy process of our own: glibc registers rseq for it, so it reports CIDs
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .expect("sh");
    let pid = busy.id();
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} attach --pid {pid} --duration 30; echo EXITED=$?; sleep 60"),
    );
    let s = t.wait_for(&format!("attach --pid {pid}"));
    assert!(s.contains("● LIVE"), "{s}");
    let s = t.wait_for(&format!("│ tgid {pid}"));
    assert!(s.contains("per-CPU CID slots"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{s}");
    assert!(s.contains("rseq "), "the summary follows the TUI:\n{s}");
    let _ = busy.kill();
    let _ = busy.wait();
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The rows of the weight graph: between its title and the cursor pane's.
fn weight_rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .skip_while(|l| !l.contains("cidmask weight:"))
        .skip(1)
        .take_while(|l| !l.starts_with(" cursor"))
        .collect()
}

/// `live --attach` draws the cidmask weight of its workload while the session runs and after
/// it ended (the kernel trace's weight, as the replay of its recording does).
#[test]
fn live_attach_draws_the_weight_during_and_after_the_session() {
    if !is_root() {
        println!("SKIP live_attach_draws_the_weight: attaching needs root (CI runs as root)");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!(
            "{bin} live --attach --duration 6 --workload hog:3,migrate:1:20ms; echo EXITED=$?; sleep 60"
        ),
    );
    t.wait_for("● LIVE");
    let start = std::time::Instant::now();
    let during = loop {
        let s = t.screen();
        if s.contains("● LIVE") && weight_rows(&s).iter().any(|l| l.contains('█')) {
            break s;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5) && !s.contains("ENDED"),
            "no weight drawn while the session runs:\n{s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(during.contains("kernel: rseq_update events"), "{during}");
    let after = t.wait_for("the session ended after");
    assert!(
        weight_rows(&after).iter().any(|l| l.contains('█')),
        "no weight drawn after the session:\n{after}"
    );
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

/// At 80×24 the compare view shows its three sets and the demo shows its first set and names
/// the hidden ones, which ↓ brings into view.
#[test]
fn small_terminals_show_the_rows_or_say_what_is_hidden() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start_sized(
        "e2e",
        &format!(
            "{bin} traces/v5-workers.ftrace.txt --compare observed,lazy-compact,owner-mode; echo EXITED=$?; sleep 60"
        ),
        80,
        24,
    );
    let s = t.wait_for("▸ owner-mode");
    for set in ["▸ observed", "▸ lazy-compact", "diff "] {
        assert!(s.contains(set), "{set}:\n{s}");
    }
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
    let t = Tmux::start_sized(
        "e2e",
        &format!("{bin} demo workers; echo EXITED=$?; sleep 60"),
        80,
        24,
    );
    // a demo on a small screen: the sets its narration names, and it says so
    let s = t.wait_for("demo workers");
    assert!(
        s.contains("▸ observed") && s.contains("▸ lazy-compact"),
        "{s}"
    );
    assert!(
        s.contains("2 of 4 lane sets: those the narration names"),
        "{s}"
    );
    // the owner-mode step names owner-mode's set: it comes into view
    for _ in 0..8 {
        if t.screen().contains("owner-mode switches") {
            break;
        }
        t.keys(&["]"]);
    }
    let s = t.wait_for("▸ owner-mode");
    assert!(!s.contains("▸ lazy-compact"), "{s}");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

/// Parses a ruler's label row ("time  |+1.25ms   |+1.50ms ..."): its labels, each checked to
/// read `|+<number><unit>` with one unit for the row.
fn ruler_labels(row: &str) -> Vec<f64> {
    let rest = row.strip_prefix("time").expect("a label row");
    let mut unit: Option<String> = None;
    rest.split_whitespace()
        .map(|tok| {
            let body = tok
                .strip_prefix("|+")
                .unwrap_or_else(|| panic!("label {tok:?} of {row:?} does not start with |+"));
            let split = body
                .find(|c: char| c.is_ascii_alphabetic())
                .unwrap_or_else(|| panic!("label {tok:?} has no unit"));
            let (num, u) = body.split_at(split);
            assert!(
                ["ns", "us", "ms", "s"].contains(&u),
                "label {tok:?}: unit {u:?}"
            );
            assert_eq!(
                *unit.get_or_insert(u.to_string()),
                u,
                "one unit per row: {row:?}"
            );
            num.parse::<f64>()
                .unwrap_or_else(|_| panic!("label {tok:?}: {num:?} is not a number"))
        })
        .collect()
}

/// The batched-scan demo's ruler, at each step and zoom: marks have a row of their own, so
/// every time label is whole and well formed, and neighbours differ at every zoom.
#[test]
fn ruler_labels_are_never_overwritten() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start_sized(
        "e2e",
        &format!("{bin} demo batched-scan; echo EXITED=$?; sleep 60"),
        120,
        50,
    );
    t.wait_for("demo batched-scan");
    let mut checked = 0;
    for keys in [
        &[][..],
        &["]"],
        &["]"],
        &["+", "+", "+"],
        &["+", "+", "+", "+"],
        &["]"],
    ] {
        t.keys(keys);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let s = t.screen();
        let row = s
            .lines()
            .find(|l| l.starts_with("time "))
            .unwrap_or_else(|| panic!("no label row:\n{s}"));
        let labels = ruler_labels(row.trim_end());
        assert!(labels.len() >= 3, "{row}");
        for w in labels.windows(2) {
            assert!(w[0] < w[1], "labels increase and differ: {row}");
        }
        // the marks are on their own row, under the labels
        let marks = s
            .lines()
            .find(|l| l.starts_with("marks"))
            .expect("marks row");
        assert!(
            marks.contains('r') || marks.contains('S') || marks.contains('▼'),
            "{marks}"
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
    // the demo's third step is batch 8: its CPUs 56-63 are among the lanes shown
    t.keys(&["g"]);
    t.wait_for("before step 1 of");
    t.keys(&["]", "]", "]"]);
    let s = t.wait_for("step 3 of");
    assert!(s.contains("scan batch 8 of 16"), "{s}");
    for cpu in [56, 63] {
        assert!(
            s.lines().any(|l| l.starts_with(&format!("CPU{cpu} "))),
            "CPU{cpu} not shown:\n{s}"
        );
    }
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}

/// `L` shows the legend in the cursor pane's place, `L` or Esc hides it.
#[test]
fn the_legend_is_shown_by_its_key() {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start(
        "e2e",
        &format!("{bin} traces/hackbench-pipe.ftrace.txt; echo EXITED=$?; sleep 60"),
    );
    t.wait_for("event 1 of 15176");
    t.keys(&["L"]);
    let s = t.wait_for("legend — L closes");
    assert!(
        s.contains("a CID not yet confirmed since the task was switched in"),
        "{s}"
    );
    assert!(
        !s.contains("event 1 of 15176"),
        "the legend takes the cursor pane's place"
    );
    t.keys(&["J", "J", "J"]);
    t.wait_for("lines 4-");
    t.keys(&["Escape"]);
    t.wait_for("event 1 of 15176");
    t.keys(&["q"]);
    t.wait_for("EXITED=0");
}
