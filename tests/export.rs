//! Perfetto (Chrome JSON) and CSV export, parsed back and checked against the source capture.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

fn export(file: &str) -> (Value, String) {
    let dir = std::env::temp_dir().join(format!(
        "cidscope-export-{}-{}",
        std::process::id(),
        file.len()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let json = dir.join("out.json");
    let csv = dir.join("out.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["export", file, "--perfetto"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let c = std::fs::read_to_string(&csv).expect("csv");
    (v, c)
}

/// (ts_ns, cpu, tid, mm_cid) of every rseq_update, read from the capture text directly.
fn rseq_updates(file: &str) -> Vec<(u64, u64, u64, i64)> {
    let text = std::fs::read_to_string(file).expect("capture");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.contains(" rseq_update: ")) {
        let lb = line.find(" [").expect("cpu column");
        let cpu: u64 = line[lb + 2..lb + 5].parse().expect("cpu");
        let head = line[..lb].trim_end();
        let head = head.rsplit_once(" (").map_or(head, |h| h.0).trim_end();
        let tid: u64 = head.rsplit_once('-').expect("pid").1.parse().expect("tid");
        let ts_s = line[lb + 6..].split(": ").next().expect("ts");
        let ts_s = ts_s.split_whitespace().last().expect("ts");
        let (sec, frac) = ts_s.split_once('.').expect("ts");
        let ts = sec.parse::<u64>().expect("sec") * 1_000_000_000
            + frac.parse::<u64>().expect("frac") * 1000;
        let cid: i64 = line
            .rsplit_once("mm_cid=")
            .expect("cid")
            .1
            .trim()
            .parse()
            .expect("cid");
        out.push((ts, cpu, tid, cid));
    }
    out
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().expect("traceEvents")
}

#[test]
fn perfetto_tracks_counters_and_names_match_the_capture() {
    let file = "traces/hackbench-pipe.ftrace.txt";
    let (v, _) = export(file);
    let ev = events(&v);
    // a named track per CPU in the CPUs process
    let cpu_tracks: Vec<&Value> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0)
        .collect();
    assert_eq!(cpu_tracks.len(), 2);
    assert_eq!(cpu_tracks[1]["args"]["name"], "CPU 1");
    // the process of tgid 3082 is named
    assert!(ev.iter().any(|e| {
        e["ph"] == "M"
            && e["name"] == "process_name"
            && e["pid"] == 3082
            && e["args"]["name"]
                .as_str()
                .is_some_and(|n| n.contains("tgid 3082"))
    }));
    // every rseq_update of the capture lies inside a CPU slice named after its CID, held by its task
    let mut slices: BTreeMap<u64, Vec<(f64, f64, String, u64)>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "X" && e["pid"] == 0) {
        slices
            .entry(e["tid"].as_u64().expect("tid"))
            .or_default()
            .push((
                e["ts"].as_f64().expect("ts"),
                e["dur"].as_f64().expect("dur"),
                e["name"].as_str().expect("name").to_string(),
                e["args"]["tid"].as_u64().expect("task"),
            ));
    }
    let updates = rseq_updates(file);
    assert_eq!(updates.len(), 7386);
    let mut checked = 0;
    for (ts, cpu, tid, cid) in updates {
        let t = ts as f64 / 1000.0;
        let list = &slices[&cpu];
        let i = list.partition_point(|s| s.0 <= t);
        // the slice starting at or before the update (updates at the very end have no extent)
        if let Some(s) = i.checked_sub(1).map(|k| &list[k])
            && t < s.0 + s.1
        {
            assert_eq!(s.2, format!("CID {cid}"), "update at {t} on CPU {cpu}");
            assert_eq!(s.3, tid);
            checked += 1;
        }
    }
    assert!(checked >= 7380, "checked {checked}");
    // a weight counter per process, never above the CPU count
    let counters: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "C").collect();
    assert!(counters.iter().any(|c| c["pid"] == 3082));
    assert!(
        counters
            .iter()
            .all(|c| c["args"]["weight"].as_u64().expect("w") <= 2)
    );
    assert_eq!(v["displayTimeUnit"], "ns");
}

