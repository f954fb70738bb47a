//! Every capture of the corpus folders under every policy family, inference off and on:
//! predicted, agreed, inferred steps, invariant breaks and the replay times.
//!
//! `cargo run --release --example corpus_table -- [DIR...]` (default traces/kernels and
//! traces/kernels-plain; a folder's README rows name each capture's kernel and CONFIG_HZ, a
//! file without a row is replayed with the kernel and HZ its own header names). `ONLY=own`
//! replays only the kernel's own policy; `CHECK=1` checks every invariant after every event;
//! `KNOWN=1` tells the replay the kernel's release as `--kernel-version` does (a capture with a
//! header names it anyway).
use cidscope::model::kernel::model_for_kernel;
use cidscope::model::policies::{InferSteps, Params, PolicyKind, PolicyRun, replay};
use std::path::Path;
use std::time::Instant;

struct Row {
    file: String,
    kernel: String,
    hz: u32,
}

fn rows(dir: &Path) -> Vec<Row> {
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
    let mut out: Vec<Row> = readme
        .lines()
        .filter(|l| l.starts_with("| `k"))
        .filter_map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            Some(Row {
                file: c.get(1)?.trim_matches('`').to_string(),
                kernel: c.get(2)?.to_string(),
                hz: c.get(3)?.parse().ok()?,
            })
        })
        .collect();
    // files without a row name their kernel in their header (`cidscope vm --record`)
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".ftrace.txt"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for n in names {
        if !out.iter().any(|r| r.file == n) {
            out.push(Row {
                file: n,
                kernel: String::new(),
                hz: 0,
            });
        }
    }
    out
}

fn family(p: PolicyKind) -> &'static str {
    match p {
        PolicyKind::OwnerMode => "7.x",
        _ => "6.x",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dirs: Vec<String> = if args.is_empty() {
        vec!["traces/kernels".into(), "traces/kernels-plain".into()]
    } else {
        args
    };
    let own_only = std::env::var("ONLY").is_ok_and(|v| v == "own");
    let check = std::env::var_os("CHECK").is_some();
    println!(
        "file\tkernel\tpolicy\town\tchecked\tpredicted\tagreed\tsteps\tbreaks_plain\tbreaks\tplain_ms\tinferred_ms\tevents"
    );
    for d in dirs {
        for r in rows(Path::new(&d)) {
            let path = Path::new(&d).join(&r.file);
            let Ok(trace) = cidscope::sources::load(&path, &Default::default()) else {
                eprintln!("{}: cannot load", path.display());
                continue;
            };
            let kernel = if r.kernel.is_empty() {
                trace.kernel_release.clone().unwrap_or_default()
            } else {
                r.kernel.clone()
            };
            let hz = if r.hz > 0 {
                r.hz
            } else {
                trace.kernel_hz.unwrap_or(0)
            };
            let Some(m) = model_for_kernel(&kernel, trace.kernel_scan_batch) else {
                eprintln!("{}: kernel {kernel:?} unknown", r.file);
                continue;
            };
            let own = m.policy;
            for policy in [
                PolicyKind::LazyCompact,
                PolicyKind::ResumeBatch,
                PolicyKind::OwnerMode,
            ] {
                if own_only && Some(policy) != own {
                    continue;
                }
                let base = Params {
                    hz,
                    // KNOWN=1: the kernel's release given (as `--kernel-version` would)
                    kernel_policy: if std::env::var_os("KNOWN").is_some() {
                        own
                    } else {
                        None
                    },
                    version: m.variant.unwrap_or_default(),
                    futex_hash_ref: m.futex_hash_ref,
                    batch: m.scan_batch.unwrap_or(Params::default().batch),
                    check_invariants: check,
                    ..Params::default()
                };
                let time = |infer| {
                    let p = Params {
                        infer,
                        ..base.clone()
                    };
                    let t = Instant::now();
                    let run = replay(&trace, policy, &p);
                    (run, t.elapsed().as_secs_f64() * 1e3)
                };
                let (plain, plain_ms) = time(InferSteps::Off);
                if std::env::var_os("SHOWV").is_some() {
                    let mut kinds: std::collections::BTreeMap<String, (usize, String)> =
                        Default::default();
                    for v in &plain.violations {
                        let k = kinds.entry(v.invariant.to_string()).or_default();
                        k.0 += 1;
                        if k.1.is_empty() {
                            k.1 = format!("{} at {}", v.detail, v.ts);
                        }
                    }
                    for (k, (n, d)) in kinds {
                        eprintln!("{}: {} x{n}, first: {d}", r.file, k);
                    }
                }
                let (run, ms) = time(InferSteps::Auto);
                let fresh = |r: &PolicyRun| {
                    r.agreement
                        .as_ref()
                        .map_or((0, 0), |a| (a.fresh.agreed, a.fresh.checked))
                };
                let a = run.agreement.as_ref();
                let steps = a.map_or(0, |a| a.inferred_steps.len());
                let predicted = a.map_or(0, |a| a.predicted_fresh.agreed);
                assert_eq!(
                    predicted,
                    fresh(&plain).0,
                    "{}: predicted is the plain replay",
                    r.file
                );
                let (agreed, checked) = fresh(&run);
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{:.1}\t{}",
                    r.file,
                    kernel,
                    policy.id(),
                    if Some(policy) == own {
                        "own"
                    } else if own.map(family) == Some(family(policy)) {
                        "variant"
                    } else {
                        "wrong"
                    },
                    checked,
                    predicted,
                    agreed,
                    steps,
                    plain.violations.len(),
                    run.violations.len(),
                    plain_ms,
                    ms,
                    trace.events.len()
                );
            }
        }
    }
}
