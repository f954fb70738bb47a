//! Profiling aid: renders frames of a 10 M-event trace at one zoom.
use cidscope::ui::{app::App, keys::Action, view};
use ratatui::{Terminal, backend::TestBackend};
use std::time::Instant;

fn main() {
    let zoom = std::env::args().nth(1).unwrap_or_else(|| "whole".into());
    let t = cidscope::testing::synth_trace_10m();
    let t0 = Instant::now();
    let mut app = App::new(t);
    eprintln!("index {:?}", t0.elapsed());
    app.state.view.cursor = app.state.trace.events.len() / 2;
    match zoom.as_str() {
        "1ms" => app.state.view.span = 1_000_000 * 234,
        "1us" => app.state.view.span = 1_000 * 234,
        _ => {}
    }
    app.state.follow_cursor();
    app.apply(Action::StepNext);
    let mut term = Terminal::new(TestBackend::new(240, 60)).unwrap();
    let t0 = Instant::now();
    let n = 30;
    for _ in 0..n {
        term.draw(|f| view::draw(f, &app)).unwrap();
    }
    eprintln!("{zoom}: {:?} per frame", t0.elapsed() / n);
}
