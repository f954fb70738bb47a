//! Raw tracepoint records (the bytes tracefs stores; PERF_SAMPLE_RAW carries the same) →
//! canonical [`EventKind`]s, every field found through the format files (never constants): one
//! decoder for trace.dat, perf.data and live captures. The text readers map the printed fields
//! the same way (`sources::payload`).

use crate::events::{EventAux, EventKind, PrevState, StrId, Strings, Tid};
use crate::sources::binary::cursor::int_at;
use crate::sources::tracefs::fields::{Entry, F, Kind, Spec, field, resolve};
use crate::sources::tracefs::format::{EventFormat, StateLetters};

/// What an `hrtimer_expire_entry` record said, for telling the tick apart without kallsyms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HrtimerSample {
    pub function: u64,
    pub hrtimer: u64,
    pub now: i64,
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

/// Comms a record names (tid, comm), for the task table.
pub type Comms = [Option<(Tid, StrId)>; 2];

/// Names of kernel functions, for the hrtimer callback an ftrace line prints.
pub trait Symbols {
    /// The scheduler-tick handler at `addr`, if it is one.
    fn tick_at(&self, addr: u64) -> Option<&'static str>;
    /// The symbol starting at `addr`.
    fn name_at(&self, addr: u64) -> Option<&str>;
}

/// Why a record did not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("event id {id} has no format in the capture")]
    NoFormat { id: u32 },
    #[error("record of {len} bytes too short for a field at offset {offset} (size {size})")]
    Short { len: usize, offset: u32, size: u8 },
    #[error("CPU {value} in a field at offset {offset}: expected below 8192")]
    BadCpu { value: i64, offset: u32 },
    #[error("record too short for next_comm")]
    ShortComm,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Unknown,
    Other(StrId),
    Known(u32),
}

/// Decodes the raw records of one capture.
#[derive(Debug)]
pub struct Decoder {
    /// Per event id: how to decode it (a small table however many formats a capture holds:
    /// the ~12 events cidscope decodes have entries, every other one is just its name).
    specs: Vec<Slot>,
    entries: Vec<Entry>,
    big_endian: bool,
    states: StateLetters,
    /// Addresses of `tick_nohz_handler` / `tick_sched_timer`; `None` when the capture carries no
    /// kallsyms and the tick has to be inferred (see `binary::tick`).
    tick_functions: Option<Vec<u64>>,
    pub common_type: F,
    pub common_pid: F,
    common_flags: Option<F>,
    common_preempt: Option<F>,
    /// Events whose format lacks a field cidscope needs (decoded as `Other`).
    pub degraded: Vec<String>,
    /// The ids of `kernel_stack` and `user_stack` (ftrace's stack records).
    stacks: Vec<u32>,
}

