//! A search started by a CID probe's reading alone (docs/models.md §5.3): where every update
//! agrees, a value a probe read that the model contradicts is the only sign of a step that ran
//! away from its record, and the search places it as it would for an update.

mod common;

use common::agreement::checked_cut;

/// The first 11,785 events of a fresh probed 7.3.4 24-vCPU `churn` boot (stop 63, seed 5645
/// boot 11; traces/inference/README.md). 265's clone of 593 enters `sched_mm_cid_fork` at
/// 11.278912 and its CPU records nothing until the `cid_fork_done` at 11.284860; the five
/// exits in between (588, 589, 590, 586, 592) read `mm_cid.users` and `max_cids` without 593:
/// its add-user ran late inside the function. Every update agrees either way, so the search
/// never started and those eleven readings stayed one above the kernel's (2649/2660). Started
/// by the readings, it places 593's step at its window's end (`early_fork`).
#[test]
fn a_probe_reading_alone_starts_the_search_for_a_late_step() {
    let file = "inference/k7.3.4-c24-churn-probe-only-late-add.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.probe_checks(), (2660, 2660), "{}", c.a);
    assert_eq!(c.fresh, (458, 458), "{}", c.a);
    assert_eq!(c.predicted, 457, "{}", c.a);
    // (what the plain replay read, beside)
    let plain = &c.a["predicted_probe_checks"];
    assert_eq!(
        (&plain["checked"], &plain["matched"]),
        (&2660.into(), &2649.into())
    );
    assert!(
        c.steps.iter().any(|s| s.0 == "early_fork" && s.1 == 593),
        "{:?}",
        c.steps
    );
}

/// The same cut with its one disagreeing update (454 on CPU 1 at 10.919362, 2 where the plain
/// replay gives 1, a switch step found apart) set to the model's 1: every update agrees, and
/// only the probes' readings disagree. The inference still runs and keeps 593's step (before:
/// "nothing to infer", probe values 2649/2660).
#[test]
fn a_capture_whose_every_update_agrees_is_searched_for_its_probe_readings() {
    let path =
        common::traces().join("inference/k7.3.4-c24-churn-probe-only-late-add.ftrace.txt.zst");
    let packed = std::fs::read(&path).expect("the cut");
    let text = String::from_utf8(zstd::decode_all(&packed[..]).expect("zstd")).expect("utf-8");
    let from = "10.919362: rseq_update: cpu_id=1 node_id=0 mm_cid=2";
    assert_eq!(text.matches(from).count(), 1);
    let edited = text.replace(from, "10.919362: rseq_update: cpu_id=1 node_id=0 mm_cid=1");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("probe-only-{}.ftrace.txt", std::process::id()));
    std::fs::write(&out, edited).expect("write the edited cut");
    let p = out.to_str().expect("utf-8 path");
    let (code, json, err) = common::cidscope(&["stats", "--json", "--check-invariants", p]);
    let _ = std::fs::remove_file(&out);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let a = &v["model_agreement"];
    assert_eq!(v["model"]["violations"], 0, "{a}");
    assert_eq!(
        (&a["predicted"], &a["agreed"]),
        (&a["checked"], &a["checked"]),
        "{a}"
    );
    assert_eq!(a["predicted_probe_checks"]["matched"], 2649, "{a}");
    assert_eq!(a["probe_checks"]["matched"], 2660, "{a}");
    assert_eq!(a["probe_checks"]["checked"], 2660, "{a}");
    let steps = a["inferred_steps"].as_array().expect("steps");
    assert!(
        steps
            .iter()
            .any(|s| s["kind"] == "early_fork" && s["tid"] == 593),
        "{a}"
    );
}
