//! Owning the terminal: raw mode + alternate screen while the TUI runs, and the way back on every
//! exit path — normal quit (Drop), panic (hook), Ctrl-C (a key in raw mode, SIGINT otherwise)
//! and SIGTERM (a flag the event loop polls).

use crossterm::{
    cursor,
    event::{DisableMouseCapture, EnableMouseCapture},
    execute,
    terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode},
};
use ratatui::{Terminal, backend::CrosstermBackend};
use std::io::{self, Stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Puts the terminal back the way the shell expects it. Safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
}

/// Restores the terminal when dropped.
pub struct TerminalGuard {
    pub terminal: Term,
    /// Set by SIGTERM, SIGINT or SIGHUP: the event loop ends when it sees it.
    pub stop: Arc<AtomicBool>,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        let stop = Arc::new(AtomicBool::new(false));
        for sig in [
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, Arc::clone(&stop))?;
        }
        install_panic_hook();
        enable_raw_mode()?;
        let mut out = io::stdout();
        if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture, cursor::Hide) {
            restore();
            return Err(e);
        }
        let terminal = match Terminal::new(CrosstermBackend::new(out)) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        Ok(TerminalGuard { terminal, stop })
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Restore first, so the message lands on the normal screen in cooked mode.
            restore();
            prev(info);
        }));
    });
}
