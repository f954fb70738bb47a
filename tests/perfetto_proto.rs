//! `export --perfetto-proto`: the protobuf trace decoded by a decoder that shares nothing with
//! the writer (Python protobuf with Perfetto's own `perfetto_trace.proto`, as the `perfetto`
//! PyPI package ships it, through `scripts/pftrace-counts.py`), its counts held against
//! `stats --json` (CPU tracks = the CID bound, counter tracks = the processes, each process's
//! CIDs) and against the Chrome JSON export of the same capture (slices, counter values, and
//! the links from each CID's holder to its next, counted here from the JSON).
//!
//! Without Python's `perfetto` and `protobuf` modules the test says so and passes, unless
//! `CIDSCOPE_REQUIRE_PYTHON=1` (set by `.ci/run`, which installs them): then it fails.

mod common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn cidscope(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn python_ready() -> bool {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import google.protobuf; from perfetto.protos.perfetto.trace import perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CIDSCOPE_REQUIRE_PYTHON").as_deref() != Ok("1"),
            "python3 with the perfetto and protobuf modules is required (pip install perfetto protobuf)"
        );
        eprintln!("skipped: no python3 with the perfetto and protobuf modules");
    }
    ok
}

fn decode(pftrace: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pftrace-counts.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(pftrace)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "the decoder refused the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("counts")
}

/// Links from one holder of a (process, CID) to the next, counted from the Chrome JSON's
/// CPU slices in time order (a new holder: another task, or the same one on another CPU).
fn json_flow_links(json: &Value) -> u64 {
    let mut slices: Vec<(f64, u64, String, i64, u64)> = Vec::new();
    for e in json["traceEvents"].as_array().expect("events") {
        if e["ph"] == "X" && e["pid"] == 0 {
            let a = &e["args"];
            if let (Some(p), Some(c)) = (a["process"].as_str(), a["cid"].as_i64()) {
                let tid = a["tid"].as_u64().expect("tid");
                let cpu = e["tid"].as_u64().expect("cpu");
                slices.push((e["ts"].as_f64().expect("ts"), cpu, p.to_string(), c, tid));
            }
        }
    }
    slices.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut holder: BTreeMap<(String, i64), (u64, u64)> = BTreeMap::new();
    let mut links = 0;
    for (_, cpu, p, c, tid) in slices {
        match holder.insert((p, c), (tid, cpu)) {
            Some(h) if h != (tid, cpu) => links += 1,
            _ => {}
        }
    }
    links
}

fn check(file: &str, models: &[&str]) {
    let path = common::capture(file);
    let path = path.to_str().expect("path");
    let dir = std::env::temp_dir().join(format!("cidscope-pftrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pf = dir.join(format!("{file}.pftrace"));
    let js = dir.join(format!("{file}.json"));
    let mut args = vec!["export", path, "--perfetto-proto"];
    args.push(pf.to_str().expect("path"));
    args.extend(["--perfetto", js.to_str().expect("path")]);
    let joined = models.join(",");
    if !models.is_empty() {
        args.extend(["--compare", &joined]);
    }
    cidscope(&args);
    let counts = decode(&pf);
    let stats: Value =
        serde_json::from_slice(&cidscope(&["stats", "--json", path]).stdout).expect("stats");
    let json: Value =
        serde_json::from_slice(&std::fs::read(&js).expect("json")).expect("chrome json");
    let ncpus = stats["ncpus"].as_u64().expect("ncpus");
    let processes = stats["processes"].as_array().expect("processes");
    // tracks: a root per source, a CPU track per possible CPU and a weight counter per process
    assert_eq!(counts["root_tracks"], 1 + models.len() as u64, "{file}");
    let roots = counts["by_root"].as_object().expect("by_root");
    assert_eq!(roots.len(), 1 + models.len(), "{file}: {roots:?}");
    for (name, r) in roots {
        let n = |k: &str| r[k].as_u64().unwrap_or(0);
        assert_eq!(n("cpu_tracks"), ncpus, "{file}: {name}");
        assert_eq!(
            n("counter_tracks"),
            processes.len() as u64,
            "{file}: {name}"
        );
    }
    for m in models {
        assert!(
            roots.keys().any(|k| k.starts_with(&format!("model {m}:"))),
            "{file}: no track of model {m}: {roots:?}"
        );
    }
    // slices and counter values: those of the Chrome JSON export of the same capture
    let events = json["traceEvents"].as_array().expect("events");
    let x_cpu = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 0)
        .count() as u64;
    let c = events.iter().filter(|e| e["ph"] == "C").count() as u64;
    let observed = roots
        .iter()
        .find(|(k, _)| k.starts_with("CPUs"))
        .map(|(_, v)| v)
        .expect("the observed root");
    assert!(x_cpu > 0, "{file}: no slices");
    assert_eq!(observed["slices"], x_cpu, "{file}: slices");
    assert_eq!(
        observed["counter_values"].as_u64().unwrap_or(0),
        c,
        "{file}"
    );
    assert_eq!(
        observed["flow_links"].as_u64().unwrap_or(0),
        json_flow_links(&json),
        "{file}: flows"
    );
    // each process's CIDs in the slices are those stats reports for it
    let want: BTreeMap<String, BTreeSet<i64>> = processes
        .iter()
        .filter(|p| p["rseq_updates"].as_u64() > Some(0))
        .map(|p| {
            let cids = p["cids"].as_array().expect("cids");
            (
                p["label"].as_str().expect("label").to_string(),
                cids.iter().filter_map(Value::as_i64).collect(),
            )
        })
        .collect();
    let got: BTreeMap<String, BTreeSet<i64>> = counts["cids_by_process"]
        .as_object()
        .expect("cids")
        .iter()
        .map(|(k, v)| {
            let cids = v.as_array().expect("cids");
            (k.clone(), cids.iter().filter_map(Value::as_i64).collect())
        })
        .collect();
    assert_eq!(got, want, "{file}: CIDs per process");
    eprintln!(
        "{file}: {} tracks, {} slices, {} counter values, {} flow links, {} packets",
        counts["tracks"],
        counts["slices"],
        counts["counter_values"],
        counts["flow_links"],
        counts["packets"]
    );
}

#[test]
fn perfetto_proto_decodes_with_perfettos_schema_and_counts_match_stats() {
    if !python_ready() {
        return;
    }
    check("hackbench-pipe.ftrace.txt", &["lazy-compact", "owner-mode"]);
    check("cyclictest.trace.dat", &[]);
    check("cyclictest.perf.data", &["lazy-compact"]);
    check("lost-events.trace_pipe.txt", &[]);
}
