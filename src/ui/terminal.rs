//! Owning the terminal: raw mode + alternate screen while the TUI runs, and the way back on every
//! exit path — normal quit (Drop), panic (hook), Ctrl-C (a key in raw mode, SIGINT otherwise),
//! the catchable exit signals (a flag the event loop polls, a watchdog behind it) — and for a
//! while: SIGTSTP or Ctrl-Z suspends (terminal restored, process stopped), `fg` repaints.

use crossterm::{
    cursor,
    event::{DisableMouseCapture, EnableMouseCapture},
    execute,
    terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode},
};
use ratatui::{Terminal, backend::CrosstermBackend};
use std::io::{self, Stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

/// The signals that end the TUI, the terminal restored: each exits with status 128 + its number
/// (SIGTERM 143, SIGHUP 129, SIGINT 130, SIGQUIT 131, SIGUSR1 138, SIGUSR2 140). SIGPIPE is not
/// among them: Rust ignores it, so a write to a closed pipe is an error where it is made and a
/// `kill -PIPE` leaves the TUI running on an intact terminal.
pub const EXIT_SIGNALS: [i32; 6] = {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
    [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2]
};

/// The signal that ended the last TUI run, if one did: `main` exits with 128 + it once the
/// session's own cleanup (a live source stopped, a recording saved) is done.
static EXIT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signal that ended a TUI run (see [`EXIT_SIGNALS`]), if any.
pub fn exit_signal() -> Option<i32> {
    match EXIT_SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// What the signal thread tells the event loop.
#[derive(Default)]
struct Flags {
    /// An exit signal arrived: the event loop ends when it sees it.
    stop: AtomicBool,
    /// SIGTSTP arrived: the event loop suspends (restores the terminal and stops the process).
    suspend: AtomicBool,
    /// SIGCONT arrived (after any stop, ours or a SIGSTOP's): the terminal is taken again and the
    /// whole screen repainted.
    resumed: AtomicBool,
    /// The event loop left and restored the terminal: the watchdog leaves the exit to `main`
    /// (which may still be stopping a live source or saving a recording).
    left: AtomicBool,
}

/// Restores the terminal when dropped.
pub struct TerminalGuard {
    pub terminal: Term,
    flags: Arc<Flags>,
    signals: signal_hook::iterator::Handle,
}

/// How long the UI loop gets to leave on its own after a signal before the watchdog restores
/// the terminal and exits: crossterm can spin inside `poll` once the terminal is gone (stdin at
/// EOF after a hangup), never returning to the loop that checks `stop`.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// Raw mode, the alternate screen, mouse tracking and a hidden cursor.
fn take_terminal() -> io::Result<()> {
    enable_raw_mode()?;
    if let Err(e) = execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        cursor::Hide
    ) {
        restore();
        return Err(e);
    }
    Ok(())
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        use signal_hook::consts::{SIGCONT, SIGTSTP};
        let flags = Arc::new(Flags::default());
        let mut wanted = EXIT_SIGNALS.to_vec();
        wanted.extend([SIGTSTP, SIGCONT]);
        let mut signals = signal_hook::iterator::Signals::new(wanted)?;
        let handle = signals.handle();
        let f = Arc::clone(&flags);
        std::thread::Builder::new()
            .name("signal-watchdog".into())
            .spawn(move || {
                for sig in signals.forever() {
                    match sig {
                        SIGTSTP => f.suspend.store(true, Ordering::Relaxed),
                        SIGCONT => f.resumed.store(true, Ordering::Relaxed),
                        _ => {
                            let _ = EXIT_SIGNAL.compare_exchange(
                                0,
                                sig,
                                Ordering::Relaxed,
                                Ordering::Relaxed,
                            );
                            f.stop.store(true, Ordering::Relaxed);
                            std::thread::sleep(SIGNAL_GRACE);
                            if !f.left.load(Ordering::Relaxed) {
                                restore();
                                std::process::exit(128 + sig);
                            }
                            return;
                        }
                    }
                }
            })?;
        install_panic_hook();
        take_terminal()?;
        let terminal = match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        Ok(TerminalGuard {
            terminal,
            flags,
            signals: handle,
        })
    }

    pub fn stopped(&self) -> bool {
        self.flags.stop.load(Ordering::Relaxed)
    }

    /// Suspends as SIGTSTP (or Ctrl-Z) asks: the terminal goes back to the shell, the job
    /// stops (SIGTSTP re-raised under its default action, to the process group), and once
    /// continued (`fg`) the TUI takes the terminal again and repaints everything.
    pub fn suspend(&mut self) -> io::Result<()> {
        self.flags.suspend.store(false, Ordering::Relaxed);
        restore();
        super::sys::stop_job()?;
        self.resume()
    }

    /// Between frames: suspends when SIGTSTP asked to, takes the terminal again after a
    /// SIGCONT (a SIGSTOP and `fg` leave it as the shell set it). True when the next frame must
    /// repaint every cell.
    pub fn service(&mut self) -> io::Result<bool> {
        if self.flags.suspend.load(Ordering::Relaxed) {
            self.suspend()?;
            return Ok(true);
        }
        if self.flags.resumed.swap(false, Ordering::Relaxed) {
            self.resume()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn resume(&mut self) -> io::Result<()> {
        // crossterm keeps raw mode as "on" across a SIGSTOP the shell answered by putting the
        // terminal back in cooked mode: leave it first, so entering sets it again
        let _ = disable_raw_mode();
        take_terminal()?;
        // the screen now shows whatever the shell left: clear it and forget what ratatui
        // thinks is on it (Terminal::clear would ask the terminal for the cursor position)
        execute!(
            io::stdout(),
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
        )?;
        self.terminal.swap_buffers();
        Ok(())
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        self.signals.close();
        self.flags.left.store(true, Ordering::Relaxed);
        restore();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic caught on purpose (a parser's chunk) is the catcher's to report: the
            // TUI goes on, so the terminal stays its.
            if crate::sources::sys::panics::contained() {
                prev(info);
                return;
            }
            // Restore first, so the message lands on the normal screen in cooked mode.
            restore();
            prev(info);
        }));
    });
}
