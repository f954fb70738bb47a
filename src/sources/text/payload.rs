//! Event payloads as text: the tracefs print formats (`key=value ...`) that ftrace, trace_pipe
//! and perf script print, and the plugin forms `trace-cmd report` uses for a few events.
//!
//! Comm fields may hold spaces, `=`, `==>` and digits, so numeric fields are taken from the
//! *right* (the last `" key="` before a limit) and comms are whatever lies between their key and
//! the next field. A comm is at most 15 bytes, which rules out the remaining ambiguities.

pub use crate::events::same;
use crate::events::{EventKind, PACKED_ABSENT, PACKED_NEGATIVE, PrevState, Probe, StrId, Strings};
use crate::sources::text::chunk::Expected;
use crate::sources::text::scan::find2;

/// The payload of the two events of most lines, `rseq_update` and `sched_switch`, in their
/// exact tracefs layout read to its last byte (`None`: another event or shape; [`parse`] reads
/// it). A line read this way holds nothing else (no second line run into it).
#[inline]
pub fn parse_exact(
    name: &[u8],
    rest: &[u8],
    strings: &mut Strings,
    hrtimer_name: &mut Option<StrId>,
) -> Option<EventKind> {
    if same(name, b"rseq_update") {
        fast_rseq_update(rest)
    } else if same(name, b"sched_switch") {
        fast_switch(trim_end(rest), strings)
    } else if same(name, b"hrtimer_expire_entry") {
        // a third of a busy capture's lines: its name interned once per chunk (`hrtimer_name`)
        let f = fast_hrtimer_function(trim_end(rest))?;
        Some(if is_tick_name(f) {
            EventKind::Tick
        } else {
            EventKind::Other {
                name: *hrtimer_name.get_or_insert_with(|| strings.intern(name)),
            }
        })
    } else {
        None
    }
}

/// The function of the exact tracefs layout `hrtimer=%p function=%ps now=%llu`, read to its end
/// (trace-cmd's `function=f/0x0` and any other shape: `None`).
fn fast_hrtimer_function(rest: &[u8]) -> Option<&[u8]> {
    let mut i = 0;
    take_lit(rest, &mut i, b"hrtimer=")?;
    i = find2(rest, i, b' ', b'=')?;
    take_lit(rest, &mut i, b" function=")?;
    let f0 = i;
    i = find2(rest, i, b' ', b'/')?;
    let f = &rest[f0..i];
    take_lit(rest, &mut i, b" now=")?;
    take_int(rest, &mut i)?;
    (i == rest.len() && !f.is_empty()).then_some(f)
}

