//! Reading a mapped file that shrinks underneath us: the kernel raises SIGBUS for a page past
//! the file's new end, which would kill the process without a word (exit 135) and leave a TUI's
//! terminal in the alternate screen.
//!
//! Recovery without unwinding: a process-wide SIGBUS handler looks the faulting address up among
//! the registered mappings; inside one, it maps an anonymous zero page over the faulting page
//! (`MAP_FIXED`), records the lowest faulting offset of that mapping, and returns. The read that
//! faulted then completes, reading zeros, and the reader, which checks the record after each
//! piece it parses (and at its end), stops with an error naming the file and the offset instead
//! of using those zeros. A fault anywhere else goes to the handler that was there before (Rust's
//! stack-overflow check, or the default action: the process dies as it would have).
//!
//! Everything the handler touches is async-signal-safe: atomics, `mmap`, `sigaction`, `raise`
//! (raw system calls; no allocation, no locks).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

/// Mappings that can be registered at once (more go unguarded: a shrinking file then kills the
/// process as before). A run maps one or two captures; parallel tests a few dozen.
const SLOTS: usize = 128;

struct Slot {
    used: AtomicBool,
    base: AtomicUsize,
    len: AtomicUsize,
    /// The lowest offset (from `base`) of a page that faulted; `u64::MAX`: none.
    fault: AtomicU64,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            used: AtomicBool::new(false),
            base: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            fault: AtomicU64::new(u64::MAX),
        }
    }
}

static TABLE: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// The handler before ours and its flags, for faults outside our mappings.
static PREVIOUS: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PREVIOUS_FLAGS: AtomicI32 = AtomicI32::new(0);

/// A registered mapping: faults in it are recorded instead of killing the process.
/// Unregisters on drop (before the mapping goes away: drop it first).
#[derive(Debug)]
pub struct Guard {
    slot: usize,
}

impl Guard {
    /// The lowest offset into the mapping of a page that could not be read because the file
    /// shrank, if one faulted so far.
    pub fn fault(&self) -> Option<u64> {
        match TABLE[self.slot].fault.load(Ordering::Acquire) {
            u64::MAX => None,
            o => Some(o),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let s = &TABLE[self.slot];
        s.base.store(0, Ordering::Release);
        s.len.store(0, Ordering::Release);
        s.fault.store(u64::MAX, Ordering::Release);
        s.used.store(false, Ordering::Release);
    }
}

/// Guards `len` bytes of a mapping at `base` (page-aligned, as `mmap` returns it). `None` when
/// every slot is taken or the handler could not be installed.
pub fn register(base: *const u8, len: usize) -> Option<Guard> {
    if !install() || len == 0 {
        return None;
    }
    for (i, s) in TABLE.iter().enumerate() {
        if s.used
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            s.fault.store(u64::MAX, Ordering::Release);
            s.len.store(len, Ordering::Release);
            s.base.store(base as usize, Ordering::Release);
            return Some(Guard { slot: i });
        }
    }
    None
}

/// Installs the handler once; false if that failed.
fn install() -> bool {
    static OK: AtomicBool = AtomicBool::new(false);
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: zeroed sigactions are valid values; the handler has the SA_SIGINFO
        // signature.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            // (the previous handler is noted before a fault can reach ours: none of our
            // mappings is registered until this returns)
            let ok = libc::sigaction(libc::SIGBUS, &act, &mut old) == 0;
            PREVIOUS.store(old.sa_sigaction, Ordering::Release);
            PREVIOUS_FLAGS.store(old.sa_flags, Ordering::Release);
            OK.store(ok, Ordering::Release);
        }
    });
    OK.load(Ordering::Acquire)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &TABLE {
        let base = s.base.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if base == 0 || addr < base || addr - base >= len {
            continue;
        }
        let at = addr & !(page - 1);
        // SAFETY: `at` is a page inside a live mapping registered by its owner (a read-only
        // file map); replacing that page with a private zero page changes no other memory.
        let r = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r != libc::MAP_FAILED {
            s.fault
                .fetch_min(at.saturating_sub(base) as u64, Ordering::AcqRel);
            return;
        }
        break;
    }
    // SAFETY: PREVIOUS holds the handler installed before ours (a function of the signature its
    // flags say, or SIG_DFL/SIG_IGN); calling it with the kernel's arguments is what it expects.
    // Resetting to the default action and raising is the documented way to die of the signal.
    unsafe {
        let h = PREVIOUS.load(Ordering::Acquire);
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            if PREVIOUS_FLAGS.load(Ordering::Acquire) & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(h);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                f(sig);
            }
            return;
        }
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        libc::raise(sig);
    }
}
