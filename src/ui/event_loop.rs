//! The event loop: the session's tick brings in new data before each frame, a frame is drawn,
//! and input is awaited as long as the session allows.

use super::app::App;
use super::error::UiError;
use super::{input, terminal, view};
use crossterm::event;

/// Runs `app` in the terminal until the user quits (or the terminal goes away). Returns the app,
/// for what its session holds (a live source to stop).
pub fn run_app(mut app: App) -> Result<App, UiError> {
    {
        use std::io::IsTerminal;
        // keys come from the controlling terminal when stdin is the capture (`cat F | cidscope -`)
        let keys = std::io::stdin().is_terminal() || std::fs::File::open("/dev/tty").is_ok();
        if !std::io::stdout().is_terminal() || !keys {
            return Err(UiError::NoTerminal);
        }
    }
    let started = std::time::Instant::now();
    // Measurement hook: `CIDSCOPE_FRAME_LOG=FILE` appends a line per frame (ms since the TUI
    // started, events loaded so far, ms the frame took to draw, whether the load goes on).
    let mut frame_log = std::env::var_os("CIDSCOPE_FRAME_LOG").and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let mut guard = terminal::TerminalGuard::enter()?;
    let mut drag = input::Drag::default();
    // Test hook: the terminal-restore tests need a real panic inside the running TUI.
    let panic_for_test = std::env::var_os("CIDSCOPE_TEST_PANIC").is_some();
    while !app.state.quit && !guard.stopped() {
        if std::mem::take(&mut app.state.suspend) {
            guard.suspend()?;
        }
        guard.service()?;
        let size = guard.terminal.size()?;
        app.set_screen(ratatui::layout::Rect::new(0, 0, size.width, size.height));
        app.tick();
        if app.state.quit {
            break;
        }
        let drawn = std::time::Instant::now();
        guard.terminal.draw(|f| view::draw(f, &app))?;
        let draw_ms = drawn.elapsed().as_millis() as u64;
        if let Some(f) = frame_log.as_mut() {
            use std::io::Write;
            let _ = writeln!(
                f,
                "{}\t{}\t{}\t{}",
                started.elapsed().as_millis(),
                app.state.trace.events.len(),
                draw_ms,
                if app.state.loading.is_some() {
                    "loading"
                } else {
                    "loaded"
                }
            );
        }
        if panic_for_test {
            panic!("CIDSCOPE_TEST_PANIC is set: panicking inside the TUI on purpose");
        }
        // Poll with a timeout so a SIGTERM (and new data) is noticed without input.
        if !event::poll(app.session.frame_wait(&app.state, draw_ms))? {
            continue;
        }
        let ev = event::read()?;
        let size = guard.terminal.size()?;
        let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
        input::handle(&mut app, &ev, area, &mut drag);
    }
    drop(guard);
    match app.state.fatal.take() {
        Some(e) => Err(UiError::Load(e)),
        None => Ok(app),
    }
}
