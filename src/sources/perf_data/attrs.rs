//! Event attributes (`perf_event_attr`, parsed by linux-perf-event-reader), their sample ids, and
//! which attribute a record belongs to (`PERF_SAMPLE_IDENTIFIER` / `PERF_SAMPLE_ID` with
//! `sample_id_all`, as perf itself decides).

use super::header::{FileHeader, section_bytes};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor};
use byteorder::{BigEndian, LittleEndian};
use linux_perf_event_reader::{
    AttrFlags, Endianness, HardwareCacheId, HardwareCacheOp, HardwareCacheOpResult,
    HardwareEventId, PerfEventAttr, PerfEventType, RawData, RecordIdParseInfo, RecordParseInfo,
    RecordType, SampleFormat, SoftwareCounterType, get_record_id, get_record_identifier,
};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct Attr {
    pub attr: PerfEventAttr,
    /// `read_format` as written (the crate's parse drops `PERF_FORMAT_LOST`).
    pub read_format: u64,
    pub parse: RecordParseInfo,
    pub ids: Vec<u64>,
    /// As perf names the event (`sched:sched_switch`, `cycles:Pu`): from EVENT_DESC, else
    /// made from the attr as perf would (see [`Attr::name_from_attr`]).
    pub name: Option<String>,
}

/// `PERF_TYPE_RAW`, which the crate reads as a dynamic PMU.
const PERF_TYPE_RAW: u32 = 4;

/// Where `read_format` sits in a `perf_event_attr` (after type, size, config, sample_period
/// and sample_type).
const READ_FORMAT_AT: usize = 32;

impl Attr {
    pub fn new(attr: PerfEventAttr, read_format: u64, ids: Vec<u64>, big: bool) -> Attr {
        let endian = if big {
            Endianness::BigEndian
        } else {
            Endianness::LittleEndian
        };
        Attr {
            parse: RecordParseInfo::new(&attr, endian),
            attr,
            read_format,
            ids,
            name: None,
        }
    }

    /// The name `stats` counts the event's samples under: a tracepoint's name without its
    /// system (`sched_switch`, as every text format prints it), any other event as perf names
    /// it (`cycles:Pu`, `cpu-clock`).
    pub fn count_name(&self) -> String {
        let full = self.name.clone().unwrap_or_else(|| self.name_from_attr());
        match self.tracepoint_id() {
            Some(_) => full.split(':').nth(1).map_or(full.clone(), str::to_string),
            None => full,
        }
    }

    /// What kind of event it is, in words (for messages).
    pub fn kind_words(&self) -> String {
        match self.attr.type_ {
            PerfEventType::Hardware(..) => "a hardware event".into(),
            PerfEventType::Software(..) => "a software event".into(),
            PerfEventType::Tracepoint(_) => "a tracepoint".into(),
            PerfEventType::HwCache(..) => "a hardware cache event".into(),
            PerfEventType::Breakpoint(..) => "a breakpoint".into(),
            PerfEventType::DynamicPmu(PERF_TYPE_RAW, ..) => "a raw PMU event".into(),
            PerfEventType::DynamicPmu(t, ..) => format!("an event of PMU type {t}"),
        }
    }

    /// perf's name for an event described only by its attr (`evsel__name`): the hardware or
    /// software event's name, `rNNN` for raw events, with the modifiers perf appends.
    pub fn name_from_attr(&self) -> String {
        let base = match self.attr.type_ {
            PerfEventType::Hardware(id, _) => hardware_name(id).to_string(),
            PerfEventType::Software(sw) => software_name(sw).to_string(),
            PerfEventType::Tracepoint(id) => return format!("tracepoint:{id}"),
            PerfEventType::HwCache(c, o, r, _) => cache_name(c, o, r),
            PerfEventType::Breakpoint(..) => "mem".into(),
            PerfEventType::DynamicPmu(PERF_TYPE_RAW, config, ..) => format!("r{config:x}"),
            PerfEventType::DynamicPmu(t, config, ..) => format!("{t}/config={config:#x}/"),
        };
        base + &self.modifiers()
    }

