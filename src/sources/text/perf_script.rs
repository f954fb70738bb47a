//! `perf script` text: the default fields (`COMM TID [CPU] TIME: [PERIOD] EVENT: FIELDS`) and
//! `-F` selections (`PID/TID`, with or without `[CPU]`, `TIME:`, the period). Comms are
//! right-aligned and may hold spaces, so the line is anchored on the timestamp followed by an
//! event token (`sys:event:` for a tracepoint, `cycles:Pu:` or `cpu-clock:` for any other
//! event).
//!
//! What is not an event is skipped with a count: call stacks (`-g`: one frame per line below
//! their sample), side-band records (`--show-task-events` and the like) and the `--header`
//! block (`#` lines). Output without the time column is refused with what to print instead;
//! output without the cpu column is read with each event on an unknown CPU. Times printed by
//! `--deltatime` (each the time since the sample before) are added up
//! ([`TimeMode::Delta`]); `--reltime` needs nothing (it only moves the origin).

use crate::events::{CPU_UNKNOWN, Event, EventKind, TID_UNKNOWN, Tid};
use crate::sources::text::chunk::{Chunk, Expected, LineParser};
use crate::sources::text::payload;
use crate::sources::text::perf_tally::TimeMode;
use crate::sources::text::scan::{parse_ts, skip_spaces, trim_end, trim_start};

#[derive(Clone, Copy, Debug, Default)]
pub struct PerfScript {
    pub times: TimeMode,
}

/// The parsers of absolute (and `--reltime`) and of `--deltatime` times.
pub static ABSOLUTE: PerfScript = PerfScript {
    times: TimeMode::Absolute,
};
pub static DELTA: PerfScript = PerfScript {
    times: TimeMode::Delta,
};
/// The parser of a text without times: each event 1 µs after the one before.
pub static UNTIMED: PerfScript = PerfScript {
    times: TimeMode::Untimed,
};

/// The parser of the text that starts with `head` (see [`time_mode`]).
pub fn parser_for(head: &[u8]) -> &'static PerfScript {
    match time_mode(crate::sources::text::bom::strip_bom(head)) {
        TimeMode::Absolute => &ABSOLUTE,
        TimeMode::Delta => &DELTA,
        TimeMode::Untimed => &UNTIMED,
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub comm: &'a [u8],
    pub tgid: Option<Tid>,
    /// `None` when perf printed -1.
    pub tid: Option<Tid>,
    pub cpu: Option<u16>,
    pub ts: u64,
    /// A tracepoint's name without its system (`sched_switch` of `sched:sched_switch`); any
    /// other event's name as perf prints it (`cycles:Pu`, `cpu-clock`).
    pub name: &'a [u8],
    pub tracepoint: bool,
    pub rest: &'a [u8],
}

pub fn split_head(line: &[u8]) -> Option<Head<'_>> {
    let limit = line.len().min(200);
    for c in memchr::memchr_iter(b':', &line[..limit]) {
        if let Some(h) = head_at(line, c) {
            return Some(h);
        }
    }
    None
}

/// The letters of perf's event modifiers (`cycles:Pu`, `cpu-clock:ukHG`, `instructions:S`).
fn is_modifiers(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|b| b"ukhIGHpPSDWebRX".contains(b))
}

/// An event token without its final colon: (name, tracepoint). `sched:sched_switch` and
/// `probe_x:main` are tracepoints (system and name); `cycles`, `cycles:Pu` and `cpu/cycles/u`
/// are not.
fn event_name(tok: &[u8]) -> Option<(&[u8], bool)> {
    // a side-band record (`PERF_RECORD_COMM: ...`) is no sample
    if tok.is_empty() || tok[0] == b':' || tok.starts_with(b"PERF_RECORD_") {
        return None;
    }
    let Some(sep) = memchr::memchr(b':', tok) else {
        return Some((tok, false));
    };
    let after = &tok[sep + 1..];
    let name = &after[..memchr::memchr(b':', after).unwrap_or(after.len())];
    if name.is_empty() || is_modifiers(name) || memchr::memchr(b'/', tok).is_some() {
        Some((tok, false))
    } else {
        Some((name, true))
    }
}

