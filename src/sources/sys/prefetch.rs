//! Cache prefetch hints for the line scan of large mapped text files.

/// Asks for the cache line holding `b` (a hint: it never faults).
#[inline(always)]
pub fn prefetch(b: &u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint that never faults; `b` is a valid reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(b as *const u8 as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}
