//! Raw tracepoint records (the PERF_SAMPLE_RAW payload: the same bytes tracefs stores) →
//! canonical events, with every field found through its tracefs format.

use super::EventAux;
use super::format::{EventFormat, Field};
use super::kallsyms::Kallsyms;
use crate::events::{Event, EventKind, PrevState, StrId, Strings, Tid};

/// The tracepoints cidscope attaches to: (system, name, required).
pub const EVENTS: [(&str, &str, bool); 9] = [
    ("rseq", "rseq_update", true),
    ("sched", "sched_switch", true),
    ("sched", "sched_migrate_task", true),
    ("sched", "sched_process_fork", true),
    ("sched", "sched_process_exec", true),
    ("sched", "sched_process_exit", true),
    ("task", "task_newtask", true),
    ("timer", "hrtimer_expire_entry", true),
    ("timer", "tick_stop", false),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    CharArray,
    DataLoc,
}

/// Where one field lives in a raw record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FieldRef {
    offset: usize,
    size: usize,
    signed: bool,
    kind: Kind,
}

impl FieldRef {
    fn from(f: &Field) -> FieldRef {
        let kind = if f.is_data_loc() {
            Kind::DataLoc
        } else if f.is_char_array() {
            Kind::CharArray
        } else {
            Kind::Int
        };
        FieldRef {
            offset: f.offset,
            size: f.size,
            signed: f.signed,
            kind,
        }
    }

    fn int(&self, raw: &[u8]) -> Option<i64> {
        let b = raw.get(self.offset..self.offset + self.size)?;
        Some(match (self.size, self.signed) {
            (1, false) => b[0] as i64,
            (1, true) => b[0] as i8 as i64,
            (2, false) => u16::from_ne_bytes(b.try_into().ok()?) as i64,
            (2, true) => i16::from_ne_bytes(b.try_into().ok()?) as i64,
            (4, false) => u32::from_ne_bytes(b.try_into().ok()?) as i64,
            (4, true) => i32::from_ne_bytes(b.try_into().ok()?) as i64,
            (8, _) => i64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }

    fn str<'a>(&self, raw: &'a [u8]) -> Option<&'a [u8]> {
        let s = match self.kind {
            Kind::CharArray => raw.get(self.offset..self.offset + self.size)?,
            Kind::DataLoc => {
                let v = u32::from_ne_bytes(raw.get(self.offset..self.offset + 4)?.try_into().ok()?);
                let (off, len) = ((v & 0xffff) as usize, (v >> 16) as usize);
                raw.get(off..off + len)?
            }
            Kind::Int => return None,
        };
        Some(match memchr::memchr(0, s) {
            Some(n) => &s[..n],
            None => s,
        })
    }
}

#[derive(Clone, Debug)]
enum Layout {
    RseqUpdate {
        cpu_id: FieldRef,
        node_id: Option<FieldRef>,
        mm_cid: FieldRef,
    },
    Switch {
        prev_comm: FieldRef,
        prev_pid: FieldRef,
        prev_prio: FieldRef,
        prev_state: FieldRef,
        next_comm: FieldRef,
        next_pid: FieldRef,
        next_prio: FieldRef,
    },
    Migrate {
        comm: FieldRef,
        pid: FieldRef,
        prio: FieldRef,
        orig_cpu: FieldRef,
        dest_cpu: FieldRef,
    },
    Fork {
        parent_comm: FieldRef,
        parent_pid: FieldRef,
        child_comm: FieldRef,
        child_pid: FieldRef,
    },
    Exec {
        filename: FieldRef,
        pid: FieldRef,
        old_pid: FieldRef,
    },
    Exit {
        comm: FieldRef,
        pid: FieldRef,
        prio: FieldRef,
        group_dead: Option<FieldRef>,
    },
    NewTask {
        pid: FieldRef,
        comm: FieldRef,
        clone_flags: FieldRef,
        oom_score_adj: Option<FieldRef>,
    },
    Hrtimer {
        function: FieldRef,
    },
    TickStop {
        success: FieldRef,
        dependency: Option<FieldRef>,
    },
}

/// Decodes one tracepoint's raw records.
#[derive(Clone, Debug)]
pub struct EventDecoder {
    pub system: String,
    pub name: String,
    pub id: u64,
    common_flags: FieldRef,
    common_preempt: FieldRef,
    common_pid: FieldRef,
    layout: Layout,
}

/// A decoded record: the canonical event, what an ftrace line needs beyond it, and comms the
/// record names (tid, comm) for the task table.
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    pub event: Event,
    pub aux: EventAux,
    pub comms: [Option<(Tid, StrId)>; 2],
}

