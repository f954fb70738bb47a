//! The ftrace text family: tracefs `trace` (with or without its `#` header, irq-flags column and
//! the `(TGID)` column of `options/record-tgid`), `trace_pipe`, and `trace-cmd report`.
//!
//! A line is `COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: EVENT: PAYLOAD`. Comms may hold
//! spaces, dashes, digits and even `[001]`, so the line is anchored on the first `[CPU]` that is
//! preceded by `-PID` and followed by a timestamp, not split on whitespace.

use crate::events::{Event, Tid};
use crate::sources::file_format::Sample;
use crate::sources::text::chunk::{Chunk, Expected, LineParser};
use crate::sources::text::payload;
use crate::sources::text::scan::{parse_ts, skip_spaces, trim_end, trim_start};

/// Parser for every ftrace-family text format.
pub struct FtraceText;

/// The fixed columns of an event line.
#[derive(Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub comm: &'a [u8],
    pub tid: Tid,
    /// `Some(None)` when the TGID column is present but shows `-------`.
    pub tgid: Option<Option<Tid>>,
    pub cpu: u16,
    pub flags: Option<&'a [u8]>,
    pub ts: u64,
    pub name: &'a [u8],
    pub rest: &'a [u8],
}

/// Splits an event line into its columns, trying first the `[CPU]` position `hint` where the
/// previous line had it (tracefs pads its columns, so it rarely moves).
pub fn split_head_hinted<'a>(line: &'a [u8], hint: &mut usize) -> Option<Head<'a>> {
    if line.get(*hint) == Some(&b'[')
        && let Some(h) = head_at(line, *hint)
    {
        return Some(h);
    }
    let limit = line.len().min(200);
    for i in memchr::memchr_iter(b'[', &line[..limit]) {
        if let Some(h) = head_at(line, i) {
            *hint = i;
            return Some(h);
        }
    }
    None
}

/// Splits an event line into its columns, or `None` if it is not one.
pub fn split_head(line: &[u8]) -> Option<Head<'_>> {
    // The [CPU] column sits within the first ~60 bytes (16-byte comm, pid, TGID column).
    let limit = line.len().min(200);
    for i in memchr::memchr_iter(b'[', &line[..limit]) {
        if let Some(h) = head_at(line, i) {
            return Some(h);
        }
    }
    None
}

fn head_at(line: &[u8], i: usize) -> Option<Head<'_>> {
    // [CPU]
    let mut j = i + 1;
    while j < line.len() && line[j].is_ascii_digit() {
        j += 1;
    }
    if j == i + 1 || j - i - 1 > 5 || line.get(j) != Some(&b']') {
        return None;
    }
    let cpu = payload::parse_cpu(&line[i + 1..j])?;
    // COMM-PID [(TGID)]
    let mut pre = trim_end(&line[..i]);
    let mut tgid = None;
    if pre.last() == Some(&b')') {
        let lp = pre.iter().rposition(|&b| b == b'(')?;
        let inner = trim_start(trim_end(&pre[lp + 1..pre.len() - 1]));
        tgid = if !inner.is_empty() && inner.iter().all(|&b| b == b'-') {
            Some(None)
        } else {
            Some(Some(payload::parse_u64(inner)? as Tid))
        };
        pre = trim_end(&pre[..lp]);
    }
    let dash = pre.iter().rposition(|&b| b == b'-')?;
    let tid = payload::parse_u64(&pre[dash + 1..])?;
    let tid = Tid::try_from(tid).ok()?;
    let comm = trim_start(&pre[..dash]);
    // [FLAGS] TIMESTAMP:
    let mut k = j + 1;
    if line.get(k) != Some(&b' ') {
        return None;
    }
    k = skip_spaces(line, k);
    let tok_end = find2(line, k, b' ', b' ')?;
    let tok = &line[k..tok_end];
    let (flags, ts_tok, after) = if tok.last() == Some(&b':') && tok.len() > 1 {
        (None, &tok[..tok.len() - 1], tok_end)
    } else {
        if !(3..=6).contains(&tok.len()) {
            return None;
        }
        let k2 = skip_spaces(line, tok_end);
        let e2 = find2(line, k2, b' ', b' ')?;
        let t2 = &line[k2..e2];
        if t2.last() != Some(&b':') {
            return None;
        }
        (Some(tok), &t2[..t2.len() - 1], e2)
    };
    let ts = parse_ts(ts_tok)?;
    // EVENT: PAYLOAD
    let n0 = skip_spaces(line, after);
    // the name ends at its colon; a space first means this is no event line
    let colon = find2(line, n0, b':', b' ')?;
    let name = &line[n0..colon];
    if name.is_empty() || line[colon] != b':' {
        return None;
    }
    let rest = &line[skip_spaces(line, colon + 1)..];
    Some(Head {
        comm,
        tid,
        tgid,
        cpu,
        flags,
        ts,
        name,
        rest,
    })
}

