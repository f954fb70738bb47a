//! The terminal UI: state ([`app`]), input ([`keys`], [`input`]), drawing ([`view`],
//! [`widgets`]) and the terminal's lifecycle ([`terminal`]).

pub mod app;
pub mod input;
pub mod keys;
pub mod search;
pub mod terminal;
pub mod theme;
pub mod view;
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

/// Runs the TUI on a loaded capture until the user quits.
pub fn run(trace: Trace, opts: UiOptions) -> std::io::Result<()> {
    let mut app = App::new(trace);
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    run_app(app)
}

pub fn run_app(mut app: App) -> std::io::Result<()> {
    let mut guard = terminal::TerminalGuard::enter()?;
    let mut drag = input::Drag::default();
    // Test hook: the terminal-restore tests need a real panic inside the running TUI.
    let panic_for_test = std::env::var_os("CIDSCOPE_TEST_PANIC").is_some();
    while !app.quit && !guard.stopped() {
        guard.terminal.draw(|f| view::draw(f, &app))?;
        if panic_for_test {
            panic!("CIDSCOPE_TEST_PANIC is set: panicking inside the TUI on purpose");
        }
        // Poll with a timeout so a SIGTERM is noticed even without input.
        if !event::poll(Duration::from_millis(100))? {
            continue;
        }
        let ev = event::read()?;
        let size = guard.terminal.size()?;
        let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
        input::handle(&mut app, &ev, area, &mut drag);
    }
    Ok(())
}