/// The tasks a record concerns, read without decoding its strings: enough to decide whether a
/// process filter could keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peek {
    pub common_pid: Tid,
    /// Tasks named in the fields (prev/next of a switch, the migrated, forked, exiting task...);
    /// `TID_UNKNOWN` when unused.
    pub related: [Tid; 2],
    /// task_newtask: (child, clone_flags).
    pub new_task: Option<(Tid, u64)>,
}

fn tid_of(v: i64) -> Tid {
    Tid::try_from(v).unwrap_or(crate::events::TID_UNKNOWN)
}

/// `prev_state` as the kernel prints it: the lowest state bit's letter, `R` for 0, `+` for
/// TASK_REPORT_MAX (preempted).
fn prev_state(v: i64) -> PrevState {
    const LETTERS: [u8; 8] = *b"SDTtXZPI";
    let v = v as u64;
    let report_max: u64 = 0x100; // ((0x7f + 1) << 1): TASK_REPORT_MAX on 6.x
    let bits = v & (report_max - 1);
    let letter = if bits == 0 {
        b'R'
    } else {
        let i = bits.trailing_zeros() as usize;
        LETTERS.get(i).copied().unwrap_or(b'?')
    };
    let plus = if v & report_max != 0 {
        PrevState::PREEMPTED
    } else {
        0
    };
    PrevState(letter | plus)
}

/// tick_stop's `dependency` as printed (`__print_symbolic`).
fn dependency_name(v: i64) -> &'static str {
    match v {
        0 => "NONE",
        1 => "POSIX_TIMER",
        2 => "PERF_EVENTS",
        4 => "SCHED",
        8 => "CLOCK_UNSTABLE",
        16 => "RCU",
        32 => "RCU_EXP",
        _ => "?",
    }
}

impl EventDecoder {
    /// Resolves the fields cidscope reads; errors name the event and the missing field.
    pub fn new(f: &EventFormat) -> Result<EventDecoder, String> {
        let r = |n: &str| f.field(n).map(FieldRef::from);
        let o = |n: &str| f.field(n).ok().map(FieldRef::from);
        let layout = match f.name.as_str() {
            "rseq_update" => Layout::RseqUpdate {
                cpu_id: r("cpu_id")?,
                node_id: o("node_id"),
                mm_cid: r("mm_cid").map_err(|e| {
                    format!("{e}; rseq_update gained mm_cid in Linux 6.3, this kernel is older")
                })?,
            },
            "sched_switch" => Layout::Switch {
                prev_comm: r("prev_comm")?,
                prev_pid: r("prev_pid")?,
                prev_prio: r("prev_prio")?,
                prev_state: r("prev_state")?,
                next_comm: r("next_comm")?,
                next_pid: r("next_pid")?,
                next_prio: r("next_prio")?,
            },
            "sched_migrate_task" => Layout::Migrate {
                comm: r("comm")?,
                pid: r("pid")?,
                prio: r("prio")?,
                orig_cpu: r("orig_cpu")?,
                dest_cpu: r("dest_cpu")?,
            },
            "sched_process_fork" => Layout::Fork {
                parent_comm: r("parent_comm")?,
                parent_pid: r("parent_pid")?,
                child_comm: r("child_comm")?,
                child_pid: r("child_pid")?,
            },
            "sched_process_exec" => Layout::Exec {
                filename: r("filename")?,
                pid: r("pid")?,
                old_pid: r("old_pid")?,
            },
            "sched_process_exit" => Layout::Exit {
                comm: r("comm")?,
                pid: r("pid")?,
                prio: r("prio")?,
                group_dead: o("group_dead"),
            },
            "task_newtask" => Layout::NewTask {
                pid: r("pid")?,
                comm: r("comm")?,
                clone_flags: r("clone_flags")?,
                oom_score_adj: o("oom_score_adj"),
            },
            "hrtimer_expire_entry" => Layout::Hrtimer {
                function: r("function")?,
            },
            "tick_stop" => Layout::TickStop {
                success: r("success")?,
                dependency: o("dependency"),
            },
            other => return Err(format!("cidscope does not decode {}:{other}", f.system)),
        };
        Ok(EventDecoder {
            system: f.system.clone(),
            name: f.name.clone(),
            id: f.id,
            common_flags: r("common_flags")?,
            common_preempt: r("common_preempt_count")?,
            common_pid: r("common_pid")?,
            layout,
        })
    }

