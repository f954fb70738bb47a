//! Writes a trace as tracefs `trace` text (`# tracer: nop` header, `(TGID)` column, event lines
//! in the print formats of Linux 6.18), which `sources::load` reads back.
//!
//! Timestamps are printed as tracefs prints them, `seconds.microseconds`; events are written in
//! the trace's order, so a replay applies them in the same order and rebuilds the same observed
//! per-task CID history (at microsecond resolution). Lost-event markers are written as
//! `CPU:N [LOST M EVENTS]` lines.
//!
//! The layout of every line is here, once; what a line prints beyond its canonical event (the
//! comms, prios, irq flags a [`Line`] holds) comes from its writer: [`write`] takes it from the
//! per-event [`EventAux`] of a live capture (neutral values without: flags `.....`, prio 120),
//! the simulator's recorder (`sim::record`) from the schedule it ran.

use crate::events::{Event, EventAux, EventKind, TID_UNKNOWN, Tid, Trace};
use std::borrow::Cow;
use std::io::{self, Write};

/// The column legend tracefs prints above the lines (with `options/record-tgid`).
const LEGEND_TRACEFS: &str = "\
#                                          _-----=> irqs-off/BH-disabled
#                                         / _----=> need-resched
#                                        | / _---=> hardirq/softirq
#                                        || / _--=> preempt-depth
#                                        ||| / _-=> migrate-disable
#                                        |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
";

/// The legend the simulator's recordings have always had (its arrows stand ten columns left of
/// the flag columns they name).
const LEGEND_SIM: &str = "\
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    Tracefs,
    Sim,
}

/// The `#` lines before the events.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    /// `entries-in-buffer/entries-written`.
    pub entries: usize,
    /// `#P:`
    pub ncpus: u32,
    /// A comment line after the counts.
    pub note: Option<&'a str>,
    pub legend: Legend,
}

/// What a line prints beyond its event.
#[derive(Clone, Debug, Default)]
pub struct Line<'a> {
    /// The `COMM-PID (TGID)` columns.
    pub comm: Cow<'a, [u8]>,
    pub tid: Tid,
    pub tgid: Option<Tid>,
    /// The latency columns (`d.h2.`).
    pub flags: [u8; 5],
    /// `prev_comm` (switch), `comm` (migrate, fork, newtask, exit, wakeup_new), `filename`
    /// (exec), `function` (hrtimer), `dependency` (tick_stop), the payload of other events.
    pub text: Cow<'a, [u8]>,
    /// `next_comm` (switch), `child_comm` (fork).
    pub text2: Cow<'a, [u8]>,
    /// `prev_prio` (switch), `prio` (migrate, exit), `oom_score_adj` (task_newtask).
    pub prio: i16,
    /// `group_dead` (exit).
    pub group_dead: bool,
    /// `hrtimer` (the tick).
    pub hrtimer: u64,
}

/// The 5-character latency column (`d.h2.`), as `trace_print_lat_fmt` prints it.
pub fn lat_flags(flags: u8, preempt: u8) -> [u8; 5] {
    use crate::events::EventAux;
    const IRQS_OFF: u8 = EventAux::IRQS_OFF;
    const RESCHED_LAZY: u8 = 0x02;
    const RESCHED: u8 = 0x04;
    const HARDIRQ: u8 = 0x08;
    const SOFTIRQ: u8 = 0x10;
    const PREEMPT_RESCHED: u8 = 0x20;
    const NMI: u8 = 0x40;
    const BH_OFF: u8 = 0x80;
    let irqs = match (flags & IRQS_OFF != 0, flags & BH_OFF != 0) {
        (true, true) => b'D',
        (true, false) => b'd',
        (false, true) => b'b',
        _ => b'.',
    };
    let need = match flags & (RESCHED | RESCHED_LAZY | PREEMPT_RESCHED) {
        x if x == RESCHED | RESCHED_LAZY | PREEMPT_RESCHED => b'B',
        x if x == RESCHED | PREEMPT_RESCHED => b'N',
        x if x == RESCHED_LAZY | PREEMPT_RESCHED => b'L',
        x if x == RESCHED | RESCHED_LAZY => b'b',
        RESCHED => b'n',
        PREEMPT_RESCHED => b'p',
        RESCHED_LAZY => b'l',
        _ => b'.',
    };
    let (nmi, hard, soft) = (flags & NMI != 0, flags & HARDIRQ != 0, flags & SOFTIRQ != 0);
    let hs = match (nmi, hard, soft) {
        (true, true, _) => b'Z',
        (true, false, _) => b'z',
        (false, true, true) => b'H',
        (false, true, false) => b'h',
        (false, false, true) => b's',
        _ => b'.',
    };
    let hex = |v: u8| if v < 10 { b'0' + v } else { b'a' + v - 10 };
    let depth = match preempt & 0xf {
        0 => b'.',
        v => hex(v),
    };
    let migrate = match preempt >> 4 {
        0 => b'.',
        v => hex(v),
    };
    [irqs, need, hs, depth, migrate]
}

