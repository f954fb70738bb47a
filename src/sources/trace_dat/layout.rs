//! The structure of a trace.dat file, versions 6 and 7 (trace-cmd 3.x; see trace-cmd's
//! `trace-cmd.dat.v6(5)` and `trace-cmd.dat.v7(5)`): where the metadata is, and where each CPU's
//! ring-buffer pages are.
//!
//! * v6: initial format, header info, ftrace formats, event formats, kallsyms, printk, cmdlines,
//!   CPU count, `options  \0` + options, `flyrecord\0` + (offset, size) per CPU.
//! * v7: initial format, compression name and version, offset of the first options section;
//!   options sections (chained by their DONE option) point at the metadata sections and describe
//!   each buffer (BUFFER: flyrecord section offset, name, clock, page size, (cpu, offset, size)
//!   per CPU). Sections start with `u16 id, u16 flags, u32 description, u64 size`; flag 1 means
//!   compressed (`u32` compressed size, `u32` size, data); a compressed flyrecord holds per CPU
//!   `u32` chunk count and chunks of (`u32` compressed size, `u32` size, data).

use super::compress::{self, Codec};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor};
use crate::sources::tracefs::format::EventFormat;
use crate::sources::tracefs::tracing_data::{self as meta, Initial, PageHeader};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

const OPT_DONE: u16 = 0;
const OPT_DATE: u16 = 1;
const OPT_BUFFER: u16 = 3;
const OPT_TRACECLOCK: u16 = 4;
/// `uname`: "sysname nodename release version machine" of the recording kernel.
const OPT_UNAME: u16 = 5;
const OPT_OFFSET: u16 = 7;
const OPT_CPUCOUNT: u16 = 8;
const OPT_HEADER_INFO: u16 = 16;
const OPT_FTRACE_EVENTS: u16 = 17;
const OPT_EVENT_FORMATS: u16 = 18;
const OPT_KALLSYMS: u16 = 19;
const OPT_PRINTK: u16 = 20;
const OPT_CMDLINES: u16 = 21;
const OPT_BUFFER_TEXT: u16 = 22;
pub(super) const SEC_COMPRESSED: u16 = 1;

/// One CPU's data in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuRef {
    pub cpu: u16,
    pub offset: u64,
    pub size: u64,
}