    /// perf's `evsel__add_modifiers`: `:ukh` for the contexts counted when some are excluded,
    /// `p` per level of precise_ip, `HG` when host or guest is excluded against the default.
    fn modifiers(&self) -> String {
        let f = self.attr.flags;
        let (xk, xu, xh) = (
            f.contains(AttrFlags::EXCLUDE_KERNEL),
            f.contains(AttrFlags::EXCLUDE_USER),
            f.contains(AttrFlags::EXCLUDE_HV),
        );
        let (xhost, xguest) = (
            f.contains(AttrFlags::EXCLUDE_HOST),
            f.contains(AttrFlags::EXCLUDE_GUEST),
        );
        let precise = ((f.bits() & AttrFlags::PRECISE_IP_BITMASK.bits()) >> 15) as usize;
        let mut m = String::new();
        let mut guest_default = false;
        if xk || xu || xh {
            for (x, c) in [(xk, 'k'), (xu, 'u'), (xh, 'h')] {
                if !x {
                    m.push(c);
                }
            }
            guest_default = true;
        }
        if precise > 0 {
            m.push_str(&"ppp"[..precise.min(3)]);
            guest_default = true;
        }
        if xhost || xguest == guest_default {
            for (x, c) in [(xhost, 'H'), (xguest, 'G')] {
                if !x {
                    m.push(c);
                }
            }
        }
        if m.is_empty() { m } else { format!(":{m}") }
    }

    /// The tracepoint id (`config` of a `PERF_TYPE_TRACEPOINT` event).
    pub fn tracepoint_id(&self) -> Option<u32> {
        match self.attr.type_ {
            PerfEventType::Tracepoint(id) => u32::try_from(id).ok(),
            _ => None,
        }
    }
}

fn parse_attr(bytes: &[u8], big: bool) -> std::io::Result<(PerfEventAttr, u64)> {
    if big {
        PerfEventAttr::parse::<_, BigEndian>(bytes)
    } else {
        PerfEventAttr::parse::<_, LittleEndian>(bytes)
    }
}

/// The attrs section of a file: `attr_size` bytes each, the attr then its ids section.
pub fn read_file_attrs(data: &[u8], h: &FileHeader, big: bool) -> BinResult<Vec<Attr>> {
    let bytes = section_bytes(data, h.attrs, "attrs section")?;
    let n = h.attr_size as usize;
    if !(16 + 64..=4096).contains(&n) {
        return Err(BinError::new(
            16,
            format!("expected an attr entry size between 80 and 4096 bytes, found {n}"),
        ));
    }
    let mut out = Vec::new();
    for (k, entry) in bytes.chunks_exact(n).enumerate() {
        let at = h.attrs.offset + (k * n) as u64;
        let (attr, _) = parse_attr(&entry[..n - 16], big)
            .map_err(|e| BinError::new(at, format!("expected a perf_event_attr here: {e}")))?;
        let read_format = read_format_of(entry, big);
        let mut c = Cursor::new(entry, big).at(n - 16);
        let ids_off = c.u64("the ids offset")?;
        let ids_size = c.u64("the ids size")?;
        let ids_bytes = section_bytes(
            data,
            super::header::Section {
                offset: ids_off,
                size: ids_size,
            },
            "event ids of an attr",
        )?;
        let ids = ids_bytes
            .chunks_exact(8)
            .map(|b| crate::sources::binary::cursor::read_u64(b, big))
            .collect();
        out.push(Attr::new(attr, read_format, ids, big));
    }
    Ok(out)
}

/// Why the event attributes cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AttrError {
    #[error("expected a perf_event_attr: {0}")]
    Unreadable(String),
    #[error("expected at least one event attribute, found none")]
    None,
    #[error(
        "the events' sample formats differ and not all carry PERF_SAMPLE_IDENTIFIER: records cannot be matched to their events"
    )]
    Unmatchable,
}