/// `c` is the colon that ends the timestamp.
fn head_at(line: &[u8], c: usize) -> Option<Head<'_>> {
    let ts_start = line[..c]
        .iter()
        .rposition(|&b| b == b' ')
        .map_or(0, |p| p + 1);
    let ts = parse_ts(&line[ts_start..c])?;
    if !line[ts_start..c].contains(&b'.') {
        return None;
    }
    let mut e0 = skip_spaces(line, c + 1);
    if e0 == c + 1 {
        return None;
    }
    // [PERIOD] (the default for events that are not tracepoints, or -F period)
    let digits = line[e0..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && line.get(e0 + digits) == Some(&b' ') {
        e0 = skip_spaces(line, e0 + digits);
    }
    // EVENT:
    let e_end = e0
        + line[e0..]
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(line.len() - e0);
    let tok = line[e0..e_end].strip_suffix(b":")?;
    let (name, tracepoint) = event_name(tok)?;
    let rest = &line[skip_spaces(line, e_end)..];
    let (comm, tgid, tid, cpu) = ids(trim_end(&line[..ts_start]))?;
    Some(Head {
        comm,
        tgid,
        tid,
        cpu,
        ts,
        name,
        tracepoint,
        rest,
    })
}

type Ids<'a> = (&'a [u8], Option<Tid>, Option<Tid>, Option<u16>);

/// `COMM [PID/]TID [CPU]` before the time (or the event, without time).
fn ids(pre: &[u8]) -> Option<Ids<'_>> {
    let mut pre = pre;
    let mut cpu = None;
    if pre.last() == Some(&b']') {
        let lb = pre.iter().rposition(|&b| b == b'[')?;
        cpu = Some(payload::parse_cpu(&pre[lb + 1..pre.len() - 1])?);
        pre = trim_end(&pre[..lb]);
    }
    let sp = pre.iter().rposition(|&b| b == b' ').map_or(0, |p| p + 1);
    let id = &pre[sp..];
    let (tgid, tid) = match id.iter().position(|&b| b == b'/') {
        Some(s) => (pid_value(&id[..s])?, pid_value(&id[s + 1..])?),
        None => (None, pid_value(id)?),
    };
    Some((trim_start(trim_end(&pre[..sp])), tgid, tid, cpu))
}

/// A sample line printed without its time: `COMM TID [CPU] [PERIOD] EVENT:` (perf script -F
/// without time). Never read as an event; recognised to say what is missing.
pub fn is_untimed_sample(line: &[u8]) -> bool {
    untimed_event_at(line).is_some()
}

/// Where the event's name starts in a sample line printed without its time.
fn untimed_event_at(line: &[u8]) -> Option<usize> {
    let t = trim_end(line);
    let mut at = Vec::with_capacity(8);
    let mut toks: Vec<&[u8]> = Vec::with_capacity(8);
    let mut i = 0;
    while toks.len() < 8 && i < t.len() {
        if t[i] == b' ' {
            i += 1;
            continue;
        }
        let e = t[i..]
            .iter()
            .position(|&b| b == b' ')
            .map_or(t.len(), |p| i + p);
        at.push(i);
        toks.push(&t[i..e]);
        i = e;
    }
    let k = toks.iter().position(|x| x.len() > 1 && x.ends_with(b":"))?;
    // an event's name starts with a letter (a time does not)
    if k < 2
        || !toks[k][0].is_ascii_alphabetic()
        || event_name(&toks[k][..toks[k].len() - 1]).is_none()
    {
        return None;
    }
    // the event follows the tid, or the cpu, or the period after either
    let before = |i: usize| toks.get(i).copied().unwrap_or_default();
    let is_id = |x: &[u8]| pid_pair(x) || (x.len() > 2 && x[0] == b'[' && x.ends_with(b"]"));
    // (a period after the id: the time perf would print goes before it)
    let period = k >= 3 && before(k - 1).iter().all(u8::is_ascii_digit) && is_id(before(k - 2));
    (period || is_id(before(k - 1))).then(|| at[if period { k - 1 } else { k }])
}

