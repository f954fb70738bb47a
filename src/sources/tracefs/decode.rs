//! Raw tracepoint records → canonical [`EventKind`]s, through the field offsets of the format
//! files stored in the capture (never constants): the same mapping as the text readers
//! (`sources::payload`).

use crate::events::{EventKind, PrevState, StrId, Strings, Tid};
use crate::sources::binary::cursor::int_at;
use crate::sources::tracefs::format::{EventFormat, Field, StateLetters};

/// Where a field is in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F {
    pub offset: u32,
    pub size: u8,
    pub signed: bool,
}

impl F {
    fn of(f: &Field) -> Option<F> {
        if f.dynamic || f.size == 0 || f.size > 255 {
            return None;
        }
        Some(F {
            offset: u32::try_from(f.offset).ok()?,
            size: f.size as u8,
            signed: f.signed,
        })
    }
}

/// How to decode one event id.
#[derive(Clone, Debug)]
enum Spec {
    Rseq {
        cpu_id: F,
        node_id: Option<F>,
        mm_cid: F,
    },
    IpFixup,
    Switch {
        prev_pid: F,
        prev_state: F,
        next_comm: F,
        next_pid: F,
        next_prio: F,
    },
    Migrate {
        pid: F,
        orig: F,
        dest: F,
    },
    Fork {
        parent: F,
        child: F,
    },
    Newtask {
        pid: F,
        flags: F,
    },
    Exec {
        pid: F,
        old_pid: F,
    },
    Exit {
        pid: F,
    },
    WakeupNew {
        pid: F,
        target: F,
    },
    Hrtimer {
        name: StrId,
        function: F,
        hrtimer: Option<F>,
        now: Option<F>,
    },
    TickStop {
        success: F,
    },
    Other {
        name: StrId,
    },
}

/// What an `hrtimer_expire_entry` record said, for telling the tick apart without kallsyms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HrtimerSample {
    pub function: u64,
    pub hrtimer: u64,
    pub now: i64,
}

/// Decodes the raw records of one capture.
#[derive(Debug)]
pub struct Decoder {
    specs: Vec<Option<Spec>>,
    big_endian: bool,
    states: StateLetters,
    /// Addresses of `tick_nohz_handler` / `tick_sched_timer`; `None` when the capture carries no
    /// kallsyms and the tick has to be inferred (see `tick.rs`).
    tick_functions: Option<Vec<u64>>,
    pub common_type: F,
    pub common_pid: F,
    /// Events whose format lacks a field cidscope needs (decoded as `Other`).
    pub degraded: Vec<String>,
}

fn field(fmt: &EventFormat, name: &str) -> Option<F> {
    fmt.field(name).and_then(F::of)
}

impl Decoder {
    pub fn new(
        formats: &[EventFormat],
        big_endian: bool,
        tick_functions: Option<Vec<u64>>,
        strings: &mut Strings,
    ) -> Decoder {
        let mut d = Decoder {
            specs: Vec::new(),
            big_endian,
            states: StateLetters::default(),
            tick_functions,
            common_type: F {
                offset: 0,
                size: 2,
                signed: false,
            },
            common_pid: F {
                offset: 4,
                size: 4,
                signed: true,
            },
            degraded: Vec::new(),
        };
        if let Some(f) = formats.iter().find(|f| f.field("common_type").is_some()) {
            d.common_type = field(f, "common_type").unwrap_or(d.common_type);
            d.common_pid = field(f, "common_pid").unwrap_or(d.common_pid);
        }
        for fmt in formats {
            let spec = d.spec_for(fmt, strings);
            let id = fmt.id as usize;
            if id > 1 << 20 {
                continue;
            }
            if d.specs.len() <= id {
                d.specs.resize(id + 1, None);
            }
            d.specs[id] = Some(spec);
        }
        d
    }

