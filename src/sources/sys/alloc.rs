//! Allocator parameters (glibc).

/// Makes glibc serve blocks of `bytes` and more from their own mappings (`M_MMAP_THRESHOLD`).
/// Call before any thread starts; does nothing outside glibc.
pub fn set_mmap_threshold(bytes: i32) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, bytes);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}
