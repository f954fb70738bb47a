//! Writes a trace as tracefs `trace` text (`# tracer: nop` header, `(TGID)` column, event lines
//! in the print formats of Linux 6.18), which [`crate::sources::load`] reads back.
//!
//! Timestamps are printed as tracefs prints them, `seconds.microseconds`; events are written in
//! the trace's order, so a replay applies them in the same order and rebuilds the same observed
//! per-task CID history (at microsecond resolution). Lost-event markers are written as
//! `CPU:N [LOST M EVENTS]` lines. Fields a canonical event does not keep come from the
//! per-event [`EventAux`] of a live capture; without it, neutral values are printed
//! (flags `.....`, prio 120).

use super::EventAux;
use crate::events::{Event, EventKind, TID_UNKNOWN, Trace};
use std::io::{self, Write};

const HEADER: &str = "\
#                                          _-----=> irqs-off/BH-disabled
#                                         / _----=> need-resched
#                                        | / _---=> hardirq/softirq
#                                        || / _--=> preempt-depth
#                                        ||| / _-=> migrate-disable
#                                        |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
";

/// The 5-character latency column (`d.h2.`), as `trace_print_lat_fmt` prints it.
pub fn lat_flags(flags: u8, preempt: u8) -> [u8; 5] {
    const IRQS_OFF: u8 = 0x01;
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

/// Writes `trace` as ftrace text. `aux`, when given, has one entry per event.
pub fn write_ftrace(w: &mut impl Write, trace: &Trace, aux: Option<&[EventAux]>) -> io::Result<()> {
    let aux = aux.filter(|a| a.len() == trace.events.len());
    let n = trace.events.iter().filter(|e| !e.kind.is_lost()).count();
    writeln!(w, "# tracer: nop")?;
    writeln!(w, "#")?;
    writeln!(
        w,
        "# entries-in-buffer/entries-written: {n}/{n}   #P:{}",
        trace.cpu_count()
    )?;
    writeln!(w, "#")?;
    w.write_all(HEADER.as_bytes())?;
    let mut line = Vec::with_capacity(256);
    for (i, ev) in trace.events.iter().enumerate() {
        line.clear();
        let a = aux.map(|a| a[i]).unwrap_or_default();
        write_event(&mut line, trace, &ev, &a, aux.is_some())?;
        w.write_all(&line)?;
    }
    Ok(())
}

fn comm_bytes(trace: &Trace, tid: u32) -> Vec<u8> {
    match trace.tasks.get(&tid) {
        Some(m) => trace.strings.get(m.comm).to_vec(),
        None if tid == 0 => b"<idle>".to_vec(),
        None => b"<...>".to_vec(),
    }
}

fn write_event(
    o: &mut Vec<u8>,
    trace: &Trace,
    ev: &Event,
    a: &EventAux,
    have_aux: bool,
) -> io::Result<()> {
    if let EventKind::Lost { count } = ev.kind {
        return match count {
            Some(c) => writeln!(o, "CPU:{} [LOST {c} EVENTS]", ev.cpu),
            None => writeln!(o, "CPU:{} [LOST EVENTS]", ev.cpu),
        };
    }
    let s = &trace.strings;
    let tid = if ev.tid == TID_UNKNOWN { 0 } else { ev.tid };
    // COMM-PID (TGID) [CPU] FLAGS SECS.USECS: NAME: PAYLOAD
    let comm = comm_bytes(trace, tid);
    let pad = 16usize.saturating_sub(comm.len());
    o.extend(std::iter::repeat_n(b' ', pad));
    o.extend_from_slice(&comm);
    write!(o, "-{tid:<7} ")?;
    match trace.tasks.get(&tid).and_then(|m| m.tgid) {
        Some(g) => write!(o, "({g:>7})")?,
        None => o.extend_from_slice(b"(-------)"),
    }
    write!(o, " [{:03}] ", ev.cpu)?;
    let flags = if have_aux {
        lat_flags(a.irq_flags, a.preempt_count)
    } else {
        *b"....."
    };
    o.extend_from_slice(&flags);
    write!(
        o,
        " {:>5}.{:06}: {}: ",
        ev.ts / 1_000_000_000,
        (ev.ts % 1_000_000_000) / 1000,
        ev.kind.name(s)
    )?;
    let prio = |default: i16| if have_aux { a.prio } else { default };
    let text = |fallback: &[u8]| -> Vec<u8> {
        if a.text.0 != 0 {
            s.get(a.text).to_vec()
        } else {
            fallback.to_vec()
        }
    };
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
            next_comm,
            next_prio,
            prev_state,
        } => {
            o.extend_from_slice(b"prev_comm=");
            o.extend_from_slice(&text(&comm_bytes(trace, prev_tid)));
            write!(
                o,
                " prev_pid={prev_tid} prev_prio={} prev_state={} ==> next_comm=",
                prio(120),
                prev_state.text()
            )?;
            o.extend_from_slice(s.get(next_comm));
            write!(o, " next_pid={next_tid} next_prio={next_prio}")?;
        }
        EventKind::SchedMigrateTask {
            tid: t,
            orig_cpu,
            dest_cpu,
        } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(&text(&comm_bytes(trace, t)));
            write!(
                o,
                " pid={t} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
                prio(120)
            )?;
        }
        EventKind::SchedProcessFork { parent, child } => {
            let pc = text(&comm_bytes(trace, parent));
            let cc = if a.text2.0 != 0 {
                s.get(a.text2).to_vec()
            } else {
                pc.clone()
            };
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(&pc);
            write!(o, " pid={parent} child_comm=")?;
            o.extend_from_slice(&cc);
            write!(o, " child_pid={child}")?;
        }
        EventKind::TaskNewtask {
            tid: t,
            clone_flags,
        } => {
            write!(o, "pid={t} comm=")?;
            o.extend_from_slice(&text(&comm_bytes(trace, tid)));
            write!(o, " clone_flags={clone_flags:x} oom_score_adj={}", prio(0))?;
        }
        EventKind::SchedProcessExec { tid: t, old_tid } => {
            o.extend_from_slice(b"filename=");
            o.extend_from_slice(&text(b"?"));
            write!(o, " pid={t} old_pid={old_tid}")?;
        }
        EventKind::SchedProcessExit { tid: t } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(&text(&comm_bytes(trace, t)));
            write!(o, " pid={t} prio={} group_dead={}", prio(120), a.flag)?;
        }
        EventKind::SchedWakeupNew { tid: t, target_cpu } => {
            o.extend_from_slice(b"comm=");
            o.extend_from_slice(&comm_bytes(trace, t));
            write!(o, " pid={t} prio=120 target_cpu={target_cpu:03}")?;
        }
        EventKind::Tick => {
            o.extend_from_slice(b"hrtimer=0000000000000000 function=");
            o.extend_from_slice(&text(b"tick_nohz_handler"));
            write!(o, " now={}", ev.ts)?;
        }
        EventKind::TickStop { success } => {
            write!(o, "success={} dependency=", success as u8)?;
            o.extend_from_slice(&text(b"NONE"));
        }
        EventKind::Other { name } => {
            if s.get(name) == b"hrtimer_expire_entry" {
                o.extend_from_slice(b"hrtimer=0000000000000000 function=");
                o.extend_from_slice(&text(b"0x0"));
                write!(o, " now={}", ev.ts)?;
            } else if a.text.0 != 0 {
                o.extend_from_slice(s.get(a.text));
            }
        }
        EventKind::Lost { .. } => {}
    }
    o.push(b'\n');
    Ok(())
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
        write_ftrace(&mut out, &orig, None).unwrap();
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
