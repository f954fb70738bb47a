//! The terminal UI: state ([`app`]), input ([`keys`], [`input`]), drawing ([`view`],
//! [`widgets`]) and the terminal's lifecycle ([`terminal`]).

pub mod app;
pub mod demo;
pub mod input;
pub mod keys;
pub mod live;
pub mod models;
pub mod search;
pub mod terminal;
pub mod theme;
pub mod view;
pub mod vm;
pub mod widgets;

use crate::events::Trace;
use app::App;
use crossterm::event;
use std::time::Duration;

/// How the TUI looks and reacts, from the command line and config files.
pub struct UiOptions {
    pub theme: theme::Theme,
    pub bindings: Vec<keys::Binding>,
}

/// Which CID models to show: `--policy P` shows P beside what the capture shows;
/// `--compare P1,P2` shows the listed ones (`observed` among them for the capture itself).
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    pub policies: Vec<crate::model::policies::PolicyKind>,
    pub show_observed: bool,
    pub params: crate::model::policies::Params,
}

/// Runs the TUI on a loaded capture until the user quits.
pub fn run(trace: Trace, opts: UiOptions) -> Result<(), String> {
    let mut app = App::new(trace);
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    run_app(app, &mut |_| {}).map(|_| ())
}

/// Runs the TUI on a simulated schedule and its model runs (`cidscope sim`).
pub fn run_sim(
    trace: Trace,
    runs: Vec<crate::model::policies::PolicyRun>,
    opts: UiOptions,
) -> Result<(), String> {
    let mut app = App::new(trace);
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    // The schedule's rseq_updates are the simulated policy's own predictions: the model lanes
    // (its slots) say more than repeating them as observed lanes.
    app.show_observed = false;
    app.set_models(runs);
    run_app(app, &mut |_| {}).map(|_| ())
}

/// Runs the TUI on an opened capture, reading it in the background: the first frame comes at
/// once with a progress bar, the view fills in as deltas arrive, and quitting during the load
/// is instant (the reader is told to stop and is not waited for).
pub fn run_opened(
    opened: crate::sources::Opened,
    load: crate::sources::LoadOptions,
    opts: UiOptions,
    models: ModelChoice,
) -> Result<(), String> {
    use std::sync::{Arc, mpsc};
    let progress = Arc::new(crate::sources::Progress::default());
    let mut app = App::loading(&opened.name, opened.format, Arc::clone(&progress));
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    if !models.policies.is_empty() {
        app.show_observed = models.show_observed;
        app.model_request = Some((models.policies, models.params));
    }
    // A small bound: the reader stays at most two segments ahead of the screen.
    let (tx, rx) = mpsc::sync_channel::<app::LoadMsg>(2);
    let lopts = crate::sources::LoadOptions {
        progress: Some(Arc::clone(&progress)),
        ..load
    };
    std::thread::Builder::new()
        .name("loader".into())
        .spawn(move || {
            let r = opened.stream(&lopts, &mut |d| {
                tx.send(app::LoadMsg::Delta(std::mem::take(d))).is_ok()
            });
            let _ = tx.send(app::LoadMsg::Done(r.map_err(|e| e.to_string())));
        })
        .map_err(|e| format!("cannot start the loader thread: {e}"))?;
    let r = run_app(app, &mut |app| {
        // Take what the reader has, without waiting for it.
        while let Ok(msg) = rx.try_recv() {
            app.on_load(msg);
        }
    });
    progress
        .cancel
        .store(true, std::sync::atomic::Ordering::Relaxed);
    r.map(|_| ())
}

/// The event loop: `tick` brings in new data before each frame (loader deltas, live batches).
/// Returns the app when the user quits.
pub(crate) fn run_app(mut app: App, tick: &mut dyn FnMut(&mut App)) -> Result<App, String> {
    let tio = |e: std::io::Error| format!("terminal: {e}");
    {
        use std::io::IsTerminal;
        if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
            return Err(
                "the TUI needs a terminal (stdin and stdout); for headless output use `cidscope stats`, `sim --json` or `live --json`"
                    .into(),
            );
        }
    }
    let mut guard = terminal::TerminalGuard::enter().map_err(tio)?;
    let mut drag = input::Drag::default();
    // Test hook: the terminal-restore tests need a real panic inside the running TUI.
    let panic_for_test = std::env::var_os("CIDSCOPE_TEST_PANIC").is_some();
    while !app.quit && !guard.stopped() {
        tick(&mut app);
        if app.quit {
            break;
        }
        let drawn = std::time::Instant::now();
        guard.terminal.draw(|f| view::draw(f, &app)).map_err(tio)?;
        let draw_ms = drawn.elapsed().as_millis() as u64;
        if panic_for_test {
            panic!("CIDSCOPE_TEST_PANIC is set: panicking inside the TUI on purpose");
        }
        // Poll with a timeout so a SIGTERM (and, while loading, new data) is noticed without
        // input.
        let playing = app.demo.as_ref().is_some_and(|d| d.playing);
        let wait = if app.loading.is_some() {
            // Frames of a trace still loading walk its lanes without summaries and share this
            // thread with indexing: spend at most a third of it drawing.
            (2 * draw_ms).clamp(30, 250)
        } else if app.live.is_some() || playing {
            30
        } else {
            100
        };
        if !event::poll(Duration::from_millis(wait)).map_err(tio)? {
            continue;
        }
        let ev = event::read().map_err(tio)?;
        let size = guard.terminal.size().map_err(tio)?;
        let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
        input::handle(&mut app, &ev, area, &mut drag);
    }
    drop(guard);
    match app.fatal.take() {
        Some(e) => Err(e),
        None => Ok(app),
    }
}
