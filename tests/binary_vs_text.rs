//! Within one recording, the binary file and its text rendering give the same event sequence:
//! `perf.data` vs `perf script`, `trace.dat` vs `trace-cmd report`, compared event by event at
//! the text's precision (µs: `perf script` truncates, `trace-cmd report` rounds), with the same
//! CPU, task, kind and payload.
//!
//! Two known differences of the text, not of the data, are bridged here:
//! * `trace-cmd report` prints `sched_switch` through its plugin, whose state letters are not
//!   the kernel's (`SDTtZXxW` per bit, no `+`); the binary reader gives the kernel's letters, so
//!   they are mapped to the plugin's before comparing.
//! * a lost-events line carries no time of its own in the text reader (it takes the time of
//!   the line before), so for `Lost` markers the text time must not be after the binary one.
//! * `perf script` on a pipe-mode file prints hrtimer callbacks as raw addresses (it has no
//!   kernel map), so its text cannot name the tick; there the binary reader's inferred tick is
//!   checked against the kallsyms in the trace.dat of the same run instead.

mod common;
use cidscope::events::{Event, EventKind, Trace};
use cidscope::sources::{self, LoadOptions};
use common::*;

#[derive(Clone, Copy, PartialEq)]
enum Text {
    PerfScript,
    TraceCmdReport,
}

