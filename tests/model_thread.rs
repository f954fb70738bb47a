//! The TUI replays its models off the drawing path: the request starts a thread, frames are
//! drawn meanwhile (the title says `replaying…`), and the tick that finds the thread done takes
//! the runs in (the title then says what the model predicts by itself and with the steps the
//! inference placed).

use cidscope::model::kernel::Asked;
use cidscope::sources::{LoadOptions, load};
use cidscope::ui::app::App;
use cidscope::ui::models::ModelRequest;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;
use std::time::{Duration, Instant};

fn title(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(240, 30)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    let s = term.backend().to_string();
    s.lines().next().unwrap_or_default().to_string()
}

/// `traces/FILE` loaded, its model requested (the one its kernel names).
fn requested(file: &str) -> App {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(file);
    let trace = load(&path, &LoadOptions::default()).expect("load");
    let mut app = App::new(trace);
    app.state.models.request = Some(ModelRequest {
        asked: Asked::default(),
        others: Vec::new(),
    });
    app.state.run_requested_models();
    app
}

/// Ticks `app` until its model thread is done.
fn taken_in(app: &mut App) {
    let start = Instant::now();
    while app.state.models.running.is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the replay never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
        app.tick();
    }
}

#[test]
fn the_model_replays_in_a_thread_and_the_tick_takes_it_in() {
    // a capture that names its kernel (6.18.15): its model is chosen without a flag
    let mut app = requested("kernels/k6.18.15-c4-churn-resume.ftrace.txt.zst");
    // nothing is taken in before a tick, however fast the thread
    assert!(app.state.models.running.is_some(), "a thread replays");
    assert!(app.state.models.views.is_empty());
    let t = title(&app);
    assert!(
        t.contains("lazy-compact 6.14") && t.contains("replaying…"),
        "{t}"
    );
    taken_in(&mut app);
    assert_eq!(app.state.models.views.len(), 1, "the chosen model's run");
    let t = title(&app);
    assert!(!t.contains("replaying"), "{t}");
    assert!(
        t.contains("predicted ") && t.contains("inferred step"),
        "{t}"
    );
}

/// Where an inferred step changed what the CID probes' values agree with, the title says what
/// the plain replay read beside it (traces/inference/README.md: every update agrees, a late
/// add-user shows only in eleven readings).
#[test]
fn the_title_shows_the_probe_values_predicted_beside_those_with_the_steps() {
    let mut app = requested("inference/k7.3.4-c24-churn-probe-only-late-add.ftrace.txt.zst");
    taken_in(&mut app);
    let t = title(&app);
    assert!(t.contains("probes predicted 2649/2660, 2660/2660"), "{t}");
}
