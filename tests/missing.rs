//! Say what is missing, on every surface: a capture without rseq_update, without a CPU column
//! or without TGIDs is named as such by the TUI's first screen, `stats` (text and JSON
//! `missing`/`warnings`) and `--check`, with what it means and how to record it; and nothing it
//! cannot support is judged (no false "outside 0..1" on a capture without CPUs).

use cidscope::sources::{LoadOptions, load_bytes};
use cidscope::ui::app::App;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};
use std::process::Command;

fn render(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    term.backend().to_string()
}

fn tmp(name: &str, data: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("cidscope-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let p = dir.join(name);
    std::fs::write(&p, data).expect("write");
    p.to_string_lossy().into_owned()
}

fn cidscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope")
}

/// hackbench's capture without its rseq_update lines: TGIDs and switches, no CID.
fn without_rseq() -> Vec<u8> {
    let text = std::fs::read_to_string("traces/hackbench-pipe.ftrace.txt").expect("capture");
    text.lines()
        .filter(|l| !l.contains("rseq_update"))
        .flat_map(|l| [l, "\n"])
        .collect::<String>()
        .into_bytes()
}

/// churn's perf script -F capture with the [CPU] column cut out.
fn without_cpus() -> Vec<u8> {
    let text = std::fs::read_to_string("traces/churn.perf-script-F.txt").expect("capture");
    let mut out = String::new();
    for l in text.lines() {
        match (l.find(" ["), l.find("] ")) {
            (Some(a), Some(b)) if b > a && b - a <= 6 => {
                out.push_str(&l[..a]);
                out.push_str(&l[b + 1..]);
            }
            _ => out.push_str(l),
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn the_tui_first_screen_says_what_is_missing_and_how_to_record_it() {
    let t = load_bytes("norseq.txt", &without_rseq(), &LoadOptions::default()).expect("load");
    let app = App::new(t);
    let s = render(&app, 120, 40);
    assert!(
        s.contains("missing from the capture: no rseq:rseq_update events"),
        "{s}"
    );
    assert!(s.contains("Linux >=") && s.contains("6.3 and the"), "{s}");
    assert!(s.contains("trace-cmd record -e rseq:rseq_update"), "{s}");
    assert!(s.contains("cidmask weight: nothing to show"), "{s}");
    // no hint to press a key that does nothing
    assert!(!s.contains("selects one"), "{s}");
}

#[test]
fn a_capture_without_cpus_is_named_and_not_judged() {
    let data = without_cpus();
    let t = load_bytes("nocpu.txt", &data, &LoadOptions::default()).expect("load");
    assert!(
        t.warnings.iter().any(|w| w.code == "cpu-unknown"),
        "{:?}",
        t.warnings
    );
    let app = App::new(t);
    assert!(
        app.state.timeline.alarms.is_empty(),
        "{} alarms judged without CPUs",
        app.state.timeline.alarms.len()
    );
    let s = render(&app, 120, 40);
    assert!(
        s.contains("missing from the capture: records without a CPU"),
        "{s}"
    );
    let f = tmp("nocpu.txt", &data);
    let out = cidscope(&["stats", "--json", &f]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["alarms"], 0, "{v}");
    assert!(
        v["missing"]
            .as_array()
            .expect("missing")
            .contains(&"cpu-unknown".into())
    );
    let out = cidscope(&["--check", &f]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{s}");
    assert!(!s.contains("FINDING"), "{s}");
    assert!(!s.contains("outside 0..1"), "{s}");
    assert!(s.contains("perf script -F +cpu"), "{s}");
}

#[test]
fn stats_names_what_is_missing_in_text_and_json() {
    let f = tmp("norseq.txt", &without_rseq());
    let out = cidscope(&["stats", "--json", &f]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["missing"], serde_json::json!(["no-rseq-update"]));
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("no-rseq-update: ")
                && w.contains("perf record -e rseq:rseq_update")),
        "{warnings:?}"
    );
    let out = cidscope(&["stats", &f]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("no-rseq-update: no rseq:rseq_update events"),
        "{s}"
    );
    // a capture without TGIDs or process events: how to record them
    let out = cidscope(&["stats", "--json", "traces/cyclictest.ftrace.txt"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["missing"], serde_json::json!(["no-tgid"]));
    assert!(
        v["warnings"].to_string().contains("options/record-tgid"),
        "{v}"
    );
    // a complete capture lacks nothing
    let out = cidscope(&["stats", "--json", "traces/hackbench-pipe.ftrace.txt"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["missing"], serde_json::json!([]));
}

/// A capture whose trace clock stalled: a fresh 7.3.4 20-vCPU `cidscope vm` boot whose guest
/// marked its TSC unstable and traced with the `global` clock (traces/inference/README.md); a
/// third of its records share their time with the three before them on their CPU. `stats` says
/// so in `missing`, its warnings and `coarse_stamp_records`, and the TUI's first screen does; a
/// boot of the same kind with a stable clock says nothing of it.
#[test]
fn a_trace_clock_that_stalls_is_named() {
    let coarse = "traces/inference/k7.3.4-c20-workers-coarse-clock.ftrace.txt.zst";
    let out = cidscope(&["stats", "--json", coarse]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["coarse_stamp_records"], 857,
        "{}",
        v["coarse_stamp_records"]
    );
    assert_eq!(v["missing"], serde_json::json!(["coarse-clock"]));
    let warned = v["warnings"].as_array().expect("warnings").iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.starts_with("coarse-clock: a trace clock that stalls"))
    });
    assert!(warned, "{}", v["warnings"]);
    // which threads run at once rests on the order across CPUs: no duplicate is judged (the
    // capture's stepping stamps made six)
    let out = cidscope(&["--check", coarse]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("missing: coarse-clock")
            && !text.contains("FINDING 9.067763 cpu 0: duplicate"),
        "{text}"
    );
    let t = cidscope::sources::load(std::path::Path::new(coarse), &LoadOptions::default())
        .expect("load");
    let s = render(&App::new(t), 160, 40);
    assert!(s.contains("a trace clock that stalls"), "{s}");

    let stable = "traces/inference/k7.3.4-c24-workers-walk.ftrace.txt.zst";
    let out = cidscope(&["stats", "--json", stable]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["coarse_stamp_records"], 0);
    assert_eq!(v["missing"], serde_json::json!([]));
}
