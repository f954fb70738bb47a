//! Shared by the fuzz targets (fuzz/) and the test that replays their corpora
//! (tests/fuzz_corpus.rs): run a loaded trace through every later stage.

use crate::events::Trace;

/// Indexes, summarizes, checks, exports and renders a loaded trace. Panics only on a bug.
pub fn exercise(trace: &Trace) {
    std::hint::black_box(crate::stats::compute(trace));
    std::hint::black_box(crate::stats::check::run(trace));
    let tl = crate::timeline::Timeline::build_with_interval(trace, 64);
    if let Some(last) = trace.events.len().checked_sub(1) {
        std::hint::black_box(tl.state_after(trace, last / 2));
    }
    let mut csv = Vec::new();
    let _ = crate::export::csv::write(trace, &tl, &mut csv);
    std::hint::black_box(crate::export::perfetto::export(trace, &tl, &[]));
    let mut app = crate::ui::app::App::with_timeline(trace.clone(), tl);
    let backend = ratatui::backend::TestBackend::new(100, 30);
    let Ok(mut term) = ratatui::Terminal::new(backend);
    for action in [
        crate::ui::keys::Action::Last,
        crate::ui::keys::Action::ZoomIn,
        crate::ui::keys::Action::NextMm,
        crate::ui::keys::Action::NextCidChange,
        crate::ui::keys::Action::ToggleAccounting,
    ] {
        app.apply(action);
        let _ = term.draw(|f| crate::ui::view::draw(f, &app));
    }
}
