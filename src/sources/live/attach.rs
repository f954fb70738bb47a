//! `perf_event_open` on the tracepoints cidscope models: one ring buffer per CPU (every other
//! event of that CPU is redirected into it with PERF_EVENT_IOC_SET_OUTPUT), records sampled with
//! RAW|TID|TIME|CPU|IDENTIFIER on CLOCK_MONOTONIC, decoded through the tracefs formats.
//!
//! Events are opened system-wide (pid -1, one per CPU) in both scopes. For a process scope the
//! filtering happens in user space ([`super::filter`]): a per-task event would miss the
//! switch *into* the process's threads and migrations done by other tasks, since a tracepoint is
//! counted in the context of the task that hits it. Raw tracepoint data needs the same privilege
//! either way (root or CAP_PERFMON), so the system-wide open costs no extra rights.

use super::LiveError;
use super::kallsyms::Kallsyms;
use super::tracefs::Tracefs;
use crate::events::{Event, EventAux, EventKind, StrId, Strings, TID_UNKNOWN, Tid};
use crate::sources::sys::{self, PerfAttr, PerfRing};
use crate::sources::tracefs::decode::{DecodeError, Decoder, Peek};
use crate::sources::tracefs::format::EventFormat;
use perf_event_open_sys::bindings as pb;
use rustc_hash::FxHashMap;
use std::os::fd::OwnedFd;

/// Which tasks a capture keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Everything on every CPU.
    All,
    /// One process: all its threads (those alive at start and those it creates).
    Process(u32),
}

impl Scope {
    pub fn describe(&self) -> String {
        match self {
            Scope::All => "system-wide".into(),
            Scope::Process(p) => format!("process {p}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct AttachOptions {
    /// Data pages per CPU ring buffer (a power of two).
    pub buffer_pages: usize,
    /// Mount tracefs at /sys/kernel/tracing if it is missing (root only).
    pub mount_tracefs: bool,
}

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions {
            buffer_pages: 256,
            mount_tracefs: true,
        }
    }
}

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

/// A decoded record: the canonical event, what an ftrace line needs beyond it, and comms the
/// record names (tid, comm) for the task table.
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    pub event: Event,
    pub aux: EventAux,
    pub comms: [Option<(Tid, StrId)>; 2],
}

/// A decoded record waiting to be merged in time order.
#[derive(Clone, Copy, Debug)]
pub struct Staged {
    pub decoded: Decoded,
    /// Process (tgid) of the current task from PERF_SAMPLE_TID; `TID_UNKNOWN` when perf no
    /// longer tracks it (an exiting thread) or for lost-event markers.
    pub pid: Tid,
    /// Thread of the current task from PERF_SAMPLE_TID.
    pub sample_tid: Tid,
}

/// A cheap first cut applied before records are decoded (a process scope skips the other
/// processes' records without interning their strings). It may keep too much, never too
/// little: the exact filter runs after the merge.
pub trait Prefilter {
    /// A task_newtask record seen before the records of this drain are decoded.
    fn note_new_task(&mut self, sample_pid: Tid, parent: Tid, child: Tid, clone_flags: u64);
    /// Whether a record whose current task perf placed in `sample_pid` may be kept.
    fn may_keep(&self, sample_pid: Tid, peek: &Peek) -> bool;
}

/// Keeps everything.
pub struct KeepAll;

impl Prefilter for KeepAll {
    fn note_new_task(&mut self, _: Tid, _: Tid, _: Tid, _: u64) {}
    fn may_keep(&self, _: Tid, _: &Peek) -> bool {
        true
    }
}

/// Counters of the record stream.
#[derive(Clone, Debug, Default)]
pub struct AttachStats {
    /// Samples read (before any filter).
    pub records: u64,
    /// Samples the prefilter skipped without decoding.
    pub prefiltered: u64,
    /// Sum of PERF_RECORD_LOST counts.
    pub lost: u64,
    pub lost_records: u64,
    pub throttled: u64,
    pub decode_errors: u64,
    pub first_decode_error: Option<String>,
    pub bytes: u64,
}

struct CpuRing {
    cpu: u16,
    ring: PerfRing,
}

