//! The bad-input catalogue: each input with its exact outcome — exit 2 naming the location, or
//! a load with a named warning — and never a panic.

use serde_json::Value;
use std::process::{Command, Output};

fn cidscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope")
}

fn tmp(name: &str, content: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("cidscope-catalogue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let p = dir.join(name);
    std::fs::write(&p, content).expect("write");
    p.to_string_lossy().into_owned()
}

fn rejected(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(!err.contains("panicked"));
}

fn loaded(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn warnings(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

const LINE: &str =
    "            bash-1385    [000] .....  1623.480444: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n";

#[test]
fn text_files_of_other_tools_are_refused() {
    let strace = tmp(
        "strace.txt",
        b"execve(\"/bin/ls\", [\"ls\"], 0x7ffd /* 20 vars */) = 0\nbrk(NULL) = 0x55\n",
    );
    rejected(
        &cidscope(&["stats", &strace]),
        "strace.txt:1: not a capture cidscope reads",
    );
    let json = tmp("x.json", b"{\"traceEvents\": []}\n");
    rejected(&cidscope(&["stats", &json]), "x.json:1: not a capture");
    let ps = tmp(
        "ps.txt",
        b"  PID TTY          TIME CMD\n 1385 pts/0    00:00:00 bash\n",
    );
    rejected(&cidscope(&["stats", &ps]), "ps.txt:1: not a capture");
}

#[test]
fn each_text_format_cut_mid_line_loads_with_a_warning() {
    for src in [
        "traces/cyclictest.trace-cmd-report.txt",
        "traces/cyclictest.perf-script.txt",
        "traces/cyclictest.trace_pipe.txt",
    ] {
        let data = std::fs::read(src).expect("capture");
        // keep the first 1000 lines and two thirds of the next one
        let mut end = 0;
        for _ in 0..1000 {
            end += data[end..].iter().position(|&b| b == b'\n').expect("line") + 1;
        }
        let next = data[end..].iter().position(|&b| b == b'\n').expect("line");
        let cut = &data[..end + next * 2 / 3];
        let f = tmp(
            &format!("cut-{}", src.rsplit('/').next().unwrap_or("x")),
            cut,
        );
        let v = loaded(&cidscope(&["stats", "--json", &f]));
        let w = warnings(&v);
        assert!(
            w.iter()
                .any(|w| w.starts_with("truncated-line: ") && w.contains(":1001: ")),
            "{src}: {w:?}"
        );
        // trace-cmd report has a one-line header ("cpus=2") that is not an event
        let header = usize::from(src.contains("trace-cmd"));
        assert_eq!(v["events"], 1000 - header as u64, "{src}");
    }
}

#[test]
fn timestamps_going_backwards_are_sorted_with_a_warning() {
    let text = format!(
        "{}{}{}",
        LINE.replace("1623.480444", "1.000300"),
        LINE.replace("1623.480444", "1.000100"),
        LINE.replace("1623.480444", "1.000200")
    );
    let f = tmp("backwards.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["first_ts_ns"], 1_000_100_000u64);
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.starts_with("timestamps-backwards: ") && w.contains("1 records"))
    );
}

#[test]
fn pid_reuse_starts_a_new_task() {
    // tid 20 exits, then the pid is reused by a fork of another process: its CIDs are its own.
    let text = "\
a-20 (     20) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1
a-20 (     20) [000] .....  1.000100: sched_process_exit: comm=a pid=20 prio=120 group_dead=true
b-30 (     30) [001] .....  1.000200: task_newtask: pid=20 comm=b clone_flags=1200000 oom_score_adj=0
b-30 (     30) [001] .....  1.000300: sched_process_fork: comm=b pid=30 child_comm=b child_pid=20
c-20 (     20) [001] .....  1.000400: rseq_update: cpu_id=1 node_id=0 mm_cid=0
";
    let f = tmp("reuse.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    // two tasks under one tid, counted apart: the first in tasks, the second in reused_tasks
    assert_eq!(v["tasks"]["20"]["rseq_updates"], 1);
    assert_eq!(v["tasks"]["20"]["cids"], serde_json::json!([1]));
    let reused = v["reused_tasks"].as_array().expect("reused_tasks");
    assert_eq!(reused.len(), 1, "{reused:?}");
    assert_eq!(reused[0]["tid"], 20);
    assert_eq!(reused[0]["incarnation"], 1);
    assert_eq!(reused[0]["rseq_updates"], 1);
    assert_eq!(reused[0]["cids"], serde_json::json!([0]));
    assert_eq!(v["alarms"], 0);
    let procs = v["processes"].as_array().expect("processes");
    assert!(
        procs
            .iter()
            .any(|p| p["origin"] == "fork" && p["tgid"] == 20)
    );
    // no sched_switch: duplicates are not judged (exit 4), the bound is, and holds
    let out = cidscope(&["--check", &f]);
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn invalid_utf8_in_a_comm_is_kept_and_shown_replaced() {
    let mut text = Vec::new();
    text.extend_from_slice(b"            b\xffd\xfe-77    [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n");
    let f = tmp("utf8.txt", &text);
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["tasks"]["77"]["comm"], "b\u{fffd}d\u{fffd}");
    assert_eq!(v["tasks"]["77"]["rseq_updates"], 1);
}

#[test]
fn a_one_megabyte_line_is_refused_with_its_line_number_and_a_short_excerpt() {
    let mut text = LINE.as_bytes().to_vec();
    text.extend(std::iter::repeat_n(b'x', 1 << 20));
    text.push(b'\n');
    let f = tmp("huge-line.txt", &text);
    let out = cidscope(&["stats", &f]);
    rejected(&out, "huge-line.txt:2: expected an ftrace event line");
    assert!(
        out.stderr.len() < 600,
        "the message stays short: {} bytes",
        out.stderr.len()
    );
    // a 1 MB payload of an event cidscope does not model is fine
    let mut text = LINE.as_bytes().to_vec();
    text.extend_from_slice(b"            bash-1385    [000] .....  1623.480445: print: ");
    text.extend(std::iter::repeat_n(b'y', 1 << 20));
    text.push(b'\n');
    let f = tmp("huge-payload.txt", &text);
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["event_counts"]["print"], 1);
}

#[test]
fn events_before_a_header_load_with_a_warning() {
    let text = format!(
        "{LINE}# tracer: nop\n#\n{}",
        LINE.replace("1623.480444", "1623.480500")
    );
    let f = tmp("late-header.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["events"], 2);
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.starts_with("header-after-events: "))
    );
}

#[test]
fn a_capture_larger_than_memory_allows_is_refused_before_loading() {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", "traces/hackbench-pipe.ftrace.txt"])
        .env("CIDSCOPE_MEMORY_LIMIT", "100000")
        .output()
        .expect("run");
    rejected(
        &out,
        "capture needs about 1.3 MB of memory to open, but only 100.0 KB is available",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "stats",
            "--no-memory-check",
            "traces/hackbench-pipe.ftrace.txt",
        ])
        .env("CIDSCOPE_MEMORY_LIMIT", "100000")
        .output()
        .expect("run");
    assert!(out.status.success());
}

