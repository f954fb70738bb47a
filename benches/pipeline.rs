//! The stages of a replay, timed: parse, index build, seek, frame render.
//! `cargo bench --bench pipeline`. Inputs are synthesized (testing::synth_ftrace), so the
//! figures do not depend on files outside the repository; scripts/bench.sh compares with
//! `wc -l`, `trace-cmd report` and `perf script` on real files.

use cidscope::events::Trace;
use cidscope::sources::{LoadOptions, load_bytes};
use cidscope::timeline::Timeline;
use cidscope::ui::{app::App, keys::Action, view};
use divan::{Bencher, black_box};
use ratatui::{Terminal, backend::TestBackend};
use std::sync::OnceLock;

fn main() {
    divan::main();
}

/// 1 M events of ftrace text (~120 MB).
fn text_1m() -> &'static [u8] {
    static T: OnceLock<Vec<u8>> = OnceLock::new();
    T.get_or_init(|| cidscope::testing::synth_ftrace(1_000_000, 8, 40, 10, 1))
}

/// 10 M events: the 1 M capture repeated ten times, shifted in time.
fn trace_10m() -> &'static Trace {
    static T: OnceLock<Trace> = OnceLock::new();
    T.get_or_init(cidscope::testing::synth_trace_10m)
}

fn timeline_10m() -> &'static Timeline {
    static T: OnceLock<Timeline> = OnceLock::new();
    T.get_or_init(|| Timeline::build(trace_10m()))
}

#[divan::bench(args = [1, 2])]
fn parse_ftrace_text_1m(b: Bencher, threads: usize) {
    let data = text_1m();
    b.counter(divan::counter::BytesCount::new(data.len()))
        .bench(|| {
            let opts = LoadOptions {
                threads: Some(threads),
                ..Default::default()
            };
            black_box(load_bytes("synth", data, &opts).expect("load"))
        });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn index_build_10m(b: Bencher) {
    let t = trace_10m();
    b.counter(divan::counter::ItemsCount::new(t.events.len()))
        .bench(|| black_box(Timeline::build(t)));
}

#[divan::bench]
fn seek_10m(b: Bencher) {
    let t = trace_10m();
    let tl = timeline_10m();
    let mut x: u64 = 12345;
    b.bench_local(|| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (x >> 11) as usize % t.events.len();
        black_box(tl.state_after(t, i))
    });
}

/// One frame at 240×60 with 10 M events, at zooms from the whole trace to 1 µs per column.
#[divan::bench(args = ["whole", "1ms/col", "1us/col"])]
fn frame_render_10m(b: Bencher, zoom: &str) {
    let t = trace_10m();
    let app = {
        // The App owns its trace and index; build them once per zoom.
        let mut app = App::with_timeline(t.clone(), Timeline::build(t));
        let cols = 240 - 6;
        app.state.view.cursor = t.events.len() / 2;
        match zoom {
            "1ms/col" => app.state.view.span = 1_000_000 * cols,
            "1us/col" => app.state.view.span = 1_000 * cols,
            _ => {}
        }
        app.state.follow_cursor();
        app.apply(Action::StepNext);
        app
    };
    let mut term = Terminal::new(TestBackend::new(240, 60)).expect("terminal");
    b.bench_local(|| {
        term.draw(|f| view::draw(f, &app)).expect("draw");
    });
}

/// `stats`' summary of 10 M events with and without `cid_metrics` (docs/metrics.md): what the
/// metrics add to `stats`.
#[divan::bench(args = [false, true], sample_count = 5, sample_size = 1)]
fn stats_summary_10m(b: Bencher, cid_metrics: bool) {
    let t = trace_10m();
    b.counter(divan::counter::ItemsCount::new(t.events.len()))
        .bench(|| {
            let mut s = cidscope::stats::Summarizer::new(t);
            if !cid_metrics {
                s = s.without_cid_metrics();
            }
            s.feed(t.events.iter(), t);
            black_box(s.finish(t))
        });
}

/// `stats`' text summary (streamed, as `cidscope stats` runs it) of captures of many tasks,
/// one rseq_update each, 4 threads per process (`scripts/make-tasks.sh N 4`): its cost per
/// task. Peak memory is measured by `scripts/mem-bench.sh`.
#[divan::bench(args = [100_000, 400_000], sample_count = 3, sample_size = 1)]
fn stats_tasks(b: Bencher, ntasks: u32) {
    let text = cidscope::testing::synth_tasks(ntasks, 4);
    let dir = std::env::temp_dir().join(format!("cidscope-bench-tasks-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("tasks-{ntasks}.ftrace.txt"));
    std::fs::write(&path, &text).expect("write the synthetic capture");
    let opts = cidscope::sources::LoadOptions::default();
    b.counter(divan::counter::ItemsCount::new(ntasks as usize))
        .bench(|| {
            let opened = cidscope::sources::open(&path, &opts).expect("open");
            black_box(
                cidscope::stats::compute_streaming_with(&opened, &opts, false).expect("stats"),
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
}