fn clamp16(v: i64) -> i16 {
    v.clamp(i16::MIN as i64, i16::MAX as i64) as i16
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

impl Decoder {
    /// The decoder of `formats` (each event's name interned in `strings`, in order).
    pub fn new(
        formats: &[EventFormat],
        big_endian: bool,
        tick_functions: Option<Vec<u64>>,
        strings: &mut Strings,
    ) -> Decoder {
        let mut d = Decoder {
            stacks: Vec::new(),
            specs: Vec::new(),
            entries: Vec::new(),
            big_endian,
            states: StateLetters::default(),
            tick_functions,
            common_type: F {
                offset: 0,
                size: 2,
                signed: false,
                kind: Kind::Int,
            },
            common_pid: F {
                offset: 4,
                size: 4,
                signed: true,
                kind: Kind::Int,
            },
            common_flags: None,
            common_preempt: None,
            degraded: Vec::new(),
        };
        if let Some(f) = formats.iter().find(|f| f.field("common_type").is_some()) {
            d.common_type = field(f, "common_type").unwrap_or(d.common_type);
            d.common_pid = field(f, "common_pid").unwrap_or(d.common_pid);
            d.common_flags = field(f, "common_flags");
            d.common_preempt = field(f, "common_preempt_count");
        }
        for fmt in formats {
            let name = strings.intern(fmt.name.as_bytes());
            if fmt.name == "kernel_stack" || fmt.name == "user_stack" {
                d.stacks.push(fmt.id);
            }
            if fmt.name == "sched_switch" {
                d.states = StateLetters::from_print_fmt(&fmt.print_fmt);
            }
            let (spec, missing) = resolve(fmt, name);
            let spec = spec.unwrap_or_else(|| {
                d.degraded.push(format!("{}:{}", fmt.system, fmt.name));
                Spec::Other { name }
            });
            let id = fmt.id as usize;
            if id > 1 << 20 {
                continue;
            }
            let slot = match spec {
                Spec::Other { name } if missing.is_none() => Slot::Other(name),
                spec => {
                    d.entries.push(Entry { spec, missing });
                    Slot::Known(d.entries.len() as u32 - 1)
                }
            };
            if d.specs.len() <= id {
                d.specs.resize(id + 1, Slot::Unknown);
            }
            d.specs[id] = slot;
        }
        d
    }

    pub fn knows(&self, id: u32) -> bool {
        !matches!(self.slot(id), Slot::Unknown)
    }

    /// The first field an ftrace line of event `id` prints that its format lacks.
    pub fn missing_for_text(&self, id: u32) -> Option<&'static str> {
        self.entry(id).and_then(|e| e.missing)
    }

    /// Whether hrtimer callbacks can be named (kallsyms present).
    pub fn tick_known(&self) -> bool {
        self.tick_functions.is_some()
    }

    /// The event id (`common_type`) of a raw record.
    pub fn event_id(&self, raw: &[u8]) -> Option<u32> {
        self.get(raw, self.common_type).map(|v| v as u32)
    }

    /// `common_pid` of a raw record.
    pub fn common_pid(&self, raw: &[u8]) -> Option<i64> {
        self.get(raw, self.common_pid)
    }

    /// Whether record `raw` was traced with interrupts disabled: bit 0 of `common_flags`
    /// (TRACE_FLAG_IRQS_OFF, kernel/trace/trace.h; the `d` of the text's irq-flags column).
    /// `false` where the format has no `common_flags`.
    #[inline]
    pub fn irqs_off(&self, raw: &[u8]) -> bool {
        match self.common_flags {
            // (an `unsigned char` in every format: its byte, whatever the byte order; read on
            // every rseq_update of a capture, so without the general reader)
            Some(f) if f.size == 1 => raw
                .get(f.offset as usize)
                .is_some_and(|b| b & EventAux::IRQS_OFF != 0),
            Some(f) => self
                .get(raw, f)
                .is_some_and(|v| v & i64::from(EventAux::IRQS_OFF) != 0),
            None => false,
        }
    }

    fn slot(&self, id: u32) -> Slot {
        self.specs
            .get(id as usize)
            .copied()
            .unwrap_or(Slot::Unknown)
    }

    fn entry(&self, id: u32) -> Option<&Entry> {
        match self.slot(id) {
            Slot::Known(i) => self.entries.get(i as usize),
            Slot::Unknown | Slot::Other(_) => None,
        }
    }

    #[inline(always)]
    fn get(&self, raw: &[u8], f: F) -> Option<i64> {
        int_at(
            raw,
            f.offset as usize,
            f.size as usize,
            f.signed,
            self.big_endian,
        )
    }

    #[inline(always)]
    fn int(&self, raw: &[u8], f: F) -> Result<i64, DecodeError> {
        self.get(raw, f).ok_or(DecodeError::Short {
            len: raw.len(),
            offset: f.offset,
            size: f.size,
        })
    }

    /// The bytes of a string field, up to its NUL.
    fn str<'r>(&self, raw: &'r [u8], f: F) -> Result<&'r [u8], DecodeError> {
        let short = DecodeError::Short {
            len: raw.len(),
            offset: f.offset,
            size: f.size,
        };
        let at = f.offset as usize;
        let s = match f.kind {
            Kind::DataLoc => {
                let v = self
                    .get(
                        raw,
                        F {
                            size: 4,
                            signed: false,
                            ..f
                        },
                    )
                    .ok_or(short.clone())? as u64;
                let (off, len) = ((v & 0xffff) as usize, ((v >> 16) & 0xffff) as usize);
                raw.get(off..off + len).ok_or(short)?
            }
            Kind::CharArray | Kind::Int => raw.get(at..at + f.size as usize).ok_or(short)?,
        };
        Ok(&s[..memchr::memchr(0, s).unwrap_or(s.len())])
    }

    /// Whether event `id` is a stack record (`options/stacktrace`): it belongs to the event
    /// before it, and is counted, not kept, as the text readers do with `<stack trace>`.
    pub fn is_stack(&self, id: u32) -> bool {
        self.stacks.contains(&id)
    }

    /// Decodes record `raw` of event `id`. An `hrtimer_expire_entry` whose callback cannot be
    /// named yet comes back as `Other` plus its sample, for `binary::tick`.
    pub fn decode(
        &self,
        id: u32,
        raw: &[u8],
        strings: &mut Strings,
    ) -> Result<(EventKind, Option<HrtimerSample>), DecodeError> {
        let entry = match self.slot(id) {
            Slot::Known(i) => &self.entries[i as usize],
            Slot::Other(name) => return Ok((EventKind::Other { name }, None)),
            Slot::Unknown => return Err(DecodeError::NoFormat { id }),
        };
        let g = |f: F| self.int(raw, f);
        let tid = |f: F| -> Result<Tid, DecodeError> { Ok(g(f)? as Tid) };
        let cpu = |f: F| -> Result<u16, DecodeError> {
            let v = g(f)?;
            u16::try_from(v)
                .ok()
                .filter(|&c| (c as u32) < crate::events::Trace::MAX_CPUS)
                .ok_or(DecodeError::BadCpu {
                    value: v,
                    offset: f.offset,
                })
        };
        let kind = match entry.spec {
            Spec::Rseq {
                cpu_id,
                node_id,
                mm_cid,
            } => EventKind::RseqUpdate {
                cpu_id: g(cpu_id)? as i32,
                node_id: match node_id {
                    Some(n) => g(n)? as i32,
                    None => 0,
                },
                mm_cid: g(mm_cid)? as i32,
            },
            Spec::IpFixup => EventKind::RseqIpFixup,
            Spec::Switch {
                prev_pid,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                let (letter, preempted) = self.states.letters(g(prev_state)? as u64);
                let at = next_comm.offset as usize;
                let comm = raw
                    .get(at..at + next_comm.size as usize)
                    .ok_or(DecodeError::ShortComm)?;
                let comm = &comm[..memchr::memchr(0, comm).unwrap_or(comm.len())];
                EventKind::SchedSwitch {
                    prev_tid: tid(prev_pid)?,
                    next_tid: tid(next_pid)?,
                    next_comm: strings.intern(comm),
                    next_prio: clamp16(g(next_prio)?),
                    prev_state: PrevState(
                        letter | if preempted { PrevState::PREEMPTED } else { 0 },
                    ),
                }
            }
            Spec::Migrate {
                pid, orig, dest, ..
            } => EventKind::SchedMigrateTask {
                tid: tid(pid)?,
                orig_cpu: cpu(orig)?,
                dest_cpu: cpu(dest)?,
            },
            Spec::Fork { parent, child, .. } => EventKind::SchedProcessFork {
                parent: tid(parent)?,
                child: tid(child)?,
            },
            Spec::Newtask { pid, flags, .. } => EventKind::TaskNewtask {
                tid: tid(pid)?,
                clone_flags: g(flags)? as u64,
            },
            Spec::Exec { pid, old_pid, .. } => EventKind::SchedProcessExec {
                tid: tid(pid)?,
                old_tid: tid(old_pid)?,
            },
            Spec::Exit { pid, .. } => EventKind::SchedProcessExit { tid: tid(pid)? },
            Spec::WakeupNew { pid, target } => EventKind::SchedWakeupNew {
                tid: tid(pid)?,
                target_cpu: cpu(target)?,
            },
            Spec::Hrtimer {
                name,
                function,
                hrtimer,
                now,
            } => {
                let func = g(function)? as u64;
                match &self.tick_functions {
                    Some(ticks) if ticks.contains(&func) => EventKind::Tick,
                    Some(_) => EventKind::Other { name },
                    None => {
                        let sample = HrtimerSample {
                            function: func,
                            hrtimer: hrtimer.and_then(|h| self.get(raw, h)).unwrap_or(0) as u64,
                            now: now.and_then(|n| self.get(raw, n)).unwrap_or(0),
                        };
                        return Ok((EventKind::Other { name }, Some(sample)));
                    }
                }
            }
            Spec::TickStop { success, .. } => EventKind::TickStop {
                success: g(success)? != 0,
            },
            Spec::Other { name } => EventKind::Other { name },
        };
        Ok((kind, None))
    }

    /// The tasks record `raw` of event `id` names, without decoding its strings.
    pub fn peek(&self, id: u32, raw: &[u8]) -> Option<Peek> {
        const NONE: Tid = crate::events::TID_UNKNOWN;
        let t = |f: F| self.get(raw, f).map(|v| v as Tid);
        let mut new_task = None;
        if let Slot::Unknown = self.slot(id) {
            return None;
        }
        let other = Spec::Other { name: StrId(0) };
        let related = match *self.entry(id).map_or(&other, |e| &e.spec) {
            Spec::Switch {
                prev_pid, next_pid, ..
            } => [t(prev_pid)?, t(next_pid)?],
            Spec::Migrate { pid, .. } | Spec::Exit { pid, .. } => [t(pid)?, NONE],
            Spec::Fork { parent, child, .. } => [t(parent)?, t(child)?],
            Spec::Exec { pid, old_pid, .. } => [t(pid)?, t(old_pid)?],
            Spec::Newtask { pid, flags, .. } => {
                let child = t(pid)?;
                new_task = Some((child, self.get(raw, flags)? as u64));
                [child, NONE]
            }
            _ => [NONE, NONE],
        };
        Some(Peek {
            common_pid: t(self.common_pid)?,
            related,
            new_task,
        })
    }

    /// What an ftrace line of record `raw` (event `id`, decoded as `kind`) prints beyond the
    /// event: the irq-flags columns, comms, prios, the file name, the hrtimer callback; and the
    /// comms it names (tid, comm), for the task table.
    pub fn line_fields(
        &self,
        id: u32,
        raw: &[u8],
        kind: &EventKind,
        strings: &mut Strings,
        syms: &dyn Symbols,
    ) -> Result<(EventAux, Comms), DecodeError> {
        if let Slot::Unknown = self.slot(id) {
            return Err(DecodeError::NoFormat { id });
        }
        let other = Spec::Other { name: StrId(0) };
        let spec = self.entry(id).map_or(&other, |e| &e.spec);
        let g = |f: Option<F>| f.map(|f| self.int(raw, f)).transpose();
        let text = |f: Option<F>, strings: &mut Strings| -> Result<StrId, DecodeError> {
            Ok(match f {
                Some(f) => strings.intern(self.str(raw, f)?),
                None => StrId(0),
            })
        };
        let mut aux = EventAux {
            irq_flags: g(self.common_flags)?.unwrap_or(0) as u8,
            preempt_count: g(self.common_preempt)?.unwrap_or(0) as u8,
            ..Default::default()
        };
        let mut comms = [None, None];
        match (spec, *kind) {
            (
                Spec::Switch {
                    prev_comm,
                    prev_prio,
                    ..
                },
                EventKind::SchedSwitch {
                    prev_tid,
                    next_tid,
                    next_comm,
                    ..
                },
            ) => {
                aux.text = text(*prev_comm, strings)?;
                aux.prio = clamp16(g(*prev_prio)?.unwrap_or(0));
                comms = [Some((prev_tid, aux.text)), Some((next_tid, next_comm))];
            }
            (Spec::Migrate { comm, prio, .. }, EventKind::SchedMigrateTask { tid, .. }) => {
                aux.text = text(*comm, strings)?;
                aux.prio = clamp16(g(*prio)?.unwrap_or(0));
                comms[0] = Some((tid, aux.text));
            }
            (
                Spec::Fork {
                    parent_comm,
                    child_comm,
                    ..
                },
                EventKind::SchedProcessFork { parent, child },
            ) => {
                aux.text = text(*parent_comm, strings)?;
                aux.text2 = text(*child_comm, strings)?;
                comms = [Some((parent, aux.text)), Some((child, aux.text2))];
            }
            (Spec::Exec { filename, .. }, _) => aux.text = text(*filename, strings)?,
            (
                Spec::Exit {
                    comm,
                    prio,
                    group_dead,
                    ..
                },
                EventKind::SchedProcessExit { tid },
            ) => {
                aux.text = text(*comm, strings)?;
                aux.prio = clamp16(g(*prio)?.unwrap_or(0));
                aux.flag = g(*group_dead)?.is_some_and(|v| v != 0);
                comms[0] = Some((tid, aux.text));
            }
            (
                Spec::Newtask {
                    comm,
                    oom_score_adj,
                    ..
                },
                EventKind::TaskNewtask { tid, .. },
            ) => {
                aux.text = text(*comm, strings)?;
                aux.prio = clamp16(g(*oom_score_adj)?.unwrap_or(0));
                comms[0] = Some((tid, aux.text));
            }
            (Spec::Hrtimer { function, .. }, _) => {
                let addr = self.int(raw, *function)? as u64;
                aux.text = match (syms.tick_at(addr), syms.name_at(addr)) {
                    (Some(tick), _) => strings.intern_str(tick),
                    (None, Some(n)) => strings.intern_str(n),
                    (None, None) => strings.intern(format!("0x{addr:x}").as_bytes()),
                };
            }
            (Spec::TickStop { dependency, .. }, _) => {
                if let Some(d) = g(*dependency)? {
                    aux.text = strings.intern_str(dependency_name(d));
                }
            }
            _ => {}
        }
        Ok((aux, comms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::tracefs::format::parse;

    fn fmt(text: &str, sys: &str) -> EventFormat {
        parse(text.as_bytes(), sys).unwrap()
    }

    const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

    #[test]
    fn decodes_through_the_offsets_in_the_format() {
        // A made-up layout with mm_cid first: offsets come from the file.
        let rseq = fmt(
            &format!(
                "name: rseq_update\nID: 7\nformat:\n{COMMON}\tfield:int mm_cid;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:int cpu_id;\toffset:12;\tsize:4;\tsigned:1;\n"
            ),
            "rseq",
        );
        let mut s = Strings::new();
        let d = Decoder::new(&[rseq], false, Some(vec![]), &mut s);
        let mut raw = vec![7u8, 0, 0, 0, 42, 0, 0, 0];
        raw.extend_from_slice(&3i32.to_le_bytes());
        raw.extend_from_slice(&1i32.to_le_bytes());
        assert_eq!(d.event_id(&raw), Some(7));
        assert_eq!(d.common_pid(&raw), Some(42));
        let (k, _) = d.decode(7, &raw, &mut s).unwrap();
        assert_eq!(
            k,
            EventKind::RseqUpdate {
                cpu_id: 1,
                node_id: 0,
                mm_cid: 3
            }
        );
        assert!(d.decode(7, &raw[..10], &mut s).is_err());
        assert!(d.decode(8, &raw, &mut s).is_err());
        // common_flags (byte 2): bit 0 is TRACE_FLAG_IRQS_OFF, the others are not
        assert!(!d.irqs_off(&raw));
        for (flags, off) in [(0x01u8, true), (0x0d, true), (0x0c, false), (0x02, false)] {
            raw[2] = flags;
            assert_eq!(d.irqs_off(&raw), off, "{flags:#x}");
        }
        assert!(!d.irqs_off(&raw[..2]), "a record cut before its flags");
    }

    #[test]
    fn missing_fields_degrade_to_other() {
        let old = fmt(
            &format!(
                "name: rseq_update\nID: 3\nformat:\n{COMMON}\tfield:int cpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"
            ),
            "rseq",
        );
        let mut s = Strings::new();
        let d = Decoder::new(&[old], false, Some(vec![]), &mut s);
        assert_eq!(d.degraded, vec!["rseq:rseq_update".to_string()]);
        let raw = [3u8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        let (k, _) = d.decode(3, &raw, &mut s).unwrap();
        assert!(matches!(k, EventKind::Other { .. }));
    }

    #[test]
    fn hrtimer_tick_by_address_or_deferred() {
        let h = fmt(
            &format!(
                "name: hrtimer_expire_entry\nID: 9\nformat:\n{COMMON}\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n"
            ),
            "timer",
        );
        let mut raw = vec![9u8, 0, 0, 0, 0, 0, 0, 0];
        raw.extend_from_slice(&0x1000u64.to_le_bytes());
        raw.extend_from_slice(&4_000_000i64.to_le_bytes());
        raw.extend_from_slice(&0xabcu64.to_le_bytes());
        let mut s = Strings::new();
        let d = Decoder::new(std::slice::from_ref(&h), false, Some(vec![0xabc]), &mut s);
        assert_eq!(d.decode(9, &raw, &mut s).unwrap(), (EventKind::Tick, None));
        let d = Decoder::new(std::slice::from_ref(&h), false, None, &mut s);
        let (k, smp) = d.decode(9, &raw, &mut s).unwrap();
        assert!(matches!(k, EventKind::Other { .. }));
        assert_eq!(
            smp,
            Some(HrtimerSample {
                function: 0xabc,
                hrtimer: 0x1000,
                now: 4_000_000
            })
        );
    }

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

    struct NoSymbols;
    impl Symbols for NoSymbols {
        fn tick_at(&self, _: u64) -> Option<&'static str> {
            None
        }
        fn name_at(&self, _: u64) -> Option<&str> {
            None
        }
    }

    fn put(raw: &mut [u8], off: usize, bytes: &[u8]) {
        raw[off..off + bytes.len()].copy_from_slice(bytes);
    }

    /// A live record (native byte order): the event, then what its ftrace line prints.
    #[test]
    fn decodes_switch_and_its_line_fields_by_format_offsets() {
        let f = fmt(SWITCH, "sched");
        let mut s = Strings::new();
        let d = Decoder::new(
            std::slice::from_ref(&f),
            cfg!(target_endian = "big"),
            Some(vec![]),
            &mut s,
        );
        assert_eq!(d.missing_for_text(372), None);
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
        let (kind, _) = d.decode(372, &raw, &mut s).unwrap();
        let EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm,
            next_prio,
            prev_state,
        } = kind
        else {
            panic!("{kind:?}")
        };
        assert_eq!((prev_tid, next_tid, next_prio), (10, 11, 100));
        assert_eq!(s.get(next_comm), b"my worker 1");
        assert_eq!(prev_state.text(), "S+");
        assert_eq!(d.common_pid(&raw), Some(10));
        let (aux, comms) = d.line_fields(372, &raw, &kind, &mut s, &NoSymbols).unwrap();
        assert_eq!((aux.irq_flags, aux.preempt_count, aux.prio), (1, 2, 120));
        assert_eq!(s.get(aux.text), b"bash");
        assert_eq!(comms, [Some((10, aux.text)), Some((11, next_comm))]);
        // a short record is an error saying so, not a panic
        assert_eq!(
            d.decode(372, &raw[..40], &mut s),
            Err(DecodeError::ShortComm)
        );
        assert_eq!(
            d.decode(372, &raw[..30], &mut s),
            Err(DecodeError::Short {
                len: 30,
                offset: 32,
                size: 8
            })
        );
        assert!(
            d.line_fields(372, &raw[..20], &kind, &mut s, &NoSymbols)
                .is_err()
        );
        let p = d.peek(372, &raw).unwrap();
        assert_eq!((p.common_pid, p.related, p.new_task), (10, [10, 11], None));
    }

    #[test]
    fn data_loc_strings_and_fields_an_ftrace_line_needs() {
        let f = fmt(EXEC, "sched");
        let mut s = Strings::new();
        let d = Decoder::new(
            std::slice::from_ref(&f),
            cfg!(target_endian = "big"),
            Some(vec![]),
            &mut s,
        );
        let mut raw = vec![0u8; 32];
        put(&mut raw, 4, &7i32.to_ne_bytes());
        put(&mut raw, 8, &((9u32 << 16) | 20).to_ne_bytes());
        put(&mut raw, 12, &7i32.to_ne_bytes());
        put(&mut raw, 16, &8i32.to_ne_bytes());
        put(&mut raw, 20, b"/bin/true\0");
        let (kind, _) = d.decode(365, &raw, &mut s).unwrap();
        assert_eq!(kind, EventKind::SchedProcessExec { tid: 7, old_tid: 8 });
        let (aux, _) = d.line_fields(365, &raw, &kind, &mut s, &NoSymbols).unwrap();
        assert_eq!(s.get(aux.text), b"/bin/true");
        // a format without prev_prio still decodes events, but cannot give an ftrace line
        let no_prio = fmt(&SWITCH.replace("prev_prio", "x_prio"), "sched");
        let d = Decoder::new(&[no_prio], false, Some(vec![]), &mut s);
        assert_eq!(d.missing_for_text(372), Some("prev_prio"));
        assert!(d.degraded.is_empty());
    }
}