impl CpuRef {
    /// CPU `cpu`'s data offset and size, as the flyrecord section and the v7 buffer options
    /// store them.
    pub fn read(c: &mut Cursor, cpu: u16) -> BinResult<CpuRef> {
        let offset = c.u64("a CPU data offset")?;
        let size = c.u64("a CPU data size")?;
        Ok(CpuRef { cpu, offset, size })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Empty for the top-level buffer.
    pub name: String,
    pub compressed: bool,
    pub page_size: u32,
    pub cpus: Vec<CpuRef>,
    /// `cpus` are the CPUs' data (false: as the option gave it, a header entry first).
    pub ready: bool,
}

/// What the loader needs from a trace.dat.
#[derive(Debug)]
pub struct Layout {
    pub version: u32,
    pub initial: Initial,
    pub codec: Codec,
    pub page: PageHeader,
    pub formats: Vec<EventFormat>,
    /// Addresses of the tick callbacks from the embedded kallsyms; `None` when it has none.
    pub tick_functions: Option<Vec<u64>>,
    pub cmdlines: FxHashMap<u32, Vec<u8>>,
    pub ncpus: Option<u32>,
    pub ts_offset: i64,
    pub clock: Option<String>,
    /// The recording kernel's release (`uname -r`), from the UNAME option.
    pub kernel_release: Option<String>,
    /// Where the trace_clock option's text is in the file (`None` in a compressed section).
    pub clock_at: Option<u64>,
    pub buffer: Buffer,
    /// The other buffers (instances of `trace-cmd record -B NAME`, or the top-level one when
    /// an instance is read), as their options name them: see [`super::instances`].
    pub others: Vec<Buffer>,
    pub notes: Vec<(&'static str, String)>,
    clock_addr: usize,
}

#[derive(Default)]
struct Meta {
    page: Option<PageHeader>,
    formats: Vec<EventFormat>,
    tick_functions: Option<Vec<u64>>,
    cmdlines: FxHashMap<u32, Vec<u8>>,
}

/// Reads the layout; an error names the byte offset and what was expected there.
pub fn read(data: &[u8]) -> BinResult<Layout> {
    let mut c = Cursor::new(data, false);
    let initial = meta::read_initial(&mut c)?;
    let version = match initial.version.as_str() {
        "6" => 6,
        "7" => 7,
        v => {
            return Err(BinError::new(
                10,
                format!(
                    "expected trace.dat file version 6 or 7 (trace-cmd 3.x), found version {v:?}"
                ),
            ));
        }
    };
    let mut l = if version == 6 {
        read_v6(c, initial)?
    } else {
        read_v7(c, initial)?
    };
    check_buffers(&mut l);
    let base = data.as_ptr() as usize;
    l.clock_at = (base..base + data.len())
        .contains(&l.clock_addr)
        .then(|| (l.clock_addr - base) as u64);
    if let Some(why) = l.clock.as_deref().and_then(ticking_clock) {
        return Err(BinError::new(
            l.clock_at.unwrap_or(0),
            format!(
                "expected a trace clock that counts nanoseconds (local, global, mono, boot, ...), found trace_clock {why}"
            ),
        ));
    }
    Ok(l)
}

/// The codec of a version-7 file's sections, from its first bytes alone (`None` for version 6,
/// which has none, and for bytes that are no trace.dat header): what a load's memory check
/// needs before any section is read.
pub fn codec_of(head: &[u8]) -> Option<Codec> {
    let mut c = Cursor::new(head, false);
    let initial = meta::read_initial(&mut c).ok()?;
    if initial.version != "7" {
        return None;
    }
    Codec::from_name(c.cstr("the compression name").ok()?).ok()
}

/// What a clock of `trace_clock` is when its timestamps are no time (`None` for the clocks
/// in nanoseconds): counter, x86-tsc and uptime, whose raw values ftrace prints as they are.
/// cidscope knows no TSC frequency or HZ for a capture, so none of them converts; the message
/// says what to record instead.
pub fn ticking_clock(clock: &str) -> Option<String> {
    const INSTEAD: &str = "record with the local clock instead: `trace-cmd record -C local`, or `echo local > /sys/kernel/tracing/trace_clock` before the capture";
    let what = match clock {
        "counter" => "a count of events (one tick per event), not a time",
        "x86-tsc" => "TSC cycles, and the capture gives no TSC frequency to make them time",
        "ppc-tb" => "timebase ticks, and the capture gives no timebase frequency to make them time",
        "uptime" => "jiffies, and the capture gives no HZ to make them time",
        _ => return None,
    };
    Some(format!("`{clock}`: its timestamps are {what}; {INSTEAD}"))
}

/// What a damaged header would make the walk read wrong, put right where the file itself says
/// how, and noted:
///
/// * a page size that is not the one the kernel's `header_page` format implies (a patched
///   header reads every other page as the tail of the one before): the format's size is used
///   when every CPU's data is a whole number of its pages;
/// * CPUs whose data ranges overlap (a patched buffer table): the shared bytes are read once,
///   for the CPU whose range starts first, so no event counts twice.
fn check_buffers(l: &mut Layout) {
    if let Some(implied) = l.page.page_size()
        && implied != l.buffer.page_size as usize
        && (1024..=1 << 20).contains(&implied)
        && (l.buffer.compressed || l.buffer.cpus.iter().all(|c| c.size % implied as u64 == 0))
    {
        l.notes.push((
            "page-size-mismatch",
            format!(
                "the header says {}-byte ring-buffer pages, the kernel's header_page format {implied}: pages are read as {implied} bytes",
                l.buffer.page_size
            ),
        ));
        l.buffer.page_size = implied as u32;
    }
    let mut order: Vec<usize> = (0..l.buffer.cpus.len())
        .filter(|&i| l.buffer.cpus[i].size > 0)
        .collect();
    order.sort_by_key(|&i| (l.buffer.cpus[i].offset, l.buffer.cpus[i].cpu));
    let mut end: Option<(u64, u16)> = None;
    for i in order {
        let c = &mut l.buffer.cpus[i];
        let c_end = c.offset.saturating_add(c.size);
        if let Some((e, owner)) = end
            && c.offset < e
        {
            let shared = e.min(c_end) - c.offset;
            l.notes.push((
                "overlapping-cpu-buffers",
                format!(
                    "the data of CPU {} (byte offset {}, {} bytes) overlaps that of CPU {owner} by {shared} bytes: they are read once, for CPU {owner} (a damaged buffer table)",
                    c.cpu, c.offset, c.size
                ),
            ));
            c.size = c_end.saturating_sub(e);
            c.offset = e.min(c_end);
        }
        if end.is_none_or(|(e, _)| c_end > e) {
            end = Some((c_end, c.cpu));
        }
    }
}

fn read_metadata_v6(c: &mut Cursor, initial: &Initial, m: &mut Meta) -> BinResult<()> {
    m.page = Some(meta::read_header_info(c, initial.long_size)?);
    m.formats.extend(meta::read_ftrace_formats(c)?);
    m.formats.extend(meta::read_event_formats(c)?);
    m.tick_functions = ticks(meta::read_kallsyms(c)?);
    meta::read_printk(c)?;
    m.cmdlines = meta::parse_cmdlines(meta::read_cmdlines(c)?);
    Ok(())
}

fn ticks(kallsyms: &[u8]) -> Option<Vec<u64>> {
    let t = meta::tick_functions(kallsyms);
    (!t.is_empty()).then_some(t)
}

fn read_v6(mut c: Cursor, initial: Initial) -> BinResult<Layout> {
    let mut m = Meta::default();
    read_metadata_v6(&mut c, &initial, &mut m)?;
    let ncpus = c.u32("the CPU count")?;
    // (as a v7 file's CPU ids: the kernel's NR_CPUS is at most 8192, and a CPU id must not
    // reach the one that stands for "CPU unknown")
    if ncpus > crate::events::Trace::MAX_CPUS {
        return Err(c.error(format!(
            "expected a CPU count of at most {}, found {ncpus}",
            crate::events::Trace::MAX_CPUS
        )));
    }
    let mut opts = Options::default();
    let at = c.pos();
    let mut kind = c.bytes(10, "\"options  \\0\" or \"flyrecord\\0\"")?;
    if kind.starts_with(b"options") {
        loop {
            let id = c.u16("an option id")?;
            if id == OPT_DONE {
                break;
            }
            let n = c.u32("an option size")?;
            let n = c.len_checked(n as u64, "an option")?;
            let body = c.bytes(n, "an option")?;
            opts.take(id, body, c.big_endian, 6);
        }
        kind = c.bytes(10, "\"flyrecord\\0\" or \"latency  \\0\"")?;
    }
    if kind.starts_with(b"latency") {
        return Err(c.clone().at(c.pos() - 10).error(
            "this trace.dat holds latency-tracer text (\"latency\"), not ring-buffer events; cidscope reads flyrecord files",
        ));
    }
    if !kind.starts_with(b"flyrecord") {
        return Err(c.clone().at(at).error(format!(
            "expected \"flyrecord\\0\", found {:?}",
            String::from_utf8_lossy(kind)
        )));
    }
    let mut cpus = Vec::with_capacity(ncpus as usize);
    for cpu in 0..ncpus {
        cpus.push(CpuRef::read(&mut c, cpu as u16)?);
    }
    let notes = opts.notes;
    Ok(Layout {
        version: 6,
        others: opts.buffers,
        page: m.page.unwrap_or(PageHeader::for_long(initial.long_size)),
        buffer: Buffer {
            name: String::new(),
            compressed: false,
            ready: true,
            page_size: initial.page_size,
            cpus,
        },
        initial,
        codec: Codec::None,
        formats: m.formats,
        tick_functions: m.tick_functions,
        cmdlines: m.cmdlines,
        ncpus: Some(opts.cpucount.unwrap_or(ncpus)),
        ts_offset: opts.ts_offset,
        clock: opts.clock,
        kernel_release: opts.kernel_release,
        clock_at: None,
        clock_addr: opts.clock_addr,
        notes,
    })
}

/// Options of interest.
#[derive(Default)]
struct Options {
    buffers: Vec<Buffer>,
    latency_buffers: Vec<String>,
    sections: Vec<(u16, u64)>,
    cpucount: Option<u32>,
    ts_offset: i64,
    clock: Option<String>,
    kernel_release: Option<String>,
    /// The address of the trace_clock option's text, made a file offset by [`read`].
    clock_addr: usize,
    next: u64,
    notes: Vec<(&'static str, String)>,
}

impl Options {
    fn take(&mut self, id: u16, body: &[u8], big: bool, version: u32) {
        let mut c = Cursor::new(body, big);
        match id {
            OPT_DONE => self.next = c.u64("next options").unwrap_or(0),
            OPT_DATE | OPT_OFFSET => {
                let s = String::from_utf8_lossy(body);
                let s = s.trim_end_matches('\0').trim();
                let v = if let Some(h) = s.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else {
                    s.parse::<i64>().ok()
                };
                match v {
                    // (saturating: two options of i64::MAX must not wrap the clock around)
                    Some(v) if id == OPT_DATE => {
                        self.ts_offset = self.ts_offset.saturating_add(v.saturating_mul(1000));
                    }
                    Some(v) => self.ts_offset = self.ts_offset.saturating_add(v),
                    None => {}
                }
            }
            OPT_UNAME => {
                // trace-cmd writes "%s %s %s %s %s" of struct utsname: the release is third
                let s = String::from_utf8_lossy(body);
                self.kernel_release = s
                    .trim_end_matches('\0')
                    .split_ascii_whitespace()
                    .nth(2)
                    .map(str::to_string);
            }
            OPT_TRACECLOCK => {
                let s = String::from_utf8_lossy(body);
                if let (Some(a), Some(b)) = (s.find('['), s.find(']'))
                    && a < b
                {
                    self.clock = Some(s[a + 1..b].to_string());
                    self.clock_addr = body.as_ptr() as usize;
                }
            }
            OPT_CPUCOUNT => self.cpucount = c.u32("the CPU count").ok(),
            OPT_BUFFER => {
                let r = (|| -> BinResult<Buffer> {
                    let offset = c.u64("the buffer offset")?;
                    let name = String::from_utf8_lossy(c.cstr("the buffer name")?).into_owned();
                    let mut b = Buffer {
                        name,
                        compressed: false,
                        ready: false,
                        page_size: 0,
                        cpus: vec![CpuRef {
                            cpu: 0,
                            offset,
                            size: 0,
                        }],
                    };
                    if version < 7 {
                        return Ok(b);
                    }
                    let _clock = c.cstr("the buffer clock")?;
                    b.page_size = c.u32("the buffer page size")?;
                    let n = c.u32("the buffer CPU count")?;
                    if (n as usize) * 20 > c.remaining() {
                        return Err(c.error("the buffer option lists more CPUs than it holds"));
                    }
                    b.cpus.clear();
                    for _ in 0..n {
                        let cpu = c.u32("a CPU id")?;
                        if cpu >= crate::events::Trace::MAX_CPUS {
                            return Err(
                                c.error(format!("expected a CPU id below 8192, found {cpu}"))
                            );
                        }
                        b.cpus.push(CpuRef::read(&mut c, cpu as u16)?);
                    }
                    // The flyrecord section header is at `offset`; keep it in slot 0's place.
                    b.cpus.insert(
                        0,
                        CpuRef {
                            cpu: u16::MAX,
                            offset,
                            size: 0,
                        },
                    );
                    Ok(b)
                })();
                match r {
                    Ok(b) => self.buffers.push(b),
                    Err(e) => self.notes.push((
                        "bad-option",
                        format!("a BUFFER option could not be read: {}", e.message),
                    )),
                }
            }
            OPT_BUFFER_TEXT => {
                let _ = c.u64("offset");
                let name = c
                    .cstr("name")
                    .map(|n| String::from_utf8_lossy(n).into_owned());
                self.latency_buffers.push(name.unwrap_or_default());
            }
            OPT_HEADER_INFO | OPT_FTRACE_EVENTS | OPT_EVENT_FORMATS | OPT_KALLSYMS | OPT_PRINTK
            | OPT_CMDLINES => {
                if let Ok(off) = c.u64("a section offset") {
                    self.sections.push((id, off));
                }
            }
            _ => {}
        }
    }
}

/// Reads one metadata section into `Meta`.
type ReadSection = fn(&mut Cursor, &Initial, &mut Meta) -> BinResult<()>;

/// A v7 section: its data (decompressed if needed) as a cursor source.
struct Section<'a> {
    bytes: Cow<'a, [u8]>,
    start: usize,
    offset: u64,
    compressed: bool,
}

impl<'a> Section<'a> {
    fn cursor(&self, big: bool) -> Cursor<'_> {
        if self.compressed {
            Cursor::decompressed(&self.bytes, big, self.offset)
        } else {
            Cursor::new(&self.bytes, big).at(self.start)
        }
    }
}

fn section<'a>(
    data: &'a [u8],
    offset: u64,
    want: u16,
    codec: Codec,
    big: bool,
    what: &str,
) -> BinResult<Section<'a>> {
    let mut c = Cursor::new(data, big);
    let start = usize::try_from(offset)
        .ok()
        .filter(|&o| o <= data.len())
        .ok_or_else(|| {
            BinError::new(
                offset,
                format!(
                    "expected the {what} section here, but the file ends at byte {} (truncated?)",
                    data.len()
                ),
            )
        })?;
    c.set_pos(start);
    let id = c.u16(&format!("the {what} section id"))?;
    let flags = c.u16("the section flags")?;
    let _desc = c.u32("the section description")?;
    let _size = c.u64("the section size")?;
    if id != want {
        return Err(BinError::new(
            offset,
            format!("expected the {what} section (id {want}), found a section with id {id}"),
        ));
    }
    if flags & SEC_COMPRESSED != 0 && codec != Codec::None {
        let zsize = c.u32("the compressed size")? as usize;
        let size = c.u32("the decompressed size")? as usize;
        let z = c.bytes(zsize, &format!("the compressed {what} section"))?;
        let out = compress::decompress(codec, z, size)
            .map_err(|e| BinError::new(offset, format!("the {what} section: {e}")))?;
        return Ok(Section {
            bytes: Cow::Owned(out),
            start: 0,
            offset,
            compressed: true,
        });
    }
    Ok(Section {
        bytes: Cow::Borrowed(data),
        start: c.pos(),
        offset,
        compressed: false,
    })
}

