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
    assert_eq!(a.format, b.format, "{what}: format");
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
