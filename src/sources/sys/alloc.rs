//! Allocator parameters (glibc), and the allocator the binary uses: the system's, asking for
//! transparent huge pages on large blocks.

use std::alloc::{GlobalAlloc, Layout, System};

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

/// Blocks of this size and more are marked for huge pages: the event store's columns and the
/// model's per-event vectors. A load touches each of their pages once, as it fills them, and a
/// 4 KB page fault each cost a tenth of a bench perf.data's load (glibc's own
/// `glibc.malloc.hugetlb=1` does the same, but only where the user sets it).
const HUGE_FROM: usize = 2 << 20;

/// The system allocator, with `madvise(MADV_HUGEPAGE)` on every block of [`HUGE_FROM`] bytes
/// or more. Where transparent huge pages are `madvise` (the usual default) a large block then
/// faults in 2 MB at a time; where they are `never` the call does nothing, and where it fails
/// the block is used as it is.
pub struct HugeBlocks;

impl HugeBlocks {
    fn advise(p: *mut u8, size: usize) {
        #[cfg(target_os = "linux")]
        if !p.is_null() && size >= HUGE_FROM {
            // from the page the block starts in to the page it ends in, as glibc's own
            // `madvise_thp` does: a block this large is a mapping of its own (the mmap
            // threshold is far below), whose first page holds the chunk's header and whose
            // last page ends the mapping; advising a smaller range would split the mapping in
            // two, and glibc's mremap of a growing block then fails and copies it instead
            let start = (p as usize) & !4095;
            let end = (p as usize + size).next_multiple_of(4096);
            if end > start {
                // SAFETY: the range lies inside a block this allocator just handed out;
                // MADV_HUGEPAGE changes how its pages are backed, never their contents.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (p, size);
    }
}

// SAFETY: every call goes to `System`; `advise` only adds a hint on memory it returned.
unsafe impl GlobalAlloc for HugeBlocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on
        let p = unsafe { System.alloc(layout) };
        Self::advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on
        let p = unsafe { System.alloc_zeroed(layout) };
        Self::advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        // (every growth to the limit or past it is advised: one that crosses it gets the
        // mark here, and for one already marked the call is cheap, as an mremap'd mapping
        // keeps the mark anyway)
        if new_size >= HUGE_FROM && layout.size() < new_size {
            Self::advise(p, new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large block is usable, and one that grows keeps its contents (an advised range that
    /// split the mapping made glibc's mremap fail and fall back to a copy: still correct, but
    /// the point is that the block stays one mapping and grows in place or moves whole).
    #[test]
    fn a_large_block_grows_with_its_contents() {
        let a = HugeBlocks;
        let layout = Layout::from_size_align(3 << 20, 8).expect("a layout");
        // SAFETY: a non-zero layout; the block is written within its size and freed once
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in (0..layout.size()).step_by(4096) {
                *p.add(i) = (i / 4096) as u8;
            }
            let q = a.realloc(p, layout, 7 << 20);
            assert!(!q.is_null());
            for i in (0..layout.size()).step_by(4096) {
                assert_eq!(*q.add(i), (i / 4096) as u8);
            }
            *q.add((7 << 20) - 1) = 1;
            a.dealloc(q, Layout::from_size_align(7 << 20, 8).expect("a layout"));
        }
    }
}
