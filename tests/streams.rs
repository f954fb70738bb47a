//! Input from anywhere (issue 14): every capture in traces/ reads the same from a pipe as from
//! its file (text and binary, compressed or not); `/dev/stdin` and `<(...)` are pipes too; a
//! FIFO fed slowly is summarised when SIGINT ends it; tracefs `trace` (size 0) and
//! `trace_pipe` are read directly.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_cidscope");

/// (exit code, stdout, stderr) of `cidscope ARGS` with `input` on its standard input, written
/// through a pipe by another thread.
fn run_piped(args: &[&str], input: Vec<u8>) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cidscope");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // a reader that stops early (a refused capture) closes the pipe: not an error here
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("traces")
        .expect("traces/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file()
                && !n.ends_with(".json")
                && !n.ends_with(".md")
                && !n.ends_with(".sh")
                && !n.ends_with(".c")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_capture_reads_the_same_from_a_pipe_as_from_its_file() {
    let files = captures();
    assert!(files.len() > 60, "{} captures", files.len());
    for path in files {
        let file = path.to_str().expect("utf8 path");
        let (code_f, out_f, err_f) = common::cidscope(&["stats", "--json", file]);
        let data = std::fs::read(&path).expect("read");
        let (code_p, out_p, err_p) = run_piped(&["stats", "--json", "-"], data);
        // the name is the one difference: <stdin> for the pipe
        let out_f = out_f.replace(file, "<stdin>");
        let err_f = err_f.replace(file, "<stdin>");
        if file.ends_with("empty.txt")
            || file.ends_with("empty.perf.data")
            || file.ends_with("empty.trace.dat")
        {
            assert_eq!((code_f, code_p), (2, 2), "{file}");
            assert!(err_f.contains("empty file (0 bytes)"), "{file}: {err_f}");
            assert!(
                err_p.contains("empty input (0 bytes read)"),
                "{file}: {err_p}"
            );
            continue;
        }
        assert_eq!(
            code_f, code_p,
            "{file}: exit codes; file: {err_f} pipe: {err_p}"
        );
        assert_eq!(err_f, err_p, "{file}: messages");
        assert_eq!(out_f, out_p, "{file}: stats");
    }
}

/// Runs `sh -c SCRIPT` and parses its stdout as `stats --json`.
fn sh_stats(script: &str) -> serde_json::Value {
    let out = Command::new("sh")
        .args(["-c", script])
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stats json")
}

#[test]
fn dev_stdin_process_substitution_and_compressed_pipes() {
    for file in [
        "traces/cyclictest.trace-cmd-report.txt",
        "traces/lost.trace.dat",
        "traces/cyclictest-pipe.perf.data",
    ] {
        let want = common::stats(Path::new(file));
        for script in [
            format!("cat {file} | {BIN} stats --json /dev/stdin"),
            format!("gzip -c {file} | {BIN} stats --json -"),
            format!("zstd -q -c {file} | {BIN} stats --json -"),
            format!("xz -c {file} | {BIN} stats --json -"),
        ] {
            let got = sh_stats(&script);
            assert_eq!(got["events"], want["events"], "{script}");
            assert_eq!(got["event_counts"], want["event_counts"], "{script}");
            assert_eq!(got["tasks"], want["tasks"], "{script}");
        }
        let got = sh_stats(&format!("exec bash -c '{BIN} stats --json <(cat {file})'"));
        assert_eq!(got["event_counts"], want["event_counts"], "<(cat {file})");
    }
}

#[test]
fn broken_input_from_a_pipe_is_refused_with_its_location() {
    let mut data = std::fs::read("traces/cyclictest.trace_pipe.txt").expect("read");
    // line 101 becomes garbage
    let at = data
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(99)
        .map(|(i, _)| i + 1)
        .expect("100 lines");
    data.splice(at..at, b"this is not a trace line\n".iter().copied());
    let (code, _, err) = run_piped(&["stats", "-"], data.clone());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("<stdin>:101: expected an ftrace event line"),
        "{err}"
    );
    // compressed, the location is the decompressed line
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&data).expect("gzip");
    let (code, _, err) = run_piped(&["stats", "-"], gz.finish().expect("gzip"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("<stdin>:101:"), "{err}");
    // a gzip stream cut short
    let gz = std::fs::read("traces/stacktrace.ftrace.txt.gz").expect("read");
    let (code, _, err) = run_piped(&["stats", "-"], gz[..gz.len() / 2].to_vec());
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("<stdin>"), "{err}");
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success());
}