#[test]
fn a_perf_data_with_an_attribute_of_unknown_type_loads_with_a_named_warning() {
    // traces/unknown-attr.perf.data: stress-ng.perf.data with the type of its first attribute
    // (rseq:rseq_update) set to 0x7777, a type no kernel defines
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        "traces/unknown-attr.perf.data",
    ]));
    assert_eq!(v["events"], 3511, "no sample lost");
    assert!(
        v["event_counts"].get("rseq_update").is_none(),
        "not decoded as rseq_update"
    );
    let w = warnings(&v);
    assert!(
        w.iter().any(|w| w.starts_with("non-tracepoint-attribute: ")
            && w.contains("attribute 0 (rseq:rseq_update)")
            && w.contains("1099 samples")),
        "{w:?}"
    );
}

#[test]
fn a_trace_dat_of_an_unsupported_version_is_refused_at_its_offset() {
    // traces/unsupported-v9.trace.dat: the start of a v6 file with the version set to "9"
    let out = cidscope(&["stats", "traces/unsupported-v9.trace.dat"]);
    rejected(
        &out,
        "at byte offset 10: trace.dat: expected trace.dat file version 6 or 7 (trace-cmd 3.x), found version \"9\"",
    );
}

#[test]
fn binary_captures_cut_mid_record_are_answered_with_the_offset() {
    // pipe-mode perf.data cut mid-record: what came before is whole, so it loads with a warning
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        "traces/cut-record-pipe.perf.data",
    ]));
    assert!(v["events"].as_u64() > Some(4000));
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.contains("499896") || w.contains("500000")),
        "{:?}",
        warnings(&v)
    );
    // file-mode perf.data cut mid-record: the formats come after the data, nothing decodes
    let out = cidscope(&["stats", "traces/cut-record.perf.data"]);
    rejected(&out, "at byte offset");
    // trace.dat cut in its header
    let out = cidscope(&["stats", "traces/cut-header.trace.dat"]);
    rejected(&out, "at byte offset");
}

