//! The terminal UI: state ([`app`]), input ([`keys`]), drawing ([`view`], [`widgets`]) and the
//! terminal's lifecycle ([`terminal`]).

pub mod app;
pub mod keys;
pub mod terminal;
pub mod theme;
pub mod view;
pub mod widgets;

use crate::events::Trace;
use app::App;
use crossterm::event::{self, Event as TermEvent, KeyEventKind};
use std::time::Duration;

/// Runs the TUI on a loaded capture until the user quits.
pub fn run(trace: Trace, theme: theme::Theme) -> std::io::Result<()> {
    let mut app = App::new(trace);
    app.theme = theme;
    run_app(app)
}

pub fn run_app(mut app: App) -> std::io::Result<()> {
    let mut guard = terminal::TerminalGuard::enter()?;
    while !app.quit && !guard.stopped() {
        guard.terminal.draw(|f| view::draw(f, &app))?;
        // Poll with a timeout so a SIGTERM is noticed even without input.
        if !event::poll(Duration::from_millis(100))? {
            continue;
        }
        match event::read()? {
            TermEvent::Key(k) if k.kind != KeyEventKind::Release => {
                if let Some(a) = keys::action_for(&app.bindings, &k) {
                    app.apply(a);
                } else if app.show_help {
                    app.show_help = false;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
