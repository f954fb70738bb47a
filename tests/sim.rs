//! The simulator: determinism, the recorded trace replaying to the same run, and the
//! `cidscope sim` command line.

use cidscope::model::policies::{JiffiesClock, Params, PolicyKind, PolicyRun, replay};
use cidscope::sim::{SimConfig, Workload, record, simulate};
use cidscope::sources::{LoadOptions, load_bytes};
use std::process::Command;

const MS: u64 = 1_000_000;

fn updates(run: &PolicyRun) -> Vec<(u64, u32, u16, i32)> {
    run.updates
        .iter()
        .map(|u| (u.ts, u.tid, u.cpu, u.cid))
        .collect()
}

fn compactions(run: &PolicyRun) -> Vec<String> {
    run.compactions
        .iter()
        .map(|c| {
            format!(
                "{} {} {:?} {:?} {} {:?} {:?}",
                c.ts, c.tid, c.trigger, c.batch, c.scanned, c.freed, c.lazied
            )
        })
        .collect()
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    for w in [Workload::Hackbench, Workload::Churn, Workload::Hogs] {
        let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 16, w);
        cfg.duration_ns = 200 * MS;
        let a = simulate(&cfg);
        let b = simulate(&cfg);
        assert_eq!(a.trace.events, b.trace.events, "{w:?}");
        assert_eq!(updates(&a.run), updates(&b.run));
        assert_eq!(compactions(&a.run), compactions(&b.run));
        assert_eq!(
            serde_json::to_string(&a.summary).unwrap(),
            serde_json::to_string(&b.summary).unwrap()
        );
        if w == Workload::Hackbench {
            cfg.seed = 2;
            let c = simulate(&cfg);
            assert!(a.trace.events != c.trace.events, "{w:?}: the seed matters");
        }
    }
}

/// The recorded ftrace text replays, through the ordinary reader and `replay`, to the run the
/// simulator produced: the same updates, compactions and slot history, all agreeing.
#[test]
fn recorded_trace_replays_to_the_same_run() {
    let cases = [
        (PolicyKind::LazyCompact, Workload::Hogs, 8),
        (PolicyKind::LazyCompact, Workload::Churn, 4),
        (PolicyKind::ResumeBatch, Workload::Cyclictest, 32),
        (PolicyKind::ResumeBatch, Workload::Hackbench, 8),
        (PolicyKind::ResumeBatch, Workload::Spinner, 8),
        (PolicyKind::OwnerMode, Workload::Churn, 4),
        (PolicyKind::OwnerMode, Workload::Hackbench, 8),
    ];
    for (kind, w, cpus) in cases {
        let mut cfg = SimConfig::new(kind, cpus, w);
        cfg.duration_ns = 250 * MS;
        if w == Workload::Hackbench {
            cfg.threads = Some(12);
        }
        let out = simulate(&cfg);
        let mut text = Vec::new();
        record::write(&mut text, &out.trace, "test").unwrap();
        let trace = load_bytes("recorded", &text, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{kind} {w:?}: {e}"));
        assert_eq!(trace.events.len(), out.trace.events.len(), "{kind} {w:?}");
        // the simulated kernel counts jiffies at the boundaries (its idle CPUs stop ticking
        // without a `tick_stop`): its recordings replay with `--jiffies boundaries`
        let params = Params {
            hz: cfg.params.hz,
            jiffies: JiffiesClock::Boundaries,
            ..Params::default()
        };
        let run = replay(&trace, kind, &params);
        assert_eq!(updates(&run), updates(&out.run), "{kind} {w:?}: updates");
        assert_eq!(
            compactions(&run),
            compactions(&out.run),
            "{kind} {w:?}: compactions"
        );
        assert_eq!(run.slots, out.run.slots, "{kind} {w:?}: slots");
        assert_eq!(run.modes, out.run.modes, "{kind} {w:?}: modes");
        let a = run.agreement.unwrap();
        assert_eq!(
            a.agreed, a.checked,
            "{kind} {w:?}: {:#?}",
            a.first_disagreement
        );
        assert!(a.checked > 0);
        // the simulator's own trace replays identically too (no text in between)
        let again = replay(&out.trace, kind, &params);
        assert_eq!(updates(&again), updates(&out.run));
    }
}

fn cidscope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
}

