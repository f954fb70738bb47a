//! rseq areas: the thread pointer and glibc's rseq symbols, rseq (un)registration, and reading
//! what the kernel wrote into an area.

use std::io;
use std::marker::PhantomData;
use std::ptr::NonNull;

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

#[cfg(test)]
mod tests {
    use super::*;

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
