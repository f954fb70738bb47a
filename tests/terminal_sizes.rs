//! Every view renders at every terminal size without a panic: 1..=40 columns × 1..=30 rows, and
//! random big ones. Each size is planned (`set_screen`, as the event loop does before a frame)
//! and drawn into a TestBackend; after the draw the buffer is the screen's size.

use cidscope::events::EventKind;
use cidscope::model::policies::{Params, PolicyKind, replay_all};
use cidscope::sources::live::RseqSample;
use cidscope::sources::{LoadOptions, load};
use cidscope::ui::app::App;
use cidscope::ui::keys::Action;
use cidscope::ui::samples::Samples;
use cidscope::ui::view;
use ratatui::layout::Rect;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;

fn app(file: &str) -> App {
    App::new(load(Path::new(file), &LoadOptions::default()).expect("load"))
}

fn with_models(file: &str, kinds: &[PolicyKind]) -> App {
    let t = load(Path::new(file), &LoadOptions::default()).expect("load");
    let runs = replay_all(&t, kinds, &Params::default());
    let mut a = App::new(t);
    a.state.set_models(runs);
    a
}

/// Each view of the TUI, by name, positioned somewhere interesting.
fn views() -> Vec<(&'static str, App)> {
    let mut v = Vec::new();
    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    for _ in 0..3 {
        a.apply(Action::ZoomIn);
    }
    for _ in 0..40 {
        a.apply(Action::StepNext);
    }
    v.push(("main", a));

    let mut a = with_models(
        "traces/v5-workers.ftrace.txt",
        &[PolicyKind::LazyCompact, PolicyKind::OwnerMode],
    );
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    v.push(("compare", a));

    let d = &cidscope::demo::DEMOS[0];
    let setup = (d.build)().expect("demo");
    v.push(("demo", cidscope::ui::run::demo_app(d.name, setup)));

    {
        use cidscope::sim::{SimConfig, Workload, simulate};
        let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 64, Workload::Cyclictest);
        cfg.threads = Some(32);
        cfg.duration_ns = 50_000_000;
        let out = simulate(&cfg);
        let mut a = App::new(out.trace);
        a.state.models.show_observed = false;
        a.state.set_models(vec![out.run]);
        a.apply(Action::NextScan);
        v.push(("sim", a));
    }

    {
        let t = load(
            Path::new("traces/hackbench-pipe.ftrace.txt"),
            &LoadOptions::default(),
        )
        .expect("load");
        let pid = 3082;
        let samples: Vec<RseqSample> = t
            .events
            .iter()
            .filter(|e| t.tasks.get(&e.tid).and_then(|m| m.tgid) == Some(pid))
            .filter_map(|e| match e.kind {
                EventKind::RseqUpdate { mm_cid, .. } => Some(RseqSample {
                    ts: e.ts + 1_000,
                    tid: e.tid,
                    cpu: e.cpu,
                    cid: mm_cid,
                }),
                _ => None,
            })
            .collect();
        let mut s = Samples::new(pid, true);
        s.add(&samples, &t, pid, t.ncpus_hint.unwrap_or(2), true);
        let mut a = App::new(t);
        a.state.samples = Some(s);
        a.state.refresh_summaries();
        a.apply(Action::NextCidChange);
        v.push(("live-like", a));
    }

    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    a.apply(Action::ToggleHelp);
    v.push(("help", a));

    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    a.apply(Action::ToggleLegend);
    v.push(("legend", a));

    let mut a = app("traces/v5-workers.ftrace.txt");
    a.apply(Action::PickProcess);
    v.push(("picker", a));

    let mut a = with_models("traces/v5-workers.ftrace.txt", &[PolicyKind::LazyCompact]);
    a.apply(Action::ToggleThreads);
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    v.push(("thread lanes", a));

    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    a.apply(Action::SetA);
    for _ in 0..50 {
        a.apply(Action::StepNext);
    }
    a.apply(Action::SetB);
    a.apply(Action::ToggleAccounting);
    v.push(("accounting", a));

    // no process known: the all-tasks view
    v.push(("all tasks", app("traces/cyclictest.ftrace.txt")));
    v
}

fn draw(name: &str, a: &mut App, w: u16, h: u16) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        a.set_screen(Rect::new(0, 0, w, h));
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        term.draw(|f| view::draw(f, a)).expect("draw");
        let area = term.backend().buffer().area;
        assert_eq!((area.width, area.height), (w, h));
    }));
    if let Err(e) = r {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("{name} at {w}x{h} panicked: {msg}");
    }
}

#[test]
fn every_view_at_every_small_size() {
    for (name, mut a) in views() {
        for w in 1..=40 {
            for h in 1..=30 {
                draw(name, &mut a, w, h);
            }
        }
    }
}

#[test]
fn every_view_at_narrow_and_flat_sizes() {
    // one dimension tiny, the other large: the lanes' label column and the pane stack
    for (name, mut a) in views() {
        for small in 1..=8 {
            for big in [41, 60, 80, 120, 200, 300] {
                draw(name, &mut a, small, big);
                draw(name, &mut a, big, small);
            }
        }
    }
}

#[test]
fn every_view_at_random_big_sizes() {
    // a fixed-seed xorshift: the same sizes every run, different ones per view
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for (name, mut a) in views() {
        for _ in 0..12 {
            let w = 1 + (next() % 400) as u16;
            let h = 1 + (next() % 150) as u16;
            draw(name, &mut a, w, h);
        }
    }
}