fn load(name: &str) -> Trace {
    sources::load(&capture(name), &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Kernel prev_state letter → the letter of trace-cmd's sched_switch plugin.
fn plugin_letter(c: char) -> char {
    match c {
        'X' => 'Z', // 0x10 EXIT_DEAD
        'Z' => 'X', // 0x20 EXIT_ZOMBIE
        'P' => 'x', // 0x40 TASK_PARKED
        'I' => 'W', // 0x80 TASK_IDLE (report_max)
        c => c,
    }
}

fn norm(t: &Trace, e: &Event, text: Text, from_binary: bool) -> String {
    match e.kind {
        EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm,
            next_prio,
            prev_state,
        } => {
            let state = if text == Text::TraceCmdReport && from_binary {
                plugin_letter(prev_state.letter()).to_string()
            } else if text == Text::TraceCmdReport {
                prev_state.letter().to_string()
            } else {
                prev_state.text()
            };
            format!(
                "sched_switch {prev_tid} {state} ==> {:?} {next_tid} [{next_prio}]",
                t.strings.get_lossy(next_comm)
            )
        }
        EventKind::Other { name } => format!("other {}", t.strings.get_lossy(name)),
        k => format!("{k:?}"),
    }
}

fn text_ts(ns: u64, text: Text) -> u64 {
    match text {
        Text::PerfScript => ns / 1000 * 1000,
        Text::TraceCmdReport => (ns + 500) / 1000 * 1000,
    }
}

fn compare(bin: &str, txt: &str, text: Text) -> usize {
    compare_with(bin, txt, text, true)
}

fn compare_with(bin: &str, txt: &str, text: Text, text_names_ticks: bool) -> usize {
    let b = load(bin);
    let t = load(txt);
    assert_eq!(
        b.origin.id(),
        if bin.ends_with(".perf.data") {
            "perf.data"
        } else {
            "trace.dat"
        }
    );
    let mut diffs = Vec::new();
    for (i, (x, y)) in b.events.iter().zip(t.events.iter()).enumerate() {
        let (mut nx, ny) = (norm(&b, &x, text, true), norm(&t, &y, text, false));
        if !text_names_ticks && x.kind == EventKind::Tick {
            nx = "other hrtimer_expire_entry".into();
        }
        let ts_ok = if x.kind.is_lost() {
            y.ts <= text_ts(x.ts, text)
        } else {
            text_ts(x.ts, text) == y.ts
        };
        if !ts_ok || x.cpu != y.cpu || x.tid != y.tid || nx != ny {
            diffs.push(format!(
                "#{i}: binary {} cpu {} tid {} {nx}\n      text   {} cpu {} tid {} {ny}",
                x.ts, x.cpu, x.tid, y.ts, y.cpu, y.tid
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{bin} vs {txt}: {} of {} events differ; first ones:\n{}",
        diffs.len(),
        b.events.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
    assert_eq!(
        b.events.len(),
        t.events.len(),
        "{bin} vs {txt}: event counts"
    );
    let ticks = b
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Tick)
        .count();
    assert!(ticks > 0, "{bin}: ticks recognised");
    b.events.len()
}

#[test]
fn perf_data_matches_perf_script() {
    assert_eq!(
        compare(
            "cyclictest.perf.data",
            "cyclictest.perf-script.txt",
            Text::PerfScript
        ),
        12494
    );
    assert_eq!(
        compare(
            "stress-ng.perf.data",
            "stress-ng.perf-script.txt",
            Text::PerfScript
        ),
        3511
    );
}

#[test]
fn pipe_mode_perf_data_matches_perf_script() {
    assert_eq!(
        compare_with(
            "cyclictest-pipe.perf.data",
            "cyclictest-pipe.perf-script.txt",
            Text::PerfScript,
            false
        ),
        18806
    );
}

#[test]
fn inferred_tick_is_tick_nohz_handler_of_the_same_boot() {
    // perf.data has no kallsyms; the trace.dat recorded in the same run has.
    let dat = std::fs::read(capture("cyclictest-v7.trace.dat")).unwrap();
    let layout = cidscope::sources::trace_dat::layout::read(&dat).unwrap();
    let ticks = layout.tick_functions.expect("kallsyms in the trace.dat");
    assert_eq!(ticks.len(), 1);
    let b = load("cyclictest-pipe.perf.data");
    let w = b
        .warnings
        .iter()
        .find(|w| w.code == "tick-inferred")
        .expect("tick inferred");
    assert!(
        w.message.contains(&format!(
            "callback {:#x} taken as the scheduler tick",
            ticks[0]
        )),
        "{}",
        w.message
    );
    let n = b
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Tick)
        .count();
    assert_eq!(
        n, 1015,
        "the expiries of 0x{:x} in the perf script text",
        ticks[0]
    );
}

#[test]
fn perf_data_with_lost_records_matches_perf_script() {
    // lost.perf-script.txt was printed with --show-lost-events
    let n = compare("lost.perf.data", "lost.perf-script.txt", Text::PerfScript);
    assert_eq!(n, 8145 + 6);
}

#[test]
fn trace_dat_v6_matches_trace_cmd_report() {
    assert_eq!(
        compare(
            "cyclictest.trace.dat",
            "cyclictest.trace-cmd-report.txt",
            Text::TraceCmdReport
        ),
        14821
    );
}

#[test]
fn trace_dat_v7_matches_trace_cmd_report() {
    assert_eq!(
        compare(
            "cyclictest-v7.trace.dat",
            "cyclictest-v7.trace-cmd-report.txt",
            Text::TraceCmdReport
        ),
        20251
    );
    assert_eq!(
        compare(
            "hackbench-v7none.trace.dat",
            "hackbench-v7none.trace-cmd-report.txt",
            Text::TraceCmdReport
        ),
        5122
    );
    assert_eq!(
        compare(
            "lost.trace.dat",
            "lost.trace-cmd-report.txt",
            Text::TraceCmdReport
        ),
        12502 + 1
    );
}

#[test]
fn perf_data_tgids_match_perf_script_pid_column() {
    // `perf script -F comm,tid,pid,...` prints PID/TID: the binary reader's tgid is the same.
    let b = load("cyclictest.perf.data");
    let t = load("cyclictest.perf-script-F.txt");
    let mut n = 0;
    for (tid, m) in &t.tasks {
        if let Some(tg) = m.tgid {
            assert_eq!(b.tasks.get(tid).and_then(|x| x.tgid), Some(tg), "tid {tid}");
            n += 1;
        }
    }
    assert!(n > 15, "{n}");
}