    fn spec_for(&mut self, fmt: &EventFormat, strings: &mut Strings) -> Spec {
        let name = strings.intern(fmt.name.as_bytes());
        let f = |n: &str| field(fmt, n);
        let spec = match fmt.name.as_str() {
            "rseq_update" => (|| {
                Some(Spec::Rseq {
                    cpu_id: f("cpu_id")?,
                    node_id: f("node_id"),
                    mm_cid: f("mm_cid")?,
                })
            })(),
            "rseq_ip_fixup" => Some(Spec::IpFixup),
            "sched_switch" => {
                self.states = StateLetters::from_print_fmt(&fmt.print_fmt);
                (|| {
                    Some(Spec::Switch {
                        prev_pid: f("prev_pid")?,
                        prev_state: f("prev_state")?,
                        next_comm: f("next_comm")?,
                        next_pid: f("next_pid")?,
                        next_prio: f("next_prio")?,
                    })
                })()
            }
            "sched_migrate_task" => (|| {
                Some(Spec::Migrate {
                    pid: f("pid")?,
                    orig: f("orig_cpu")?,
                    dest: f("dest_cpu")?,
                })
            })(),
            "sched_process_fork" => (|| {
                Some(Spec::Fork {
                    parent: f("parent_pid")?,
                    child: f("child_pid")?,
                })
            })(),
            "task_newtask" => (|| {
                Some(Spec::Newtask {
                    pid: f("pid")?,
                    flags: f("clone_flags")?,
                })
            })(),
            "sched_process_exec" => (|| {
                Some(Spec::Exec {
                    pid: f("pid")?,
                    old_pid: f("old_pid")?,
                })
            })(),
            "sched_process_exit" => f("pid").map(|pid| Spec::Exit { pid }),
            "sched_wakeup_new" => (|| {
                Some(Spec::WakeupNew {
                    pid: f("pid")?,
                    target: f("target_cpu")?,
                })
            })(),
            "hrtimer_expire_entry" => f("function").map(|function| Spec::Hrtimer {
                name,
                function,
                hrtimer: f("hrtimer"),
                now: f("now"),
            }),
            "tick_stop" => f("success").map(|success| Spec::TickStop { success }),
            _ => Some(Spec::Other { name }),
        };
        spec.unwrap_or_else(|| {
            self.degraded.push(format!("{}:{}", fmt.system, fmt.name));
            Spec::Other { name }
        })
    }

    pub fn knows(&self, id: u32) -> bool {
        matches!(self.specs.get(id as usize), Some(Some(_)))
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

    #[inline]
    fn get(&self, raw: &[u8], f: F) -> Option<i64> {
        int_at(
            raw,
            f.offset as usize,
            f.size as usize,
            f.signed,
            self.big_endian,
        )
    }

    /// Decodes record `raw` of event `id`. An `hrtimer_expire_entry` whose callback cannot be
    /// named yet comes back as `Other` plus its sample, for `tick::infer`.
    pub fn decode(
        &self,
        id: u32,
        raw: &[u8],
        strings: &mut Strings,
    ) -> Result<(EventKind, Option<HrtimerSample>), String> {
        let Some(Some(spec)) = self.specs.get(id as usize) else {
            return Err(format!("event id {id} has no format in the capture"));
        };
        let g = |f: F| -> Result<i64, String> {
            self.get(raw, f).ok_or_else(|| {
                format!(
                    "record of {} bytes too short for a field at offset {} (size {})",
                    raw.len(),
                    f.offset,
                    f.size
                )
            })
        };
        let tid = |f: F| -> Result<Tid, String> { Ok(g(f)? as Tid) };
        let cpu = |f: F| -> Result<u16, String> {
            let v = g(f)?;
            u16::try_from(v)
                .ok()
                .filter(|&c| (c as u32) < crate::events::Trace::MAX_CPUS)
                .ok_or_else(|| {
                    format!(
                        "CPU {v} in a field at offset {}: expected below 8192",
                        f.offset
                    )
                })
        };
        let kind = match *spec {
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
            } => {
                let (letter, preempted) = self.states.letters(g(prev_state)? as u64);
                let at = next_comm.offset as usize;
                let comm = raw
                    .get(at..at + next_comm.size as usize)
                    .ok_or("record too short for next_comm")?;
                let comm = &comm[..memchr::memchr(0, comm).unwrap_or(comm.len())];
                EventKind::SchedSwitch {
                    prev_tid: tid(prev_pid)?,
                    next_tid: tid(next_pid)?,
                    next_comm: strings.intern(comm),
                    next_prio: g(next_prio)?.clamp(i16::MIN as i64, i16::MAX as i64) as i16,
                    prev_state: PrevState(
                        letter | if preempted { PrevState::PREEMPTED } else { 0 },
                    ),
                }
            }
            Spec::Migrate { pid, orig, dest } => EventKind::SchedMigrateTask {
                tid: tid(pid)?,
                orig_cpu: cpu(orig)?,
                dest_cpu: cpu(dest)?,
            },
            Spec::Fork { parent, child } => EventKind::SchedProcessFork {
                parent: tid(parent)?,
                child: tid(child)?,
            },
            Spec::Newtask { pid, flags } => EventKind::TaskNewtask {
                tid: tid(pid)?,
                clone_flags: g(flags)? as u64,
            },
            Spec::Exec { pid, old_pid } => EventKind::SchedProcessExec {
                tid: tid(pid)?,
                old_tid: tid(old_pid)?,
            },
            Spec::Exit { pid } => EventKind::SchedProcessExit { tid: tid(pid)? },
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
            Spec::TickStop { success } => EventKind::TickStop {
                success: g(success)? != 0,
            },
            Spec::Other { name } => EventKind::Other { name },
        };
        Ok((kind, None))
    }

    /// Interned name of event `id`, for messages and for `Other`.
    pub fn name_of(&self, id: u32) -> Option<StrId> {
        match self.specs.get(id as usize)? {
            Some(Spec::Other { name }) | Some(Spec::Hrtimer { name, .. }) => Some(*name),
            _ => None,
        }
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
}
