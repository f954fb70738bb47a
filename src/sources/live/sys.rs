//! Every `unsafe` block of the live sources, and every raw system call: thread pointer and the
//! glibc rseq symbols, rseq (un)registration, affinity, clocks, `perf_event_open` with its
//! ioctls and ring-buffer mapping, `poll`, `mount`. Everything here is a thin safe wrapper; the
//! callers hold no unsafe code.

use perf_event_open_sys as pe;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

// ------------------------------------------------------------------ clocks, ids, privileges

/// CLOCK_MONOTONIC in nanoseconds: the clock of rseq-area samples and of perf records
/// (`use_clockid`).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's id.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// Effective user id (0 = root).
pub fn geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// CPU time of this process so far: (user, system) in nanoseconds.
pub fn rusage_self() -> (u64, u64) {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if r != 0 {
        return (0, 0);
    }
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// Sets the nice value of the calling thread (Linux applies PRIO_PROCESS with a thread id to
/// that thread only). Lowering it needs root or CAP_SYS_NICE.
pub fn set_thread_nice(nice: i32) -> io::Result<()> {
    let tid = gettid();
    // SAFETY: setpriority takes plain integers; `tid` is this thread's id.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the calling thread SCHED_FIFO at `prio` (needs root or CAP_SYS_NICE; RT throttling
/// still leaves the rest of the system 5% of each second).
pub fn set_thread_fifo(prio: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to `cpus`.
pub fn set_affinity_self(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} is beyond CPU_SETSIZE"),
            ));
        }
        // SAFETY: `c` is below CPU_SETSIZE (checked above), so the bit lies inside `set`.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn affinity_self() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: every `c` is below CPU_SETSIZE, so the bit lies inside `set`.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// `mount -t tracefs nodev PATH`.
pub fn mount_tracefs(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // SAFETY: all strings are NUL-terminated and outlive the call; no data argument.
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until one of `fds` is readable or `timeout_ms` passed. Returns how many are ready.
pub fn poll_readable(fds: &[OwnedFd], timeout_ms: i32) -> io::Result<usize> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structs.
    let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

// ------------------------------------------------------------------ rseq

/// `struct rseq` of the kernel ABI: 32 bytes, 32-byte aligned. `mm_cid` is at byte 24, `cpu_id`
/// at byte 4.
#[repr(C, align(32))]
struct RawRseq {
    cpu_id_start: u32,
    cpu_id: u32,
    rseq_cs: u64,
    flags: u32,
    node_id: u32,
    mm_cid: u32,
    padding: u32,
}

const _: () = assert!(std::mem::size_of::<RawRseq>() == 32);
const RSEQ_LEN: u32 = 32;
const RSEQ_FLAG_UNREGISTER: i32 = 1;
/// The signature cidscope registers with (glibc uses 0x53053053 on x86; any value works as long
/// as no rseq critical section is run, and cidscope runs none).
const RSEQ_SIG: u32 = 0x5305_3053;

/// glibc's rseq registration: `__rseq_offset` (from the thread pointer) and `__rseq_size`
/// (0 when glibc did not register, e.g. `GLIBC_TUNABLES=glibc.pthread.rseq=0`).
#[derive(Clone, Copy, Debug)]
pub struct GlibcRseq {
    pub offset: isize,
    pub size: u32,
}

/// Looks up glibc's `__rseq_offset` and `__rseq_size` (glibc >= 2.35); `None` if absent.
pub fn glibc_rseq() -> Option<GlibcRseq> {
    // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names; a missing symbol gives null.
    let off = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()) };
    // SAFETY: as above.
    let size = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()) };
    if off.is_null() || size.is_null() {
        return None;
    }
    // SAFETY: glibc defines `const ptrdiff_t __rseq_offset` and `const unsigned int __rseq_size`;
    // both are set before main and never written afterwards, so plain reads are race-free.
    let (offset, size) = unsafe { (*(off as *const isize), *(size as *const u32)) };
    Some(GlibcRseq { offset, size })
}

#[cfg(target_arch = "x86_64")]
fn thread_pointer() -> Option<usize> {
    let tp: usize;
    // SAFETY: on x86_64 Linux the TCB's first word (fs:0) is the thread pointer itself
    // (TLS variant II); reading it has no side effects.
    unsafe {
        std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags));
    }
    Some(tp)
}

#[cfg(target_arch = "aarch64")]
fn thread_pointer() -> Option<usize> {
    let tp: usize;
    // SAFETY: tpidr_el0 holds the thread pointer; reading it has no side effects.
    unsafe {
        std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack, nomem, preserves_flags));
    }
    Some(tp)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn thread_pointer() -> Option<usize> {
    None
}