/// Parses the payload of event `name` (without its system prefix); the error says what the
/// payload was expected to hold.
pub fn parse(name: &[u8], rest: &[u8], strings: &mut Strings) -> Result<EventKind, Expected> {
    // Guards with `same` instead of slice patterns: those compile to memcmp calls, and this
    // runs once per line.
    Ok(match name {
        n if same(n, b"rseq_update") => {
            if let Some(k) = fast_rseq_update(rest) {
                return Ok(k);
            }
            let cpu_id =
                num_i32(rest, b"cpu_id=", rest.len()).ok_or(Expected("rseq_update cpu_id=N"))?;
            let mm_cid =
                num_i32(rest, b"mm_cid=", rest.len()).ok_or(Expected("rseq_update mm_cid=N"))?;
            // node_id exists since v6.3 together with mm_cid; absent means 0.
            let node_id = num_i32(rest, b"node_id=", rest.len()).unwrap_or(0);
            EventKind::RseqUpdate {
                cpu_id,
                node_id,
                mm_cid,
            }
        }
        n if same(n, b"rseq_ip_fixup") => EventKind::RseqIpFixup,
        n if same(n, b"sched_switch") => parse_switch(rest, strings)?,
        n if same(n, b"sched_migrate_task") => {
            let n = rest.len();
            EventKind::SchedMigrateTask {
                tid: num_u32(rest, b"pid=", n).ok_or(Expected("sched_migrate_task pid=N"))?,
                orig_cpu: num_cpu(rest, b"orig_cpu=", n)
                    .ok_or(Expected("sched_migrate_task orig_cpu=N (N < 8192)"))?,
                dest_cpu: num_cpu(rest, b"dest_cpu=", n)
                    .ok_or(Expected("sched_migrate_task dest_cpu=N (N < 8192)"))?,
            }
        }
        n if same(n, b"sched_process_fork") => {
            let n = rest.len();
            let child = num_u32(rest, b"child_pid=", n)
                .ok_or(Expected("sched_process_fork child_pid=N"))?;
            let limit = rfind_key(rest, b"child_comm=", n).unwrap_or(n);
            // `trace-cmd report -R` prints the field's own name, parent_pid
            let parent = num_u32(rest, b"pid=", limit)
                .or_else(|| num_u32(rest, b"parent_pid=", limit))
                .ok_or(Expected("sched_process_fork pid=N"))?;
            EventKind::SchedProcessFork { parent, child }
        }
        n if same(n, b"task_newtask") => {
            let n = rest.len();
            let tid = num_u32(rest, b"pid=", rfind_key(rest, b"comm=", n).unwrap_or(n))
                .or_else(|| num_u32(rest, b"pid=", n))
                .ok_or(Expected("task_newtask pid=N"))?;
            let flags =
                field(rest, b"clone_flags=", n).ok_or(Expected("task_newtask clone_flags=HEX"))?;
            let clone_flags = parse_hex(flags).ok_or(Expected("task_newtask clone_flags=HEX"))?;
            EventKind::TaskNewtask { tid, clone_flags }
        }
        n if same(n, b"sched_process_exec") => {
            let n = rest.len();
            let old_tid =
                num_u32(rest, b"old_pid=", n).ok_or(Expected("sched_process_exec old_pid=N"))?;
            let limit = rfind_key(rest, b"old_pid=", n).unwrap_or(n);
            let tid = num_u32(rest, b"pid=", limit).ok_or(Expected("sched_process_exec pid=N"))?;
            EventKind::SchedProcessExec { tid, old_tid }
        }
        n if same(n, b"sched_process_exit") => {
            let n = rest.len();
            let limit = rfind_key(rest, b"prio=", n).unwrap_or(n);
            let tid = num_u32(rest, b"pid=", limit)
                .or_else(|| num_u32(rest, b"pid=", n))
                .ok_or(Expected("sched_process_exit pid=N"))?;
            EventKind::SchedProcessExit { tid }
        }
        n if same(n, b"sched_wakeup_new") => parse_wakeup_new(rest)?,
        n if same(n, b"hrtimer_expire_entry") => {
            if is_tick_function(rest) {
                EventKind::Tick
            } else {
                EventKind::Other {
                    name: strings.intern(name),
                }
            }
        }
        n if same(n, b"tick_stop") => EventKind::TickStop {
            success: num_i32(rest, b"success=", rest.len())
                .ok_or(Expected("tick_stop success=N"))?
                != 0,
        },
        n if n.starts_with(b"cid_")
            && let Some(probe) = Probe::from_name(n) =>
        {
            parse_probe(probe, rest)?
        }
        _ => EventKind::Other {
            name: strings.intern(name),
        },
    })
}

/// A CID probe's line as the fprobe prints it: `(function+0x4/0x30) key=value ...`, the values
/// of `%d`/`%u` fields in decimal and of `:x64` ones in hex.
fn parse_probe(probe: Probe, rest: &[u8]) -> Result<EventKind, Expected> {
    let rest = trim_end(rest);
    const EP: Expected = Expected("CID probe: (function+off/size) and its key=value fields");
    let (num_key, ptr_key) = probe.fields();
    let n = rest.len();
    let num = match num_key {
        Some(k) => {
            let key = [k.as_bytes(), b"="].concat();
            match field(rest, &key, n) {
                // a count read as a signed int may print negative when the mm is being torn
                // down
                Some(v) => u32::try_from(parse_i64(v).ok_or(EP)?.max(0)).map_err(|_| EP)?,
                // a count is state the probe may not read on every kernel (0: unknown), and
                // an exit's task is the record's own where no BTF names it
                None if k == "users" || probe == Probe::Exit => 0,
                None => return Err(EP),
            }
        }
        None => 0,
    };
    let mut ptr = match ptr_key {
        Some(k) => {
            let key = [k.as_bytes(), b"="].concat();
            match field(rest, &key, n) {
                Some(v) => parse_hex(v).ok_or(EP)?,
                // a fork's or an exit's mm where no BTF names it (0: unknown)
                None if matches!(probe, Probe::Fork | Probe::Exit) => 0,
                None => return Err(EP),
            }
        }
        None => 0,
    };
    // migrate_disable()/enable() (SCA_MIGRATE_DISABLE 0x2, SCA_MIGRATE_ENABLE 0x4): no affinity
    if probe == Probe::SetCpus
        && field(rest, b"flags=", n)
            .and_then(parse_i64)
            .is_some_and(|f| f & 0x6 != 0)
    {
        ptr = 0;
    }
    // state the probe read beside (absent or too wide: PACKED_ABSENT; negative:
    // PACKED_NEGATIVE)
    for &(k, shift, _) in probe.packed() {
        let key = [k.as_bytes(), b"="].concat();
        let v = match field(rest, &key, n).and_then(parse_i64) {
            Some(v) if v < 0 => PACKED_NEGATIVE,
            Some(v) if (v as u64) < PACKED_NEGATIVE => v as u64,
            _ => PACKED_ABSENT,
        };
        ptr |= v << shift;
    }
    Ok(EventKind::Probe { probe, num, ptr })
}