/// The attached tracepoints.
pub struct Attach {
    rings: Vec<CpuRing>,
    /// Ring owners (one per CPU), polled for wake-ups.
    leaders: Vec<OwnedFd>,
    /// Every event descriptor, for enable/disable.
    fds: Vec<OwnedFd>,
    parser: RecordParser,
    /// Bytes drained from each ring in the current round.
    bufs: Vec<Vec<u8>>,
    /// Names of the events attached (`system:name`).
    pub events: Vec<String>,
    pub warnings: Vec<String>,
    /// The tracefs mount cidscope made, if it made one: unmounted with the session.
    pub mounted: Option<std::sync::Arc<super::tracefs::Mounted>>,
}

const PERF_RECORD_SAMPLE: u32 = pb::PERF_RECORD_SAMPLE;
const PERF_RECORD_LOST: u32 = pb::PERF_RECORD_LOST;
const PERF_RECORD_THROTTLE: u32 = pb::PERF_RECORD_THROTTLE;
const PERF_RECORD_LOST_SAMPLES: u32 = pb::PERF_RECORD_LOST_SAMPLES;

fn lost_marker(lost: u64, ts: u64, cpu: u16) -> Staged {
    Staged {
        decoded: Decoded {
            event: Event {
                ts,
                tid: 0,
                cpu,
                kind: EventKind::Lost {
                    count: Some(lost.min(u32::MAX as u64) as u32),
                },
            },
            aux: EventAux::default(),
            comms: [None, None],
        },
        pid: TID_UNKNOWN,
        sample_tid: TID_UNKNOWN,
    }
}

fn attr_for(id: u64, wakeup_bytes: u32) -> PerfAttr {
    let mut a = PerfAttr {
        type_: pb::PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config: id,
        sample_type: (pb::PERF_SAMPLE_IDENTIFIER
            | pb::PERF_SAMPLE_TID
            | pb::PERF_SAMPLE_TIME
            | pb::PERF_SAMPLE_CPU
            | pb::PERF_SAMPLE_RAW) as u64,
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    };
    a.__bindgen_anon_1.sample_period = 1;
    a.__bindgen_anon_2.wakeup_watermark = wakeup_bytes;
    a.set_disabled(1);
    a.set_sample_id_all(1);
    a.set_use_clockid(1);
    a.set_watermark(1);
    a
}

fn open_error(what: &str, e: std::io::Error) -> LiveError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => LiveError::NoPermission {
            detail: format!("{what}: {e}"),
        },
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => LiveError::Unsupported(
            format!("{what}: {e} (this kernel lacks the tracepoint or perf support)"),
        ),
        _ => LiveError::io(what, e),
    }
}

/// The records of `formats` read on this machine (native byte order), tick handlers named by
/// `syms`; event names interned in `strings`.
fn decoder_for(formats: &[EventFormat], syms: &Kallsyms, strings: &mut Strings) -> Decoder {
    let big_endian = cfg!(target_endian = "big");
    Decoder::new(formats, big_endian, Some(syms.tick_addresses()), strings)
}

/// `Err(what is missing)` when the format lacks a field a recorded ftrace line prints.
fn check_fields(f: &EventFormat) -> Result<(), String> {
    let one = decoder_for(
        std::slice::from_ref(f),
        &Kallsyms::default(),
        &mut Strings::new(),
    );
    match one.missing_for_text(f.id) {
        None => Ok(()),
        Some("mm_cid") if f.name == "rseq_update" => Err(format!(
            "{}; rseq_update gained mm_cid in Linux 6.3, this kernel is older",
            f.lacks("mm_cid")
        )),
        Some(field) => Err(f.lacks(field)),
    }
}

