//! Captures of real kernels at many vCPUs, each replayed under the policy and variant of its
//! kernel (`model::kernel::model_for_kernel` of the README's kernel column and the capture's own
//! CONFIG_RSEQ_CID_SCAN_BATCH, HZ from its CONFIG_HZ column), every file of a folder with a row
//! in its README. A row's agreement cell says `P/N, A/N`: the model predicts P of the N
//! `rseq_update`s of the processes begun in the capture by itself (the plain replay), and agrees
//! with A of them with the untraced steps the inference places (docs/models.md §5.3):
//! - traces/kernels/: made by `cidscope vm` with the CID probes (docs/models.md §5.6);
//! - traces/kernels-plain/: captures without probes (tracepoints alone, as a box without
//!   fprobes gives them).
//!
//! A capture must predict and agree with at least as many as its row says, agree with no fewer
//! than it predicts, and place its steps inside their windows; every run is reported before the
//! test fails, so one run lists every row to raise or that fell.

use cidscope::model::kernel::model_for_kernel;
use cidscope::model::policies::{Params, PolicyKind, PolicyRun, batches_per_scan, replay};
use cidscope::sources::{LoadOptions, load};
use std::path::{Path, PathBuf};

struct Row {
    file: String,
    kernel: String,
    hz: u32,
    cpus: u32,
    /// The "policy variant" column's first word: the policy the kernel runs.
    policy: String,
    /// The plain replay's floor (`P` of `P/N, A/N`).
    predicted: u64,
    /// The floor with the inferred steps (`A`).
    agreed: u64,
    checked: u64,
}

/// The probed corpus.
const PROBED: &str = "traces/kernels";
/// The corpus without probes.
const PLAIN: &str = "traces/kernels-plain";

fn dir(which: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(which)
}

/// `P/N, A/N` (or `A/N` alone: predicted as agreed).
fn figures(cell: &str, line: &str) -> (u64, u64, u64) {
    let frac = |f: &str| -> (u64, u64) {
        let (a, c) = f
            .trim()
            .split_once('/')
            .unwrap_or_else(|| panic!("agreement cell of {line}"));
        (
            a.trim().parse().expect("agreed"),
            c.trim().parse().expect("checked"),
        )
    };
    match cell.split_once(',') {
        Some((p, a)) => {
            let ((p, n), (a, m)) = (frac(p), frac(a));
            assert_eq!(n, m, "{line}: one count of updates");
            (p, a, n)
        }
        None => {
            let (a, n) = frac(cell);
            (a, a, n)
        }
    }
}

fn rows(which: &str) -> Vec<Row> {
    let readme = std::fs::read_to_string(dir(which).join("README.md"))
        .unwrap_or_else(|e| panic!("{which}/README.md: {e}"));
    let mut out = Vec::new();
    for line in readme.lines().filter(|l| l.starts_with("| `k")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | file | kernel | HZ | vCPUs | workload | made | policy variant | predicted, agreed | dup |
        let (predicted, agreed, checked) = figures(cells[8], line);
        out.push(Row {
            file: format!("{which}/{}", cells[1].trim_matches('`')),
            kernel: cells[2].to_string(),
            hz: cells[3].parse().expect("CONFIG_HZ"),
            cpus: cells[4].parse().expect("vCPUs"),
            policy: cells[7].split(' ').next().unwrap_or("").to_string(),
            predicted,
            agreed,
            checked,
        });
    }
    out
}

#[test]
fn every_capture_has_a_row_and_the_names_say_kernel_and_cpus() {
    for (which, least) in [(PROBED, 40), (PLAIN, 50)] {
        let rows = rows(which);
        assert!(rows.len() >= least, "{which}: {} rows", rows.len());
        let mut files: Vec<String> = std::fs::read_dir(dir(which))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ftrace.txt") || n.ends_with(".ftrace.txt.zst"))
            .map(|n| format!("{which}/{n}"))
            .collect();
        files.sort();
        let mut listed: Vec<String> = rows.iter().map(|r| r.file.clone()).collect();
        listed.sort();
        assert_eq!(files, listed, "files of {which} vs README rows");
        for r in &rows {
            assert!(
                r.file
                    .starts_with(&format!("{which}/k{}-c{}-", r.kernel, r.cpus)),
                "{}: name k<ver>-c<cpus>-<workload>",
                r.file
            );
        }
    }
}

