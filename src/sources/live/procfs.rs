//! Reads of /proc for the live view: the names of this process's own threads (the workload's),
//! for the lanes of CIDs they read from their rseq areas when no kernel trace names them.

use crate::events::Tid;

/// The comm of thread `tid` of this process (`/proc/self/task/TID/comm`, without its newline);
/// None once the thread has exited or when /proc is not mounted.
pub fn own_thread_comm(tid: Tid) -> Option<Vec<u8>> {
    let mut b = std::fs::read(format!("/proc/self/task/{tid}/comm")).ok()?;
    b.retain(|&c| c != b'\n');
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_an_own_thread_and_none_for_a_foreign_tid() {
        let (tid, comm) = std::thread::Builder::new()
            .name("procfs-probe".into())
            .spawn(|| {
                // the thread's own tid: /proc/thread-self links to PID/task/TID
                let link = std::fs::read_link("/proc/thread-self").expect("/proc mounted");
                let tid: Tid = link
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.parse().ok())
                    .expect("/proc/thread-self names a tid");
                (tid, own_thread_comm(tid))
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert!(tid > 0);
        assert_eq!(comm.as_deref(), Some(&b"procfs-probe"[..]));
        // not a thread of this process (tids are below the kernel's pid_max of 2^22)
        assert_eq!(own_thread_comm(u32::MAX as Tid), None);
    }
}