/// The contract command of issue #3: 16 batches per complete scan, complete scans in the
/// seed's 1.5–2 ms range.
#[test]
fn cli_sim_cyclictest_json() {
    let out = cidscope()
        .args([
            "sim",
            "--cpus",
            "128",
            "--policy",
            "resume-batch",
            "--batch",
            "8",
            "--workload",
            "cyclictest",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["batches_per_complete_scan"], 16);
    assert!(v["complete_scans"].as_u64().unwrap() > 0);
    let scan = &v["complete_scan_ms"];
    assert!(scan["min"].as_f64().unwrap() >= 1.5);
    assert!(scan["max"].as_f64().unwrap() <= 2.0);
    for key in [
        "batch_delay_us",
        "cids_used",
        "weight",
        "rseq_updates",
        "compactions",
    ] {
        assert!(!v[key].is_null(), "{key}");
    }
    assert!(v["compactions"]["tick"].is_u64() && v["compactions"]["resume"].is_u64());
    for k in ["min", "median", "max"] {
        assert!(v["batch_delay_us"][k].is_f64());
    }
    for k in ["min", "max", "mean"] {
        assert!(v["weight"][k].is_number());
    }
}

#[test]
fn cli_sim_record_then_stats_replays_it() {
    let dir = std::env::temp_dir().join(format!("cidscope-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("churn.ftrace.txt");
    let out = cidscope()
        .args([
            "sim",
            "--cpus",
            "4",
            "--policy",
            "lazy-compact",
            "--workload",
            "churn",
            "--duration",
            "300ms",
            "--json",
            "--record",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sim: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = cidscope()
        .args(["stats", "--json", "--policy", "lazy-compact"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &st["model_agreement"];
    assert_eq!(a["policy"], "lazy-compact");
    assert_eq!(a["checked"], a["agreed"]);
    assert_eq!(a["checked"], sim["rseq_updates"]);
    assert!(a["first_disagreement"].is_null());
    // per-process compactions, and the same total as the simulation
    let mut tick = 0;
    for p in st["processes"].as_array().unwrap() {
        tick += p["compactions"]["tick"].as_u64().unwrap();
        assert!(p["compactions"]["resume"].is_u64());
    }
    assert_eq!(tick, sim["compactions"]["tick"].as_u64().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_flags_parse_and_errors_name_what_was_expected() {
    // --policy and --compare are global flags: accepted before the file
    let out = cidscope()
        .args([
            "stats",
            "--policy",
            "owner-mode",
            "--compare",
            "lazy-compact,resume-batch",
        ])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/v5-workers-rt.ftrace.txt"
        ))
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["model_agreement"]["policy"], "owner-mode");
    assert_eq!(st["compare"].as_array().unwrap().len(), 3);
    // sim without a model, or with a bad CPU list
    let out = cidscope()
        .args(["sim", "--cpus", "4", "--workload", "hogs", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--policy"));
    let out = cidscope()
        .args([
            "sim",
            "--cpus",
            "4",
            "--workload",
            "hogs",
            "--policy",
            "lazy-compact",
            "--nohz-full",
            "9",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--nohz-full"));
    // without --json, sim opens the TUI; without a terminal that is a clear message, exit 2
    let out = cidscope()
        .args([
            "sim",
            "--cpus",
            "2",
            "--workload",
            "hogs",
            "--policy",
            "lazy-compact",
            "--duration",
            "10ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the TUI needs a terminal"));
}

#[test]
fn visited_scan_scope_shortens_complete_scans() {
    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Hackbench);
    cfg.duration_ns = 400 * MS;
    let all = simulate(&cfg).summary;
    cfg.params.scan = cidscope::model::policies::ScanScope::Visited;
    let visited = simulate(&cfg).summary;
    assert_eq!(all.batches_per_complete_scan, Some(16));
    assert!(visited.batches_per_complete_scan.unwrap() < 16);
    assert!(visited.complete_scan_ms.unwrap().median < all.complete_scan_ms.unwrap().median);
}