/// The calling thread's rseq area. Not `Send`: the kernel writes it on this thread's returns to
/// user space only, and it is valid only while the thread (and its registration) lives.
pub struct RseqArea {
    ptr: NonNull<u8>,
    /// Set when cidscope registered the area itself: unregistered and freed on drop.
    own: bool,
    _not_send: PhantomData<*const ()>,
}

impl RseqArea {
    /// The area glibc registered for this thread: thread pointer + `__rseq_offset`.
    pub fn glibc(g: GlibcRseq) -> Option<RseqArea> {
        if g.size == 0 {
            return None;
        }
        let tp = thread_pointer()?;
        let addr = tp.checked_add_signed(g.offset)?;
        Some(RseqArea {
            ptr: NonNull::new(addr as *mut u8)?,
            own: false,
            _not_send: PhantomData,
        })
    }

    /// Registers a fresh 32-byte area for the calling thread with the rseq system call.
    pub fn register_own() -> io::Result<RseqArea> {
        let area = Box::new(RawRseq {
            cpu_id_start: 0,
            // RSEQ_CPU_ID_UNINITIALIZED
            cpu_id: u32::MAX,
            rseq_cs: 0,
            flags: 0,
            node_id: 0,
            mm_cid: 0,
            padding: 0,
        });
        let raw = Box::into_raw(area);
        // SAFETY: `raw` points to a live, 32-byte aligned struct rseq of RSEQ_LEN bytes, which
        // stays allocated until it is unregistered (drop) or leaked.
        let r = unsafe { libc::syscall(libc::SYS_rseq, raw, RSEQ_LEN, 0, RSEQ_SIG) };
        if r != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: registration failed, so the kernel holds no reference to `raw`; it came
            // from Box::into_raw above and is freed exactly once here.
            drop(unsafe { Box::from_raw(raw) });
            return Err(e);
        }
        Ok(RseqArea {
            // `raw` came from a Box, so it is not null.
            ptr: NonNull::new(raw as *mut u8).ok_or_else(|| io::Error::other("null rseq area"))?,
            own: true,
            _not_send: PhantomData,
        })
    }

    pub fn is_own(&self) -> bool {
        self.own
    }

    /// (`cpu_id`, `mm_cid`) as the kernel last wrote them.
    #[inline]
    pub fn read(&self) -> (u32, u32) {
        let p = self.ptr.as_ptr();
        // SAFETY: `p` is this thread's registered struct rseq (32 bytes, aligned), alive while
        // `self` is (glibc's lives as long as the thread; our own until drop). The kernel writes
        // it only when this thread returns to user space, never during this read; volatile reads
        // keep the compiler from caching the values across such returns.
        unsafe {
            (
                std::ptr::read_volatile(p.add(4) as *const u32),
                std::ptr::read_volatile(p.add(24) as *const u32),
            )
        }
    }
}

impl Drop for RseqArea {
    fn drop(&mut self) {
        if !self.own {
            return;
        }
        let raw = self.ptr.as_ptr() as *mut RawRseq;
        // SAFETY: `raw` is the area this thread registered (RseqArea is not Send, so this runs on
        // the registering thread) with the same length and signature.
        let r = unsafe {
            libc::syscall(
                libc::SYS_rseq,
                raw,
                RSEQ_LEN,
                RSEQ_FLAG_UNREGISTER,
                RSEQ_SIG,
            )
        };
        if r == 0 {
            // SAFETY: unregistered, so the kernel no longer writes it; it came from Box::into_raw
            // in register_own and is freed exactly once.
            drop(unsafe { Box::from_raw(raw) });
        }
        // If unregistering failed the kernel may still write the area: leak it (32 bytes).
    }
}

// ------------------------------------------------------------------ perf_event_open

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_and_ids() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
        assert!(gettid() > 0);
        assert!(!affinity_self().unwrap_or_default().is_empty());
    }

    #[test]
    fn rseq_area_reads_this_threads_cpu() {
        // Run on a fresh thread so our own registration (if glibc did not register) is undone.
        std::thread::spawn(|| {
            let area = match glibc_rseq().and_then(RseqArea::glibc) {
                Some(a) => a,
                None => match RseqArea::register_own() {
                    Ok(a) => a,
                    Err(e) => {
                        eprintln!("skip: rseq unavailable: {e}");
                        return;
                    }
                },
            };
            let (cpu, cid) = area.read();
            let bound = crate::sources::live::possible_cpus();
            assert!(cpu < bound, "cpu_id {cpu}");
            assert!(cid < bound, "mm_cid {cid}");
        })
        .join()
        .unwrap();
    }
}