impl Attach {
    /// Finds tracefs, reads the formats, opens and maps every event on every online CPU. Nothing
    /// is recorded until [`Attach::enable`]. Event names are interned in `strings`, the table
    /// the records will be decoded into.
    pub fn open(opts: &AttachOptions, strings: &mut Strings) -> Result<Attach, LiveError> {
        let root = sys::geteuid() == 0;
        let tracefs = Tracefs::locate(opts.mount_tracefs && root)?;
        let mut formats: Vec<EventFormat> = Vec::new();
        let mut names = Vec::new();
        let mut warnings = Vec::new();
        for (system, name, required) in EVENTS {
            match tracefs.event_format(system, name)? {
                Some(f) => {
                    check_fields(&f).map_err(|detail| LiveError::Format {
                        path: tracefs
                            .root
                            .join("events")
                            .join(system)
                            .join(name)
                            .join("format")
                            .display()
                            .to_string(),
                        detail,
                    })?;
                    names.push(format!("{system}:{name}"));
                    formats.push(f);
                }
                None if required => {
                    return Err(LiveError::Unsupported(format!(
                        "tracepoint {system}:{name} does not exist in {} (cidscope needs it; \
                         rseq:rseq_update with mm_cid needs Linux >= 6.3 with CONFIG_RSEQ)",
                        tracefs.root.join("events").display()
                    )));
                }
                None => warnings.push(format!("{system}:{name} not available; not attached")),
            }
        }
        let syms = Kallsyms::load();
        if !syms.has_tick() {
            warnings.push(
                "no tick handler address in /proc/kallsyms (needs root): hrtimer_expire_entry \
                 records are kept as `other`, not as ticks"
                    .into(),
            );
        }
        let decoder = decoder_for(&formats, &syms, strings);
        let cpus = super::online_cpus();
        let pages = opts.buffer_pages.max(1).next_power_of_two();
        let page = 4096usize;
        let wakeup = ((pages * page) / 4).min(u32::MAX as usize) as u32;
        let mut rings = Vec::new();
        let mut leaders = Vec::new();
        let mut fds = Vec::new();
        let mut by_id = FxHashMap::default();
        for &cpu in &cpus {
            let mut leader: Option<OwnedFd> = None;
            for f in &formats {
                let mut attr = attr_for(f.id as u64, wakeup);
                let what = format!("perf_event_open({}:{} on CPU {cpu})", f.system, f.name);
                let fd = sys::perf_event_open(&mut attr, -1, cpu as i32)
                    .map_err(|e| open_error(&what, e))?;
                let id = sys::perf_id(&fd).map_err(|e| LiveError::io("PERF_EVENT_IOC_ID", e))?;
                by_id.insert(id, f.id);
                match &leader {
                    None => {
                        let ring = PerfRing::map(&fd, pages).map_err(|e| {
                            LiveError::io(
                                format!(
                                    "mapping a {} KiB perf ring buffer for CPU {cpu} (lower --buffer-pages, or raise kernel.perf_event_mlock_kb)",
                                    pages * page / 1024
                                ),
                                e,
                            )
                        })?;
                        rings.push(CpuRing {
                            cpu: cpu as u16,
                            ring,
                        });
                        leader = Some(fd);
                    }
                    Some(l) => {
                        sys::perf_set_output(&fd, l)
                            .map_err(|e| LiveError::io("PERF_EVENT_IOC_SET_OUTPUT", e))?;
                        fds.push(fd);
                    }
                }
            }
            if let Some(l) = leader {
                leaders.push(l);
            }
        }
        Ok(Attach {
            rings,
            leaders,
            fds,
            parser: RecordParser::new(decoder, &formats, by_id, syms),
            bufs: Vec::new(),
            events: names,
            warnings,
            mounted: tracefs.mounted.clone(),
        })
    }

    pub fn enable(&self) -> Result<(), LiveError> {
        for fd in self.leaders.iter().chain(&self.fds) {
            sys::perf_enable(fd).map_err(|e| LiveError::io("PERF_EVENT_IOC_ENABLE", e))?;
        }
        Ok(())
    }

    pub fn disable(&self) {
        for fd in self.leaders.iter().chain(&self.fds) {
            let _ = sys::perf_disable(fd);
        }
    }

    /// Waits up to `timeout_ms` for a ring to pass its wake-up watermark.
    pub fn wait(&self, timeout_ms: i32) {
        if sys::poll_readable(&self.leaders, timeout_ms).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(timeout_ms.max(0) as u64));
        }
    }

    pub fn cpus(&self) -> Vec<u16> {
        self.rings.iter().map(|r| r.cpu).collect()
    }

    pub fn stats(&self) -> &AttachStats {
        &self.parser.stats
    }

    /// Moves every record now in the rings into `out` (per CPU in ring order; the caller merges).
    /// All rings are drained first and scanned for thread creations, so `pre` knows a thread
    /// created on one CPU before it judges the records of another.
    pub fn drain(&mut self, strings: &mut Strings, out: &mut Vec<Staged>, pre: &mut dyn Prefilter) {
        self.bufs.resize_with(self.rings.len(), Vec::new);
        for (ring, buf) in self.rings.iter_mut().zip(&mut self.bufs) {
            buf.clear();
            let n = ring.ring.drain(buf);
            self.parser.stats.bytes += n as u64;
        }
        for buf in &self.bufs {
            self.parser.scan_new_tasks(buf, pre);
        }
        for (ring, buf) in self.rings.iter().zip(&self.bufs) {
            self.parser.parse(buf, ring.cpu, strings, out, pre);
        }
    }
}

