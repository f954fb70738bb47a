//! `perf script` text: the default fields (`COMM TID [CPU] TIME: SYS:EVENT: FIELDS`) and `-F`
//! selections (`PID/TID`, with or without `[CPU]`, `TIME:`). Comms are right-aligned and may hold
//! spaces, so the line is anchored on the timestamp followed by a `SYS:EVENT:` token.

use crate::events::{Event, EventKind, TID_UNKNOWN, Tid};
use crate::sources::text::chunk::{Chunk, Expected, LineParser};
use crate::sources::text::payload;
use crate::sources::text::scan::{parse_ts, skip_spaces, trim_end, trim_start};

pub struct PerfScript;

#[derive(Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub comm: &'a [u8],
    pub tgid: Option<Tid>,
    /// `None` when perf printed -1.
    pub tid: Option<Tid>,
    pub cpu: Option<u16>,
    pub ts: u64,
    /// Event name without its system (`sched_switch` of `sched:sched_switch`).
    pub name: &'a [u8],
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
    // SYS:EVENT:
    let e0 = skip_spaces(line, c + 1);
    if e0 == c + 1 {
        return None;
    }
    let e_end = e0
        + line[e0..]
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(line.len() - e0);
    let tok = line[e0..e_end].strip_suffix(b":")?;
    let sep = tok.iter().position(|&b| b == b':')?;
    let name = &tok[sep + 1..];
    if name.is_empty() || sep == 0 {
        return None;
    }
    let rest = &line[skip_spaces(line, e_end)..];
    // [CPU]
    let mut pre = trim_end(&line[..ts_start]);
    let mut cpu = None;
    if pre.last() == Some(&b']') {
        let lb = pre.iter().rposition(|&b| b == b'[')?;
        cpu = Some(payload::parse_cpu(&pre[lb + 1..pre.len() - 1])?);
        pre = trim_end(&pre[..lb]);
    }
    // [PID/]TID
    let sp = pre.iter().rposition(|&b| b == b' ').map_or(0, |p| p + 1);
    let id = &pre[sp..];
    let (tgid, tid) = match id.iter().position(|&b| b == b'/') {
        Some(s) => (pid_value(&id[..s])?, pid_value(&id[s + 1..])?),
        None => (None, pid_value(id)?),
    };
    let comm = trim_start(trim_end(&pre[..sp]));
    Some(Head {
        comm,
        tgid,
        tid,
        cpu,
        ts,
        name,
        rest,
    })
}

/// A pid column value; perf prints -1 for a thread it no longer tracks: `None` inside.
fn pid_value(s: &[u8]) -> Option<Option<Tid>> {
    let v = payload::parse_i64(s)?;
    if v == -1 {
        return Some(None);
    }
    Tid::try_from(v).ok().map(Some)
}

impl LineParser for PerfScript {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
        let t = trim_start(line);
        if t.is_empty() || t[0] == b'#' {
            return Ok(());
        }
        if let Some(h) = split_head(line) {
            let kind = payload::parse(h.name, h.rest, &mut out.strings)?;
            // The switch names its outgoing task even when perf lost track of it.
            let tid = match (h.tid, kind) {
                (Some(t), _) => t,
                (None, EventKind::SchedSwitch { prev_tid, .. }) => prev_tid,
                (None, _) => TID_UNKNOWN,
            };
            if tid != TID_UNKNOWN && h.tid.is_some() {
                out.note_task(h.cpu.unwrap_or(0), tid, h.comm, h.tgid);
            }
            if h.cpu.is_none() {
                out.note_no_cpu();
            }
            out.events.push(Event {
                ts: h.ts,
                tid,
                cpu: h.cpu.unwrap_or(0),
                kind,
            });
            return Ok(());
        }
        // --show-lost-events: "perf 1484 [000] 1623.1: PERF_RECORD_LOST lost 12"
        if let Some(p) = memchr::memmem::find(line, b"PERF_RECORD_LOST") {
            let cpu = line[..p]
                .iter()
                .rposition(|&b| b == b'[')
                .and_then(|lb| {
                    let rb = lb + line[lb..].iter().position(|&b| b == b']')?;
                    payload::parse_cpu(&line[lb + 1..rb])
                })
                .unwrap_or(0);
            let count = memchr::memmem::find(&line[p..], b"lost ")
                .and_then(|q| {
                    let v = &line[p + q + 5..];
                    let e = v.iter().position(|&b| b == b' ').unwrap_or(v.len());
                    payload::parse_u64(&v[..e])
                })
                .map(|n| n.min(u32::MAX as u64) as u32);
            out.push_lost(cpu, count);
            return Ok(());
        }
        Err(Expected(
            "a perf script line \"COMM TID [CPU] TIME: SYS:EVENT: FIELDS\"",
        ))
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
}
