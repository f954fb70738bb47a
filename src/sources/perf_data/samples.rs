//! Samples made into events: the CPU and time checked, the task noted, `PERF_SAMPLE_READ`
//! delivered per counter as perf delivers it, a tracepoint decoded from its raw data and any
//! other event kept by its name; lost records; an exec's new comm.

use super::Reader;
use super::records;
use crate::events::{CPU_UNKNOWN, Event, EventKind, TID_UNKNOWN, TaskMeta, Tid, Trace};

/// What every event made of one sample shares.
struct SampleAt {
    ts: u64,
    cpu: u16,
    tid: Option<Tid>,
    offset: u64,
}

impl Reader<'_> {
    pub(super) fn lost(&mut self, ts: Option<u64>, cpu: Option<u32>, count: u64) {
        let ts = ts
            .filter(|&t| t <= crate::events::MAX_TS)
            .unwrap_or_else(|| self.events.last().map_or(0, |e| e.ts));
        self.events.push(Event {
            ts,
            tid: 0,
            cpu: cpu
                .filter(|&c| c < Trace::MAX_CPUS)
                .map_or(CPU_UNKNOWN, |c| c as u16),
            kind: EventKind::Lost {
                count: Some(count.min(u32::MAX as u64) as u32),
            },
        });
    }

    pub(super) fn sample(&mut self, idx: usize, s: records::SampleFields, offset: u64) {
        if s.extra > 0 {
            let o = &mut self.oversized;
            if o.0 == 0 {
                o.2 = offset;
            }
            o.0 += 1;
            o.1 += s.extra as u64;
        }
        let ts = s.timestamp.unwrap_or(0);
        if ts > crate::events::MAX_TS {
            let msg = format!(
                "{}: timestamp {ts} ns (expected below 2^63)",
                self.place(offset)
            );
            self.bad(msg);
            return;
        }
        // the CPUs the header states (HEADER_NRCPUS: the highest present CPU + 1) bound the
        // CPU of a sample: one past them is a damaged record, not a CPU to model
        let stated = self
            .trace
            .ncpus_hint
            .filter(|&n| (1..=Trace::MAX_CPUS).contains(&n));
        let cpu = match s.cpu {
            Some(c) if c < stated.unwrap_or(Trace::MAX_CPUS) => c as u16,
            Some(c) => {
                let msg = match stated {
                    Some(n) => format!(
                        "{}: CPU {c} (expected below {n}, the CPUs the header states)",
                        self.place(offset)
                    ),
                    None => format!("{}: CPU {c} (expected below 8192)", self.place(offset)),
                };
                self.bad(msg);
                return;
            }
            None => CPU_UNKNOWN,
        };
        let known = s.tid.filter(|&t| t >= 0).map(|t| t as Tid);
        // (the task of the previous sample, noted already while no TGID changed: no lookup)
        if let Some(t) = known
            && (self.last_task != (t, s.pid) || !self.tgids.no_changes())
        {
            self.last_task = (t, s.pid);
            let tgid = s.pid.filter(|&p| p >= 0).map(|p| p as Tid);
            match self.trace.tasks.get_mut(&t) {
                // (the same TGID as the task's first, none changed yet: nothing to note)
                Some(m) if m.tgid == tgid && self.tgids.no_changes() => {}
                Some(m) => {
                    if let Some(c) = self.tgids.observe(m, t, tgid, ts) {
                        self.trace.tgid_changes.push(c);
                    }
                }
                None => {
                    let comm = self.threads.comm_of(t, &mut self.trace.strings);
                    self.trace.tasks.insert(t, TaskMeta { tgid, comm });
                }
            }
        }
        let at = SampleAt {
            ts,
            cpu,
            tid: known,
            offset,
        };
        match s.read {
            // PERF_SAMPLE_READ: perf delivers one sample per counter whose value moved since
            // its last sample (`deliver_sample_group` / `deliver_sample_value`).
            Some(read) => self.sample_read(idx, &at, read, s.raw.as_deref()),
            None => self.push_sample(idx, &at, s.raw.as_deref()),
        }
    }

    /// The samples perf makes of a `PERF_SAMPLE_READ`: per counter (the group leader first), a
    /// sample of that counter's event when its value changed since the counter's last sample
    /// (the change is the sample's period; perf drops a sample of period 0).
    fn sample_read(
        &mut self,
        idx: usize,
        at: &SampleAt,
        read: records::ReadValues,
        raw: Option<&[u8]>,
    ) {
        let Some(a) = self.attrs.clone() else { return };
        let group = a.list[idx].read_format & records::FORMAT_GROUP != 0;
        for (k, (value, id)) in read.iter().enumerate() {
            // without ids only a single counter (or a group's leader) is known to be this event
            let target = match id {
                Some(id) => a.of_id(id),
                None if k == 0 || !group => Some(idx),
                None => None,
            };
            let Some(target) = target else {
                self.read_unknown += 1;
                continue;
            };
            let key = id.unwrap_or(u64::MAX - idx as u64);
            let prev = self.read_last.insert(key, value).unwrap_or(0);
            if value == prev {
                self.read_unchanged += 1;
                continue;
            }
            // the leader's sample is this record (its raw data); a member's has only its name
            self.push_sample(target, at, if target == idx { raw } else { None });
        }
    }

    /// One sample of attribute `idx` as an event: a tracepoint decoded from its raw data, any
    /// other event by its name.
    fn push_sample(&mut self, idx: usize, at: &SampleAt, raw: Option<&[u8]>) {
        let Some(a) = &self.attrs else { return };
        let attr = &a.list[idx];
        let strings = &mut self.trace.strings;
        let (kind, hr) = match (attr.tracepoint_id(), &self.decoder, raw) {
            (Some(id), Some(d), Some(raw)) => match d.decode(id, raw, strings) {
                Ok(k) => {
                    if let EventKind::RseqUpdate { .. } = k.0 {
                        self.trace.rseq_irqs_off += u64::from(d.irqs_off(raw));
                    }
                    k
                }
                Err(e) => {
                    let msg = format!("{}: sample of tracepoint {id}: {e}", self.place(at.offset));
                    self.bad(msg);
                    return;
                }
            },
            _ => {
                if attr.tracepoint_id().is_none() {
                    *self.non_tracepoint.entry(idx).or_default() += 1;
                }
                let name = match self.other_names.get(&idx) {
                    Some(&n) => n,
                    None => {
                        let n = strings.intern(attr.count_name().as_bytes());
                        self.other_names.insert(idx, n);
                        n
                    }
                };
                (EventKind::Other { name }, None)
            }
        };
        let tid = match (at.tid, kind) {
            (Some(t), _) => t,
            // The kernel reports -1 for a task already unhashed (its last switch): the switch
            // still names it, as `perf script`'s text does.
            (None, EventKind::SchedSwitch { prev_tid, .. }) => prev_tid,
            (None, _) => TID_UNKNOWN,
        };
        if at.cpu == CPU_UNKNOWN {
            self.cpu_unknown += 1;
        }
        // noted here, while the task map is hot, rather than in a pass over every event
        let named = match kind {
            EventKind::SchedSwitch { next_tid, .. } => Some(next_tid),
            EventKind::SchedProcessFork { child, .. } => Some(child),
            EventKind::SchedWakeupNew { tid, .. } | EventKind::TaskNewtask { tid, .. } => Some(tid),
            _ => None,
        };
        if let Some(t) = named
            && !self.trace.tasks.contains_key(&t)
        {
            self.mentioned.push(t);
        }
        if let Some(h) = hr
            && at.cpu != CPU_UNKNOWN
        {
            self.ticks.push(self.events.len(), at.cpu, h);
        }
        self.events.push(Event {
            ts: at.ts,
            tid,
            cpu: at.cpu,
            kind,
        });
    }

    /// An exec (a COMM record flagged `PERF_RECORD_MISC_COMM_EXEC`): from now on the task is
    /// named by its new comm, as perf names it.
    pub(super) fn exec_comm(&mut self, tid: i32, _ts: Option<u64>) {
        let Ok(tid) = Tid::try_from(tid) else { return };
        let comm = self.threads.comm_of(tid, &mut self.trace.strings);
        self.execs += 1;
        if let Some(m) = self.trace.tasks.get_mut(&tid) {
            m.comm = comm;
        }
    }
}