impl Drop for Attach {
    fn drop(&mut self) {
        self.disable();
    }
}

/// Splits drained ring bytes into perf records and decodes them.
pub struct RecordParser {
    decoder: Decoder,
    /// `system:name` of each tracepoint id, for messages.
    names: FxHashMap<u32, String>,
    /// PERF_SAMPLE_IDENTIFIER → tracepoint id.
    by_id: FxHashMap<u64, u32>,
    syms: Kallsyms,
    pub stats: AttachStats,
}

impl RecordParser {
    /// `by_id` maps PERF_SAMPLE_IDENTIFIER values to the tracepoint ids of `formats`.
    pub fn new(
        decoder: Decoder,
        formats: &[EventFormat],
        by_id: FxHashMap<u64, u32>,
        syms: Kallsyms,
    ) -> RecordParser {
        RecordParser {
            decoder,
            names: formats
                .iter()
                .map(|f| (f.id, format!("{}:{}", f.system, f.name)))
                .collect(),
            by_id,
            syms,
            stats: AttachStats::default(),
        }
    }

    fn note_error(&mut self, msg: String) {
        self.stats.decode_errors += 1;
        if self.stats.first_decode_error.is_none() {
            self.stats.first_decode_error = Some(msg);
        }
    }

    /// Walks the records of `buf`: (type, body). A header that overruns the buffer stops the walk
    /// (counted as an error).
    fn walk(&mut self, buf: &[u8], ring_cpu: u16, mut f: impl FnMut(&mut Self, u32, &[u8])) {
        let mut pos = 0usize;
        while pos + 8 <= buf.len() {
            let ty = u32_at(buf, pos).unwrap_or(0);
            let size = u16_at(buf, pos + 6).unwrap_or(0) as usize;
            if size < 8 || pos + size > buf.len() {
                self.note_error(format!(
                    "perf ring of CPU {ring_cpu}: record header at byte {pos} claims {size} bytes, {} left; rest of this read skipped",
                    buf.len() - pos
                ));
                return;
            }
            f(self, ty, &buf[pos + 8..pos + size]);
            pos += size;
        }
    }

