//! One event count for one file on every surface: `stats`' `events`, `--check`'s "in N events"
//! and the TUI's status bar. Lost-event markers are records of what is *not* in the capture,
//! so none of them counts them (they differed by the number of markers before).

use cidscope::sources::{LoadOptions, load};
use cidscope::ui::app::App;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn counts(file: &str) -> (u64, u64, u64) {
    let stats: serde_json::Value =
        serde_json::from_str(&run(&["stats", "--json", file])).expect("stats json");
    let check = run(&[file, "--check"]);
    let in_events = check
        .split(") in ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{file}: no event count in {check:?}"));
    let app = App::new(load(Path::new(file), &LoadOptions::default()).expect("load"));
    let mut term = Terminal::new(TestBackend::new(160, 30)).expect("terminal");
    term.draw(|f| view::draw(f, &app)).expect("draw");
    let screen = term.backend().to_string();
    // the status bar (over the footer): the cursor pane may say "events" in its own words
    let status = screen.lines().rev().find(|l| l.contains(" events │"));
    let tui = status
        .and_then(|l| l.split(" events").next())
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{file}: no event count on screen:\n{screen}"));
    (stats["events"].as_u64().expect("events"), in_events, tui)
}

#[test]
fn stats_check_and_tui_agree_on_captures_with_lost_markers() {
    for file in [
        "traces/lost-events.trace_pipe.txt",
        "traces/lost.perf.data",
        "traces/lost.trace.dat",
        "traces/cyclictest.ftrace.txt",
    ] {
        let (stats, check, tui) = counts(file);
        assert_eq!(stats, check, "{file}: stats vs --check");
        assert_eq!(stats, tui, "{file}: stats vs TUI");
    }
    // the marker-free count of the trace_pipe capture, by its truth file
    let (stats, _, _) = counts("traces/lost-events.trace_pipe.txt");
    assert_eq!(stats, 9257);
}