/// Reads a signed decimal at `s[*i..]`, advancing `i`.
fn take_int(s: &[u8], i: &mut usize) -> Option<i64> {
    let neg = s.get(*i) == Some(&b'-');
    if neg {
        *i += 1;
    }
    let start = *i;
    let mut v: i64 = 0;
    while let Some(&b) = s.get(*i) {
        if !b.is_ascii_digit() || *i - start >= 18 {
            break;
        }
        v = v * 10 + (b - b'0') as i64;
        *i += 1;
    }
    if *i == start {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// Expects `lit` at `s[*i..]`, advancing `i`.
fn take_lit(s: &[u8], i: &mut usize, lit: &[u8]) -> Option<()> {
    if same(s.get(*i..*i + lit.len())?, lit) {
        *i += lit.len();
        Some(())
    } else {
        None
    }
}

/// The exact 6.3+ layout `cpu_id=%d node_id=%d mm_cid=%d`, read forward; anything else goes to
/// the general parser.
fn fast_rseq_update(rest: &[u8]) -> Option<EventKind> {
    let mut i = 0;
    take_lit(rest, &mut i, b"cpu_id=")?;
    let cpu_id = i32::try_from(take_int(rest, &mut i)?).ok()?;
    take_lit(rest, &mut i, b" node_id=")?;
    let node_id = i32::try_from(take_int(rest, &mut i)?).ok()?;
    take_lit(rest, &mut i, b" mm_cid=")?;
    let mm_cid = i32::try_from(take_int(rest, &mut i)?).ok()?;
    if i != trim_end(rest).len() {
        return None;
    }
    Some(EventKind::RseqUpdate {
        cpu_id,
        node_id,
        mm_cid,
    })
}

/// `sched_switch` in the tracefs layout with comms free of spaces and `=`, read forward; any
/// other shape goes to the general parser, which reads fields from the right.
fn fast_switch(rest: &[u8], strings: &mut Strings) -> Option<EventKind> {
    let mut i = 0;
    take_lit(rest, &mut i, b"prev_comm=")?;
    // (word scans: a comm's variable length makes a byte loop's exit a mispredicted branch)
    i = find2(rest, i, b' ', b'=')?;
    take_lit(rest, &mut i, b" prev_pid=")?;
    let prev_tid = u32::try_from(take_int(rest, &mut i)?).ok()?;
    take_lit(rest, &mut i, b" prev_prio=")?;
    take_int(rest, &mut i)?;
    take_lit(rest, &mut i, b" prev_state=")?;
    let s0 = i;
    i = find2(rest, i, b' ', b' ')?;
    let prev_state = &rest[s0..i];
    take_lit(rest, &mut i, b" ==> next_comm=")?;
    let n0 = i;
    i = find2(rest, i, b' ', b'=')?;
    let next_comm = &rest[n0..i];
    take_lit(rest, &mut i, b" next_pid=")?;
    let next_tid = u32::try_from(take_int(rest, &mut i)?).ok()?;
    take_lit(rest, &mut i, b" next_prio=")?;
    let next_prio = take_int(rest, &mut i)?;
    if i != trim_end(rest).len() {
        return None;
    }
    Some(EventKind::SchedSwitch {
        prev_tid,
        next_tid,
        next_comm: strings.intern(next_comm),
        next_prio: next_prio.clamp(i16::MIN as i64, i16::MAX as i64) as i16,
        prev_state: PrevState::from_text(prev_state),
    })
}

/// `function=tick_nohz_handler` (6.9+) or `function=tick_sched_timer`, in the tracefs form or in
/// trace-cmd's `function=tick_nohz_handler/0x0`.
fn is_tick_function(rest: &[u8]) -> bool {
    let Some(v) = field(rest, b"function=", rest.len()) else {
        return false;
    };
    let v = v.split(|&b| b == b'/').next().unwrap_or(v);
    is_tick_name(v)
}

/// The `now=` of an `hrtimer_expire_entry` (its clock base's time, CLOCK_MONOTONIC for the
/// tick's timer: `__run_hrtimer`'s `basenow`, `kernel/time/hrtimer.c` @6.18.15 l.1774), in any
/// of the layouts [`parse`] reads.
pub fn hrtimer_now(rest: &[u8]) -> Option<u64> {
    parse_u64(field(rest, b"now=", rest.len())?)
}

/// The tick's hrtimer function: `tick_nohz_handler` (6.9+) or `tick_sched_timer`.
fn is_tick_name(f: &[u8]) -> bool {
    same(f, b"tick_nohz_handler") || same(f, b"tick_sched_timer")
}

/// tracefs: `prev_comm=A prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=B next_pid=2 next_prio=120`
/// trace-cmd: `A:1 [120] S ==> B:2 [120]`
fn parse_switch(rest: &[u8], strings: &mut Strings) -> Result<EventKind, Expected> {
    let rest = trim_end(rest);
    if let Some(k) = fast_switch(rest, strings) {
        return Ok(k);
    }
    parse_switch_general(rest, strings)
}

/// Both layouts, fields read from the right: handles comms with spaces, `=`, `==>`.
fn parse_switch_general(rest: &[u8], strings: &mut Strings) -> Result<EventKind, Expected> {
    const E: Expected = Expected(
        "sched_switch prev_comm=.. prev_pid=N prev_prio=N prev_state=S ==> next_comm=.. next_pid=N next_prio=N",
    );
    if rest.starts_with(b"prev_comm=") {
        let n = rest.len();
        let next_prio = num_i32(rest, b"next_prio=", n).ok_or(E)?;
        let np = rfind_key(rest, b"next_pid=", n).ok_or(E)?;
        let next_tid = num_u32(rest, b"next_pid=", n).ok_or(E)?;
        let key_at = np - b"next_pid=".len();
        // `trace-cmd report -R` (raw fields): no arrow, prev_state a number
        let (arrow, sep) = match rfind(rest, b" ==> next_comm=", key_at) {
            Some(a) => (a, &b" ==> next_comm="[..]),
            None => (
                rfind(rest, b" next_comm=", key_at).ok_or(E)?,
                &b" next_comm="[..],
            ),
        };
        let comm_start = arrow + sep.len();
        let next_comm = &rest[comm_start..key_at.saturating_sub(1).max(comm_start)];
        let prev_state = field(rest, b"prev_state=", arrow).ok_or(E)?;
        let prev_tid = num_u32(rest, b"prev_pid=", arrow).ok_or(E)?;
        Ok(EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm: strings.intern(next_comm),
            next_prio: next_prio.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            prev_state: state_of(prev_state),
        })
    } else {
        // Plugin form. The first " ==> " preceded by ":PID [PRIO] STATE" splits prev from next.
        const EP: Expected = Expected("sched_switch PREV:PID [PRIO] STATE ==> NEXT:PID [PRIO]");
        let mut from = 0;
        loop {
            let arrow = find(rest, b" ==> ", from).ok_or(EP)?;
            if let Some((prev_tid, state)) = plugin_prev(&rest[..arrow]) {
                let next = &rest[arrow + 5..];
                let (comm, tid, prio) = plugin_comm_pid_prio(next).ok_or(EP)?;
                return Ok(EventKind::SchedSwitch {
                    prev_tid,
                    next_tid: tid,
                    next_comm: strings.intern(comm),
                    next_prio: prio,
                    prev_state: PrevState::from_text(state),
                });
            }
            from = arrow + 1;
        }
    }
}

/// `prev_state` as letters (`R+`, `S`) or, raw, as the kernel's number: 0 running, the
/// lowest bit set of `S D T t X Z P I`, `TASK_REPORT_MAX` (0x100 since 4.14) preempted.
fn state_of(s: &[u8]) -> PrevState {
    let Some(n) = parse_u64(s) else {
        return PrevState::from_text(s);
    };
    const LETTERS: &[u8; 8] = b"SDTtXZPI";
    if n == 0 {
        return PrevState(b'R');
    }
    if n & 0x100 != 0 {
        return PrevState(b'R' | PrevState::PREEMPTED);
    }
    let bit = n.trailing_zeros() as usize;
    PrevState(LETTERS.get(bit).copied().unwrap_or(b'?'))
}

/// `comm:PID [PRIO] STATE` → (pid, state)
fn plugin_prev(s: &[u8]) -> Option<(u32, &[u8])> {
    let sp = s.iter().rposition(|&b| b == b' ')?;
    let state = &s[sp + 1..];
    if state.is_empty() {
        return None;
    }
    let (_, pid, _) = plugin_comm_pid_prio(&s[..sp])?;
    Some((pid, state))
}

/// `comm:PID [PRIO]` → (comm, pid, prio); the comm may itself hold ':' (kworker/0:2).
fn plugin_comm_pid_prio(s: &[u8]) -> Option<(&[u8], u32, i16)> {
    let s = trim_end(s);
    if s.last() != Some(&b']') {
        return None;
    }
    let lb = s.iter().rposition(|&b| b == b'[')?;
    let prio: i32 = parse_i64(&s[lb + 1..s.len() - 1])? as i32;
    let head = trim_end(&s[..lb]);
    let colon = head.iter().rposition(|&b| b == b':')?;
    let pid = parse_u64(&head[colon + 1..])? as u32;
    Some((&head[..colon], pid, prio.clamp(-32768, 32767) as i16))
}

/// tracefs: `comm=bash pid=1488 prio=120 target_cpu=001`; trace-cmd: `bash:1480 [120] CPU:001`
fn parse_wakeup_new(rest: &[u8]) -> Result<EventKind, Expected> {
    let n = rest.len();
    if let Some(target) = num_cpu(rest, b"target_cpu=", n) {
        let limit = rfind_key(rest, b"prio=", n).unwrap_or(n);
        let tid = num_u32(rest, b"pid=", limit).ok_or(Expected("sched_wakeup_new pid=N"))?;
        return Ok(EventKind::SchedWakeupNew {
            tid,
            target_cpu: target,
        });
    }
    const EP: Expected = Expected("sched_wakeup_new comm=.. pid=N prio=N target_cpu=N");
    let rest = trim_end(rest);
    let cpu_at = rfind(rest, b" CPU:", rest.len()).ok_or(EP)?;
    let target_cpu = parse_cpu(&rest[cpu_at + 5..]).ok_or(EP)?;
    let (_, tid, _) = plugin_comm_pid_prio(&rest[..cpu_at]).ok_or(EP)?;
    Ok(EventKind::SchedWakeupNew { tid, target_cpu })
}

// ---------------------------------------------------------------- field helpers

fn trim_end(s: &[u8]) -> &[u8] {
    let mut e = s.len();
    while e > 0 && matches!(s[e - 1], b' ' | b'\t' | b'\r') {
        e -= 1;
    }
    &s[..e]
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    memchr::memmem::find(&hay[from..], needle).map(|i| i + from)
}

/// Last occurrence of `needle` in `hay`. Payloads are short and needles tiny, so a plain
/// backwards scan beats building a searcher per call.
fn rfind_short(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut end = hay.len().checked_sub(needle.len())? + 1;
    while let Some(i) = memchr::memrchr(first, &hay[..end]) {
        if &hay[i + 1..i + needle.len()] == rest {
            return Some(i);
        }
        end = i;
    }
    None
}

/// Last occurrence of `needle` that ends at or before `limit`.
fn rfind(hay: &[u8], needle: &[u8], limit: usize) -> Option<usize> {
    let limit = limit.min(hay.len());
    rfind_short(&hay[..limit], needle)
}

/// Start of the value of the last `key` (at the start or after a space) that begins before `limit`.
fn rfind_key(hay: &[u8], key: &[u8], limit: usize) -> Option<usize> {
    // Occurrences must start before `end`; each miss moves `end` left, so this terminates.
    let mut end = limit.min(hay.len());
    while end > 0 {
        let window_end = (end + key.len() - 1).min(hay.len());
        let at = rfind_short(&hay[..window_end], key)?;
        if at == 0 || hay[at - 1] == b' ' {
            return Some(at + key.len());
        }
        end = at;
    }
    None
}

/// Value of the last `key` before `limit`: up to the next space.
pub fn field<'a>(hay: &'a [u8], key: &[u8], limit: usize) -> Option<&'a [u8]> {
    let start = rfind_key(hay, key, limit)?;
    let end = hay[start..]
        .iter()
        .position(|&b| b == b' ')
        .map_or(hay.len(), |p| start + p);
    Some(trim_end(&hay[start..end]))
}