pub fn write_header(w: &mut impl Write, h: &Header) -> io::Result<()> {
    write_header_counts(w, h, &format!("{0}/{0}", h.entries))
}

/// [`write_header`] with `counts` in the place of `entries/entries` (a recording written as it
/// arrives reserves the field and fills it in at its end).
pub fn write_header_counts(w: &mut impl Write, h: &Header, counts: &str) -> io::Result<()> {
    writeln!(w, "# tracer: nop")?;
    writeln!(w, "#")?;
    writeln!(
        w,
        "# entries-in-buffer/entries-written: {counts}   #P:{}",
        h.ncpus
    )?;
    if let Some(note) = h.note {
        writeln!(w, "# {note}")?;
    }
    writeln!(w, "#")?;
    w.write_all(match h.legend {
        Legend::Tracefs => LEGEND_TRACEFS.as_bytes(),
        Legend::Sim => LEGEND_SIM.as_bytes(),
    })
}

/// Writes the header, then a line per event of `trace` that `line` gives one for (its index and
/// the event in; `None` leaves the event out).
pub fn write_lines<'t>(
    w: &mut impl Write,
    header: &Header,
    trace: &'t Trace,
    line: &mut dyn FnMut(usize, &Event) -> Option<Line<'t>>,
) -> io::Result<()> {
    write_header(w, header)?;
    let mut buf = Vec::with_capacity(256);
    for (i, ev) in trace.events.iter().enumerate() {
        let Some(l) = line(i, &ev) else {
            continue;
        };
        buf.clear();
        push_line(&mut buf, trace, &ev, &l)?;
        w.write_all(&buf)?;
    }
    Ok(())
}

