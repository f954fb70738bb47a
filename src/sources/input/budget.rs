//! The memory check of an input whose size is not known up front (a stream, a decompressed
//! file): the estimate of what its bytes so far will take is compared with the memory
//! available as they arrive, so a capture that cannot fit stops with the same message as a
//! file would, before the OOM killer ends it.

use crate::sources::memory::{self, TooLarge};

/// Bytes between two checks.
const EVERY: u64 = 16 << 20;

#[derive(Clone, Debug)]
pub struct Budget {
    factor: f64,
    format: &'static str,
    available: Option<u64>,
    next: u64,
}

impl Budget {
    /// The check for a format taking `factor` bytes of memory per input byte; `off` with
    /// `--no-memory-check`.
    pub fn new(factor: f64, format: &'static str, off: bool) -> Budget {
        Budget {
            factor,
            format,
            // (a limit that is not a size is refused before any command runs)
            available: if off {
                None
            } else {
                memory::available().ok().flatten()
            },
            next: EVERY,
        }
    }

    pub fn unlimited() -> Budget {
        Budget {
            factor: 0.0,
            format: "",
            available: None,
            next: u64::MAX,
        }
    }

    /// [`Budget::check`] of the whole input, `read` bytes, whatever was checked before: a
    /// binary format's stream is decoded only once read whole, and one shorter than the
    /// checks' step was never checked.
    pub fn check_whole(&mut self, read: u64) -> Result<(), TooLarge> {
        self.next = 0;
        self.check(read)
    }

    /// `Err` once `read` bytes would need more memory than is available.
    pub fn check(&mut self, read: u64) -> Result<(), TooLarge> {
        if read < self.next {
            return Ok(());
        }
        self.next = read + EVERY;
        let Some(available) = self.available else {
            return Ok(());
        };
        let need = (read as f64 * self.factor) as u64;
        if need <= available {
            return Ok(());
        }
        Err(TooLarge {
            size: read,
            format: self.format,
            need,
            available,
            tasks: 0,
            processes: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_once_the_estimate_passes_what_is_available() {
        let mut b = Budget {
            factor: 1.0,
            format: "ftrace",
            available: Some(40 << 20),
            next: EVERY,
        };
        assert!(b.check(1 << 20).is_ok());
        assert!(b.check(20 << 20).is_ok());
        let e = b.check(50 << 20).unwrap_err();
        assert_eq!(e.size, 50 << 20);
        assert!(Budget::unlimited().check(u64::MAX - 1).is_ok());
        // (between two steps only the whole input's check sees it)
        let mut b = Budget {
            factor: 8.0,
            format: "trace.dat",
            available: Some(40 << 20),
            next: EVERY,
        };
        assert!(b.check(10 << 20).is_ok());
        assert_eq!(b.check_whole(10 << 20).unwrap_err().need, 80 << 20);
    }
}