/// The probed corpus: every capture predicts and agrees with at least as many of its
/// processes' updates as its row says (all rows are replayed and reported before the test
/// fails).
#[test]
fn every_probed_capture_agrees_at_least_as_its_row_says() {
    agree_at_least_as_rows_say(rows(PROBED));
}

/// The corpus without probes, the same.
#[test]
fn every_plain_capture_agrees_at_least_as_its_row_says() {
    agree_at_least_as_rows_say(rows(PLAIN));
}

fn agree_at_least_as_rows_say(rows: Vec<Row>) {
    let (mut exact, mut exact_plain) = (0, 0);
    let mut report = String::new();
    let mut below = Vec::new();
    for r in rows {
        let (trace, policy, params) = load_row(&r);
        let run = replay(&trace, policy, &params);
        assert_eq!(run.params.cpus, r.cpus, "{}: possible CPUs", r.file);
        let a = run.agreement.expect("a replay has an agreement");
        let (p, g) = (a.predicted_fresh.agreed, a.fresh.agreed);
        let mark = match (p.cmp(&r.predicted), g.cmp(&r.agreed)) {
            (std::cmp::Ordering::Less, _) | (_, std::cmp::Ordering::Less) => "  (below its row)",
            (std::cmp::Ordering::Greater, _) | (_, std::cmp::Ordering::Greater) => {
                "  (above its row)"
            }
            _ => "",
        };
        report.push_str(&format!(
            "| `{}` | {policy} | {p}/{n}, {g}/{n} ({} steps){mark}\n",
            r.file.rsplit('/').next().unwrap_or(&r.file),
            a.inferred_steps.len(),
            n = a.fresh.checked
        ));
        assert_eq!(
            a.fresh.checked, r.checked,
            "{}: checked updates of processes begun in the capture",
            r.file
        );
        assert_eq!(
            a.predicted_fresh.checked, a.fresh.checked,
            "{}: predicted and agreed count the same updates",
            r.file
        );
        assert!(g >= p, "{}: inference lost updates: {p} -> {g}", r.file);
        assert!(
            !a.inferred_steps.is_empty() || g == p,
            "{}: {g} agreed without a step, {p} predicted",
            r.file
        );
        for st in &a.inferred_steps {
            assert!(
                st.window.from_ts <= st.placed_ts && st.placed_ts <= st.window.to_ts,
                "{}: {st:?} outside its window",
                r.file
            );
        }
        if p < r.predicted || g < r.agreed {
            below.push(format!(
                "{}: predicted {p}, agreed {g} of {}, the README row says {}, {}; first disagreement {:#?}",
                r.file, a.fresh.checked, r.predicted, r.agreed, a.first_disagreement
            ));
        }
        exact += (g == a.fresh.checked) as usize;
        exact_plain += (p == a.fresh.checked) as usize;
    }
    eprintln!("{report}{exact_plain} captures predicted at 100 %, {exact} agreed at 100 %");
    assert!(below.is_empty(), "{}", below.join("\n"));
}