/// An untimed sample line with a time of 1 µs put where perf prints the time.
fn with_time(line: &[u8]) -> Option<Vec<u8>> {
    let at = untimed_event_at(line)?;
    let mut v = Vec::with_capacity(line.len() + 10);
    v.extend_from_slice(&line[..at]);
    v.extend_from_slice(b"0.000001: ");
    v.extend_from_slice(&line[at..]);
    Some(v)
}

fn pid_pair(x: &[u8]) -> bool {
    !x.is_empty() && x.split(|&b| b == b'/').all(|p| pid_value(p).is_some())
}

/// A call-stack frame line: an address, then `symbol+off (dso)` (indented; `-F ip,sym` output
/// of some perf versions prints it unindented). perf indents what follows a sample with a tab
/// (a sample line is only padded with spaces): any such line belongs to the sample above.
pub fn is_stack_frame(line: &[u8]) -> bool {
    if line.first() == Some(&b'\t') {
        return true;
    }
    let t = trim_start(line);
    let indented = t.len() < line.len();
    let hex = t.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if hex == 0 || hex > 16 {
        return false;
    }
    match t.get(hex) {
        None => indented,
        Some(b' ') => indented || trim_end(t).ends_with(b")"),
        Some(_) => false,
    }
}

/// A pid column value; perf prints -1 for a thread it no longer tracks: `None` inside.
fn pid_value(s: &[u8]) -> Option<Option<Tid>> {
    let v = payload::parse_i64(s)?;
    if v == -1 {
        return Some(None);
    }
    Tid::try_from(v).ok().map(Some)
}

/// How the times of the text starting with `head` were printed: `--deltatime` starts at 0 and
/// goes back and forth (perf prints samples in time order, so absolute and `--reltime` times
/// never do, or hardly).
pub fn time_mode(head: &[u8]) -> TimeMode {
    let lines = || head.split(|&b| b == b'\n').take(2000);
    if lines().all(|l| split_head(l).is_none()) && lines().any(is_untimed_sample) {
        return TimeMode::Untimed;
    }
    let mut ts = head
        .split(|&b| b == b'\n')
        .take(2000)
        .filter_map(split_head)
        .map(|h| h.ts);
    if ts.next() != Some(0) {
        return TimeMode::Absolute;
    }
    let (mut prev, mut steps, mut back) = (0u64, 0u32, 0u32);
    for t in ts {
        steps += 1;
        back += (t < prev) as u32;
        prev = t;
    }
    if steps >= 4 && back * 5 >= steps {
        TimeMode::Delta
    } else {
        TimeMode::Absolute
    }
}