/// A pipe-mode `PERF_RECORD_HEADER_ATTR` body: the attr, then its ids.
pub fn parse_header_attr(body: &[u8], big: bool) -> Result<Attr, AttrError> {
    let (attr, size) = parse_attr(body, big).map_err(|e| AttrError::Unreadable(e.to_string()))?;
    let read_format = read_format_of(body, big);
    let ids = body
        .get(size as usize..)
        .unwrap_or(&[])
        .chunks_exact(8)
        .map(|b| crate::sources::binary::cursor::read_u64(b, big))
        .collect();
    Ok(Attr::new(attr, read_format, ids, big))
}

/// The raw `read_format` of the attr at the start of `bytes` (a parsed attr is always longer).
fn read_format_of(bytes: &[u8], big: bool) -> u64 {
    bytes
        .get(READ_FORMAT_AT..READ_FORMAT_AT + 8)
        .map_or(0, |b| crate::sources::binary::cursor::read_u64(b, big))
}

fn hardware_name(id: HardwareEventId) -> &'static str {
    match id {
        HardwareEventId::CpuCycles => "cycles",
        HardwareEventId::Instructions => "instructions",
        HardwareEventId::CacheReferences => "cache-references",
        HardwareEventId::CacheMisses => "cache-misses",
        HardwareEventId::BranchInstructions => "branches",
        HardwareEventId::BranchMisses => "branch-misses",
        HardwareEventId::BusCycles => "bus-cycles",
        HardwareEventId::StalledCyclesFrontend => "stalled-cycles-frontend",
        HardwareEventId::StalledCyclesBackend => "stalled-cycles-backend",
        HardwareEventId::RefCpuCycles => "ref-cycles",
        _ => "unknown-hardware",
    }
}

fn software_name(sw: SoftwareCounterType) -> &'static str {
    match sw {
        SoftwareCounterType::CpuClock => "cpu-clock",
        SoftwareCounterType::TaskClock => "task-clock",
        SoftwareCounterType::PageFaults => "page-faults",
        SoftwareCounterType::ContextSwitches => "context-switches",
        SoftwareCounterType::CpuMigrations => "cpu-migrations",
        SoftwareCounterType::PageFaultsMin => "minor-faults",
        SoftwareCounterType::PageFaultsMaj => "major-faults",
        SoftwareCounterType::AlignmentFaults => "alignment-faults",
        SoftwareCounterType::EmulationFaults => "emulation-faults",
        SoftwareCounterType::Dummy => "dummy",
        SoftwareCounterType::BpfOutput => "bpf-output",
        SoftwareCounterType::CgroupSwitches => "cgroup-switches",
        _ => "unknown-software",
    }
}

/// `L1-dcache-load-misses`, `LLC-loads`: perf's hardware-cache event names.
fn cache_name(c: HardwareCacheId, o: HardwareCacheOp, r: HardwareCacheOpResult) -> String {
    let cache = match c {
        HardwareCacheId::L1d => "L1-dcache",
        HardwareCacheId::L1i => "L1-icache",
        HardwareCacheId::Ll => "LLC",
        HardwareCacheId::Dtlb => "dTLB",
        HardwareCacheId::Itlb => "iTLB",
        HardwareCacheId::Bpu => "branch",
        HardwareCacheId::Node => "node",
        _ => "cache",
    };
    let op = match o {
        HardwareCacheOp::Read => "load",
        HardwareCacheOp::Write => "store",
        HardwareCacheOp::Prefetch => "prefetch",
    };
    match r {
        HardwareCacheOpResult::Access => format!("{cache}-{op}s"),
        HardwareCacheOpResult::Miss => format!("{cache}-{op}-misses"),
    }
}

