//! Names and processes from COMM / FORK / EXIT records, in time order, as perf's thread table
//! keeps them: a COMM record names a thread (and gives its process), a FORK creates a thread that
//! inherits its parent's comm, a sample names its process (`pid`). A thread never named shows as
//! `:TID`, like `perf script`.

use crate::events::{StrId, Strings, TaskMeta, Tid};
use rustc_hash::FxHashMap;

#[derive(Default, Debug)]
pub struct Threads {
    comm: FxHashMap<Tid, StrId>,
    tgid: FxHashMap<Tid, Tid>,
}

impl Threads {
    pub fn comm(&mut self, pid: i32, tid: i32, name: &[u8], strings: &mut Strings) {
        let (Ok(pid), Ok(tid)) = (Tid::try_from(pid), Tid::try_from(tid)) else {
            return;
        };
        self.comm.insert(tid, strings.intern(name));
        self.tgid.insert(tid, pid);
    }

    pub fn fork(&mut self, pid: i32, tid: i32, ptid: i32) {
        let (Ok(pid), Ok(tid)) = (Tid::try_from(pid), Tid::try_from(tid)) else {
            return;
        };
        if let Some(&c) = Tid::try_from(ptid).ok().and_then(|p| self.comm.get(&p)) {
            self.comm.insert(tid, c);
        }
        self.tgid.insert(tid, pid);
    }

    /// What perf would print as the thread's comm right now.
    pub fn comm_of(&self, tid: Tid, strings: &mut Strings) -> StrId {
        match self.comm.get(&tid) {
            Some(&c) => c,
            None => strings.intern(format!(":{tid}").as_bytes()),
        }
    }

    pub fn tgid_of(&self, tid: Tid) -> Option<Tid> {
        self.tgid.get(&tid).copied()
    }

    /// Fills in tasks the events mention (switch targets, children) but that never sampled.
    pub fn complete(
        &self,
        tasks: &mut crate::events::TaskTable,
        mentioned: impl Iterator<Item = Tid>,
    ) {
        for tid in mentioned {
            if tasks.contains_key(&tid) {
                continue;
            }
            if let (Some(&comm), tgid) = (self.comm.get(&tid), self.tgid.get(&tid)) {
                tasks.insert(
                    tid,
                    TaskMeta {
                        tgid: tgid.copied(),
                        comm,
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forks_inherit_and_comms_rename() {
        let mut s = Strings::new();
        let mut t = Threads::default();
        t.comm(10, 10, b"bash", &mut s);
        t.fork(20, 20, 10);
        let c = t.comm_of(20, &mut s);
        assert_eq!(s.get(c), b"bash");
        t.comm(20, 20, b"sleep", &mut s);
        let c = t.comm_of(20, &mut s);
        assert_eq!(s.get(c), b"sleep");
        t.fork(20, 21, 20);
        assert_eq!(t.tgid_of(21), Some(20));
        let c = t.comm_of(99, &mut s);
        assert_eq!(s.get(c), b":99");
        let mut tasks = crate::events::TaskTable::default();
        t.complete(&mut tasks, [21, 99].into_iter());
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[&21].tgid, Some(20));
    }
}