impl LineParser for PerfScript {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
        let t = trim_start(line);
        if t.is_empty() || t[0] == b'#' {
            return Ok(());
        }
        let timed;
        let line = match self.times {
            TimeMode::Untimed if split_head(line).is_none() => match with_time(line) {
                Some(v) => {
                    timed = v;
                    &timed[..]
                }
                None => line,
            },
            _ => line,
        };
        if let Some(h) = split_head(line) {
            let kind = if h.tracepoint {
                payload::parse(h.name, h.rest, &mut out.strings)?
            } else {
                EventKind::Other {
                    name: out.strings.intern(h.name),
                }
            };
            // The switch names its outgoing task even when perf lost track of it.
            let tid = match (h.tid, kind) {
                (Some(t), _) => t,
                (None, EventKind::SchedSwitch { prev_tid, .. }) => prev_tid,
                (None, _) => TID_UNKNOWN,
            };
            out.skipped.unknown_tid += u64::from(h.tid == Some(TID_UNKNOWN));
            let cpu = h.cpu.unwrap_or(CPU_UNKNOWN);
            if h.cpu.is_none() {
                out.perf.cpu_unknown += 1;
            }
            if tid != TID_UNKNOWN && h.tid.is_some() {
                out.note_task(cpu, tid, h.comm, h.tgid);
            }
            out.events.push(Event {
                ts: h.ts,
                tid,
                cpu,
                kind,
            });
            return Ok(());
        }
        if is_stack_frame(line) {
            out.perf.stack_frames += 1;
            return Ok(());
        }
        if let Some(p) = memchr::memmem::find(line, b"PERF_RECORD_") {
            // --show-lost-events: "perf 1484 [000] 1623.1: PERF_RECORD_LOST lost 12"
            if line[p..].starts_with(b"PERF_RECORD_LOST ") {
                let cpu = line[..p]
                    .iter()
                    .rposition(|&b| b == b'[')
                    .and_then(|lb| {
                        let rb = lb + line[lb..].iter().position(|&b| b == b']')?;
                        payload::parse_cpu(&line[lb + 1..rb])
                    })
                    .unwrap_or(CPU_UNKNOWN);
                let count = memchr::memmem::find(&line[p..], b"lost ")
                    .and_then(|q| {
                        let v = &line[p + q + 5..];
                        let e = v.iter().position(|&b| b == b' ').unwrap_or(v.len());
                        payload::parse_u64(&v[..e])
                    })
                    .map(|n| n.min(u32::MAX as u64) as u32);
                out.push_lost(cpu, count);
            } else {
                out.perf.side_band += 1;
            }
            return Ok(());
        }
        if is_untimed_sample(line) {
            return Err(Expected(
                "a time column: this perf script output has none (-F without time), and cidscope places every event in time; print it with the time (the default fields, or -F ...,time)",
            ));
        }
        Err(Expected(
            "a perf script line \"COMM TID [CPU] TIME: [PERIOD] EVENT: FIELDS\"",
        ))
    }

    fn cumulative_times(&self) -> bool {
        matches!(self.times, TimeMode::Delta | TimeMode::Untimed)
    }

    fn times(&self) -> TimeMode {
        self.times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_fields() {
        let h = split_head(b"     migration/0    18 [000]  1623.027765:   sched:sched_migrate_task: comm=perf pid=1484 prio=120 orig_cpu=0 dest_cpu=1").unwrap();
        assert_eq!(
            (h.comm, h.tid, h.cpu, h.tgid),
            (&b"migration/0"[..], Some(18), Some(0), None)
        );
        assert_eq!(h.name, b"sched_migrate_task");
        assert_eq!(h.ts, 1_623_027_765_000);
        assert!(h.rest.starts_with(b"comm=perf"));
    }

    #[test]
    fn pid_tid_and_odd_comm() {
        let h = split_head(b"            perf  1484/1486  [000]  1623.027756:         sched:sched_switch: prev_comm=perf").unwrap();
        assert_eq!((h.tgid, h.tid), (Some(1484), Some(1486)));
        let h = split_head(
            b"             :-1  1550/-1    [001]  1629.844098:         sched:sched_switch: x",
        )
        .unwrap();
        assert_eq!((h.comm, h.tgid, h.tid), (&b":-1"[..], Some(1550), None));
        let h = split_head(
            b"   my worker 1  3059/3060  [001]  1.000000001: rseq:rseq_update: cpu_id=1",
        )
        .unwrap();
        assert_eq!(
            (h.comm, h.tid, h.ts),
            (&b"my worker 1"[..], Some(3060), 1_000_000_001)
        );
        let h = split_head(b"  a: b 12/13 1.5: sched:sched_switch: x").unwrap();
        assert_eq!((h.comm, h.cpu, h.tid), (&b"a: b"[..], None, Some(13)));
    }

    #[test]
    fn events_that_are_not_tracepoints_with_period_and_modifiers() {
        let h = split_head(b"perf 47118 [011] 51499.088689:          1 page-faults: ").unwrap();
        assert_eq!(
            (h.name, h.tracepoint, h.cpu),
            (&b"page-faults"[..], false, Some(11))
        );
        let h = split_head(b"dd 29776 666709.771979:   10101010 cpu-clock: ").unwrap();
        assert_eq!(
            (h.name, h.tracepoint, h.cpu, h.tid),
            (&b"cpu-clock"[..], false, None, Some(29776))
        );
        let h = split_head(b"emulator  4152 75695.008865:          1 cycles:u: ").unwrap();
        assert_eq!((h.name, h.tracepoint), (&b"cycles:u"[..], false));
        let h = split_head(b"       perf-exec  1964   405.307462:          1 cycles:P:  ffffb849d9ae75ac wq_affn_scope_show+0x5c ([kernel.kallsyms])").unwrap();
        assert_eq!((h.name, h.tracepoint), (&b"cycles:P"[..], false));
        let h = split_head(b"  x 5 [000] 1.5: cpu/mem-loads,ldlat=30/P: 1").unwrap();
        assert_eq!(
            (h.name, h.tracepoint),
            (&b"cpu/mem-loads,ldlat=30/P"[..], false)
        );
        // a tracepoint with the period column, and a uprobe
        let h = split_head(b"  x 5 [000] 1.5:          1 sched:sched_switch: prev_comm=x").unwrap();
        assert_eq!((h.name, h.tracepoint), (&b"sched_switch"[..], true));
        let h = split_head(b"  x 5 [000] 1.5: probe_x:main: (401136)").unwrap();
        assert_eq!((h.name, h.tracepoint), (&b"main"[..], true));
        // side-band records are no samples
        assert!(split_head(b"  perf 5 [000] 1.5: PERF_RECORD_COMM: perf:5/5").is_none());
        // ftrace lines are not perf script lines
        assert!(split_head(b"  bash-1385 [001] .... 1639.198301: rseq_update: cpu_id=1").is_none());
        assert!(split_head(b"  bash-1385 (1385) [001] 1639.198301: sched:x: y").is_none());
    }

    #[test]
    fn lines_that_belong_to_the_sample_above() {
        assert!(is_stack_frame(
            b"\t    ffffffff8104f45a native_write_msr_safe ([kernel.kallsyms])"
        ));
        assert!(is_stack_frame(b"\t               0 [unknown] ([unknown])"));
        assert!(is_stack_frame(
            b"ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])"
        ));
        assert!(is_stack_frame(b"\t          THIS_IS_A_WEIRD_LINE"));
        assert!(is_stack_frame(b"     7f1234"));
        assert!(!is_stack_frame(b"deadbeef"));
        assert!(!is_stack_frame(b"hello world"));
        assert!(!is_stack_frame(
            b"  perf 5 [000] 1.5: sched:sched_switch: x"
        ));
    }

    #[test]
    fn a_sample_without_time_is_told_apart() {
        assert!(is_untimed_sample(b"func_ab 15294 cpu-clock: "));
        assert!(is_untimed_sample(b"java 19983 cycles:"));
        assert!(is_untimed_sample(
            b"  perf 1484/1486 [000] sched:sched_switch: prev_comm=x"
        ));
        assert!(is_untimed_sample(b"  perf 1484 [000]   1 cpu-clock:u: "));
        assert!(!is_untimed_sample(b"hello world: again"));
        assert!(!is_untimed_sample(b"  PID TTY          TIME CMD"));
        assert!(!is_untimed_sample(
            b"perf  1 [448000]  1623.027756: rseq:rseq_update: x"
        ));
        let mut c = Chunk::new();
        let e = PerfScript::default()
            .line(b"func_ab 15294 cpu-clock: ", &mut c)
            .unwrap_err();
        assert!(e.0.contains("time column"), "{e}");
    }

    #[test]
    fn delta_times_are_told_from_absolute_and_relative_ones() {
        let line = |t: &str| format!("  perf 5 [000] {t}: sched:sched_switch: x\n");
        let text = |ts: &[&str]| ts.iter().map(|t| line(t)).collect::<String>();
        let delta = text(&[
            "0.000000", "0.000020", "0.000003", "0.000100", "0.000001", "0.000050",
        ]);
        assert_eq!(time_mode(delta.as_bytes()), TimeMode::Delta);
        let rel = text(&["0.000000", "0.000020", "0.000023", "0.000123", "0.000124"]);
        assert_eq!(time_mode(rel.as_bytes()), TimeMode::Absolute);
        let abs = text(&["5.000000", "5.000020", "5.000003", "5.000100", "5.000001"]);
        assert_eq!(time_mode(abs.as_bytes()), TimeMode::Absolute);
    }

    #[test]
    fn no_cpu_column_is_an_unknown_cpu_counted() {
        let mut c = Chunk::new();
        PerfScript::default()
            .line(b"  perf  1484  1623.027756: sched:sched_switch: prev_comm=perf prev_pid=1484 prev_prio=120 prev_state=R ==> next_comm=x next_pid=2 next_prio=120", &mut c)
            .unwrap();
        assert_eq!(c.events[0].cpu, CPU_UNKNOWN);
        assert_eq!(c.perf.cpu_unknown, 1);
    }
}