// ---- issue 26: every byte accounted for --------------------------------------------------
//
// The inputs are made by `scripts/make-bad-inputs.py` (a fixed recipe over the captures in
// traces/), once per test run, into a directory of their own.

mod common;

fn made(name: &str) -> String {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cidscope-made-{}", std::process::id()));
        let out = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/make-bad-inputs.py"
            ))
            .arg(&dir)
            .output()
            .expect("python3 runs scripts/make-bad-inputs.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    });
    dir.join(name).to_string_lossy().into_owned()
}

fn capture(name: &str) -> String {
    common::capture(name).to_string_lossy().into_owned()
}

fn events(v: &Value) -> u64 {
    v["events"].as_u64().expect("events")
}

fn warning_with<'w>(w: &'w [String], code: &str) -> &'w str {
    w.iter()
        .find(|w| w.starts_with(&format!("{code}: ")))
        .unwrap_or_else(|| panic!("no {code} warning in {w:?}"))
}

#[test]
fn xz_streams_in_a_row_are_read_whole() {
    let full = events(&loaded(&cidscope(&[
        "stats",
        "--json",
        &capture("cyclictest.ftrace.txt"),
    ])));
    for f in [
        "two-streams.ftrace.txt.xz",
        "two-streams-padded.ftrace.txt.xz",
    ] {
        let v = loaded(&cidscope(&["stats", "--json", &made(f)]));
        assert_eq!(events(&v), full, "{f}");
        assert!(
            !warnings(&v).iter().any(|w| w.starts_with("input-cut")),
            "{f}"
        );
    }
    // and from standard input
    let data = std::fs::read(made("two-streams.ftrace.txt.xz")).expect("made");
    let out = stdin_run(&["stats", "--json", "-"], &data);
    assert_eq!(events(&loaded(&out)), full);
}

fn stdin_run(args: &[&str], data: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = data.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    out
}

#[test]
fn a_tracefs_file_with_fewer_entries_than_its_header_says_is_counted() {
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &made("cut-at-line-boundary.ftrace.txt"),
    ]));
    assert_eq!(events(&v), 3740);
    let w = warning_with(&warnings(&v), "fewer-than-header").to_string();
    assert!(
        w.contains("entries-in-buffer 14277") && w.contains("10537 entries are missing"),
        "{w}"
    );
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &made("header-claims-99999.ftrace.txt"),
    ]));
    assert_eq!(events(&v), 14277);
    let w = warning_with(&warnings(&v), "fewer-than-header").to_string();
    assert!(w.contains("85722 entries are missing"), "{w}");
    // the whole file: no word
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &capture("cyclictest.ftrace.txt"),
    ]));
    assert!(
        !warnings(&v)
            .iter()
            .any(|w| w.starts_with("fewer-than-header"))
    );
}