/// Appends the line of `ev` to `o`: a lost-event marker, or the columns and the event's print
/// format.
pub fn push_line(o: &mut Vec<u8>, trace: &Trace, ev: &Event, l: &Line) -> io::Result<()> {
    if let EventKind::Lost { count } = ev.kind {
        return match count {
            Some(c) => writeln!(o, "CPU:{} [LOST {c} EVENTS]", ev.cpu),
            None => writeln!(o, "CPU:{} [LOST EVENTS]", ev.cpu),
        };
    }
    // COMM-PID (TGID) [CPU] FLAGS SECS.USECS: NAME: PAYLOAD
    o.extend(std::iter::repeat_n(
        b' ',
        16usize.saturating_sub(l.comm.len()),
    ));
    o.extend_from_slice(&l.comm);
    write!(o, "-{:<7} ", l.tid)?;
    match l.tgid {
        Some(g) => write!(o, "({g:>7})")?,
        None => o.extend_from_slice(b"(-------)"),
    }
    write!(o, " [{:03}] ", ev.cpu)?;
    o.extend_from_slice(&l.flags);
    write!(
        o,
        " {:>5}.{:06}: {}: ",
        ev.ts / 1_000_000_000,
        (ev.ts % 1_000_000_000) / 1000,
        ev.kind.name(&trace.strings)
    )?;
    let (text, text2) = (&*l.text, &*l.text2);
    match ev.kind {
        EventKind::RseqUpdate {
            cpu_id,
            node_id,
            mm_cid,
        } => write!(o, "cpu_id={cpu_id} node_id={node_id} mm_cid={mm_cid}")?,
        EventKind::RseqIpFixup => {
            o.extend_from_slice(b"regs_ip=0x0 start_ip=0x0 post_commit_offset=0 abort_ip=0x0")
        }
        EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_prio,
            prev_state,
            ..
        } => {
            o.extend_from_slice(b"prev_comm=");
            o.extend_from_slice(text);
            write!(
                o,
                " prev_pid={prev_tid} prev_prio={} prev_state={} ==> next_comm=",
                l.prio,
                prev_state.text()
            )?;
            o.extend_from_slice(text2);
            write!(o, " next_pid={next_tid} next_prio={next_prio}")?;
        }
        EventKind::SchedMigrateTask {
            tid,
            orig_cpu,
            dest_cpu,
        } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(text);
            write!(
                o,
                " pid={tid} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
                l.prio
            )?;
        }
        EventKind::SchedProcessFork { parent, child } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(text);
            write!(o, " pid={parent} child_comm=")?;
            o.extend_from_slice(text2);
            write!(o, " child_pid={child}")?;
        }
        EventKind::TaskNewtask { tid, clone_flags } => {
            write!(o, "pid={tid} comm=")?;
            o.extend_from_slice(text);
            write!(o, " clone_flags={clone_flags:x} oom_score_adj={}", l.prio)?;
        }
        EventKind::SchedProcessExec { tid, old_tid } => {
            o.extend_from_slice(b"filename=");
            o.extend_from_slice(text);
            write!(o, " pid={tid} old_pid={old_tid}")?;
        }
        EventKind::SchedProcessExit { tid } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(text);
            write!(o, " pid={tid} prio={} group_dead={}", l.prio, l.group_dead)?;
        }
        EventKind::SchedWakeupNew { tid, target_cpu } => {
            // the prio of a new task is not recorded: every writer prints the default
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(text);
            write!(o, " pid={tid} prio=120 target_cpu={target_cpu:03}")?;
        }
        EventKind::Tick => {
            write!(o, "hrtimer={:016x} function=", l.hrtimer)?;
            o.extend_from_slice(text);
            write!(o, " now={}", ev.ts)?;
        }
        EventKind::TickStop { success } => {
            write!(o, "success={} dependency=", success as u8)?;
            o.extend_from_slice(text);
        }
        EventKind::Other { name } => {
            if trace.strings.get(name) == b"hrtimer_expire_entry" {
                write!(o, "hrtimer={:016x} function=", l.hrtimer)?;
                o.extend_from_slice(text);
                write!(o, " now={}", ev.ts)?;
            } else {
                o.extend_from_slice(text);
            }
        }
        // a function_graph call reads back as an event of the function's name
        EventKind::Lost { .. } | EventKind::Function { .. } => {}
        // as the fprobe prints it: `(function+0x0/0x0) key=value ...`
        EventKind::Probe { probe, num, ptr } => {
            write!(o, "({}+0x0/0x0)", probe.function())?;
            let (k, p) = probe.fields();
            if let Some(p) = p
                && probe.packed().is_empty()
            {
                write!(o, " {p}={ptr:#x}")?;
            }
            if let Some(k) = k {
                write!(o, " {k}={num}")?;
            }
            for &(k, shift, bits) in probe.packed() {
                match (ptr >> shift) & ((1 << bits) - 1) {
                    crate::events::PACKED_ABSENT => {}
                    crate::events::PACKED_NEGATIVE => write!(o, " {k}=-1")?,
                    v => write!(o, " {k}={v}")?,
                }
            }
        }
    }
    o.push(b'\n');
    Ok(())
}

/// The comm a trace knows for `tid` (`<idle>` for 0, `<...>` when unknown).
fn comm_of(trace: &Trace, tid: Tid) -> &[u8] {
    match trace.tasks.get(&tid) {
        Some(m) => trace.strings.get(m.comm),
        None if tid == 0 => b"<idle>",
        None => b"<...>",
    }
}

/// Writes `trace` as ftrace text. `aux`, when given, has one entry per event (a live capture).
pub fn write(w: &mut impl Write, trace: &Trace, aux: Option<&[EventAux]>) -> io::Result<()> {
    let aux = aux.filter(|a| a.len() == trace.events.len());
    let header = Header {
        entries: trace.events.iter().filter(|e| !e.kind.is_lost()).count(),
        ncpus: trace.cpu_count(),
        note: None,
        legend: Legend::Tracefs,
    };
    write_lines(w, &header, trace, &mut |i, ev| {
        Some(aux_line(trace, ev, aux.map(|a| &a[i])))
    })
}

