//! Throughput of the CID models: simulator runs and capture replays, counted in model
//! (driver) events per second. `cargo bench --bench models`.

use cidscope::model::policies::{Params, PolicyKind, replay};
use cidscope::sim::{SimConfig, Workload, simulate};
use divan::Bencher;
use divan::counter::ItemsCount;

fn main() {
    divan::main();
}

fn cfg(kind: PolicyKind, cpus: u32, w: Workload, ms: u64) -> SimConfig {
    let mut c = SimConfig::new(kind, cpus, w);
    c.duration_ns = ms * 1_000_000;
    c
}

/// A whole simulation (schedule generation + model), 128 CPUs.
#[divan::bench(args = [PolicyKind::LazyCompact, PolicyKind::ResumeBatch, PolicyKind::OwnerMode], sample_count = 10)]
fn sim_hackbench_128cpus_200ms(b: Bencher, kind: PolicyKind) {
    let c = cfg(kind, 128, Workload::Hackbench, 200);
    let n = simulate(&c).run.model_events;
    b.counter(ItemsCount::new(n)).bench(|| simulate(&c));
}

#[divan::bench(sample_count = 10)]
fn sim_cyclictest_128cpus_1s(b: Bencher) {
    let c = cfg(PolicyKind::ResumeBatch, 128, Workload::Cyclictest, 1000);
    let n = simulate(&c).run.model_events;
    b.counter(ItemsCount::new(n)).bench(|| simulate(&c));
}

#[divan::bench(sample_count = 10)]
fn sim_hogs_8cpus_1s(b: Bencher) {
    let c = cfg(PolicyKind::LazyCompact, 8, Workload::Hogs, 1000);
    let n = simulate(&c).run.model_events;
    b.counter(ItemsCount::new(n)).bench(|| simulate(&c));
}

/// The model alone: replaying a simulated trace (no schedule generation).
#[divan::bench(args = [PolicyKind::LazyCompact, PolicyKind::ResumeBatch, PolicyKind::OwnerMode], sample_count = 10)]
fn replay_sim_trace_hackbench(b: Bencher, kind: PolicyKind) {
    let out = simulate(&cfg(kind, 128, Workload::Hackbench, 200));
    let p = Params {
        hz: 1000,
        ..Params::default()
    };
    let n = replay(&out.trace, kind, &p).model_events;
    b.counter(ItemsCount::new(n))
        .bench(|| replay(&out.trace, kind, &p));
}

/// A real capture (traces/v5-workers-rt.ftrace.txt) under lazy-compact.
#[divan::bench(sample_count = 10)]
fn replay_real_capture_v5(b: Bencher) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/v5-workers-rt.ftrace.txt"
    );
    let Ok(trace) = cidscope::sources::load(
        std::path::Path::new(path),
        &cidscope::sources::LoadOptions::default(),
    ) else {
        return;
    };
    let p = Params::default();
    let n = replay(&trace, PolicyKind::LazyCompact, &p).model_events;
    b.counter(ItemsCount::new(n))
        .bench(|| replay(&trace, PolicyKind::LazyCompact, &p));
}

/// A many-CPU kernel capture replayed with the search for untraced steps (docs/models.md §5.3,
/// §5.6): 6.12.117 at 64 vCPUs, `workers`, with the CID probes; and the 6.12.117 16-vCPU
/// `affinity` capture without them, whose search runs until its budget is spent.
#[divan::bench(args = ["kernels/k6.12.117-c64-workers.ftrace.txt.zst", "kernels-plain/k6.12.117-c16-affinity.ftrace.txt.zst"], sample_count = 5)]
fn replay_kernel_capture_searched(b: Bencher, name: &str) {
    use cidscope::model::policies::KernelVersion;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name);
    let Ok(trace) = cidscope::sources::load(&path, &cidscope::sources::LoadOptions::default())
    else {
        return;
    };
    let p = Params {
        hz: 250,
        version: KernelVersion::V6_4,
        ..Params::default()
    };
    let n = trace.events.len();
    b.counter(ItemsCount::new(n))
        .bench(|| replay(&trace, PolicyKind::LazyCompact, &p));
}
