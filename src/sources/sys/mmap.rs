//! Read-only private maps of capture files.

pub use memmap2::Mmap as Map;

/// Maps `file` read-only and private.
pub fn map_file(file: &std::fs::File) -> std::io::Result<Map> {
    // SAFETY: the map is read-only and private; a file truncated underneath us while we read is
    // the one case mmap cannot guard against, as with every mmap-based reader.
    unsafe { memmap2::Mmap::map(file) }
}
