//! Seeking through checkpoints gives the same observed state as replaying from the start, at
//! any instant (property test over random instants of a synthetic and a real capture).

use cidscope::events::Trace;
use cidscope::model::observed::{Context, NoSink, ObservedState};
use cidscope::sources::{LoadOptions, load, load_bytes};
use cidscope::timeline::Timeline;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn synthetic() -> &'static Trace {
    static T: OnceLock<Trace> = OnceLock::new();
    T.get_or_init(|| {
        let data = cidscope::testing::synth_ftrace(60_000, 4, 5, 6, 3);
        load_bytes("synth", &data, &LoadOptions::default()).expect("synthetic trace")
    })
}

fn real() -> &'static Trace {
    static T: OnceLock<Trace> = OnceLock::new();
    T.get_or_init(|| {
        load(
            Path::new("traces/lost-events.trace_pipe.txt"),
            &LoadOptions::default(),
        )
        .expect("capture")
    })
}

fn replayed(trace: &Trace, ncpus: u32, upto: usize) -> ObservedState {
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut st = ObservedState::new(ncpus as usize);
    for e in trace.events.range(0..upto + 1) {
        st.apply(&e, &ctx, &mut NoSink);
    }
    st
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn checkpoint_seek_equals_replay(which in 0usize..2, frac in 0.0f64..1.0, interval in 1usize..5000) {
        let trace = if which == 0 { synthetic() } else { real() };
        let tl = Timeline::build_with_interval(trace, interval);
        let i = ((trace.events.len() - 1) as f64 * frac) as usize;
        prop_assert_eq!(tl.state_after(trace, i), replayed(trace, tl.ncpus, i));
    }
}