fn num_i32(hay: &[u8], key: &[u8], limit: usize) -> Option<i32> {
    let v = parse_i64(field(hay, key, limit)?)?;
    i32::try_from(v).ok()
}

fn num_u32(hay: &[u8], key: &[u8], limit: usize) -> Option<u32> {
    u32::try_from(parse_u64(field(hay, key, limit)?)?).ok()
}

fn num_cpu(hay: &[u8], key: &[u8], limit: usize) -> Option<u16> {
    parse_cpu(field(hay, key, limit)?)
}

pub use crate::sources::text::scan::{parse_cpu, parse_u64};

pub fn parse_i64(s: &[u8]) -> Option<i64> {
    match s.first() {
        // (what does not fit an i64 is no i64: not a value wrapped around)
        Some(b'-') => parse_u64(&s[1..])
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        _ => parse_u64(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// Hex with or without `0x` (`clone_flags` prints as `%lx`).
pub fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = (b as char).to_digit(16)? as u64;
        v = (v << 4) | d;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, rest: &str) -> EventKind {
        let mut s = Strings::new();
        parse(name.as_bytes(), rest.as_bytes(), &mut s).unwrap()
    }

    /// What does not fit an i64 is refused, not wrapped around.
    #[test]
    fn parse_i64_refuses_what_does_not_fit() {
        assert_eq!(parse_i64(b"-9223372036854775807"), Some(-i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), None);
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-17"), Some(-17));
    }

    proptest::proptest! {
        #[test]
        fn same_is_slice_equality(a in proptest::collection::vec(0u8..4, 0..40), b in proptest::collection::vec(0u8..4, 0..40)) {
            proptest::prop_assert_eq!(same(&a, &b), a == b);
            proptest::prop_assert!(same(&a, &a));
        }
    }

    #[test]
    fn rseq_update() {
        assert_eq!(
            p("rseq_update", "cpu_id=1 node_id=0 mm_cid=3"),
            EventKind::RseqUpdate {
                cpu_id: 1,
                node_id: 0,
                mm_cid: 3
            }
        );
    }

    #[test]
    fn switch_tracefs_with_odd_comms() {
        let mut s = Strings::new();
        let k = parse(
            b"sched_switch",
            b"prev_comm=pid=7 cpu_id=9 prev_pid=3062 prev_prio=120 prev_state=R ==> next_comm=a ==> b next_pid=3061 next_prio=120",
            &mut s,
        )
        .unwrap();
        let EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm,
            next_prio,
            prev_state,
        } = k
        else {
            panic!("{k:?}")
        };
        assert_eq!((prev_tid, next_tid, next_prio), (3062, 3061, 120));
        assert_eq!(s.get(next_comm), b"a ==> b");
        assert!(prev_state.runnable());
    }

    #[test]
    fn switch_tracefs_comm_with_spaces() {
        let mut s = Strings::new();
        let k = parse(
            b"sched_switch",
            b"prev_comm=  lead+trail   prev_pid=3064 prev_prio=120 prev_state=S ==> next_comm=  lead+trail   next_pid=3064 next_prio=120",
            &mut s,
        )
        .unwrap();
        let EventKind::SchedSwitch { next_comm, .. } = k else {
            panic!()
        };
        assert_eq!(s.get(next_comm), b"  lead+trail  ");
    }

    #[test]
    fn switch_plugin_form() {
        let mut s = Strings::new();
        let k = parse(
            b"sched_switch",
            b"kworker/0:2:870 [120] W ==> swapper/0:0 [120]",
            &mut s,
        )
        .unwrap();
        let EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm,
            prev_state,
            ..
        } = k
        else {
            panic!()
        };
        assert_eq!((prev_tid, next_tid), (870, 0));
        assert_eq!(s.get(next_comm), b"swapper/0");
        assert_eq!(prev_state.letter(), 'W');
        let k = parse(
            b"sched_switch",
            b"x:1 [120] R+ ==> a ==> b:3060 [-1]",
            &mut s,
        )
        .unwrap();
        let EventKind::SchedSwitch {
            next_tid,
            next_comm,
            next_prio,
            prev_state,
            ..
        } = k
        else {
            panic!()
        };
        assert_eq!((next_tid, next_prio), (3060, -1));
        assert_eq!(s.get(next_comm), b"a ==> b");
        assert!(prev_state.runnable());
    }

    #[test]
    fn raw_fields_of_trace_cmd_report_r() {
        let mut s = Strings::new();
        let k = parse(
            b"sched_switch",
            b"prev_comm=true prev_pid=5340 prev_prio=120 prev_state=32 next_comm=bash next_pid=5339 next_prio=120",
            &mut s,
        )
        .unwrap();
        let EventKind::SchedSwitch {
            prev_tid,
            next_tid,
            next_comm,
            prev_state,
            ..
        } = k
        else {
            panic!("{k:?}")
        };
        assert_eq!((prev_tid, next_tid, prev_state.letter()), (5340, 5339, 'Z'));
        assert_eq!(s.get(next_comm), b"bash");
        assert_eq!(state_of(b"0").letter(), 'R');
        assert!(!state_of(b"0").runnable() || state_of(b"0").text() == "R");
        assert_eq!(state_of(b"256").text(), "R+");
        assert_eq!(state_of(b"1").letter(), 'S');
        assert_eq!(state_of(b"2").letter(), 'D');
        assert_eq!(state_of(b"R+").text(), "R+");
        assert_eq!(
            p(
                "sched_process_fork",
                "parent_comm=bash parent_pid=24331 child_comm=bash child_pid=24332"
            ),
            EventKind::SchedProcessFork {
                parent: 24331,
                child: 24332
            }
        );
    }

    #[test]
    fn cid_probes_as_the_fprobe_prints_them() {
        assert_eq!(
            p("cid_switch_done", "(finish_task_switch.isra.0+0x0/0x2c0)"),
            EventKind::Probe {
                probe: Probe::SwitchDone,
                num: 0,
                ptr: 0
            }
        );
        assert_eq!(
            p(
                "cid_fork",
                "(sched_mm_cid_fork+0x4/0x30) mm=0xff420e82027bf380 users=3"
            ),
            EventKind::Probe {
                probe: Probe::Fork,
                num: 3,
                ptr: 0xff420e82027bf380
            }
        );
        assert_eq!(
            p(
                "cid_mmput",
                "(mmput+0x4/0x30) mm=0xff420e82027e1080 users=1"
            ),
            EventKind::Probe {
                probe: Probe::MmPut,
                num: 1,
                ptr: 0xff420e82027e1080
            }
        );
        assert_eq!(
            p("cid_exit", "(sched_mm_cid_exit+0x4/0x1a0) pid=245 mm=0x1f"),
            EventKind::Probe {
                probe: Probe::Exit,
                num: 245,
                ptr: 0x1f
            }
        );
        assert_eq!(
            p(
                "cid_fork_done",
                "(copy_process+0xce2/0x2740 <- sched_mm_cid_fork)"
            ),
            EventKind::Probe {
                probe: Probe::ForkDone,
                num: 0,
                ptr: 0
            }
        );
        let mut s = Strings::new();
        let e = parse(
            b"cid_migrate_to",
            b"(sched_mm_cid_migrate_to+0x4/0x1b0)",
            &mut s,
        );
        assert_eq!(
            e.unwrap_err().0,
            "CID probe: (function+off/size) and its key=value fields"
        );
        // a name of the group's form that is not one of the probes is another event
        assert!(matches!(p("cid_other", "x=1"), EventKind::Other { .. }));
    }

    #[test]
    fn fork_migrate_exit_wakeup() {
        assert_eq!(
            p(
                "sched_process_fork",
                "comm=bash pid=1385 child_comm=pid=9 child_pid=1488"
            ),
            EventKind::SchedProcessFork {
                parent: 1385,
                child: 1488
            }
        );
        assert_eq!(
            p(
                "sched_migrate_task",
                "comm=pid=7 cpu_id=9 pid=3064 prio=120 orig_cpu=0 dest_cpu=1"
            ),
            EventKind::SchedMigrateTask {
                tid: 3064,
                orig_cpu: 0,
                dest_cpu: 1
            }
        );
        assert_eq!(
            p(
                "sched_process_exit",
                "comm=date pid=1488 prio=120 group_dead=true"
            ),
            EventKind::SchedProcessExit { tid: 1488 }
        );
        assert_eq!(
            p(
                "sched_wakeup_new",
                "comm=bash pid=1488 prio=120 target_cpu=001"
            ),
            EventKind::SchedWakeupNew {
                tid: 1488,
                target_cpu: 1
            }
        );
        assert_eq!(
            p("sched_wakeup_new", "bash:2988 [120] CPU:000"),
            EventKind::SchedWakeupNew {
                tid: 2988,
                target_cpu: 0
            }
        );
    }

    #[test]
    fn newtask_exec_tick() {
        assert_eq!(
            p(
                "task_newtask",
                "pid=3070 comm=cidwork clone_flags=3d0f00 oom_score_adj=0"
            ),
            EventKind::TaskNewtask {
                tid: 3070,
                clone_flags: 0x3d0f00
            }
        );
        assert_eq!(
            p(
                "sched_process_exec",
                "filename=/usr/bin/my prog pid=12 old_pid=12"
            ),
            EventKind::SchedProcessExec {
                tid: 12,
                old_tid: 12
            }
        );
        assert_eq!(
            p(
                "hrtimer_expire_entry",
                "hrtimer=0xffff888627d1c6f8 now=1622380019122 function=tick_nohz_handler/0x0"
            ),
            EventKind::Tick
        );
        assert_eq!(
            p(
                "hrtimer_expire_entry",
                "hrtimer=000000009bfd0995 function=tick_nohz_handler now=1639160037054"
            ),
            EventKind::Tick
        );
        assert!(matches!(
            p(
                "hrtimer_expire_entry",
                "hrtimer=00 function=hrtimer_wakeup now=1"
            ),
            EventKind::Other { .. }
        ));
    }

    #[test]
    fn fast_paths_agree_with_the_general_parser() {
        let mut s = Strings::new();
        for line in [
            &b"cpu_id=1 node_id=0 mm_cid=3"[..],
            b"cpu_id=-1 node_id=2 mm_cid=-1",
        ] {
            let general = EventKind::RseqUpdate {
                cpu_id: num_i32(line, b"cpu_id=", line.len()).unwrap(),
                node_id: num_i32(line, b"node_id=", line.len()).unwrap(),
                mm_cid: num_i32(line, b"mm_cid=", line.len()).unwrap(),
            };
            assert_eq!(fast_rseq_update(line), Some(general));
        }
        for line in [
            &b"prev_comm=bash prev_pid=1385 prev_prio=120 prev_state=S ==> next_comm=python3 next_pid=1487 next_prio=120"[..],
            b"prev_comm=kworker/0:2 prev_pid=870 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 next_prio=-1",
        ] {
            let fast = fast_switch(line, &mut s).expect("fast path taken");
            assert_eq!(Ok(fast), parse_switch_general(line, &mut s));
        }
        // odd comms make the fast path step aside
        assert!(fast_switch(b"prev_comm=a ==> b prev_pid=1 prev_prio=1 prev_state=S ==> next_comm=x next_pid=2 next_prio=1", &mut s).is_none());
        assert!(fast_switch(b"prev_comm=x prev_pid=1 prev_prio=1 prev_state=S ==> next_comm=pid=7 cpu_id=9 next_pid=2 next_prio=1", &mut s).is_none());
        assert!(fast_rseq_update(b"cpu_id=1 mm_cid=3").is_none());
        // hrtimer_expire_entry: the exact layout read by parse_exact, with the id of its name
        // interned once; the general parser gives the same
        let mut cache = None;
        for line in [
            &b"hrtimer=0000000019f8d94e function=tick_nohz_handler now=1623448022669"[..],
            b"hrtimer=ffff8d5a7bd1e2c0 function=hrtimer_wakeup now=1623448022669  ",
            b"hrtimer=00 function=tick_sched_timer now=1",
        ] {
            let name = &b"hrtimer_expire_entry"[..];
            let fast = parse_exact(name, line, &mut s, &mut cache).expect("fast path taken");
            assert_eq!(Ok(fast), parse(name, line, &mut s));
        }
        assert_eq!(cache, s.find(b"hrtimer_expire_entry"));
        // trace-cmd's plugin form, an extra field, a function with a space: the general parser
        for line in [
            &b"hrtimer=0xffff888627d1c6f8 now=1622380019122 function=tick_nohz_handler/0x0"[..],
            b"hrtimer=00 function=tick_nohz_handler/0x0 now=1",
            b"hrtimer=00 function=tick_nohz_handler now=1 mode=ABS",
            b"hrtimer=00 function= now=1",
        ] {
            assert_eq!(
                fast_hrtimer_function(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn reverse_search() {
        assert_eq!(rfind_short(b"a pid=1 pid=2", b"pid="), Some(8));
        assert_eq!(rfind_short(b"pid=", b"pid="), Some(0));
        assert_eq!(rfind_short(b"pi", b"pid="), None);
        assert_eq!(rfind_short(b"xxpid", b"pid="), None);
        assert_eq!(
            rfind_key(b"comm=a pid=5 child_pid=6", b"pid=", 24),
            Some(11)
        );
        assert_eq!(rfind_key(b"child_pid=6", b"pid=", 11), None);
    }

    #[test]
    fn errors_name_what_was_expected() {
        let mut s = Strings::new();
        assert_eq!(
            parse(b"rseq_update", b"cpu_id=x", &mut s),
            Err(Expected("rseq_update cpu_id=N"))
        );
        assert!(parse(b"sched_switch", b"garbage", &mut s).is_err());
        assert!(parse(b"sched_switch", b"", &mut s).is_err());
    }
}