/// trace.dat (its UNAME option) and perf.data (HEADER_OSRELEASE) name the kernel that recorded
/// them: the model of that kernel is chosen without --policy, and stats says so.
#[test]
fn binary_captures_name_their_kernel_and_choose_its_model() {
    for name in ["cyclictest.trace.dat", "cyclictest.perf.data"] {
        let f = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces")
            .join(name);
        let t = load(&f, &LoadOptions::default()).expect("a capture");
        assert_eq!(
            t.kernel_release.as_deref(),
            Some("6.18.44-fc-v782"),
            "{name}"
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
            .args(["stats", "--json"])
            .arg(&f)
            .output()
            .expect("cidscope runs");
        assert!(out.status.success(), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let m = &v["model_agreement"];
        assert_eq!(m["kernel_version"], "6.18.44-fc-v782", "{name}");
        assert_eq!(m["policy"], "lazy-compact", "{name}");
        assert_eq!(m["variant"], "6.14", "{name}");
        assert!(
            m["chosen_because"]
                .as_str()
                .is_some_and(|s| s.contains("release from the capture")),
            "{name}: {m}"
        );
        // --policy observed: the capture alone, no model run
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
            .args(["stats", "--json", "--policy", "observed"])
            .arg(&f)
            .output()
            .expect("cidscope runs");
        assert!(out.status.success(), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert!(
            v["model_agreement"].is_null(),
            "{name}: {}",
            v["model_agreement"]
        );
        assert!(v["events"].as_u64().is_some_and(|n| n > 0), "{name}");
    }
}

/// A row's capture, its kernel's policy (checked against the row's column) and the parameters
/// the kernel's own model runs with.
fn load_row(r: &Row) -> (cidscope::events::Trace, PolicyKind, Params) {
    let trace = load(&dir(".").join(&r.file), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", r.file));
    let m = model_for_kernel(&r.kernel, trace.kernel_scan_batch)
        .unwrap_or_else(|| panic!("{}: kernel", r.file));
    let policy = m
        .policy
        .unwrap_or_else(|| panic!("{}: {}", r.file, m.reason));
    assert_eq!(policy.id(), r.policy, "{}: the row's policy", r.file);
    let params = Params {
        hz: r.hz,
        version: m.variant.unwrap_or_default(),
        futex_hash_ref: m.futex_hash_ref,
        batch: m.scan_batch.unwrap_or(Params::default().batch),
        // (the kernel is known: its row names it, as --kernel-version does)
        kernel_policy: Some(policy),
        ..Params::default()
    };
    (trace, policy, params)
}

/// (agreed, checked) updates of the processes begun in the capture (the workload's).
fn workload_updates(run: &PolicyRun) -> (u64, u64) {
    let a = run.agreement.as_ref().expect("a replay has an agreement");
    (a.fresh.agreed, a.fresh.checked)
}

/// The seed-000 kernel (6.18.15 with the compaction-in-batches patches, CONFIG_RSEQ_CID_SCAN_BATCH
/// in the capture's header): every complete scan of the model has ceil(P/B) batches, batch k
/// of it scans CPUs (k-1)·B .. k·B, and on the burst the seed was written for the two policies
/// predict different CIDs (docs/models.md §3).
#[test]
fn the_seed_kernel_scans_in_batches_and_tells_the_policies_apart() {
    let seed: Vec<Row> = rows(PROBED)
        .into_iter()
        .chain(rows(PLAIN))
        .filter(|r| r.kernel.contains("seed000"))
        .collect();
    assert!(seed.len() >= 3, "{} seed-000 rows", seed.len());
    for r in &seed {
        let (trace, policy, params) = load_row(r);
        assert_eq!(
            trace.kernel_scan_batch,
            Some(8),
            "{}: the header's B",
            r.file
        );
        assert_eq!(policy, PolicyKind::ResumeBatch, "{}", r.file);
        let run = replay(&trace, policy, &params);
        let n = batches_per_scan(r.cpus, 8);
        assert_eq!(n, r.cpus.div_ceil(8));
        let complete: Vec<_> = run.scans.iter().filter(|s| s.end_ts.is_some()).collect();
        assert!(!complete.is_empty(), "{}: no complete scan", r.file);
        for s in &complete {
            assert_eq!(
                s.batches, n,
                "{}: a complete scan has ceil(P/B) batches",
                r.file
            );
        }
        for c in run.compactions.iter().filter(|c| c.scanned) {
            let (k, of) = c.batch.expect("resume-batch compactions are batches");
            assert_eq!(of, n, "{}", r.file);
            let want: Vec<u16> = ((k - 1) * 8..(k * 8).min(r.cpus))
                .map(|c| c as u16)
                .collect();
            assert_eq!(c.cpus_scanned, want, "{}: batch {k} of {n}", r.file);
        }
        eprintln!(
            "{}: {} complete scans of {n} batches, {} batches",
            r.file,
            complete.len(),
            run.compactions.iter().filter(|c| c.scanned).count()
        );
        if r.file.contains("-c16-burst") {
            let lazy = replay(&trace, PolicyKind::LazyCompact, &params);
            let (rb, checked) = workload_updates(&run);
            let (lc, _) = workload_updates(&lazy);
            assert!(
                rb > lc && lc * 10 < checked * 9,
                "{}: resume-batch {rb}, lazy-compact {lc} of {checked}",
                r.file
            );
        }
    }
}
