//! `perf_event_open`, its ioctls, and the mapped ring buffer of an event.

use perf_event_open_sys as pe;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

pub use pe::bindings::perf_event_attr as PerfAttr;

/// `perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)`.
pub fn perf_event_open(attr: &mut PerfAttr, pid: i32, cpu: i32) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` field names its size;
    // the kernel only reads it (and may write back `size` on E2BIG).
    let fd = unsafe {
        pe::perf_event_open(
            attr,
            pid,
            cpu,
            -1,
            pe::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub fn perf_enable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: `fd` is an open perf event descriptor; ENABLE takes no pointer.
    check(unsafe { pe::ioctls::ENABLE(fd.as_raw_fd(), 0) })
}

pub fn perf_disable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: `fd` is an open perf event descriptor; DISABLE takes no pointer.
    check(unsafe { pe::ioctls::DISABLE(fd.as_raw_fd(), 0) })
}

/// Sends the records of `fd` into the ring buffer of `target` (same CPU).
pub fn perf_set_output(fd: &OwnedFd, target: &OwnedFd) -> io::Result<()> {
    // SAFETY: both are open perf event descriptors; SET_OUTPUT takes a descriptor number.
    check(unsafe { pe::ioctls::SET_OUTPUT(fd.as_raw_fd(), target.as_raw_fd()) })
}

/// The id the kernel puts in PERF_SAMPLE_IDENTIFIER for `fd`.
pub fn perf_id(fd: &OwnedFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: `fd` is an open perf event descriptor and `id` a valid, writable u64.
    check(unsafe { pe::ioctls::ID(fd.as_raw_fd(), &mut id) })?;
    Ok(id)
}

/// A perf ring buffer mapped read/write (so the reader can move `data_tail`).
pub struct PerfRing {
    base: NonNull<u8>,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is process memory with no thread affinity; `PerfRing` is the only owner and
// every access goes through `&mut self`.
unsafe impl Send for PerfRing {}

impl PerfRing {
    /// Maps one header page plus `data_pages` (a power of two) pages of `fd`'s ring buffer.
    pub fn map(fd: &OwnedFd, data_pages: usize) -> io::Result<PerfRing> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = if page > 0 { page as usize } else { 4096 };
        if !data_pages.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ring buffer pages must be a power of two, got {data_pages}"),
            ));
        }
        let map_len = page * (data_pages + 1);
        // SAFETY: a fresh shared mapping of a perf descriptor; the kernel validates the size.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p as *mut u8).ok_or_else(|| io::Error::other("mmap gave null"))?;
        let meta = base.as_ptr() as *const pe::bindings::perf_event_mmap_page;
        // SAFETY: the first page of the mapping is the perf_event_mmap_page; data_offset and
        // data_size are written by the kernel before mmap returns and never change.
        let (off, size) = unsafe { ((*meta).data_offset, (*meta).data_size) };
        let (data_offset, data_size) = if size == 0 {
            (page, page * data_pages)
        } else {
            (off as usize, size as usize)
        };
        Ok(PerfRing {
            base,
            map_len,
            data_offset,
            data_size,
        })
    }

    pub fn data_size(&self) -> usize {
        self.data_size
    }

    /// Appends every complete record now in the buffer to `out` (unwrapped) and frees the space.
    /// Returns the number of bytes moved.
    pub fn drain(&mut self, out: &mut Vec<u8>) -> usize {
        let meta = self.base.as_ptr() as *mut pe::bindings::perf_event_mmap_page;
        // SAFETY: `meta` points at the mapped control page; data_head and data_tail are 8-byte
        // aligned u64s shared with the kernel, accessed atomically (acquire on head before
        // reading data, release on tail after it), as perf_event_open(2) prescribes.
        let (head_a, tail_a) = unsafe {
            (
                AtomicU64::from_ptr(std::ptr::addr_of_mut!((*meta).data_head)),
                AtomicU64::from_ptr(std::ptr::addr_of_mut!((*meta).data_tail)),
            )
        };
        let head = head_a.load(Ordering::Acquire);
        let tail = tail_a.load(Ordering::Relaxed);
        let avail = head.wrapping_sub(tail) as usize;
        if avail == 0 {
            return 0;
        }
        let avail = avail.min(self.data_size);
        let start = (tail as usize) % self.data_size;
        let first = avail.min(self.data_size - start);
        // SAFETY: [data_offset, data_offset + data_size) lies inside the mapping; `start + first`
        // and `avail - first` stay within data_size, and the kernel does not write the bytes
        // between tail and head until data_tail moves past them.
        unsafe {
            let data = self.base.as_ptr().add(self.data_offset);
            out.extend_from_slice(std::slice::from_raw_parts(data.add(start), first));
            if avail > first {
                out.extend_from_slice(std::slice::from_raw_parts(data, avail - first));
            }
        }
        tail_a.store(tail.wrapping_add(avail as u64), Ordering::Release);
        avail
    }
}

impl Drop for PerfRing {
    fn drop(&mut self) {
        // SAFETY: `base`/`map_len` describe a mapping made in `map` and not yet unmapped.
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.map_len);
        }
    }
}
