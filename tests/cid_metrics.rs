//! `cid_metrics` (docs/metrics.md): values computed by hand on small captures, what a capture
//! that cannot measure a figure says instead of a 0, and the figures of every capture of real
//! kernels in traces/kernels/ held to what must be true of them.

mod common;

use serde_json::Value;

fn metrics_of(v: &Value) -> &Vec<Value> {
    v["cid_metrics"].as_array().expect("cid_metrics is a list")
}

fn one(v: &Value, tgid: u64) -> &Value {
    metrics_of(v)
        .iter()
        .find(|m| m["tgid"] == tgid)
        .unwrap_or_else(|| panic!("no cid_metrics for tgid {tgid}: {v:#}"))
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-6)
}

/// traces/metrics-burst.ftrace.txt (4 CPUs, tgid 100): threads 100–103 run from 1.000 s with
/// CIDs 0–3; at 1.050 s 100–102 sleep, 103 runs on with CID 3 until its update at 1.300 s says
/// 0; it sleeps at 1.400 s.
/// - running: 1.000–1.400 s = 0.4 s; span excess 0 for 50 ms, 3 (CID 3 + 1 − 1 thread) for
///   250 ms, 0 for 100 ms: mean 3·0.25/0.4 = 1.875, max 3;
/// - the level (most threads at once over 100 ms) falls from 4 to 1 at 1.150 s, dated back to
///   1.050 s; the CIDs are below 1 at 1.300 s: one fall, 250 ms;
/// - one CID change (103: 3 → 0) over 0.3 s of thread life (the others reported once): 3.333/s.
///
/// Its rseq_update lines read `.....`, as a kernel before 6.19 prints them: one with
/// interrupts off (`d`) would show the 6.19+ family, whose model `stats` would then run.
#[test]
fn hand_computed_values_of_a_burst() {
    let v = common::stats(&common::capture("metrics-burst.ftrace.txt"));
    let m = one(&v, 100);
    assert_eq!(m["max_cid"], 3);
    assert!(close(&m["span_excess_mean"], 1.875), "{m:#}");
    assert_eq!(m["span_excess_max"], 3);
    assert!(close(&m["running_s"], 0.4), "{m:#}");
    let l = &m["compaction_latency_ms"];
    assert_eq!(
        (l["count"].as_u64(), l["unresolved"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(close(&l["p50"], 250.0) && close(&l["max"], 250.0), "{l:#}");
    assert_eq!(m["cid_changes"], 1);
    assert!(close(&m["cid_changes_per_thread_s"], 3.333), "{m:#}");
    // no call of task_mm_cid_work and no model: null, and said so
    assert!(m["compactions"].is_null() && m["scan_cost_us"].is_null());
    let said = m["unmeasured"].to_string();
    assert!(said.contains("compactions"), "{said}");
    assert!(v["cid_metrics_notes"].to_string().contains("scan_cost_us"));
}

/// traces/metrics-graph-seed.ftrace.txt: a function_graph capture of the seed kernel (16 CPUs,
/// batches of 8: two per complete scan), by hand:
/// - 100 returns to user twice and calls task_mm_cid_work for nothing (2 µs, 3 µs): the first
///   call shows a kprobe handler inside it (8 of its 10 µs), the tracer's, not the call's;
/// - 101, just switched in, returns (resume) and scans batch 0 (19 µs, it called
///   sched_mm_cid_remote_clear); after a tick it returns again and scans batch 1 (15 µs),
///   3.891 ms after batch 0 ended, completing the scan 3.925 ms after it began;
/// - after another tick, 101 scans a new batch 0 (25 µs; its cid_remote_clear probe names CPU 2):
///   a compaction the tick asked for.
#[test]
fn hand_computed_scan_calls_of_the_seed_kernel() {
    let (code, out, err) = common::cidscope(&[
        "stats",
        "--json",
        "--policy",
        "observed",
        common::capture("metrics-graph-seed.ftrace.txt")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = one(&v, 100);
    let c = &m["compactions"];
    assert_eq!(
        (&c["tick"], &c["resume"], &c["unknown"], &c["source"]),
        (
            &Value::from(1),
            &Value::from(1),
            &Value::from(0),
            &Value::from("capture")
        )
    );
    assert_eq!(
        (&c["calls"], &c["scanning_calls"], &c["early_exits"]),
        (&Value::from(5), &Value::from(3), &Value::from(2))
    );
    let s = &m["scan_cost_us"];
    assert_eq!(s["count"], 5);
    // calls 2, 3, 15, 19, 25 µs
    assert!(close(&s["p50"], 15.0) && close(&s["max"], 25.0), "{s:#}");
    assert!(close(&s["scanning"]["p50"], 19.0), "{s:#}");
    assert!(close(&s["early_exit"]["p50"], 2.0), "{s:#}");
    assert_eq!(s["batch_cpus"], 8);
    let b = s["per_batch"].as_array().unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(
        (&b[0]["batch"], &b[0]["count"]),
        (&Value::from(0), &Value::from(2))
    );
    assert!(close(&b[1]["max"], 15.0), "{b:?}");
    assert!(close(&s["batch_gap_us"]["max"], 3891.0), "{s:#}");
    assert!(close(&s["complete_scan_ms"]["max"], 3.925), "{s:#}");
}

/// Without a figure's events the figure is null and the reason is given, never 0.
#[test]
fn what_a_capture_cannot_measure_it_says() {
    // no sched_switch: who runs at once is unknown
    let text = std::fs::read_to_string(common::capture("metrics-burst.ftrace.txt")).unwrap();
    let no_switch: String = text
        .lines()
        .filter(|l| !l.contains("sched_switch"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let p = dir.join("metrics-no-switch.ftrace.txt");
    std::fs::write(&p, no_switch).unwrap();
    let v = common::stats(&p);
    let m = one(&v, 100);
    for k in [
        "span_excess_mean",
        "span_excess_max",
        "compaction_latency_ms",
    ] {
        assert!(m[k].is_null(), "{k}: {m:#}");
    }
    assert!(
        m["unmeasured"].to_string().contains("sched_switch"),
        "{m:#}"
    );
    // the CID changes need no switch
    assert_eq!(m["cid_changes"], 1);
    // no rseq_update: no process to measure, and the note says why
    let v = common::stats(&common::capture("kernel-doc-funcgraph-abstime.ftrace.txt"));
    assert!(metrics_of(&v).is_empty());
    assert!(
        v["cid_metrics_notes"]
            .to_string()
            .contains("no rseq_update"),
        "{v:#}"
    );
    // no TGID column: no process known
    let v = common::stats(&common::capture("cyclictest.ftrace.txt"));
    assert!(metrics_of(&v).is_empty());
    assert!(
        v["cid_metrics_notes"]
            .to_string()
            .contains("no process is known")
    );
    // the text form never prints a 0 for what it could not measure
    let (_, text, _) = common::cidscope(&["stats", p.to_str().unwrap()]);
    assert!(text.contains("not measured: span_excess"), "{text}");
    assert!(!text.contains("span excess    mean 0"), "{text}");
}

/// Every capture of traces/kernels/ (real kernels at 4–64 vCPUs, with the CID probes): a
/// metrics object per process with CIDs, values within their bounds, the probes' compactions
/// from the capture with the trigger the kernel's call site allows.
#[test]
fn every_kernel_capture_has_sound_metrics() {
    let dir = common::traces().join("kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".ftrace.txt.zst"))
        .collect();
    files.sort();
    assert!(files.len() >= 100, "{} captures", files.len());
    let (mut with_compactions, mut seed_resume, mut falls) = (0, 0, 0);
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let v = common::stats(f);
        let ncpus = v["ncpus"].as_f64().unwrap();
        let dur_s = v["duration_ns"].as_f64().unwrap() / 1e9;
        let procs: Vec<&Value> = v["processes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["rseq_updates"].as_u64() > Some(0))
            .collect();
        let ms = metrics_of(&v);
        assert_eq!(
            ms.len(),
            procs.len(),
            "{name}: one metrics object per process"
        );
        for (p, m) in procs.iter().zip(ms) {
            assert_eq!(p["mm"], m["mm"], "{name}");
            let cids = p["cids"].as_array().unwrap();
            assert_eq!(m["max_cid"], *cids.last().unwrap(), "{name}");
            if let (Some(mean), Some(max)) = (
                m["span_excess_mean"].as_f64(),
                m["span_excess_max"].as_f64(),
            ) {
                assert!(0.0 <= mean && mean <= max && max < ncpus, "{name}: {m:#}");
                assert!(m["running_s"].as_f64().unwrap() <= dur_s + 1e-6, "{name}");
            }
            let l = &m["compaction_latency_ms"];
            if let Some(n) = l["count"].as_u64() {
                falls += n;
                assert_eq!(n == 0, l["p50"].is_null(), "{name}: {l}");
                if n > 0 {
                    let (p50, max) = (l["p50"].as_f64().unwrap(), l["max"].as_f64().unwrap());
                    assert!(
                        0.0 <= p50 && p50 <= max && max <= dur_s * 1e3,
                        "{name}: {l}"
                    );
                }
            }
            if let Some(r) = m["cid_changes_per_thread_s"].as_f64() {
                assert!(r >= 0.0, "{name}");
            }
            // no function_graph in the corpus: no scan cost, said so
            assert!(m["scan_cost_us"].is_null(), "{name}");
            let c = &m["compactions"];
            if c["source"] == "capture" {
                with_compactions += 1;
                let (tick, resume) = (c["tick"].as_u64().unwrap(), c["resume"].as_u64().unwrap());
                if name.contains("seed000") {
                    seed_resume += resume;
                } else if name.starts_with("k6.") {
                    // lazy-compact: the task work only the tick queues
                    assert_eq!(resume, 0, "{name}: {c}");
                    assert!(
                        tick + c["unknown"].as_u64().unwrap() > 0 || c["scanning_calls"] == 0,
                        "{name}"
                    );
                }
            }
        }
        assert!(
            v["cid_metrics_notes"].to_string().contains("scan_cost_us"),
            "{name}"
        );
    }
    // the probed 6.x captures show their scans; the seed kernel's are mostly resumes
    assert!(with_compactions >= 50, "{with_compactions}");
    assert!(seed_resume > 0);
    assert!(falls > 0);
}
