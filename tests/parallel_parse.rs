//! The parallel parse (chunks stitched at line boundaries) and the streaming parse (deltas of
//! any size) give exactly the events, strings and tasks of the serial parse.

use cidscope::events::{StrId, Trace};
use cidscope::sources::{LoadOptions, load};
use proptest::prelude::*;
use std::path::Path;

fn load_with(file: &str, opts: LoadOptions) -> Trace {
    load(Path::new(file), &opts).expect("load")
}

fn same(a: &Trace, b: &Trace, what: &str) {
    assert_eq!(a.events.len(), b.events.len(), "{what}: event count");
    assert!(a.events == b.events, "{what}: events differ");
    assert_eq!(a.strings.len(), b.strings.len(), "{what}: strings");
    for i in 0..a.strings.len() as u32 {
        assert_eq!(
            a.strings.get(StrId(i)),
            b.strings.get(StrId(i)),
            "{what}: string {i}"
        );
    }
    assert_eq!(a.tasks, b.tasks, "{what}: tasks");
    assert_eq!(a.ncpus_hint, b.ncpus_hint, "{what}: ncpus");
    assert_eq!(a.warnings, b.warnings, "{what}: warnings");
    assert_eq!(a.origin, b.origin, "{what}: format");
}

const FILES: [&str; 5] = [
    "traces/hackbench-pipe.ftrace.txt",
    "traces/lost-events.trace_pipe.txt",
    "traces/odd-comm.ftrace.txt",
    "traces/truncated.ftrace.txt",
    "traces/churn.perf-script-F.txt",
];

#[test]
fn parallel_equals_serial_on_every_capture() {
    for f in FILES {
        let serial = load_with(
            f,
            LoadOptions {
                serial: true,
                ..Default::default()
            },
        );
        for threads in [2, 3, 7] {
            let par = load_with(
                f,
                LoadOptions {
                    threads: Some(threads),
                    ..Default::default()
                },
            );
            same(&serial, &par, &format!("{f} with {threads} threads"));
        }
    }
}

/// A trace.dat's CPUs read on several threads give the serial read's events and strings: the
/// strings each thread adds are numbered in the order the merge takes the units that show
/// them, whichever thread decoded which unit.
#[test]
fn a_trace_dat_read_on_threads_equals_the_serial_read() {
    for f in [
        "traces/cyclictest.trace.dat",
        "traces/cyclictest-v7.trace.dat",
        "traces/lost.trace.dat",
    ] {
        let serial = load_with(
            f,
            LoadOptions {
                serial: true,
                ..Default::default()
            },
        );
        for threads in [2, 3, 7] {
            // (which thread takes which CPU is a race: try it a few times)
            for _ in 0..5 {
                let par = load_with(
                    f,
                    LoadOptions {
                        threads: Some(threads),
                        ..Default::default()
                    },
                );
                same(&serial, &par, &format!("{f} with {threads} threads"));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_split_gives_the_serial_result(file in 0usize..FILES.len(), threads in 1usize..6, segment in 1usize..400_000) {
        let f = FILES[file];
        let serial = load_with(f, LoadOptions { serial: true, ..Default::default() });
        let split = load_with(f, LoadOptions { threads: Some(threads), segment_bytes: Some(segment), ..Default::default() });
        same(&serial, &split, &format!("{f}: {threads} threads, {segment}-byte segments"));
    }
}

/// A capture with a malformed line two thirds in: every split reports the same line, and the
/// deltas streamed before the error hold exactly the events before it.
#[test]
fn a_bad_line_is_reported_alike_by_every_split() {
    let good = std::fs::read("traces/hackbench-pipe.ftrace.txt").expect("read");
    let cut = good.len() * 2 / 3;
    let cut = cut
        + good[cut..]
            .iter()
            .position(|&b| b == b'\n')
            .expect("newline")
        + 1;
    let mut bad = good[..cut].to_vec();
    bad.extend_from_slice(b"this is not an event line\n");
    bad.extend_from_slice(&good[cut..]);
    let data: &'static [u8] = Box::leak(bad.into_boxed_slice());
    let serial = cidscope::sources::load_bytes(
        "bad.txt",
        data,
        &LoadOptions {
            serial: true,
            ..Default::default()
        },
    )
    .expect_err("serial parse must fail")
    .to_string();
    assert!(serial.contains("bad.txt:"), "{serial}");
    let before = cidscope::sources::load_bytes(
        "good.txt",
        &good[..cut],
        &LoadOptions {
            serial: true,
            ..Default::default()
        },
    )
    .expect("the lines before parse")
    .events
    .len();
    for (threads, segment) in [(2, 10_000), (3, 777), (2, 1 << 20), (7, 50_000)] {
        let opts = LoadOptions {
            threads: Some(threads),
            segment_bytes: Some(segment),
            ..Default::default()
        };
        let opened = cidscope::sources::open_static("bad.txt", data, &opts).expect("open");
        let mut n = 0;
        let err = opened
            .stream(&opts, &mut |d| {
                n += d.events.len();
                true
            })
            .expect_err("must fail")
            .to_string();
        assert_eq!(err, serial, "{threads} threads, {segment}-byte chunks");
        assert_eq!(n, before, "{threads} threads, {segment}-byte chunks");
    }
}

/// A sink that stops early ends the load at once, with the workers wound down (no hang).
#[test]
fn a_sink_that_stops_ends_the_parallel_load() {
    let opts = LoadOptions {
        threads: Some(2),
        segment_bytes: Some(5_000),
        ..Default::default()
    };
    let opened = cidscope::sources::open(Path::new("traces/hackbench-pipe.ftrace.txt"), &opts)
        .expect("open");
    let mut deltas = 0;
    opened
        .stream(&opts, &mut |_| {
            deltas += 1;
            deltas < 3
        })
        .expect("an early stop is no error");
    assert_eq!(deltas, 3);
}
