//! The replay's first pass run beside a trace.dat's load (`Opened::load_beside`: over the
//! events as the merge of its CPUs hands them over, before the store is whole) finds what the
//! first pass over the loaded trace finds, on every trace.dat of traces/; a load whose events
//! had to be sorted after it hands none over. A perf.data hands none over either: its events
//! are packed as they are decoded, so there is no last stage to run beside, and its replay
//! runs the pass itself.

mod common;

use cidscope::events::Trace;
use cidscope::model::policies::replay::{FirstPassOf, preexisting_tasks};
use cidscope::sources::{self, LoadOptions};

fn binaries() -> Vec<std::path::PathBuf> {
    let root = common::traces();
    let mut files = Vec::new();
    for dir in ["", "kernels", "kernels-plain", "inference", "bad"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let n = p.to_string_lossy().into_owned();
            if p.is_file() && (n.ends_with(".dat") || n.ends_with(".data")) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Whether the loaded trace's events go back in time somewhere (its load sorted them).
fn was_sorted(t: &Trace) -> bool {
    t.warnings.iter().any(|w| w.code == "timestamps-backwards")
}

#[test]
fn the_first_pass_beside_the_load_is_the_first_pass_over_the_trace() {
    let opts = LoadOptions::default();
    let (mut beside, mut refused, mut sorted, mut packed) = (0, 0, 0, 0);
    for p in binaries() {
        let name = p.display().to_string();
        let Ok(opened) = sources::open(&p, &opts) else {
            refused += 1;
            continue;
        };
        let Ok((trace, first)) = opened.load_beside(&opts, FirstPassOf::beside) else {
            refused += 1;
            continue;
        };
        // the same trace as a plain load
        let plain = sources::load(&p, &opts).expect("loads as it did beside");
        assert_eq!(plain.events.len(), trace.events.len(), "{name}: events");
        for (i, (a, b)) in plain.events.iter().zip(trace.events.iter()).enumerate() {
            assert_eq!(a, b, "{name}: event {i}");
        }
        if name.ends_with(".data") {
            assert!(
                first.is_none(),
                "{name}: a perf.data has no stage to run beside"
            );
            packed += 1;
            continue;
        }
        let Some(first) = first else {
            // (only a capture whose events came out of order hands no pass over)
            assert!(
                was_sorted(&trace),
                "{name}: no first pass beside, yet in order"
            );
            sorted += 1;
            continue;
        };
        // (the CPU count sizes the pass's state only: any count gives the same)
        for ncpus in [1, 64] {
            assert_eq!(
                first.of(&trace),
                Some(&preexisting_tasks(&trace, ncpus)),
                "{name}: the first pass ({ncpus} CPUs)"
            );
        }
        beside += 1;
    }
    assert!(
        beside >= 3 && packed >= 20,
        "only {beside} trace.dat had a first pass beside ({refused} refused), {packed} perf.data were read"
    );
    eprintln!(
        "{beside} with a first pass beside, {sorted} sorted after it, {packed} perf.data, {refused} refused"
    );
}

#[test]
fn a_first_pass_is_taken_only_for_the_capture_it_ran_over() {
    let root = common::traces();
    let opts = LoadOptions::default();
    let a = sources::open(&root.join("cyclictest.trace.dat"), &opts).expect("opens");
    let (ta, first) = a.load_beside(&opts, FirstPassOf::beside).expect("loads");
    let first = first.expect("a trace.dat in order has its first pass beside");
    assert!(first.of(&ta).is_some());
    let other = sources::load(&root.join("cyclictest.perf.data"), &opts).expect("loads");
    assert_eq!(first.of(&other), None, "another capture's events");
    // a text capture is read as a stream: its first pass runs on the trace, after the load
    let text = sources::open(
        &root.join("kernels-plain/k6.18.15-c8-forks.ftrace.txt"),
        &opts,
    )
    .expect("opens");
    let (_, none) = text.load_beside(&opts, FirstPassOf::beside).expect("loads");
    assert!(none.is_none());
}