/// The first position at or after `from` holding `a` or `b`, eight bytes at a time (the
/// columns scanned here are 5–20 bytes long and this runs several times per line).
fn find2(s: &[u8], from: usize, a: u8, b: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // a byte of `x` is zero → its high bit set in the result (exact for the lowest such byte)
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let (pa, pb) = (ONES * a as u64, ONES * b as u64);
    let mut i = from;
    while i + 8 <= s.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        let x = u64::from_le_bytes(w);
        let t = zero(x ^ pa) | zero(x ^ pb);
        if t != 0 {
            return Some(i + (t.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..s.len()).find(|&j| s[j] == a || s[j] == b)
}

/// The three ftrace text formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// tracefs `trace`: a `#` header.
    Trace,
    /// `trace_pipe`: event lines only.
    Pipe,
    /// `trace-cmd report`: a `cpus=` / `version = ` preamble, or trace-cmd's plugin forms.
    Report,
}

/// Where the sample first shows ftrace text (its first event line, or the header or preamble line
/// that decides before one), and which of the three formats it is. A `# tracer:` header or a
/// trace-cmd preamble line decides at once; otherwise up to 20 event lines are looked at.
pub fn sniff_family(sample: &Sample) -> Option<(usize, Family)> {
    let mut first = None;
    let mut saw_hash_header = false;
    let mut ftrace_lines = 0;
    let mut plugin_form = false;
    for (i, line) in sample.lines().enumerate() {
        if line.starts_with(b"# tracer:") || line.starts_with(b"# entries-in-buffer") {
            return Some((first.unwrap_or(i), Family::Trace));
        }
        if line.starts_with(b"#") {
            saw_hash_header = true;
            continue;
        }
        if line.starts_with(b"cpus=") || line.starts_with(b"version = ") {
            return Some((first.unwrap_or(i), Family::Report));
        }
        if let Some(h) = split_head(line) {
            first.get_or_insert(i);
            ftrace_lines += 1;
            // trace-cmd prints sched_switch and hrtimer through plugins.
            if (h.name == b"sched_switch" && !h.rest.starts_with(b"prev_comm="))
                || (h.name == b"hrtimer_expire_entry"
                    && memchr::memmem::find(h.rest, b"/0x").is_some())
            {
                plugin_form = true;
            }
            if ftrace_lines >= 20 {
                break;
            }
        }
    }
    let family = if plugin_form {
        Family::Report
    } else if saw_hash_header {
        Family::Trace
    } else {
        Family::Pipe
    };
    first.map(|i| (i, family))
}

/// `CPU:N [LOST M EVENTS]`, `CPU:N [LOST EVENTS]` (tracefs) and `CPU:N [M EVENTS DROPPED]`
/// (trace-cmd) → (cpu, count).
pub fn lost_marker(line: &[u8]) -> Option<(u16, Option<u32>)> {
    let rest = line.strip_prefix(b"CPU:")?;
    let sp = rest.iter().position(|&b| b == b' ')?;
    let cpu = payload::parse_cpu(&rest[..sp])?;
    let tail = trim_end(&rest[sp + 1..]);
    let inner = tail.strip_prefix(b"[")?.strip_suffix(b"]")?;
    if let Some(x) = inner.strip_prefix(b"LOST ") {
        if x == b"EVENTS" {
            return Some((cpu, None));
        }
        let n = x.strip_suffix(b" EVENTS")?;
        return Some((
            cpu,
            Some(payload::parse_u64(n)?.min(u32::MAX as u64) as u32),
        ));
    }
    if inner == b"EVENTS DROPPED" {
        return Some((cpu, None));
    }
    let n = inner.strip_suffix(b" EVENTS DROPPED")?;
    Some((
        cpu,
        Some(payload::parse_u64(n)?.min(u32::MAX as u64) as u32),
    ))
}

impl LineParser for FtraceText {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
        let Some(&first) = line.first() else {
            return Ok(());
        };
        if first == b'#' {
            return header_line(line, out);
        }
        if let Some(h) = split_head_hinted(line, &mut out.cpu_hint) {
            let kind = payload::parse(h.name, h.rest, &mut out.strings)?;
            out.note_task(h.cpu, h.tid, h.comm, h.tgid.flatten());
            out.events.push(Event {
                ts: h.ts,
                tid: h.tid,
                cpu: h.cpu,
                kind,
            });
            return Ok(());
        }
        if let Some((cpu, count)) = lost_marker(line) {
            out.push_lost(cpu, count);
            return Ok(());
        }
        if let Some(n) = line.strip_prefix(b"cpus=") {
            out.ncpus_hint = payload::parse_u64(trim_end(n)).map(|n| n as u32);
            return Ok(());
        }
        // trace-cmd report preamble lines.
        if line.starts_with(b"version = ")
            || (line.starts_with(b"CPU ") && line.ends_with(b" is empty"))
            || line.iter().all(|b| b.is_ascii_whitespace())
        {
            return Ok(());
        }
        Err(Expected(
            "an ftrace event line \"COMM-PID [CPU] TIMESTAMP: EVENT: FIELDS\"",
        ))
    }
}

