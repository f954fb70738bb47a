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
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

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
        *lock(&UI_THREAD) = Some(std::thread::current().id());
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
        *lock(&UI_THREAD) = None;
        say_background_panics();
    }
}

/// The thread drawing the TUI while a guard holds the terminal: only its panic ends the TUI.
static UI_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);

/// Panics of other threads while the TUI ran (a loader, a model run, their workers): the TUI
/// goes on (what they fed it says it stopped), and these are said once the terminal is back.
static BACKGROUND_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The most kept; more are counted.
const BACKGROUND_PANICS_KEPT: usize = 8;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Says the background threads' panics on stderr (the terminal restored before).
fn say_background_panics() {
    let said = std::mem::take(&mut *lock(&BACKGROUND_PANICS));
    for p in &said {
        eprintln!("cidscope: internal error (a bug; please report it): {p}");
    }
}

/// What the panic hook does with a panic.
#[derive(Debug, PartialEq, Eq)]
enum OnPanic {
    /// Caught on purpose (a parser's chunk, a loader, a model run): the catcher reports it.
    LeaveToCatcher,
    /// Another thread's while the TUI runs: kept and said once the terminal is back (printed
    /// now, it would land on the TUI's screen; a restore would leave the TUI drawing on a
    /// cooked terminal).
    KeepForLater,
    /// The TUI's own thread's, or any while no TUI runs: the terminal is restored first, so
    /// the message lands on the normal screen in cooked mode.
    RestoreAndSay,
}

fn on_panic(contained: bool, ui: Option<ThreadId>, me: ThreadId) -> OnPanic {
    match ui {
        _ if contained => OnPanic::LeaveToCatcher,
        Some(ui) if ui != me => OnPanic::KeepForLater,
        _ => OnPanic::RestoreAndSay,
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let me = std::thread::current();
            let ui = *lock(&UI_THREAD);
            match on_panic(crate::sources::sys::panics::contained(), ui, me.id()) {
                OnPanic::LeaveToCatcher => prev(info),
                OnPanic::KeepForLater => {
                    let mut kept = lock(&BACKGROUND_PANICS);
                    if kept.len() < BACKGROUND_PANICS_KEPT {
                        let name = me.name().unwrap_or("a worker");
                        kept.push(format!(
                            "thread {name} panicked: {}",
                            crate::sources::sys::panics::describe(info)
                        ));
                    }
                }
                OnPanic::RestoreAndSay => {
                    restore();
                    say_background_panics();
                    prev(info);
                }
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tuis_own_panic_restores_the_terminal() {
        let ui = std::thread::current().id();
        let other = std::thread::spawn(|| std::thread::current().id())
            .join()
            .unwrap();
        assert_eq!(on_panic(false, Some(ui), ui), OnPanic::RestoreAndSay);
        assert_eq!(on_panic(false, Some(ui), other), OnPanic::KeepForLater);
        assert_eq!(on_panic(false, None, other), OnPanic::RestoreAndSay);
        assert_eq!(on_panic(true, Some(ui), ui), OnPanic::LeaveToCatcher);
        assert_eq!(on_panic(true, Some(ui), other), OnPanic::LeaveToCatcher);
    }
}