fn read_v7(mut c: Cursor, initial: Initial) -> BinResult<Layout> {
    let big = initial.big_endian;
    let cname = c.cstr("the compression name")?;
    let codec = Codec::from_name(cname).map_err(|e| c.error(e.to_string()))?;
    let _cver = c.cstr("the compression version")?;
    let mut next = c.u64("the offset of the first options section")?;
    let data = c.data();
    let mut opts = Options::default();
    let mut seen = FxHashSet::default();
    while next != 0 {
        if !seen.insert(next) {
            return Err(BinError::new(
                next,
                "the options sections point back at each other",
            ));
        }
        if next.saturating_add(16) > data.len() as u64 {
            return Err(BinError::new(
                next,
                format!(
                    "expected an options section here, but the file ends at byte {}: the file is truncated (trace-cmd writes the options that locate the ring-buffer data after the data, so a cut version-7 file cannot be read)",
                    data.len()
                ),
            ));
        }
        let sec = section(data, next, OPT_DONE, codec, big, "options")?;
        let mut oc = sec.cursor(big);
        opts.next = 0;
        loop {
            let id = oc.u16("an option id")?;
            let n = oc.u32("an option size")?;
            let n = oc.len_checked(n as u64, "an option")?;
            let body = oc.bytes(n, "an option")?;
            opts.take(id, body, big, 7);
            if id == OPT_DONE {
                break;
            }
        }
        next = opts.next;
    }
    let mut m = Meta::default();
    for &(id, off) in &opts.sections {
        let (what, read): (&str, ReadSection) = match id {
            OPT_HEADER_INFO => ("header info", |c, i, m| {
                m.page = Some(meta::read_header_info(c, i.long_size)?);
                Ok(())
            }),
            OPT_FTRACE_EVENTS => ("ftrace event formats", |c, _, m| {
                m.formats.extend(meta::read_ftrace_formats(c)?);
                Ok(())
            }),
            OPT_EVENT_FORMATS => ("event formats", |c, _, m| {
                m.formats.extend(meta::read_event_formats(c)?);
                Ok(())
            }),
            OPT_KALLSYMS => ("kallsyms", |c, _, m| {
                m.tick_functions = ticks(meta::read_kallsyms(c)?);
                Ok(())
            }),
            OPT_PRINTK => ("printk formats", |c, _, _| meta::read_printk(c)),
            OPT_CMDLINES => ("saved cmdlines", |c, _, m| {
                m.cmdlines = meta::parse_cmdlines(meta::read_cmdlines(c)?);
                Ok(())
            }),
            _ => continue,
        };
        let sec = section(data, off, id, codec, big, what)?;
        read(&mut sec.cursor(big), &initial, &mut m)?;
    }
    if m.formats.is_empty() {
        return Err(BinError::new(
            0,
            "expected the event formats (an EVENT_FORMATS option and section), found none",
        ));
    }
    let mut notes = opts.notes;
    for n in &opts.latency_buffers {
        notes.push((
            "latency-buffer-skipped",
            format!("the latency text buffer {n:?} is not read"),
        ));
    }
    // The top-level buffer, unless it holds no data and an instance does (`record -B NAME`).
    let has_data = |b: &Buffer| b.cpus.iter().skip(1).any(|c| c.size > 0);
    let top = opts
        .buffers
        .iter()
        .position(|b| b.name.is_empty() && has_data(b))
        .or_else(|| opts.buffers.iter().position(|b| b.name.is_empty()));
    let idx = match top {
        Some(i) if has_data(&opts.buffers[i]) || !opts.buffers.iter().any(has_data) => i,
        _ if !opts.buffers.is_empty() => {
            let i = opts.buffers.iter().position(has_data).unwrap_or(0);
            notes.push((
                "instance-buffer",
                format!(
                    "the top-level buffer holds no events; reading the instance buffer {:?}",
                    opts.buffers[i].name
                ),
            ));
            i
        }
        _ => {
            return Err(BinError::new(
                0,
                "expected a BUFFER option describing the ring-buffer data, found none (the file may be cut before its last options section)",
            ));
        }
    };
    let mut buffer = opts.buffers.swap_remove(idx);
    let others: Vec<Buffer> = opts.buffers.into_iter().filter(has_data).collect();
    // The flyrecord section header tells whether the CPU data is compressed.
    let fly = buffer.cpus.remove(0);
    let mut fc = Cursor::new(data, big);
    let fly_at = usize::try_from(fly.offset).ok().filter(|&o| o < data.len());
    if let Some(at) = fly_at {
        fc.set_pos(at);
        let _id = fc.u16("the flyrecord section id")?;
        let flags = fc.u16("the flyrecord section flags")?;
        buffer.compressed = flags & SEC_COMPRESSED != 0 && codec != Codec::None;
    } else {
        notes.push((
            "missing-pages",
            format!(
                "the ring-buffer section at byte offset {} lies beyond the end of the file ({} bytes): every event is lost",
                fly.offset,
                data.len()
            ),
        ));
    }
    if buffer.page_size == 0 {
        buffer.page_size = initial.page_size;
    }
    buffer.ready = true;
    Ok(Layout {
        version: 7,
        page: m.page.unwrap_or(PageHeader::for_long(initial.long_size)),
        initial,
        codec,
        formats: m.formats,
        tick_functions: m.tick_functions,
        cmdlines: m.cmdlines,
        ncpus: opts.cpucount,
        ts_offset: opts.ts_offset,
        clock: opts.clock,
        kernel_release: opts.kernel_release,
        clock_at: None,
        clock_addr: opts.clock_addr,
        buffer,
        others,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codec a load's memory check reads from a trace.dat's first bytes.
    #[test]
    fn the_codec_is_read_from_the_first_bytes() {
        let file = |n: &str| {
            std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(n)).unwrap()
        };
        let v7 = file("traces/cyclictest-v7.trace.dat");
        assert_eq!(codec_of(&v7[..64]), Some(Codec::Zstd));
        assert_eq!(codec_of(&file("traces/cyclictest.trace.dat")), None);
        assert_eq!(codec_of(&v7[..12]), None);
        assert_eq!(codec_of(b"not a trace.dat"), None);
    }
}