#[test]
fn lost_events_become_instants() {
    let (v, _) = export("traces/lost-events.trace_pipe.txt");
    let instants: Vec<&Value> = events(&v).iter().filter(|e| e["ph"] == "i").collect();
    assert_eq!(instants.len(), 5);
    let total: u64 = instants
        .iter()
        .map(|e| e["args"]["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(total, 4230);
    assert!(
        instants
            .iter()
            .any(|e| e["name"] == "lost 477 events" && e["tid"] == 1)
    );
}

#[test]
fn csv_has_a_row_per_event() {
    let (_, csv) = export("traces/odd-comm.ftrace.txt");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("index,ts_ns,cpu,tid,comm,event,tgid,mm_cid,details")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 20449);
    // comms with commas or quotes stay one field; rseq_update rows carry the CID
    let r = rows
        .iter()
        .find(|r| r.contains(",rseq_update,"))
        .expect("an rseq_update row");
    assert!(
        r.split(',')
            .nth(7)
            .is_some_and(|c| c.parse::<i32>().is_ok()),
        "{r}"
    );
    assert!(rows.iter().any(|r| r.contains("a ==> b")));
}

#[test]
fn model_triggers_become_instants_with_policy() {
    let dir = std::env::temp_dir().join(format!("cidscope-export-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let json = dir.join("m.json");
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "export",
            "traces/v3-spinner.ftrace.txt",
            "--policy",
            "lazy-compact",
            "--perfetto",
        ])
        .arg(&json)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let compactions: Vec<&Value> = events(&v)
        .iter()
        .filter(|e| {
            e["ph"] == "i"
                && e["args"]["policy"] == "lazy-compact"
                && e["args"]["trigger"].is_string()
        })
        .collect();
    // the same count `stats --policy` reports
    let st = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "stats",
            "--json",
            "--policy",
            "lazy-compact",
            "traces/v3-spinner.ftrace.txt",
        ])
        .output()
        .expect("run");
    let s: Value = serde_json::from_slice(&st.stdout).expect("stats");
    let total: u64 = s["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .filter_map(|p| p["compactions"].as_object())
        .map(|c| c["tick"].as_u64().unwrap_or(0) + c["resume"].as_u64().unwrap_or(0))
        .sum();
    assert!(total > 0);
    assert_eq!(compactions.len() as u64, total);
}

/// `export --svg`: a well-formed SVG (parsed by a real XML parser) with a lane per CPU holding
/// CID boxes of the process, the weight path, the bound, a time axis and a legend; --from/--to
/// choose the window and --tgid the process.
#[test]
fn svg_has_a_lane_per_cpu_and_the_weight_path() {
    let dir = std::env::temp_dir().join(format!("cidscope-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("lanes.svg");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cidscope"))
            .args(["export", "traces/hackbench-pipe.ftrace.txt", "--svg"])
            .arg(&out)
            .args(extra)
            .output()
            .expect("run")
    };
    let o = run(&["--from", "0", "--to", "20ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).expect("svg");
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    let lanes: Vec<_> = doc.descendants().filter(|n| class(n, "lane")).collect();
    assert_eq!(lanes.len(), 2, "a lane per CPU of the capture");
    for (cpu, lane) in lanes.iter().enumerate() {
        assert_eq!(lane.attribute("data-cpu"), Some(cpu.to_string().as_str()));
        let label = lane
            .descendants()
            .find(|n| n.tag_name().name() == "text")
            .and_then(|n| n.text());
        assert_eq!(label, Some(format!("CPU{cpu}").as_str()));
    }
    let boxes: Vec<_> = doc.descendants().filter(|n| class(n, "cid")).collect();
    assert!(boxes.len() > 10, "CID boxes: {}", boxes.len());
    for b in &boxes {
        let cid: i32 = b
            .attribute("data-cid")
            .expect("cid")
            .parse()
            .expect("number");
        assert!((0..2).contains(&cid), "CIDs stay below the 2 possible CPUs");
        let x: f64 = b.attribute("x").expect("x").parse().expect("x");
        assert!((64.0..=1184.0).contains(&x), "inside the plot: {x}");
        assert!(b.attribute("fill").is_some_and(|f| f.starts_with('#')));
        assert!(b.descendants().any(|n| n.tag_name().name() == "title"));
    }
    let weight = doc
        .descendants()
        .find(|n| class(n, "weight"))
        .expect("the weight path");
    assert_eq!(weight.tag_name().name(), "path");
    let d = weight.attribute("d").expect("d");
    assert!(
        d.starts_with('M') && d.contains(" H") && d.contains(" V"),
        "{d}"
    );
    assert!(doc.descendants().any(|n| class(&n, "bound")));
    assert!(doc.descendants().any(|n| class(&n, "legend")));
    let ticks: Vec<&str> = doc
        .descendants()
        .filter(|n| class(n, "axis"))
        .flat_map(|a| a.descendants())
        .filter_map(|n| n.text())
        .filter(|t| t.starts_with('+'))
        .collect();
    assert!(ticks.len() >= 4, "{ticks:?}");
    assert!(text.contains("(20.000 ms)"), "the window is named");
    // another process by --tgid; an unknown one is refused naming it
    let o = run(&["--tgid", "1385"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if o.status.success() {
        let t = std::fs::read_to_string(&out).expect("svg");
        assert!(t.contains("tgid 1385"), "{t}");
    } else {
        assert!(err.contains("--tgid 1385"), "{err}");
    }
    let o = run(&["--tgid", "4000000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--tgid 4000000"));
    let o = run(&["--from", "30ms", "--to", "10ms"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
