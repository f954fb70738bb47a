//! Panics a caller catches on purpose. A parser worker wraps each chunk in [`contain`], so a
//! bug on one odd input becomes an error at that chunk instead of a dead load; the TUI's
//! loader and model threads are contained the same way (a load that stops, models said
//! missing). Such a panic must not act like a fatal one: the TUI's hook would hand the
//! terminal back to the shell while the TUI goes on, and the default hook's message would land
//! on the screen. Inside [`contain`], the hook installed here only keeps the message and where
//! it was raised.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Whether this thread is inside [`contain`]: a hook that would restore the terminal or
/// print must leave that to the catcher.
pub fn contained() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Runs `f`, turning a panic inside it into `Err(message at file:line)`, said nowhere else.
pub fn contain<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    r.map_err(|payload| {
        LAST.with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| payload_text(payload.as_ref()))
    })
}

/// What a panic said (its payload, when it is text).
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A panic's message and where it was raised: `MESSAGE at FILE:LINE`.
pub fn describe(info: &panic::PanicHookInfo<'_>) -> String {
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    format!("{}{at}", payload_text(info.payload()))
}

/// The end-to-end tests of these paths: a real bug cannot be summoned on demand.
/// `CIDSCOPE_TEST_PANIC_IN=PLACE:N` makes `PLACE` panic the `N`th time it asks (from 0):
/// `parser` (a text capture's pieces), `decoder` (a trace.dat's CPUs), `model` (the TUI's
/// model thread).
pub fn inject(place: &str, n: usize) {
    static WANTED: std::sync::OnceLock<Option<(String, usize)>> = std::sync::OnceLock::new();
    let wanted = WANTED.get_or_init(|| {
        let v = std::env::var("CIDSCOPE_TEST_PANIC_IN").ok()?;
        let (p, k) = v.split_once(':')?;
        Some((p.to_string(), k.parse().ok()?))
    });
    if wanted.as_ref().is_some_and(|(p, k)| p == place && *k == n) {
        panic!("CIDSCOPE_TEST_PANIC_IN={place}:{n}: panicking on purpose");
    }
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if contained() {
                LAST.with(|l| *l.borrow_mut() = Some(describe(info)));
            } else {
                prev(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contained_panic_is_an_error_with_its_place() {
        let e = contain(|| {
            let v: Vec<u8> = Vec::new();
            v[std::hint::black_box(3)]
        })
        .unwrap_err();
        assert!(e.contains("index out of bounds"), "{e}");
        assert!(e.contains("sys/panics.rs:"), "{e}");
        assert!(!contained());
        assert_eq!(contain(|| 7).unwrap(), 7);
    }

    #[test]
    fn nesting_stays_contained_until_the_outer_catch() {
        let r = contain(|| {
            let inner = contain(|| panic!("inner"));
            assert!(contained());
            inner
        });
        assert!(r.unwrap().unwrap_err().starts_with("inner at "));
        assert!(!contained());
    }
}
