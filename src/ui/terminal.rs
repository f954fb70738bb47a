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
    signals: signal_hook::iterator::Handle,
}

/// How long the UI loop gets to leave on its own after a signal before the watchdog restores
/// the terminal and exits: crossterm can spin inside `poll` once the terminal is gone (stdin at
/// EOF after a hangup), never returning to the loop that checks `stop`.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
        let handle = signals.handle();
        let flag = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("signal-watchdog".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    flag.store(true, Ordering::Relaxed);
                    std::thread::sleep(SIGNAL_GRACE);
                    restore();
                    std::process::exit(128 + sig);
                }
            })?;
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
        Ok(TerminalGuard {
            terminal,
            stop,
            signals: handle,
        })
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        self.signals.close();
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