    /// The raw tracepoint data of a sample: (tracepoint id, sample pid, raw).
    fn raw_of<'a>(&self, b: &'a [u8]) -> Option<(u32, u32, &'a [u8])> {
        let id = u64_at(b, 0)?;
        let pid = u32_at(b, 8)?;
        let raw_size = u32_at(b, 32)? as usize;
        let raw = b.get(36..36 + raw_size)?;
        Some((*self.by_id.get(&id)?, pid, raw))
    }

    /// First pass: tells `pre` about every thread creation in `buf`.
    pub fn scan_new_tasks(&mut self, buf: &[u8], pre: &mut dyn Prefilter) {
        let mut pos = 0usize;
        while pos + 8 <= buf.len() {
            let ty = u32_at(buf, pos).unwrap_or(0);
            let size = u16_at(buf, pos + 6).unwrap_or(0) as usize;
            if size < 8 || pos + size > buf.len() {
                return;
            }
            if ty == PERF_RECORD_SAMPLE
                && let Some((k, pid, raw)) = self.raw_of(&buf[pos + 8..pos + size])
                && let Some(Peek {
                    common_pid,
                    new_task: Some((child, flags)),
                    ..
                }) = self.decoder.peek(k, raw)
            {
                pre.note_new_task(pid, common_pid, child, flags);
            }
            pos += size;
        }
    }

    /// Parses whole records from `buf` (bytes drained from the ring of `ring_cpu`), decoding the
    /// samples `pre` may keep.
    pub fn parse(
        &mut self,
        buf: &[u8],
        ring_cpu: u16,
        strings: &mut Strings,
        out: &mut Vec<Staged>,
        pre: &dyn Prefilter,
    ) {
        self.walk(buf, ring_cpu, |p, ty, body| match ty {
            PERF_RECORD_SAMPLE => {
                p.stats.records += 1;
                if let Some((k, pid, raw)) = p.raw_of(body) {
                    match p.decoder.peek(k, raw) {
                        Some(peek) if !pre.may_keep(pid, &peek) => {
                            p.stats.prefiltered += 1;
                            return;
                        }
                        _ => {}
                    }
                }
                match p.sample(body, strings) {
                    Ok(s) => out.push(s),
                    Err(e) => p.note_error(format!("CPU {ring_cpu}: {e}")),
                }
            }
            PERF_RECORD_LOST | PERF_RECORD_LOST_SAMPLES => {
                // LOST: u64 id, u64 lost; LOST_SAMPLES: u64 lost; then sample_id:
                // pid,tid, time, cpu,res, identifier
                let at = if ty == PERF_RECORD_LOST { 8 } else { 0 };
                let lost = u64_at(body, at).unwrap_or(0);
                let ts = u64_at(body, at + 16).unwrap_or(0);
                let cpu = u32_at(body, at + 24).map_or(ring_cpu, |c| c as u16);
                p.stats.lost += lost;
                p.stats.lost_records += 1;
                out.push(lost_marker(lost, ts, cpu));
            }
            PERF_RECORD_THROTTLE => p.stats.throttled += 1,
            _ => {}
        });
    }

    /// identifier u64, pid u32, tid u32, time u64, cpu u32, res u32, raw size u32, raw bytes.
    fn sample(&self, b: &[u8], strings: &mut Strings) -> Result<Staged, String> {
        let short = || {
            format!(
                "perf sample of {} bytes is shorter than its header",
                b.len()
            )
        };
        let id = u64_at(b, 0).ok_or_else(short)?;
        let pid = u32_at(b, 8).ok_or_else(short)?;
        let tid = u32_at(b, 12).ok_or_else(short)?;
        let ts = u64_at(b, 16).ok_or_else(short)?;
        let cpu = u32_at(b, 24).ok_or_else(short)?;
        let raw_size = u32_at(b, 32).ok_or_else(short)? as usize;
        let raw = b.get(36..36 + raw_size).ok_or_else(|| {
            format!(
                "perf sample says {raw_size} raw bytes, has {}",
                b.len().saturating_sub(36)
            )
        })?;
        let k = *self
            .by_id
            .get(&id)
            .ok_or_else(|| format!("perf sample with unknown event id {id}"))?;
        let d = &self.decoder;
        let bad = |e: DecodeError| match e {
            DecodeError::Short { .. } | DecodeError::ShortComm => format!(
                "{} record of {} bytes is shorter than its tracefs format says",
                self.names.get(&k).map_or("?", |n| n.as_str()),
                raw.len()
            ),
            e => e.to_string(),
        };
        let (kind, _) = d.decode(k, raw, strings).map_err(bad)?;
        let (aux, comms) = d
            .line_fields(k, raw, &kind, strings, &self.syms)
            .map_err(bad)?;
        let common_pid = d.common_pid(raw).ok_or_else(|| {
            bad(DecodeError::Short {
                len: raw.len(),
                offset: d.common_pid.offset,
                size: d.common_pid.size,
            })
        })?;
        let event = Event {
            ts,
            tid: common_pid as Tid,
            cpu: cpu.min(u16::MAX as u32) as u16,
            kind,
        };
        Ok(Staged {
            decoded: Decoded { event, aux, comms },
            pid,
            sample_tid: tid,
        })
    }
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(i..i + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(i..i + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Checks, without recording anything, whether this process may attach (tracefs readable and
/// `perf_event_open` on rseq:rseq_update allowed). The TUI can use it to offer the workload-only
/// mode up front.
pub fn check_privileges() -> Result<(), LiveError> {
    let tracefs = Tracefs::locate(sys::geteuid() == 0)?;
    let f = tracefs
        .event_format("rseq", "rseq_update")?
        .ok_or_else(|| {
            LiveError::Unsupported("tracepoint rseq:rseq_update does not exist".into())
        })?;
    let mut attr = attr_for(f.id as u64, 4096);
    sys::perf_event_open(&mut attr, -1, 0)
        .map(drop)
        .map_err(|e| open_error("perf_event_open(rseq:rseq_update)", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::tracefs::format::parse;

    const RSEQ: &str = "name: rseq_update\nID: 592\nformat:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
\tfield:s32 cpu_id;\toffset:8;\tsize:4;\tsigned:1;
\tfield:s32 node_id;\toffset:12;\tsize:4;\tsigned:1;
\tfield:s32 mm_cid;\toffset:16;\tsize:4;\tsigned:1;
";

    fn header(out: &mut Vec<u8>, ty: u32, size: usize) {
        out.extend_from_slice(&ty.to_ne_bytes());
        out.extend_from_slice(&0u16.to_ne_bytes());
        out.extend_from_slice(&(size as u16).to_ne_bytes());
    }

    fn sample(out: &mut Vec<u8>, id: u64, tid: u32, ts: u64, cpu: u32, cid: i32) {
        let mut raw = vec![0u8; 20];
        raw[0..2].copy_from_slice(&592u16.to_ne_bytes());
        raw[4..8].copy_from_slice(&(tid as i32).to_ne_bytes());
        raw[8..12].copy_from_slice(&(cpu as i32).to_ne_bytes());
        raw[16..20].copy_from_slice(&cid.to_ne_bytes());
        // raw size field + raw data are padded to 8 bytes
        let raw_total = (4 + raw.len()).next_multiple_of(8);
        let size = 8 + 8 + 8 + 8 + 8 + raw_total;
        header(out, PERF_RECORD_SAMPLE, size);
        out.extend_from_slice(&id.to_ne_bytes());
        out.extend_from_slice(&tid.to_ne_bytes()); // pid
        out.extend_from_slice(&tid.to_ne_bytes());
        out.extend_from_slice(&ts.to_ne_bytes());
        out.extend_from_slice(&cpu.to_ne_bytes());
        out.extend_from_slice(&0u32.to_ne_bytes());
        out.extend_from_slice(&((raw_total - 4) as u32).to_ne_bytes());
        out.extend_from_slice(&raw);
        out.resize(out.len() + raw_total - 4 - raw.len(), 0);
    }

    #[test]
    fn parses_samples_and_lost_records_and_survives_garbage() {
        let f = parse(RSEQ.as_bytes(), "rseq").unwrap();
        let mut strings = Strings::new();
        let d = decoder_for(std::slice::from_ref(&f), &Kallsyms::default(), &mut strings);
        let mut by_id = FxHashMap::default();
        by_id.insert(42u64, 592u32);
        let mut p = RecordParser::new(d, std::slice::from_ref(&f), by_id, Kallsyms::default());
        let mut buf = Vec::new();
        sample(&mut buf, 42, 100, 1_000, 1, 1);
        // PERF_RECORD_LOST: id, lost, then sample_id (pid,tid, time, cpu,res, identifier)
        header(&mut buf, PERF_RECORD_LOST, 8 + 16 + 32);
        for v in [42u64, 7, 0, 2_000, 1, 42] {
            buf.extend_from_slice(&v.to_ne_bytes());
        }
        sample(&mut buf, 99, 100, 3_000, 1, 0); // unknown id: counted, skipped
        sample(&mut buf, 42, 101, 4_000, 1, 0);
        buf.extend_from_slice(&[9, 0, 0, 0, 0, 0, 200, 0]); // header claiming 200 bytes
        let mut out = Vec::new();
        p.scan_new_tasks(&buf, &mut KeepAll);
        p.parse(&buf, 1, &mut strings, &mut out, &KeepAll);
        assert_eq!(out.len(), 3);
        let e = out[0].decoded.event;
        assert_eq!((e.ts, e.tid, e.cpu), (1_000, 100, 1));
        assert_eq!(
            e.kind,
            EventKind::RseqUpdate {
                cpu_id: 1,
                node_id: 0,
                mm_cid: 1
            }
        );
        assert_eq!(out[0].pid, 100);
        assert_eq!(
            out[1].decoded.event.kind,
            EventKind::Lost { count: Some(7) }
        );
        assert_eq!(out[1].decoded.event.ts, 2_000);
        assert_eq!(out[2].decoded.event.tid, 101);
        assert_eq!(p.stats.lost, 7);
        assert_eq!(p.stats.decode_errors, 2);
        assert!(
            p.stats
                .first_decode_error
                .as_deref()
                .unwrap_or("")
                .contains("unknown event id 99")
        );
    }
}