fn header_line(line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
    out.saw_header = true;
    // how a recording written as it arrived was cut, if it was (`export::record`)
    if let Some(r) = line.strip_prefix(b"# cidscope-") {
        if r.starts_with(b"record: chunked") {
            out.record.chunked = true;
        } else if r.starts_with(b"record: end") {
            out.record.ended = true;
        } else if let Some(n) = r.strip_prefix(b"chunk: ") {
            let n = n.split(|&b| b == b' ').next().unwrap_or(b"");
            if let Some(n) = payload::parse_u64(n) {
                out.record.last_chunk = Some((n, out.events.len()));
            }
        }
        return Ok(());
    }
    if !out.events.is_empty() && !out.warned_late_header && line.starts_with(b"# tracer:") {
        out.warned_late_header = true;
        out.warnings.push(crate::events::Warning {
            code: "header-after-events",
            message: format!(
                "a \"# tracer:\" header follows {} events: several captures concatenated? They are read as one stream",
                out.events.len()
            ),
        });
    }
    // "##### CPU 1 buffer started ####": the ring buffer of that CPU was overwritten before
    // this point (overwrite mode), so older events of that CPU are missing.
    if let Some(r) = line.strip_prefix(b"##### CPU ") {
        if let Some(sp) = r.iter().position(|&b| b == b' ')
            && let Some(cpu) = payload::parse_cpu(&r[..sp])
        {
            out.push_lost(cpu, None);
        }
        return Ok(());
    }
    // "# entries-in-buffer/entries-written: 14277/14277   #P:2"
    if let Some(r) = line.strip_prefix(b"# entries-in-buffer/entries-written: ") {
        if let Some(p) = memchr::memmem::find(r, b"#P:") {
            out.ncpus_hint = payload::parse_u64(trim_end(&r[p + 3..])).map(|n| n as u32);
        }
        let nums = r.split(|&b| b == b' ').next().unwrap_or(b"");
        let mut it = nums.split(|&b| b == b'/');
        if let (Some(a), Some(b)) = (it.next(), it.next())
            && let (Some(inbuf), Some(written)) = (payload::parse_u64(a), payload::parse_u64(b))
            && written > inbuf
        {
            out.warnings.push(crate::events::Warning {
                        code: "overwritten",
                        message: format!(
                            "the ring buffer overwrote {} of {written} events before it was read (header: entries-in-buffer {inbuf}); the capture starts later than the recording",
                            written - inbuf
                        ),
                    });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::prop;

    #[test]
    fn head_plain_flags_tgid() {
        let h = split_head(b"            bash-1385    [000] .....  1623.480444: rseq_update: cpu_id=0 node_id=0 mm_cid=0").unwrap();
        assert_eq!(
            (h.comm, h.tid, h.cpu, h.ts),
            (&b"bash"[..], 1385, 0, 1_623_480_444_000)
        );
        assert_eq!(h.flags, Some(&b"....."[..]));
        assert_eq!(h.name, b"rseq_update");
        assert_eq!(h.rest, b"cpu_id=0 node_id=0 mm_cid=0");
        assert_eq!(h.tgid, None);

        let h = split_head(b"          <idle>-0       (-------) [000] d.h1.  1639.196281: hrtimer_expire_entry: x=1").unwrap();
        assert_eq!((h.comm, h.tid, h.tgid), (&b"<idle>"[..], 0, Some(None)));
        let h = split_head(
            b"            bash-1385    (   1385) [001] .....  1639.196015: rseq_update: cpu_id=1",
        )
        .unwrap();
        assert_eq!(h.tgid, Some(Some(1385)));
    }

    #[test]
    fn head_trace_cmd_report_and_odd_comms() {
        let h = split_head(b"       trace-cmd-1472  [000]  1622.415299: sched_switch:         trace-cmd:1472 [120] S ==> trace-cmd:1479 [120]").unwrap();
        assert_eq!((h.comm, h.tid, h.flags), (&b"trace-cmd"[..], 1472, None));
        assert_eq!(h.rest, b"trace-cmd:1472 [120] S ==> trace-cmd:1479 [120]");
        let h = split_head(b"      [001] fake-3061    [001] .....  1637.128447: rseq_update: cpu_id=1 node_id=0 mm_cid=0").unwrap();
        assert_eq!((h.comm, h.tid, h.cpu), (&b"[001] fake"[..], 3061, 1));
        let h =
            split_head(b"  pid=7 cpu_id=9-3062    [001] .....  1637.128578: rseq_update: cpu_id=1")
                .unwrap();
        assert_eq!((h.comm, h.tid), (&b"pid=7 cpu_id=9"[..], 3062));
        let h = split_head(b"   my worker-1-1234 [000] .....  1.000001: x: y").unwrap();
        assert_eq!((h.comm, h.tid), (&b"my worker-1"[..], 1234));
        let h = split_head(b"bash-14432   [000] d..2.  1.5: sched_switch: a").unwrap();
        assert_eq!(h.tid, 14432);
        assert!(split_head(b"hello world").is_none());
        assert!(split_head(b"x-1 [0] ....").is_none());
    }

    proptest::proptest! {
        #[test]
        fn find2_is_the_first_match(s in proptest::collection::vec(prop::sample::select(vec![b' ', b':', b'a', 0x80, 0xff, 0]), 0..40), from in 0usize..45) {
            let from = from.min(s.len());
            let want = (from..s.len()).find(|&j| s[j] == b' ' || s[j] == b':');
            proptest::prop_assert_eq!(find2(&s, from, b' ', b':'), want);
        }
    }

    #[test]
    fn lost_markers() {
        assert_eq!(
            lost_marker(b"CPU:1 [LOST 477 EVENTS]"),
            Some((1, Some(477)))
        );
        assert_eq!(lost_marker(b"CPU:0 [LOST EVENTS]"), Some((0, None)));
        assert_eq!(
            lost_marker(b"CPU:3 [12 EVENTS DROPPED]"),
            Some((3, Some(12)))
        );
        assert_eq!(lost_marker(b"CPU:3 [EVENTS DROPPED]"), Some((3, None)));
        assert_eq!(lost_marker(b"CPU:x [LOST 1 EVENTS]"), None);
    }
}