    /// Reads the task ids of a record; `None` if it is too short.
    pub fn peek(&self, raw: &[u8]) -> Option<Peek> {
        const NONE: Tid = crate::events::TID_UNKNOWN;
        let t = |f: &FieldRef| f.int(raw).map(tid_of);
        let mut new_task = None;
        let related = match &self.layout {
            Layout::Switch {
                prev_pid, next_pid, ..
            } => [t(prev_pid)?, t(next_pid)?],
            Layout::Migrate { pid, .. } | Layout::Exit { pid, .. } => [t(pid)?, NONE],
            Layout::Fork {
                parent_pid,
                child_pid,
                ..
            } => [t(parent_pid)?, t(child_pid)?],
            Layout::Exec { pid, old_pid, .. } => [t(pid)?, t(old_pid)?],
            Layout::NewTask {
                pid, clone_flags, ..
            } => {
                let child = t(pid)?;
                new_task = Some((child, clone_flags.int(raw)? as u64));
                [child, NONE]
            }
            Layout::RseqUpdate { .. } | Layout::Hrtimer { .. } | Layout::TickStop { .. } => {
                [NONE, NONE]
            }
        };
        Some(Peek {
            common_pid: t(&self.common_pid)?,
            related,
            new_task,
        })
    }

    /// Decodes `raw` (recorded on `cpu` at `ts`). Errors say what was expected.
    pub fn decode(
        &self,
        raw: &[u8],
        ts: u64,
        cpu: u16,
        strings: &mut Strings,
        syms: &Kallsyms,
    ) -> Result<Decoded, String> {
        let short = || {
            format!(
                "{}:{} record of {} bytes is shorter than its tracefs format says",
                self.system,
                self.name,
                raw.len()
            )
        };
        let int = |f: &FieldRef| f.int(raw).ok_or_else(short);
        let text = |f: &FieldRef, strings: &mut Strings| -> Result<StrId, String> {
            Ok(strings.intern(f.str(raw).ok_or_else(short)?))
        };
        let mut aux = EventAux {
            irq_flags: int(&self.common_flags)? as u8,
            preempt_count: int(&self.common_preempt)? as u8,
            ..Default::default()
        };
        let tid = tid_of(int(&self.common_pid)?);
        let mut comms = [None, None];
        let clamp16 = |v: i64| v.clamp(i16::MIN as i64, i16::MAX as i64) as i16;
        let cpu16 = |v: i64| u16::try_from(v).unwrap_or(u16::MAX);
        let kind = match &self.layout {
            Layout::RseqUpdate {
                cpu_id,
                node_id,
                mm_cid,
            } => EventKind::RseqUpdate {
                cpu_id: int(cpu_id)? as i32,
                node_id: match node_id {
                    Some(n) => int(n)? as i32,
                    None => 0,
                },
                mm_cid: int(mm_cid)? as i32,
            },
            Layout::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state: ps,
                next_comm,
                next_pid,
                next_prio,
            } => {
                let pc = text(prev_comm, strings)?;
                let nc = text(next_comm, strings)?;
                let (p, n) = (tid_of(int(prev_pid)?), tid_of(int(next_pid)?));
                aux.text = pc;
                aux.prio = clamp16(int(prev_prio)?);
                comms = [Some((p, pc)), Some((n, nc))];
                EventKind::SchedSwitch {
                    prev_tid: p,
                    next_tid: n,
                    next_comm: nc,
                    next_prio: clamp16(int(next_prio)?),
                    prev_state: prev_state(int(ps)?),
                }
            }
            Layout::Migrate {
                comm,
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => {
                let c = text(comm, strings)?;
                let t = tid_of(int(pid)?);
                aux.text = c;
                aux.prio = clamp16(int(prio)?);
                comms[0] = Some((t, c));
                EventKind::SchedMigrateTask {
                    tid: t,
                    orig_cpu: cpu16(int(orig_cpu)?),
                    dest_cpu: cpu16(int(dest_cpu)?),
                }
            }
            Layout::Fork {
                parent_comm,
                parent_pid,
                child_comm,
                child_pid,
            } => {
                let pc = text(parent_comm, strings)?;
                let cc = text(child_comm, strings)?;
                let (p, c) = (tid_of(int(parent_pid)?), tid_of(int(child_pid)?));
                aux.text = pc;
                aux.text2 = cc;
                comms = [Some((p, pc)), Some((c, cc))];
                EventKind::SchedProcessFork {
                    parent: p,
                    child: c,
                }
            }
            Layout::Exec {
                filename,
                pid,
                old_pid,
            } => {
                aux.text = text(filename, strings)?;
                EventKind::SchedProcessExec {
                    tid: tid_of(int(pid)?),
                    old_tid: tid_of(int(old_pid)?),
                }
            }
            Layout::Exit {
                comm,
                pid,
                prio,
                group_dead,
            } => {
                let c = text(comm, strings)?;
                let t = tid_of(int(pid)?);
                aux.text = c;
                aux.prio = clamp16(int(prio)?);
                aux.flag = match group_dead {
                    Some(g) => int(g)? != 0,
                    None => false,
                };
                comms[0] = Some((t, c));
                EventKind::SchedProcessExit { tid: t }
            }
            Layout::NewTask {
                pid,
                comm,
                clone_flags,
                oom_score_adj,
            } => {
                let c = text(comm, strings)?;
                let t = tid_of(int(pid)?);
                aux.text = c;
                aux.prio = match oom_score_adj {
                    Some(o) => clamp16(int(o)?),
                    None => 0,
                };
                comms[0] = Some((t, c));
                EventKind::TaskNewtask {
                    tid: t,
                    clone_flags: int(clone_flags)? as u64,
                }
            }
            Layout::Hrtimer { function } => {
                let addr = int(function)? as u64;
                match syms.tick_at(addr) {
                    Some(name) => {
                        aux.text = strings.intern_str(name);
                        EventKind::Tick
                    }
                    None => {
                        aux.text = match syms.name_at(addr) {
                            Some(n) => strings.intern_str(n),
                            None => strings.intern(format!("0x{addr:x}").as_bytes()),
                        };
                        EventKind::Other {
                            name: strings.intern(self.name.as_bytes()),
                        }
                    }
                }
            }
            Layout::TickStop {
                success,
                dependency,
            } => {
                if let Some(d) = dependency {
                    aux.text = strings.intern_str(dependency_name(int(d)?));
                }
                EventKind::TickStop {
                    success: int(success)? != 0,
                }
            }
        };
        Ok(Decoded {
            event: Event { ts, tid, cpu, kind },
            aux,
            comms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::live::format::parse_format;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;
";

    const EXEC: &str = "name: sched_process_exec\nID: 365\nformat:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;
\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;
\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;
";

    fn put(raw: &mut [u8], off: usize, bytes: &[u8]) {
        raw[off..off + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn decodes_switch_by_format_offsets() {
        let d = EventDecoder::new(&parse_format("sched", SWITCH).unwrap()).unwrap();
        let mut raw = vec![0u8; 64];
        put(&mut raw, 0, &372u16.to_ne_bytes());
        raw[2] = 0x01; // irqs off
        raw[3] = 0x02; // preempt depth 2
        put(&mut raw, 4, &10i32.to_ne_bytes());
        put(&mut raw, 8, b"bash");
        put(&mut raw, 24, &10i32.to_ne_bytes());
        put(&mut raw, 28, &120i32.to_ne_bytes());
        put(&mut raw, 32, &0x101i64.to_ne_bytes()); // S + preempted bit
        put(&mut raw, 40, b"my worker 1\0junk");
        put(&mut raw, 56, &11i32.to_ne_bytes());
        put(&mut raw, 60, &100i32.to_ne_bytes());
        let mut s = Strings::new();
        let out = d.decode(&raw, 5, 1, &mut s, &Kallsyms::default()).unwrap();
        assert_eq!((out.event.ts, out.event.tid, out.event.cpu), (5, 10, 1));
        match out.event.kind {
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                prev_state,
            } => {
                assert_eq!((prev_tid, next_tid, next_prio), (10, 11, 100));
                assert_eq!(s.get(next_comm), b"my worker 1");
                assert_eq!(prev_state.text(), "S+");
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(
            (out.aux.irq_flags, out.aux.preempt_count, out.aux.prio),
            (1, 2, 120)
        );
        assert_eq!(s.get(out.aux.text), b"bash");
        // a short record is an error naming the event, not a panic
        let e = d
            .decode(&raw[..40], 5, 1, &mut s, &Kallsyms::default())
            .unwrap_err();
        assert!(e.contains("sched:sched_switch record of 40 bytes"), "{e}");
    }

    #[test]
    fn decodes_data_loc_strings() {
        let d = EventDecoder::new(&parse_format("sched", EXEC).unwrap()).unwrap();
        let mut raw = vec![0u8; 32];
        put(&mut raw, 4, &7i32.to_ne_bytes());
        put(&mut raw, 8, &((9u32 << 16) | 20).to_ne_bytes());
        put(&mut raw, 12, &7i32.to_ne_bytes());
        put(&mut raw, 16, &8i32.to_ne_bytes());
        put(&mut raw, 20, b"/bin/true\0");
        let mut s = Strings::new();
        let out = d.decode(&raw, 1, 0, &mut s, &Kallsyms::default()).unwrap();
        assert_eq!(
            out.event.kind,
            EventKind::SchedProcessExec { tid: 7, old_tid: 8 }
        );
        assert_eq!(s.get(out.aux.text), b"/bin/true");
    }

    #[test]
    fn prev_state_letters_match_the_kernel_print() {
        assert_eq!(prev_state(0).text(), "R");
        assert_eq!(prev_state(0x100).text(), "R+");
        assert_eq!(prev_state(1).text(), "S");
        assert_eq!(prev_state(2).text(), "D");
        assert_eq!(prev_state(0x80).text(), "I");
    }
}
