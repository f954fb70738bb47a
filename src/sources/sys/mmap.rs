//! Read-only private maps of capture files, guarded against the file shrinking while it is read
//! (see [`super::sigbus`]).

use super::sigbus;

/// A mapped file. Reads past the end of a file that shrank after it was mapped give zeros
/// instead of SIGBUS; [`Map::shrunk_at`] then says where the missing part starts.
pub struct Map {
    // dropped first: unregistered before the mapping goes away
    guard: Option<sigbus::Guard>,
    map: memmap2::Mmap,
    file: std::fs::File,
}

impl std::ops::Deref for Map {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Map {
    /// The offset of the first page that could not be read because the file shrank after it was
    /// mapped (its contents read as zeros), if that happened.
    pub fn shrunk_at(&self) -> Option<u64> {
        self.guard.as_ref().and_then(|g| g.fault())
    }

    /// Gives the pages of `[0, end)` back to the kernel (they stay in the page cache, and a
    /// later read faults them in again): a load that has parsed that far holds only what it
    /// made of them, so a capture of any size costs no more resident memory than its events.
    pub fn release_before(&self, end: usize) {
        let end = end.min(self.map.len()) & !4095;
        if end == 0 {
            return;
        }
        // SAFETY: the map is a private read-only file mapping: MADV_DONTNEED drops its pages
        // from this process, and a later access reads them from the file again (the same bytes,
        // or zeros past the end of a file that shrank, which the SIGBUS guard records as
        // before). No reference into the map is invalidated.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, end)
        };
    }

    /// The file's size now (it may have changed since it was mapped).
    pub fn current_len(&self) -> Option<u64> {
        self.file.metadata().ok().map(|m| m.len())
    }
}

/// Maps `file` read-only and private.
pub fn map_file(file: &std::fs::File) -> std::io::Result<Map> {
    // SAFETY: the map is read-only and private. The file may still change underneath us: a
    // shrinking file is guarded (reads past its new end give zeros, recorded for the reader to
    // report, instead of SIGBUS); a file rewritten in place gives the reader odd bytes, which
    // it reports as bad input like any other.
    let map = unsafe { memmap2::Mmap::map(file) }?;
    let guard = sigbus::register(map.as_ptr(), map.len());
    Ok(Map {
        guard,
        map,
        file: file.try_clone()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_cut_while_mapped_reads_as_zeros_and_says_where() {
        let dir = std::env::temp_dir().join(format!("cidscope-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cut.bin");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![7u8; 64 << 10]).unwrap();
        drop(f);
        let f = std::fs::File::open(&path).unwrap();
        let map = map_file(&f).unwrap();
        assert_eq!(map.shrunk_at(), None);
        assert_eq!(map[100], 7);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(10_000)
            .unwrap();
        // the page holding byte 10000 is still backed; the ones after it are gone
        assert_eq!(map[9_999], 7);
        let sum: u64 = map.iter().map(|&b| b as u64).sum();
        let page = 4096u64;
        let first_gone = 10_000u64.div_ceil(page) * page;
        assert_eq!(map.shrunk_at(), Some(first_gone));
        // what could be read: the bytes still in the file, zeros after them in its last page
        assert_eq!(sum, 7 * 10_000);
        assert_eq!(map.current_len(), Some(10_000));
        drop(map);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
