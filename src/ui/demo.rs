//! A demo in the TUI: the narrated steps, where the presenter is, and whether it plays.

use super::app::App;
use super::{UiOptions, run_app};
use crate::demo::{Setup, Step};
use crate::ui::app::MmSel;

pub struct DemoState {
    pub name: String,
    pub steps: Vec<Step>,
    pub current: usize,
    pub playing: bool,
    /// Trace time per second of real time.
    pub speed: u64,
    /// When the last frame played (None: not playing yet).
    pub last_tick: Option<std::time::Instant>,
}

/// An app showing a demo, at its first step.
pub fn app_for(name: &str, mut setup: Setup) -> App {
    // playing forward passes the moments in time order
    setup.steps.sort_by_key(|s| s.ts);
    let mut app = App::new(setup.trace);
    app.show_observed = setup.show_observed;
    if let Some(mm) = setup.mm
        && let Some(p) = app.mm_list.iter().position(|&m| m == mm)
    {
        app.mm_pos = p + 1;
        app.mm_auto = false;
    }
    app.set_models(setup.runs);
    debug_assert!(matches!(app.selected(), MmSel::Mm(_)) || setup.mm.is_none());
    app.demo = Some(DemoState {
        name: name.to_string(),
        steps: setup.steps,
        current: 0,
        playing: false,
        speed: setup.speed,
        last_tick: None,
    });
    app.go_to_step(0);
    app
}

/// Runs a demo in the TUI.
pub fn run_demo(name: &str, setup: Setup, opts: UiOptions) -> Result<(), String> {
    let mut app = app_for(name, setup);
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    run_app(app, &mut |app| {
        let now = std::time::Instant::now();
        let Some(d) = app.demo.as_mut() else {
            return;
        };
        if !d.playing {
            return;
        }
        let dt = d
            .last_tick
            .map_or(0, |t| now.duration_since(t).as_nanos() as u64);
        d.last_tick = Some(now);
        app.play(dt);
    })
    .map(|_| ())
}
