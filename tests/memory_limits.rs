//! The memory check: a limit that does not parse is an error (never a check turned off), the
//! estimate counts tasks and processes as they appear, and the simulator checks its size.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(env: Option<&str>, args: &[&str]) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cidscope"));
    c.args(args);
    match env {
        Some(v) => c.env("CIDSCOPE_MEMORY_LIMIT", v),
        None => c.env_remove("CIDSCOPE_MEMORY_LIMIT"),
    };
    let out = c.output().expect("run cidscope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `n` tasks, 4 per process, one rseq_update each (as scripts/make-tasks.sh writes them).
fn many_tasks(n: u32) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let p = dir.join(format!("tasks-{n}-{}.ftrace.txt", std::process::id()));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    writeln!(
        w,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {n}/{n}   #P:8\n#"
    )
    .unwrap();
    for i in 0..n {
        let (tid, tgid, cpu) = (1000 + i, 1000 + i / 4 * 4, i % 8);
        writeln!(
            w,
            "{:>16}-{tid:<7} ({tgid:>7}) [{cpu:03}] ..... {:>5}.{:06}: rseq_update: cpu_id={cpu} node_id=0 mm_cid={}",
            format!("w{}", i / 4),
            1000 + i / 1_000_000,
            i % 1_000_000,
            i % 4
        )
        .unwrap();
    }
    w.flush().unwrap();
    p
}

#[test]
fn a_limit_that_does_not_parse_is_an_error() {
    let f = "traces/hog-threads.ftrace.txt";
    for bad in ["abc", "-5", "", "1X", "12 MB extra"] {
        let (code, err) = run(Some(bad), &["stats", f]);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert!(
            err.contains(&format!("CIDSCOPE_MEMORY_LIMIT={bad:?}: expected a size")),
            "{bad:?}: {err}"
        );
    }
    for good in ["1G", "2g", "512M", "4000000000", "1.5G"] {
        let (code, err) = run(Some(good), &["stats", f]);
        assert_eq!(code, 0, "{good:?}: {err}");
    }
    // a limit is a limit: too small refuses
    let (code, err) = run(Some("64K"), &["stats", f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("but only 65.5 KB is available"), "{err}");
}

#[test]
fn tasks_count_in_the_estimate_as_they_appear() {
    let p = many_tasks(200_000);
    let path = p.to_str().unwrap();
    let size = std::fs::metadata(&p).unwrap().len();
    // the bytes alone fit; the tasks do not
    let limit = format!("{}", size * 2);
    for args in [
        vec!["stats", path],
        vec!["stats", "--json", path],
        vec!["export", path, "--csv", "/dev/null"],
        vec![path, "--check"],
    ] {
        let (code, err) = run(Some(&limit), &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("tasks in"), "{args:?}: {err}");
        assert!(err.contains("processes"), "{args:?}: {err}");
        assert!(err.contains("--no-memory-check"), "{args:?}: {err}");
    }
    let (code, err) = run(Some(&limit), &["stats", "--no-memory-check", path]);
    assert_eq!(code, 0, "{err}");
    // with room for them, it loads
    let (code, err) = run(Some("2G"), &["stats", path]);
    assert_eq!(code, 0, "{err}");
    let _ = std::fs::remove_file(&p);
}

#[test]
fn the_simulator_checks_its_size_before_and_while_it_runs() {
    // far too large: refused before running, at once
    let t = std::time::Instant::now();
    let (code, err) = run(
        Some("8G"),
        &[
            "sim",
            "--cpus",
            "8192",
            "--workload",
            "hogs",
            "--duration",
            "3600s",
            "--policy",
            "lazy-compact",
            "--json",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("make at least"), "{err}");
    assert!(err.contains("but only 8.6 GB is available"), "{err}");
    assert!(t.elapsed().as_secs() < 5, "it ran first");
    // a workload that sleeps makes no sure count: stopped where it stops fitting, and said so
    let (code, err) = run(
        Some("4M"),
        &[
            "sim",
            "--cpus",
            "8",
            "--workload",
            "hackbench",
            "--duration",
            "10s",
            "--policy",
            "lazy-compact",
            "--json",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sim: stopped at"), "{err}");
    assert!(
        err.contains("would not fit in the memory available"),
        "{err}"
    );
    let (code, err) = run(
        Some("4M"),
        &[
            "sim",
            "--cpus",
            "8",
            "--workload",
            "hackbench",
            "--duration",
            "10ms",
            "--policy",
            "lazy-compact",
            "--json",
            "--no-memory-check",
        ],
    );
    assert_eq!(code, 0, "{err}");
}

/// A compressed trace.dat holds several times the events of as many uncompressed bytes: its
/// estimate takes the compressed factor (8 bytes a byte, 2.5 uncompressed), from a file and
/// from a pipe alike (a pipe shorter than the checks' step is checked once read whole).
#[test]
fn a_compressed_trace_dat_is_estimated_at_what_its_events_take() {
    let zstd = "traces/cyclictest-v7.trace.dat";
    let plain = "traces/cyclictest.trace.dat";
    let size = |p: &str| std::fs::metadata(p).unwrap().len();
    assert!(size(zstd) < size(plain) / 4);
    // room for 6 bytes a byte: enough at the uncompressed factor, not at the compressed one
    let limit = format!("{}", size(zstd) * 6);
    let (code, err) = run(Some(&limit), &["stats", zstd]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("trace.dat capture needs about 9.3 MB"),
        "{err}"
    );
    let piped = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", "-"])
        .env("CIDSCOPE_MEMORY_LIMIT", &limit)
        .stdin(std::fs::File::open(zstd).unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&piped.stderr);
    assert_eq!(piped.status.code(), Some(2), "{err}");
    assert!(err.contains("needs about 9.3 MB"), "{err}");
    let (code, err) = run(Some(&format!("{}", size(plain) * 3)), &["stats", plain]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(Some("12M"), &["stats", zstd]);
    assert_eq!(code, 0, "{err}");
}

/// The same for `perf record -z`: 8 bytes a byte of a compressed perf.data (0.8 otherwise), in
/// file and pipe mode.
#[test]
fn a_compressed_perf_data_is_estimated_at_what_its_events_take() {
    for f in ["traces/pv-z-file.perf.data", "traces/pv-z-pipe.perf.data"] {
        let size = std::fs::metadata(f).unwrap().len();
        let (code, err) = run(Some(&format!("{}", size * 5)), &["stats", f]);
        assert_eq!(code, 2, "{f}: {err}");
        assert!(err.contains("perf.data capture needs about"), "{f}: {err}");
        let (code, err) = run(Some(&format!("{}", size * 9)), &["stats", f]);
        assert_eq!(code, 0, "{f}: {err}");
    }
    // (uncompressed, 5 bytes a byte is room enough)
    let f = "traces/cyclictest-pipe.perf.data";
    let size = std::fs::metadata(f).unwrap().len();
    let (code, err) = run(Some(&format!("{}", size * 5)), &["stats", f]);
    assert_eq!(code, 0, "{err}");
}