#[test]
fn check_keeps_the_header_bound_and_flags_what_the_capture_contradicts() {
    let out = cidscope(&[&made("stray-cpu-127.ftrace.txt"), "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("CID 5 of task 100 is outside 0..2"), "{text}");
    assert!(
        text.contains("1 events on CPU 127, but the capture's header states 2 CPUs"),
        "{text}"
    );
    assert!(text.contains("1 CIDs outside 0..2"), "{text}");
    let out = cidscope(&[&made("same-tid-two-cpus.ftrace.txt"), "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("task 101 runs on CPU 1 and CPU 0 at once"),
        "{text}"
    );
}

#[test]
fn a_perf_sample_on_a_cpu_past_the_header_is_skipped_and_counted() {
    let full = events(&loaded(&cidscope(&[
        "stats",
        "--json",
        &capture("cyclictest.perf.data"),
    ])));
    let f = made("cpu-128.perf.data");
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(events(&v), full - 1);
    assert_eq!(v["ncpus"], 2);
    let w = warning_with(&warnings(&v), "bad-records-skipped").to_string();
    assert!(
        w.contains("CPU 128 (expected below 2, the CPUs the header states)"),
        "{w}"
    );
    let out = cidscope(&[&f, "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("0 duplicate CIDs") && text.contains("outside 0..2"),
        "{text}"
    );
}

#[test]
fn nul_tails_and_overlong_lines_are_counted_not_held() {
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &made("nul-tail.ftrace.txt"),
    ]));
    assert_eq!(events(&v), 14277);
    let w = warning_with(&warnings(&v), "nul-tail").to_string();
    assert!(
        w.contains("ends in 1048576 NUL bytes from byte offset 2020063"),
        "{w}"
    );
    // the same from a pipe, with a tail of 64 MB
    let mut data = std::fs::read(capture("cyclictest.ftrace.txt")).expect("capture");
    data.resize(data.len() + (64 << 20), 0);
    let v = loaded(&stdin_run(&["stats", "--json", "-"], &data));
    assert_eq!(events(&v), 14277);
    assert!(warning_with(&warnings(&v), "nul-tail").contains("67108864 NUL bytes"));
    // a line of 8 MB: refused at once as no capture, from a file
    rejected(
        &cidscope(&["stats", &made("one-long-line.txt")]),
        "one-long-line.txt:1: not a capture",
    );
    // and inside a stream, cut to its start and counted
    let mut data = std::fs::read(capture("cyclictest.ftrace.txt")).expect("capture");
    let n = data.len();
    data.extend(std::iter::repeat_n(b'y', 3 << 20));
    data.extend_from_slice(b"\n");
    let out = stdin_run(&["stats", "--json", "--skip-bad-lines", "-"], &data);
    let v = loaded(&out);
    assert_eq!(events(&v), 14277);
    let w = warning_with(&warnings(&v), "overlong-lines").to_string();
    assert!(w.contains(&format!("first at byte offset {n}")), "{w}");
}

#[test]
fn compressed_files_cut_short_load_what_they_hold_and_say_so() {
    for f in ["cut.ftrace.txt.gz", "cut.ftrace.txt.xz"] {
        let v = loaded(&cidscope(&["stats", "--json", &made(f)]));
        assert!(events(&v) > 1000 && events(&v) < 14277, "{f}");
        let w = warning_with(&warnings(&v), "input-cut").to_string();
        assert!(w.contains("decompressed data"), "{w}");
    }
    // a trace.dat cut in its ring-buffer data: the pages before the cut
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &made("cut-late.trace.dat.gz"),
    ]));
    assert!(events(&v) > 0 && events(&v) < 14821);
    warning_with(&warnings(&v), "missing-pages");
    warning_with(&warnings(&v), "input-cut");
}

#[test]
fn every_trace_dat_buffer_is_counted_and_any_can_be_read() {
    let f = made("two-buffers.trace.dat");
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(events(&v), 14821);
    let w = warning_with(&warnings(&v), "instance-buffer-skipped").to_string();
    assert!(
        w.contains("the instance buffer \"inst26\" holds 9046 events that were not loaded"),
        "{w}"
    );
    let v = loaded(&cidscope(&["stats", "--json", "--instance", "inst26", &f]));
    assert_eq!(events(&v), 9046);
    let w = warning_with(&warnings(&v), "instance-buffer-skipped").to_string();
    assert!(w.contains("the top-level buffer holds 14821 events"), "{w}");
    rejected(
        &cidscope(&["stats", "--instance", "nope", &f]),
        "--instance \"nope\": the file has no such buffer (its buffers: \"\", \"inst26\"",
    );
}