/// Appends the line of `ev` (a live capture's event, with its `aux` when known) to `o`.
pub fn push_aux_line(
    o: &mut Vec<u8>,
    trace: &Trace,
    ev: &Event,
    aux: Option<&EventAux>,
) -> io::Result<()> {
    push_line(o, trace, ev, &aux_line(trace, ev, aux))
}

/// The line of `ev` from what the trace knows and the event's `aux`.
fn aux_line<'t>(trace: &'t Trace, ev: &Event, aux: Option<&EventAux>) -> Line<'t> {
    let s = &trace.strings;
    let a = aux.copied().unwrap_or_default();
    let tid = if ev.tid == TID_UNKNOWN { 0 } else { ev.tid };
    let prio = |default: i16| if aux.is_some() { a.prio } else { default };
    let text = |fallback: &'t [u8]| -> &'t [u8] {
        if a.text.0 != 0 {
            s.get(a.text)
        } else {
            fallback
        }
    };
    let (text, text2, prio): (&[u8], &[u8], i16) = match ev.kind {
        EventKind::SchedSwitch {
            prev_tid,
            next_comm,
            ..
        } => (text(comm_of(trace, prev_tid)), s.get(next_comm), prio(120)),
        EventKind::SchedMigrateTask { tid: t, .. } | EventKind::SchedProcessExit { tid: t } => {
            (text(comm_of(trace, t)), b"", prio(120))
        }
        EventKind::SchedProcessFork { parent, .. } => {
            let pc = text(comm_of(trace, parent));
            let cc = if a.text2.0 != 0 { s.get(a.text2) } else { pc };
            (pc, cc, 0)
        }
        EventKind::TaskNewtask { .. } => (text(comm_of(trace, tid)), b"", prio(0)),
        EventKind::SchedProcessExec { .. } => (text(b"?"), b"", 0),
        EventKind::SchedWakeupNew { tid: t, .. } => (comm_of(trace, t), b"", 0),
        EventKind::Tick => (text(b"tick_nohz_handler"), b"", 0),
        EventKind::TickStop { .. } => (text(b"NONE"), b"", 0),
        EventKind::Other { name } if s.get(name) == b"hrtimer_expire_entry" => {
            (text(b"0x0"), b"", 0)
        }
        EventKind::Other { .. } | EventKind::Function { .. } | EventKind::Probe { .. } => {
            (text(b""), b"", 0)
        }
        EventKind::RseqUpdate { .. } | EventKind::RseqIpFixup | EventKind::Lost { .. } => {
            (b"", b"", 0)
        }
    };
    Line {
        comm: Cow::Borrowed(comm_of(trace, tid)),
        tid,
        tgid: trace.tasks.get(&tid).and_then(|m| m.tgid),
        flags: if aux.is_some() {
            lat_flags(a.irq_flags, a.preempt_count)
        } else {
            *b"....."
        },
        text: Cow::Borrowed(text),
        text2: Cow::Borrowed(text2),
        prio,
        group_dead: a.flag,
        hrtimer: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    #[test]
    fn latency_flags_like_the_kernel() {
        assert_eq!(&lat_flags(0, 0), b".....");
        assert_eq!(&lat_flags(0x01 | 0x08, 0x01), b"d.h1.");
        assert_eq!(&lat_flags(0x01, 0x02), b"d..2.");
        assert_eq!(&lat_flags(0x01 | 0x04 | 0x20, 0x12), b"dN.21");
        assert_eq!(&lat_flags(0x81 | 0x48, 0), b"D.Z..");
    }

    #[test]
    fn replays_a_recorded_bundled_capture_event_for_event() {
        // Any trace can be written; reading it back gives the same events.
        let orig = load_bytes("demo", crate::DEMO_TRACE, &LoadOptions::default()).unwrap();
        let mut out = Vec::new();
        write(&mut out, &orig, None).unwrap();
        let back = load_bytes("rec", &out, &LoadOptions::default()).unwrap();
        assert_eq!(back.origin, crate::sources::formats::FTRACE.into());
        assert_eq!(back.events.len(), orig.events.len());
        for (a, b) in orig.events.iter().zip(&back.events) {
            assert_eq!((a.ts, a.tid, a.cpu), (b.ts, b.tid, b.cpu));
            assert_eq!(a.describe(&orig.strings), b.describe(&back.strings));
        }
        for (tid, m) in &orig.tasks {
            assert_eq!(back.tasks[tid].tgid, m.tgid, "tid {tid}");
        }
    }
}
