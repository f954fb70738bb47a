//! Every `rseq_update` a kernel's model predicts wrongly, with the untraced steps the replay
//! placed (docs/models.md §5.3, §11): the list `stats --json` sums up as `model_agreement`.
//!
//! `cargo run --release --example model_misses -- FILE KERNEL_RELEASE HZ` (ALL=1 prints every checked update; MODES=1 also prints
//! owner-mode's mode changes; VIOLATIONS=1 checks the invariants and prints the first breaks; SCANS=1 the scans; PLAIN=1 replays without inferred steps); with CID probes, the model's state held against what they read.
use cidscope::events::EventKind;
use cidscope::model::kernel::model_for_kernel;
use cidscope::model::policies::{InferSteps, Params, replay};
use std::collections::HashMap;
use std::process::ExitCode;

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    let [_, file, release, hz] = a.as_slice() else {
        eprintln!("usage: model_misses FILE KERNEL_RELEASE HZ");
        return ExitCode::from(2);
    };
    let trace = match cidscope::sources::load(std::path::Path::new(file), &Default::default()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(m) = model_for_kernel(release, trace.kernel_scan_batch) else {
        eprintln!("{release}: not a kernel release cidscope knows");
        return ExitCode::from(2);
    };
    let (Some(policy), Ok(hz)) = (m.policy, hz.parse()) else {
        eprintln!("{release}: {}; HZ {hz}", m.reason);
        return ExitCode::from(2);
    };
    let params = Params {
        hz,
        version: m.variant.unwrap_or_default(),
        futex_hash_ref: m.futex_hash_ref,
        batch: m.scan_batch.unwrap_or(Params::default().batch),
        // MONO=1: the jiffies' phase from the ticks' CLOCK_MONOTONIC (`--mono-jiffies`)
        mono_jiffies: std::env::var_os("MONO").is_some(),
        // VIOLATIONS=1: the invariants checked (`--check-invariants`), the first breaks printed
        check_invariants: std::env::var_os("VIOLATIONS").is_some(),
        ..Params::default()
    };
    // PLAIN=1: the plain replay alone (model_agreement.predicted), no inferred steps
    let params = if std::env::var_os("PLAIN").is_some() {
        Params {
            infer: InferSteps::Off,
            ..params
        }
    } else {
        params
    };
    let run = replay(&trace, policy, &params);
    let predicted: HashMap<(u64, u32), i32> =
        run.updates.iter().map(|u| ((u.ts, u.tid), u.cid)).collect();
    // ALL=1: every checked update, agreeing or not
    let all = std::env::var_os("ALL").is_some();
    for e in trace.events.iter() {
        if let EventKind::RseqUpdate { mm_cid, .. } = e.kind
            && let Some(&p) = predicted.get(&(e.ts, e.tid))
            && (p != mm_cid || all)
        {
            let ts = e.ts as f64 / 1e9;
            println!(
                "{ts:.6} tid {} cpu {} observed {mm_cid} predicted {p}",
                e.tid, e.cpu
            );
        }
    }
    // SLOTS=T0,T1 (seconds): every slot change of the model in that span
    if let Some((a, b)) = std::env::var("SLOTS").ok().and_then(|v| {
        let (a, b) = v.split_once(',')?;
        Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?))
    }) {
        for c in &run.slots {
            let ts = c.ts as f64 / 1e9;
            if ts >= a && ts <= b {
                println!(
                    "slot {ts:.6} mm {} cpu {} tid {} cid {:?} {:?}",
                    c.mm.0, c.cpu, c.tid, c.cid, c.flags
                );
            }
        }
    }
    // SCANS=1: every compaction attempt that scanned (its task, CPU, what it freed or made lazy)
    if std::env::var_os("SCANS").is_some() {
        for c in run.compactions.iter().filter(|c| c.scanned) {
            println!(
                "scan {:.6} mm {} cpu {} tid {} freed {:?} lazied {:?} weight {}",
                c.ts as f64 / 1e9,
                c.mm.0,
                c.cpu,
                c.tid,
                c.freed,
                c.lazied,
                c.weight_after
            );
        }
    }
    if std::env::var_os("VIOLATIONS").is_some() {
        println!("violations {}", run.violations.len());
        for v in run.violations.iter().take(20) {
            println!(
                "violation {:.6} {}: {}",
                v.ts as f64 / 1e9,
                v.invariant,
                v.detail
            );
        }
    }
    if std::env::var_os("MODES").is_some() {
        for m in &run.modes {
            let ts = m.ts as f64 / 1e9;
            println!(
                "mode {ts:.6} mm {} word {:#x} users {} max_cids {} pcpu_thrs {}",
                m.mm.0, m.mode, m.users, m.max_cids, m.pcpu_thrs
            );
        }
    }
    if let Some(ag) = run.agreement {
        println!(
            "{} {}/{} (workload {}/{})",
            policy.id(),
            ag.agreed,
            ag.checked,
            ag.fresh.agreed,
            ag.fresh.checked
        );
        let pc = &ag.probe_checks;
        if pc.checked > 0 {
            println!("probe checks {}/{}", pc.matched, pc.checked);
        }
        for m in &pc.mismatches {
            println!(
                "probe {:.6} tid {} {} {}: kernel {} model {}",
                m.ts as f64 / 1e9,
                m.tid,
                m.probe,
                m.value,
                m.kernel,
                m.model
            );
        }
        for g in ag.trace_gaps {
            let (r, p) = (g.record_ts as f64 / 1e9, g.placed_ts as f64 / 1e9);
            println!(
                "gap tid {} record {r:.6} placed {p:.6}: {}",
                g.tid, g.reason
            );
        }
    }
    ExitCode::SUCCESS
}