#[test]
fn inputs_refused_before_now_load() {
    // perf.data version 1: the version-2 layout under the magic PERFFILE
    let mut d = std::fs::read(capture("cyclictest.perf.data")).expect("capture");
    let full = events(&loaded(&cidscope(&[
        "stats",
        "--json",
        &capture("cyclictest.perf.data"),
    ])));
    d[..8].copy_from_slice(b"PERFFILE");
    let v = loaded(&cidscope(&["stats", "--json", &tmp("v1.perf.data", &d)]));
    assert_eq!(events(&v), full);
    // trace-cmd report -l and --ts-diff: the trace.dat's events
    for f in [
        "cyclictest.trace-cmd-report-l.txt",
        "cyclictest.trace-cmd-report-ts-diff.txt",
    ] {
        let v = loaded(&cidscope(&["stats", "--json", &capture(f)]));
        assert_eq!(events(&v), 14821, "{f}");
        assert_eq!(v["format"], "trace-cmd-report", "{f}");
    }
    // latency-format text whose times count from the trace's start (`0us+`)
    let text = std::fs::read_to_string(capture("latency.ftrace.txt")).expect("capture");
    let mut t0 = None;
    let rel: String = text
        .lines()
        .map(|l| {
            let Some(us) = l.find("us").filter(|_| !l.starts_with('#')) else {
                return format!("{l}\n");
            };
            let start = l[..us].rfind(' ').map_or(0, |s| s + 1);
            let Ok(t) = l[start..us].parse::<u64>() else {
                return format!("{l}\n");
            };
            let base = *t0.get_or_insert(t);
            format!(
                "{}{:>w$}{}\n",
                &l[..start],
                t - base,
                &l[us..],
                w = us - start
            )
        })
        .collect();
    assert!(rel.contains("   0us+: rseq_update"), "{}", &rel[..2000]);
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &tmp("rel.latency.txt", rel.as_bytes()),
    ]));
    assert_eq!(events(&v), 60);
    // perf script without its time column: in printed order, said so
    let text = std::fs::read_to_string(capture("cyclictest.perf-script.txt")).expect("capture");
    let untimed: String = text
        .lines()
        .map(|l| {
            let t = l.split(' ').find(|w| {
                w.len() > 2
                    && w.ends_with(':')
                    && w[..w.len() - 1].contains('.')
                    && w[..w.len() - 1]
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.')
            });
            match t {
                Some(t) => format!("{}\n", l.replacen(t, "", 1)),
                None => format!("{l}\n"),
            }
        })
        .collect();
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        &tmp("untimed.txt", untimed.as_bytes()),
    ]));
    assert_eq!(events(&v), 12494);
    warning_with(&warnings(&v), "no-time-column");
}

#[test]
fn exports_to_standard_output_and_models_in_svg() {
    let dir = std::env::temp_dir().join(format!("cidscope-dash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .current_dir(&dir)
        .args(["export", &capture("hog-threads.ftrace.txt"), "--csv", "-"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert!(out.stdout.starts_with(b"index,ts_ns,cpu,tid"));
    assert!(!dir.join("-").exists(), "a file named -");
    let svg = dir.join("m.svg");
    let out = cidscope(&[
        "export",
        &capture("hog-threads.ftrace.txt"),
        "--svg",
        svg.to_str().expect("path"),
        "--policy",
        "lazy-compact",
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(text.contains("per-CPU CID slots (model lazy-compact)"));
}

#[test]
fn sigint_on_a_fifo_that_sent_nothing_is_said() {
    let dir = std::env::temp_dir().join(format!("cidscope-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fifo = dir.join("f");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().expect("path")).expect("cstr");
    // SAFETY: mkfifo on a NUL-terminated path we own
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", fifo.to_str().expect("path")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // the writer opens and sends nothing
    let w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open fifo");
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signals our own child
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    drop(w);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SIGINT ended the input before any byte arrived"),
        "{err}"
    );
}

#[test]
fn trace_dat_stack_records_are_counted_as_the_text_counts_them() {
    // (its trace-cmd report text gives the same 14579 events and "242 stack traces skipped")
    let v = loaded(&cidscope(&["stats", "--json", &made("stacks.trace.dat")]));
    assert_eq!(events(&v), 14821 - 242);
    let w = warning_with(&warnings(&v), "stack-traces-skipped").to_string();
    assert!(
        w.contains("242 stack traces (kernel_stack/user_stack records)"),
        "{w}"
    );
}
