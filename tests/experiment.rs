//! `cidscope vm --kernel ... --cpus ... --repeat N --out DIR`: an experiment of real boots that
//! keeps every finished run when Ctrl-C stops it and says which runs are missing, and whose
//! report can be made again from its recordings (`--report DIR`). Needs `CIDSCOPE_VM_KERNEL`
//! (CI sets it; without it the test says so and passes, unless `CIDSCOPE_REQUIRE_VM=1`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn kernel() -> Option<PathBuf> {
    let k = std::env::var_os("CIDSCOPE_VM_KERNEL").map(PathBuf::from);
    match k {
        Some(p) if p.is_file() => Some(p),
        _ => {
            assert!(
                std::env::var("CIDSCOPE_REQUIRE_VM").map_or(true, |v| v != "1"),
                "CIDSCOPE_REQUIRE_VM=1 but CIDSCOPE_VM_KERNEL names no kernel"
            );
            println!("SKIP: CIDSCOPE_VM_KERNEL is not set");
            None
        }
    }
}

fn json(p: &std::path::Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

#[test]
fn ctrl_c_keeps_every_finished_run_and_the_report_says_what_is_missing() {
    let Some(k) = kernel() else { return };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("experiment-ctrl-c");
    let _ = std::fs::remove_dir_all(&dir);
    let child = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["vm", "--kernel"])
        .arg(&k)
        .args([
            "--cpus",
            "2",
            "--repeat",
            "3",
            "--workload",
            "shrink",
            "--duration",
            "600ms",
            "--graph-function",
            "task_mm_cid_work",
            "--out",
        ])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cidscope vm");
    // the first run written, Ctrl-C
    let start = Instant::now();
    let path = dir.join("experiment.json");
    loop {
        if json(&path).is_some_and(|v| v["runs"].as_array().is_some_and(|r| !r.is_empty())) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no run finished in 5 minutes"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    let v = json(&path).expect("experiment.json");
    let runs = v["runs"].as_array().unwrap();
    // the first run finished whole, with its recording and its figures
    let r = &runs[0];
    assert_eq!(r["status"], "ok", "{r:#}");
    assert_eq!(
        (r["cpus"].as_u64(), r["repeat"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        r["kernel_release"]
            .as_str()
            .is_some_and(|s| s.starts_with("6."))
    );
    let file = dir.join(r["file"].as_str().unwrap());
    assert!(file.is_file(), "{}", file.display());
    let wl = r["cid_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mm"] == r["workload_mm"])
        .expect("the workload's metrics");
    assert_eq!(wl["compactions"]["source"], "capture", "{wl:#}");
    assert!(wl["scan_cost_us"]["count"].as_u64() > Some(0), "{wl:#}");
    assert!(r["model_agreement"]["checked"].as_u64() > Some(0));
    // every planned run that did not finish is named, none is averaged in silence
    let missing = v["missing"].as_array().unwrap();
    let ok = runs.iter().filter(|r| r["status"] == "ok").count();
    assert_eq!(ok + missing.len(), 3, "{v:#}");
    assert!(!missing.is_empty());
    assert_eq!(v["summary"][0]["finished"], ok);
    assert!(text.contains("missing runs"), "{text}");
    assert!(dir.join("experiment.svg").is_file());
    // the report again from the recordings: the same finished runs
    let again = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["vm", "--report"])
        .arg(&dir)
        .args(["--json"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    let w: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(w["runs"][0]["cid_metrics"], r["cid_metrics"]);
    assert_eq!(w["missing"].as_array().unwrap().len(), missing.len());
}

/// The report of an experiment made from recordings alone (`--report DIR`, no VM): real
/// captures of the stock 6.18.15 kernel and of the seed-000 kernel at 16 vCPUs, two runs each
/// (one stopped by Ctrl-C, left out and named as missing): medians and spread per kernel, the
/// ratios, the side-by-side table, a figure that parses.
#[test]
fn a_report_from_recordings_alone() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("experiment-report");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("traces/kernels");
    let files = [
        ("A", "k6.18.15-c16-burst.ftrace.txt.zst"),
        ("B", "k6.18.15-cidscope-seed000-c16-burst.ftrace.txt.zst"),
        ("B", "k6.18.15-cidscope-seed000-c16-churn.ftrace.txt.zst"),
    ];
    let mut runs = Vec::new();
    for (i, (k, f)) in files.iter().enumerate() {
        std::fs::copy(root.join(f), dir.join(f)).unwrap();
        runs.push(serde_json::json!({
            "kernel": k, "cpus": 16, "repeat": if i == 2 { 2 } else { 1 },
            "status": if i == 2 { "stopped" } else { "ok" }, "file": f,
            "accel": "tcg", "wall_s": 10.0, "events": 1
        }));
    }
    let exp = serde_json::json!({
        "experiment": {"kernels": ["A", "B"], "cpus": [16], "repeat": 2, "workload": "burst",
                        "duration_s": 1.0, "started_unix_s": 1, "wall_s": 30.0},
        "runs": runs
    });
    std::fs::write(dir.join("experiment.json"), exp.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["vm", "--report"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // A's second run was never made and B's was stopped: missing, exit 1
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("6.18.15+deb13-cloud-amd64 @16 (1/2 runs)"),
        "{text}"
    );
    assert!(
        text.contains("6.18.15-cidscope-seed000 @16 (1/2 runs)"),
        "{text}"
    );
    assert!(text.contains("span_excess_mean"), "{text}");
    assert!(text.contains("compactions_resume"), "{text}");
    assert!(
        text.contains("6.18.15-cidscope-seed000 / 6.18.15+deb13-cloud-amd64 at 16 vCPUs"),
        "{text}"
    );
    assert!(text.contains("missing runs"), "{text}");
    assert!(text.contains("TCG"), "{text}");
    let v = json(&dir.join("experiment.json")).unwrap();
    assert_eq!(v["missing"].as_array().unwrap().len(), 2, "{v:#}");
    let seed = &v["summary"][1];
    assert_eq!(
        (seed["finished"].as_u64(), seed["planned"].as_u64()),
        (Some(1), Some(2))
    );
    // the seed kernel's compactions come from the capture (its cid_scan probes), mostly resumes
    assert!(
        seed["metrics"]["compactions_resume"]["median"].as_f64() > Some(0.0),
        "{seed:#}"
    );
    assert_eq!(
        v["summary"][0]["metrics"]["compactions_resume"]["median"].as_f64(),
        Some(0.0)
    );
    let svg = std::fs::read_to_string(dir.join("experiment.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the figure is well-formed XML");
    assert!(doc.descendants().filter(|n| n.has_tag_name("path")).count() >= 2);
}