/// `HEADER_EVENT_DESC`: `u32 nr, u32 attr_size`, then per event the attr, `u32 nr_ids`, a perf
/// string (`u32 len` + bytes) and the ids. Returns (name, ids) per event.
pub fn event_desc(body: &[u8], big: bool) -> Vec<(String, Vec<u64>)> {
    let mut c = Cursor::new(body, big);
    let mut out = Vec::new();
    let (Ok(nr), Ok(attr_size)) = (c.u32("nr"), c.u32("attr size")) else {
        return out;
    };
    for _ in 0..nr {
        let r = (|| -> BinResult<(String, Vec<u64>)> {
            c.skip(attr_size as usize, "an attr")?;
            let nr_ids = c.u32("nr ids")?;
            let len = c.u32("string length")?;
            let s = c.bytes(len as usize, "event name")?;
            let s = &s[..memchr::memchr(0, s).unwrap_or(s.len())];
            let mut ids = Vec::new();
            for _ in 0..nr_ids {
                ids.push(c.u64("an id")?);
            }
            Ok((String::from_utf8_lossy(s).into_owned(), ids))
        })();
        match r {
            Ok(e) => out.push(e),
            Err(_) => break,
        }
    }
    out
}

/// How to find a record's attr.
#[derive(Clone, Debug)]
pub enum IdMode {
    One,
    Same(RecordIdParseInfo),
    /// Every attr has IDENTIFIER; the bool is `sample_id_all`.
    Identifier(bool),
}

#[derive(Clone, Debug)]
pub struct Attrs {
    pub list: Vec<Attr>,
    by_id: FxHashMap<u64, usize>,
    mode: IdMode,
    big: bool,
}

impl Attrs {
    pub fn new(list: Vec<Attr>, big: bool) -> Result<Attrs, AttrError> {
        let mut by_id = FxHashMap::default();
        for (i, a) in list.iter().enumerate() {
            for &id in &a.ids {
                by_id.insert(id, i);
            }
        }
        let mode = match list.split_first() {
            None => return Err(AttrError::None),
            Some((_, [])) => IdMode::One,
            Some((first, rest)) => {
                let fi = first.parse.id_parse_info;
                if rest.iter().all(|a| a.parse.id_parse_info == fi) {
                    IdMode::Same(fi)
                } else {
                    let all_id = list
                        .iter()
                        .all(|a| a.attr.sample_format.contains(SampleFormat::IDENTIFIER));
                    let sid = first.attr.flags.contains(AttrFlags::SAMPLE_ID_ALL);
                    if !all_id
                        || list
                            .iter()
                            .any(|a| a.attr.flags.contains(AttrFlags::SAMPLE_ID_ALL) != sid)
                    {
                        return Err(AttrError::Unmatchable);
                    }
                    IdMode::Identifier(sid)
                }
            }
        };
        Ok(Attrs {
            list,
            by_id,
            mode,
            big,
        })
    }

    /// The attr with sample id `id`.
    pub fn of_id(&self, id: u64) -> Option<usize> {
        match self.mode {
            IdMode::One if self.by_id.is_empty() => Some(0),
            _ => self.by_id.get(&id).copied(),
        }
    }

    /// The attr of a kernel record (`None` when its id is unknown).
    pub fn of_record(&self, record_type: u32, body: &[u8]) -> Option<usize> {
        let rt = RecordType(record_type);
        let data = RawData::Single(body);
        let id = match &self.mode {
            IdMode::One => return Some(0),
            IdMode::Same(info) => {
                if self.big {
                    get_record_id::<BigEndian>(rt, data, info)
                } else {
                    get_record_id::<LittleEndian>(rt, data, info)
                }
            }
            IdMode::Identifier(sid) => {
                if self.big {
                    get_record_identifier::<BigEndian>(rt, data, *sid)
                } else {
                    get_record_identifier::<LittleEndian>(rt, data, *sid)
                }
            }
        };
        match id {
            // perf synthesizes the records of existing threads with id 0: the first event's.
            Some(0) => Some(0),
            Some(id) => self.by_id.get(&id).copied(),
            // Without ids every record parses alike: the first attr describes it.
            None => matches!(self.mode, IdMode::Same(_)).then_some(0),
        }
    }

    pub fn name_events(&mut self, desc: &[(String, Vec<u64>)]) {
        for (name, ids) in desc {
            for a in self.list.iter_mut() {
                if a.name.is_none() && ids.iter().any(|i| a.ids.contains(i)) {
                    a.name = Some(name.clone());
                }
            }
        }
    }
}