fn sigint(pid: u32) {
    let st = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
}

#[test]
fn a_fifo_fed_slowly_is_summarised_when_sigint_ends_it() {
    let dir = std::env::temp_dir().join(format!("cidscope-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fifo = dir.join("capture");
    mkfifo(&fifo);
    let text = std::fs::read_to_string("traces/cyclictest.trace_pipe.txt").expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let first: String = lines[..2000].iter().map(|l| format!("{l}\n")).collect();
    // what those lines hold, read from a file
    let part = dir.join("part.txt");
    std::fs::write(&part, &first).expect("write");
    let want = common::stats(&part);
    let child = Command::new(BIN)
        .args(["stats", "--json"])
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the fifo");
    for chunk in first.as_bytes().chunks(4096) {
        w.write_all(chunk).expect("write");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    w.flush().expect("flush");
    // the writer stays: only SIGINT ends this stream
    std::thread::sleep(std::time::Duration::from_millis(700));
    sigint(child.id());
    let out = child.wait_with_output().expect("wait");
    drop(w);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("ended by SIGINT"), "{err}");
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(got["events"], want["events"]);
    assert_eq!(got["event_counts"], want["event_counts"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn some_work() {
    for _ in 0..20 {
        let _ = Command::new("/bin/true").status();
    }
}

#[test]
fn tracefs_trace_and_trace_pipe_are_read_directly() {
    if !common::tracefs::is_root() {
        eprintln!("skipped: needs root for tracefs");
        return;
    }
    let Some(inst) = common::tracefs::Instance::new("xstream") else {
        eprintln!("skipped: no tracefs instance with rseq_update here");
        return;
    };
    some_work();
    // `trace` reports size 0: read as a stream, not "empty file"
    let trace = inst.0.join("trace");
    let s = common::stats(&trace);
    assert_eq!(s["format"], "ftrace");
    assert!(s["event_counts"]["rseq_update"].as_u64() > Some(0), "{s}");
    // `trace_pipe`: a live source until SIGINT
    let child = Command::new(BIN)
        .args(["stats", "--json"])
        .arg(inst.0.join("trace_pipe"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(300));
    some_work();
    std::thread::sleep(std::time::Duration::from_millis(500));
    sigint(child.id());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(got["format"], "trace_pipe", "{got}");
    assert!(
        got["event_counts"]["rseq_update"].as_u64() > Some(0),
        "{got}"
    );
}

#[test]
fn decompressed_size_meets_the_memory_check() {
    // 100 MB of lines in a ~100 KB gzip file: a bomb for a reader that trusts the input
    let dir = std::env::temp_dir().join(format!("cidscope-bomb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("bomb.txt.gz");
    {
        let f = std::fs::File::create(&path).expect("create");
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::best());
        let line = b"            bash-1385    [000] .....  1623.480444: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n";
        for _ in 0..(100 << 20) / line.len() {
            gz.write_all(line).expect("write");
        }
        gz.finish().expect("gzip");
    }
    assert!(std::fs::metadata(&path).expect("meta").len() < 2 << 20);
    let out = Command::new(BIN)
        .args(["stats"])
        .arg(&path)
        .env("CIDSCOPE_MEMORY_LIMIT", "20000000")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needs about") && err.contains("only 20.0 MB is available"),
        "{err}"
    );
    // --no-memory-check reads it all
    let out = Command::new(BIN)
        .args(["stats", "--json", "--no-memory-check"])
        .arg(&path)
        .env("CIDSCOPE_MEMORY_LIMIT", "20000000")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
