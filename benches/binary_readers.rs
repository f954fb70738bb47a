//! Throughput of the perf.data and trace.dat readers (load into canonical events, from memory).
//!
//! `cargo bench --bench binary_readers` runs on the captures in `traces/`. To include the 40 s
//! benchmark captures (not in git; `scripts/capture-binary.sh /tmp/cidbench bench` makes
//! `bench.perf.data` and `bench.trace.dat`), set `CIDSCOPE_BENCH_DIR=/tmp/cidbench`.

use cidscope::sources::{self, LoadOptions};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use std::path::PathBuf;

fn main() {
    divan::main();
}

fn input(name: &str) -> Option<(Vec<u8>, usize)> {
    let path = if let Some(big) = name.strip_prefix("big:") {
        PathBuf::from(std::env::var("CIDSCOPE_BENCH_DIR").ok()?).join(big)
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("traces")
            .join(name)
    };
    let data = std::fs::read(path).ok()?;
    let events = sources::load_bytes(name, &data, &LoadOptions::default())
        .ok()?
        .events
        .len();
    Some((data, events))
}

fn run(bencher: Bencher, name: &str) {
    let Some((data, events)) = input(name) else {
        eprintln!("{name}: not present, skipped");
        return;
    };
    let opts = LoadOptions::default();
    bencher
        .counter(BytesCount::new(data.len()))
        .counter(ItemsCount::new(events))
        .bench(|| {
            sources::load_bytes(name, divan::black_box(&data), &opts)
                .map(|t| t.events.len())
                .unwrap_or(0)
        });
}

#[divan::bench(args = ["cyclictest.perf.data", "cyclictest-pipe.perf.data", "big:bench.perf.data"], sample_count = 20)]
fn perf_data(bencher: Bencher, name: &str) {
    run(bencher, name);
}

#[divan::bench(args = ["cyclictest.trace.dat", "cyclictest-v7.trace.dat", "big:bench.trace.dat"], sample_count = 20)]
fn trace_dat(bencher: Bencher, name: &str) {
    run(bencher, name);
}
